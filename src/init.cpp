// cuInit and the driver's version.
#include "src/api.h"

#include "runtime/backend.h"

XCUDA_EXPORT CUresult cuInit(unsigned int flags) {
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  // Choosing the backend probes the hardware once; every later call finds it ready.
  if (xcuda::runtime::backend().device_count() == 0)
    return xcuda::api::fail(__func__, CUDA_ERROR_NO_DEVICE, "the backend found no device");
  xcuda::api::mark_initialized();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDriverGetVersion(int* version) {
  XCUDA_REQUIRE(version, CUDA_ERROR_INVALID_VALUE, "version is null");
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}
