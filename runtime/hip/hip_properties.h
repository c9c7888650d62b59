// How an AMD GPU describes itself as a CUDA device, from HIP's device attributes. The compute
// capability is not the GPU's (HIP reports the gfx version there): it is the one XCUDA_CC asks
// for, because it only chooses which PTX of a fatbin we compile, as on the host.
#pragma once

#include <string>
#include <string_view>

#include "runtime/device_properties.h"
#include "runtime/hip/hip_library.h"
#include "runtime/status.h"

namespace xcuda::runtime::hip {

struct HipDeviceDescription {
  DeviceProperties properties;
  std::string architecture_name;  // gcnArchName as HIP reports it, e.g. "gfx90a:sramecc+:xnack-"
  int wavefront_size = 64;        // 32 on RDNA, 64 on CDNA; CUDA's warp stays 32 either way
};

// The processor a code object is built for: the name without its target features, "gfx90a".
std::string_view processor_of(std::string_view architecture_name);

// `device` is HIP's ordinal. Fails only when HIP cannot name or size the device; an attribute
// HIP does not know keeps our default.
Expected<HipDeviceDescription> describe_hip_device(const HipFunctions& functions, int device,
                                                   int compute_major, int compute_minor);

}  // namespace xcuda::runtime::hip
