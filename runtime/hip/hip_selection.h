// Whether XCUDA_BACKEND gets a HIP backend. `auto` takes HIP only where the library loads,
// hipInit succeeds and a device answers, and otherwise says why at info level and nothing on
// stderr: no AMD GPU is the common case, not a problem. `hip` with no usable AMD GPU says why on
// stderr and in the log and gets a HIP backend without devices, so that cuInit fails with
// CUDA_ERROR_NO_DEVICE: asking for the GPU and quietly getting the CPU would hide the mistake.
#pragma once

#include <functional>
#include <memory>

#include "runtime/backend.h"
#include "runtime/environment.h"
#include "runtime/hip/hip_library.h"

namespace xcuda::runtime::hip {

using HipLoader = std::function<Expected<HipFunctions>()>;

// Null where the host backend should run. `load` is called only when HIP may be wanted.
std::unique_ptr<Backend> select_hip_backend(const Environment& settings, const HipLoader& load);

}  // namespace xcuda::runtime::hip
