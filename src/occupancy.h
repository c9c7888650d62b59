// How many blocks of a kernel a device keeps resident at once: the occupancy calculator's
// answers and the limit a cooperative launch must respect come from this one place.
#pragma once

#include <cstdint>

#include "runtime/device_properties.h"
#include "runtime/module.h"

namespace xcuda::api {

// Blocks of `function` one multiprocessor runs at once with this block size and dynamic shared
// memory; 0 when such a block cannot run at all.
int max_active_blocks_per_multiprocessor(const runtime::Function& function,
                                         const runtime::DeviceProperties& device,
                                         uint64_t block_threads, uint64_t dynamic_shared_bytes);

}  // namespace xcuda::api
