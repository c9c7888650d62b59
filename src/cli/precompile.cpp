// xcuda precompile FILE...: fills the code cache ahead of time, so that the first run of an
// application starts as fast as later ones. Compiles what the selected device would load from
// each fatbin, in parallel across the machine's cores.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/backend.h"
#include "runtime/code_cache.h"
#include "src/cli/commands.h"
#include "src/cli/ptx_sources.h"

namespace xcuda::cli {
namespace {

struct Tally {
  std::atomic<size_t> done{0}, cached{0}, compiled{0}, failed{0};
};

void show_progress(const Tally& tally, size_t total) {
  std::fprintf(stderr, "\r[%zu/%zu] compiling", tally.done.load(), total);
  std::fflush(stderr);
}

}  // namespace

int precompile(int argc, char** argv) {
  if (argc == 0) return fail_usage("precompile needs at least one FILE");
  if (!runtime::code_cache()) {
    std::cerr << "xcuda: the code cache is off (XCUDA_CACHE=0, or no cache directory)\n";
    return 1;
  }
  auto& backend = runtime::backend();
  const runtime::DeviceProperties& device = backend.properties(0);
  int arch = device.compute_major * 10 + device.compute_minor;
  ptx::CompileOptions options;
  options.target = backend.compile_target();

  int status = 0;
  // Keyed by cache key: the same PTX in several files is compiled once.
  std::map<std::string, cli::PtxModule> modules;
  for (int index = 0; index < argc; ++index) {
    auto input = read_input(argv[index]);
    auto found = input ? modules_for_device(*input, arch) : Expected<std::vector<PtxModule>>(input.error());
    if (!found) {
      std::cerr << "xcuda: " << found.error().message << "\n";
      status = 1;
      continue;
    }
    for (PtxModule& module : *found)
      modules.emplace(runtime::CodeCache::key(module.text, options), std::move(module));
  }
  std::vector<const PtxModule*> work;
  for (const auto& [key, module] : modules) work.push_back(&module);

  auto start = std::chrono::steady_clock::now();
  Tally tally;
  std::atomic<size_t> next{0};
  std::mutex output;
  bool progress = isatty(STDERR_FILENO);
  auto worker = [&] {
    for (size_t index; (index = next++) < work.size();) {
      ptx::CompileOptions module_options = options;
      module_options.file_name = work[index]->name;
      runtime::CachedCompile result = runtime::compile_with_cache(work[index]->text, module_options);
      ++(result.from_cache ? tally.cached : result.compiled.ok() ? tally.compiled : tally.failed);
      ++tally.done;
      std::lock_guard lock(output);
      for (const ptx::Diagnostic& diagnostic : result.compiled.diagnostics)
        std::cerr << (progress ? "\n" : "") << diagnostic.to_string() << "\n";
      if (progress) show_progress(tally, work.size());
    }
  };
  unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                     unsigned(work.size())));
  std::vector<std::thread> pool;
  for (unsigned thread = 0; thread < threads; ++thread) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
  if (progress) std::fprintf(stderr, "\n");

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("precompiled %zu modules for compute capability %d.%d: %zu already cached, "
              "%zu compiled, %zu failed, %.2f s on %u threads\n",
              work.size(), device.compute_major, device.compute_minor, tally.cached.load(),
              tally.compiled.load(), tally.failed.load(), seconds, threads);
  return tally.failed ? 1 : status;
}

}  // namespace xcuda::cli
