// The XCUDA_* environment variables, read and checked once. A malformed value is reported in
// the log and replaced by the default; it never stops the application.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xcuda::runtime {

enum class BackendChoice { automatic, host, hip };

struct Environment {
  std::string log_level = "off";  // XCUDA_LOG: off|error|warn|info|debug|trace
  std::string log_file;           // XCUDA_LOG_FILE: empty means stderr
  int compute_major = 8;          // XCUDA_CC, e.g. "8.6" or "86"
  int compute_minor = 6;
  BackendChoice backend = BackendChoice::automatic;  // XCUDA_BACKEND: auto|host|hip
  unsigned host_threads = 0;      // XCUDA_HOST_THREADS: workers for the host device, 0 = one per core
  unsigned host_devices = 1;      // XCUDA_HOST_DEVICES: host devices sharing out the workers
  // XCUDA_DEVICE_MAP, e.g. "0:1,1:0": CUDA ordinal → HIP ordinal, indexed by the CUDA ordinal.
  // Devices it leaves out are hidden; empty means every HIP device in HIP's order.
  std::vector<int> device_map;
  bool cache_enabled = true;      // XCUDA_CACHE: 1|0
  // XCUDA_CACHE_DIR; else $XDG_CACHE_HOME/xcuda, else $HOME/.cache/xcuda; empty when none is set.
  std::string cache_directory;
  uint64_t cache_max_bytes = uint64_t{1} << 30;  // XCUDA_CACHE_MAX_SIZE: bytes, or with K|M|G
  bool trace = false;             // XCUDA_TRACE: 1|0, log every Driver API call
  bool eager = false;             // XCUDA_EAGER: 1|0, compile every kernel when a module loads
  // XCUDA_TIERED: 1|0, on the host compile each kernel quickly first and optimised in the
  // background (runtime/tier_up.h); 0 compiles it optimised before its first launch.
  bool tiered = true;
  bool perf_map = false;          // XCUDA_PERF_MAP: 1|0, name kernels' code for perf(1)
  std::string dump_directory;     // XCUDA_DUMP_DIR: where each module's PTX and object go
  // XCUDA_POOL_SIZE: bytes, or with K|M|G; the most freed device memory kept for reuse
  uint64_t pool_bytes = uint64_t{1} << 30;

  // What was wrong with the environment, for the log once the logger exists.
  std::string problems;
};

const Environment& environment();

// The cores this process may run on (its CPU affinity, which taskset and container CPU sets
// narrow), at least 1.
unsigned usable_core_count();

// Reads "cuda:hip,cuda:hip…" into `map`: the CUDA ordinals must be 0…n-1, each once, and no HIP
// ordinal may appear twice. Leaves `map` alone and returns false otherwise.
bool parse_device_map(std::string_view text, std::vector<int>& map);

}  // namespace xcuda::runtime
