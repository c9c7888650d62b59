// cuGetProcAddress: how cudart, numba and cuda-python find every other entry point.
#include <string_view>

#include "src/api.h"
#include "src/entry_points.h"
#include "src/trace.h"

namespace {

struct Lookup {
  void* function = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
};

// The newest signature of `name` not newer than the caller's CUDA version; with per_thread,
// the per-thread-default-stream variant where the entry point has one.
Lookup find(std::string_view name, int cuda_version, bool per_thread) {
  Lookup best;
  int best_version = -1;
  bool best_per_thread = false;
  for (const xcuda::api::EntryPoint& entry : xcuda::api::entry_points()) {
    if (entry.name != name) continue;
    if (entry.per_thread && !per_thread) continue;
    if (best.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
      best.status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    if (entry.version > cuda_version) continue;
    // A per-thread variant outranks a default one of any version.
    bool better = entry.per_thread != best_per_thread ? entry.per_thread
                                                      : entry.version > best_version;
    if (best.function && !better) continue;
    best.function = entry.function;
    best.status = CU_GET_PROC_ADDRESS_SUCCESS;
    best_version = entry.version;
    best_per_thread = entry.per_thread;
  }
  return best;
}

CUresult get_proc_address(const char* function, const char* symbol, void** pointer,
                          int cuda_version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbol_status) {
  XCUDA_REQUIRE(symbol && pointer, CUDA_ERROR_INVALID_VALUE, "symbol or output pointer is null");
  constexpr cuuint64_t known_flags =
      CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  XCUDA_REQUIRE((flags & ~known_flags) == 0, CUDA_ERROR_INVALID_VALUE, "unknown flags");
  XCUDA_REQUIRE(cuda_version <= CUDA_VERSION, CUDA_ERROR_INVALID_VALUE,
                fmt::format("CUDA version {} is newer than this driver's {}", cuda_version,
                            CUDA_VERSION));
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  Lookup found = find(symbol, cuda_version, per_thread);
  *pointer = xcuda::trace::traced(found.function);
  if (symbol_status) *symbol_status = found.status;
  xcuda::runtime::logger().trace("{}({}, version {}, flags {}) -> {}", function, symbol,
                                 cuda_version, flags, found.function);
  // Measured on NVIDIA's driver: an unknown name is still CUDA_SUCCESS, with a NULL function
  // and the reason in symbol_status.
  if (!found.function)
    xcuda::runtime::logger().debug("{}: no entry point '{}' for CUDA version {}", function, symbol,
                                   cuda_version);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pointer, int cuda_version,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult* symbol_status) {
  return get_proc_address(__func__, symbol, pointer, cuda_version, flags, symbol_status);
}

XCUDA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pointer, int cuda_version,
                                       cuuint64_t flags) {
  return get_proc_address(__func__, symbol, pointer, cuda_version, flags, nullptr);
}
