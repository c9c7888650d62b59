// xcuda info: what deviceQuery shows for each device, and where the code cache lives.
#include <iomanip>
#include <iostream>
#include <string>

#include "runtime/backend.h"
#include "runtime/code_cache.h"
#include "runtime/environment.h"
#include "src/cli/commands.h"

namespace xcuda::cli {
namespace {

// Labels fit one column, so the values line up as deviceQuery's do.
void line(std::string_view label, const std::string& value) {
  std::cout << "  " << std::left << std::setw(19) << label << value << "\n";
}

std::string dimensions(const int (&extent)[3]) {
  return std::to_string(extent[0]) + " x " + std::to_string(extent[1]) + " x " +
         std::to_string(extent[2]);
}

std::string describe_target(const ptx::CompileOptions& options) {
  if (options.target == ptx::Target::host) return "host CPU";
  return "amdgpu " + options.amdgpu_processor + ", code object v" +
         std::to_string(options.code_object_version);
}

void print_device(int device, const runtime::Backend& backend) {
  const runtime::DeviceProperties& properties = backend.properties(device);
  std::cout << "device " << device << ": " << properties.name << "\n";
  line("compiles for", describe_target(backend.compile_options(device)));
  line("compute capability", std::to_string(properties.compute_major) + "." +
                                 std::to_string(properties.compute_minor) + " (XCUDA_CC)");
  line("multiprocessors", std::to_string(properties.multiprocessor_count));
  line("memory", std::to_string(properties.total_memory >> 20) + " MiB");
  line("warp size", std::to_string(properties.warp_size));
  line("threads per block", std::to_string(properties.max_threads_per_block));
  line("block dimensions", dimensions(properties.max_block_dim));
  line("grid dimensions", dimensions(properties.max_grid_dim));
  line("shared per block", std::to_string(properties.shared_memory_per_block) + " bytes");
  line("constant memory", std::to_string(properties.total_constant_memory) + " bytes");
  line("registers/block", std::to_string(properties.registers_per_block));
  line("clock rate", std::to_string(properties.clock_rate_khz / 1000) + " MHz");
  line("unified addresses", properties.unified_addressing ? "yes" : "no");
  line("managed memory", properties.managed_memory ? "yes" : "no");
}

void print_cache() {
  const runtime::Environment& settings = runtime::environment();
  runtime::CodeCache* cache = runtime::code_cache();
  if (!cache) {
    std::cout << "code cache: off"
              << (settings.cache_enabled ? " (no XCUDA_CACHE_DIR, XDG_CACHE_HOME or HOME)"
                                         : " (XCUDA_CACHE=0)")
              << "\n";
    return;
  }
  runtime::CacheUsage usage = cache->usage();
  std::cout << "code cache: " << cache->directory().string() << "\n";
  line("entries", std::to_string(usage.entries));
  line("size", std::to_string(usage.bytes) + " bytes of " +
                   std::to_string(settings.cache_max_bytes) + " (XCUDA_CACHE_MAX_SIZE)");
}

}  // namespace

int info() {
  auto& backend = runtime::backend();
  std::cout << "backend: " << backend.name() << "\n";
  for (int device = 0; device < backend.device_count(); ++device)
    print_device(device, backend);
  print_cache();
  return 0;
}

}  // namespace xcuda::cli
