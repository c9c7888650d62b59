// The device probes' start: the driver initialised and device 0's primary context current.
#pragma once

#include <cuda.h>

inline void make_primary_context_current() {
  cuInit(0);
  CUdevice device;
  CUcontext context;
  cuDeviceGet(&device, 0);
  cuDevicePrimaryCtxRetain(&context, device);
  cuCtxSetCurrent(context);
}
