// xcuda precompile FILE...: fills the code cache ahead of time, so that the first run of an
// application starts as fast as later ones. Compiles what the selected device would load from
// each fatbin, unit by unit as a module loaded by the application would (runtime/module.h),
// in parallel across the machine's cores.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/code_cache.h"
#include "runtime/module.h"
#include "src/cli/commands.h"
#include "src/cli/ptx_sources.h"

namespace xcuda::cli {
namespace {

struct Tally {
  size_t done = 0, cached = 0, compiled = 0, failed = 0;
};

// One line, redrawn in place: [##########..........] 12/60 units, 1 failed
void show_progress(const Tally& tally, size_t total) {
  constexpr size_t width = 40;
  size_t filled = total ? tally.done * width / total : width;
  std::string bar(filled, '#');
  bar.append(width - filled, '.');
  std::fprintf(stderr, "\r[%s] %zu/%zu units, %zu failed", bar.c_str(), tally.done, total,
               tally.failed);
  std::fflush(stderr);
}

struct Work {
  const PtxModule* module;
  ptx::CompileOptions options;
};

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
  // Device 0's options, the code the cache holds for it; other devices of another processor
  // compile their own on first use.
  ptx::CompileOptions options = backend.compile_options(0);

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
  std::vector<const PtxModule*> sources;
  for (const auto& [key, module] : modules) sources.push_back(&module);

  auto start = std::chrono::steady_clock::now();
  Tally tally;
  std::mutex output;
  bool progress = isatty(STDERR_FILENO);
  auto report = [&](const std::vector<ptx::Diagnostic>& diagnostics) {
    for (const ptx::Diagnostic& diagnostic : diagnostics)
      std::cerr << (progress ? "\n" : "") << diagnostic.to_string() << "\n";
  };

  // The units of a module are known only once its declarations are read: a first parallel
  // pass reads them, a second compiles every unit of every module.
  std::vector<std::vector<ptx::CompileOptions>> units(sources.size());
  runtime::run_in_parallel(sources.size(), [&](size_t index) {
    ptx::CompileOptions module_options = options;
    module_options.file_name = sources[index]->name;
    ptx::CompileResult scanned = ptx::scan(sources[index]->text, module_options);
    std::lock_guard lock(output);
    if (scanned.ok()) units[index] = runtime::compile_units(scanned.module, module_options);
    tally.failed += !scanned.ok();
    report(scanned.diagnostics);
  });
  std::vector<Work> work;
  for (size_t index = 0; index < sources.size(); ++index)
    for (ptx::CompileOptions& unit : units[index]) work.push_back({sources[index], std::move(unit)});
  if (progress) show_progress(tally, work.size());

  size_t threads = runtime::run_in_parallel(work.size(), [&](size_t index) {
    const Work& unit = work[index];
    runtime::CachedCompile result = runtime::compile_with_cache(unit.module->text, unit.options);
    // A kernel whose code runs only blocks of whole warps gets its code for other blocks too
    // (runtime/module.h), so that no launch compiles.
    const auto& kernels = result.compiled.module.kernels;
    if (std::any_of(kernels.begin(), kernels.end(), [](const ptx::KernelInfo& kernel) { return kernel.whole_warps_only; })) {
      runtime::CachedCompile other = runtime::compile_with_cache(unit.module->text, runtime::any_width_unit(unit.options));
      if (!other.compiled.ok()) result = std::move(other);
    }
    std::lock_guard lock(output);
    ++(result.from_cache ? tally.cached : result.compiled.ok() ? tally.compiled : tally.failed);
    ++tally.done;
    report(result.compiled.diagnostics);
    if (progress) show_progress(tally, work.size());
  });
  if (progress) std::fprintf(stderr, "\n");

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("precompiled %zu modules (%zu units) for compute capability %d.%d: %zu already "
              "cached, %zu compiled, %zu failed, %.2f s on %zu threads\n",
              sources.size(), work.size(), device.compute_major, device.compute_minor,
              tally.cached, tally.compiled, tally.failed, seconds, threads);
  return tally.failed ? 1 : status;
}

}  // namespace xcuda::cli
