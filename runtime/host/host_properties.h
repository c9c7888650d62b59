// How the host CPU describes itself as a CUDA device: honestly wherever a property has a CPU
// counterpart, and as the chosen compute capability's GPU would elsewhere.
#pragma once

#include "runtime/device_properties.h"

namespace xcuda::runtime::host {

// `device_index` tells apart the devices XCUDA_HOST_DEVICES makes of one CPU: each gets a UUID
// and PCI bus id of its own, as distinct GPUs have.
DeviceProperties describe_host_cpu(int compute_major, int compute_minor, unsigned worker_count,
                                   unsigned device_index = 0);

}  // namespace xcuda::runtime::host
