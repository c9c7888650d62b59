// A weak definition for every exported symbol, so that a caller always gets a real function:
// one that says, once, which entry point xcuda does not implement yet and answers
// CUDA_ERROR_NOT_SUPPORTED. The strong definition in an API family's file replaces it at link
// time. The ABI header is not included: these stand in for every signature at once, which the
// C calling convention allows because they ignore their arguments.
#include <atomic>

#include "runtime/log.h"

namespace {

constexpr int not_supported = 801;  // CUDA_ERROR_NOT_SUPPORTED

int report_unsupported(const char* symbol, std::atomic<bool>& reported) {
  if (!reported.exchange(true, std::memory_order_relaxed))
    xcuda::runtime::logger().warn("{} is not implemented by xcuda yet (CUDA_ERROR_NOT_SUPPORTED)",
                                  symbol);
  return not_supported;
}

}  // namespace

#define ENTRY(name, version, symbol)                                             \
  extern "C" __attribute__((weak, visibility("default"))) int symbol() {         \
    static std::atomic<bool> reported{false};                                    \
    return report_unsupported(#symbol, reported);                                \
  }
#define ENTRY_PER_THREAD ENTRY
#include "src/entry_points.def"
