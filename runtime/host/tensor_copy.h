// What generated code calls for the tensor copies of sm_90 on the host backend: boxes of a
// tensor map moved between global and shared memory (cp.async.bulk.tensor,
// cp.reduce.async.bulk.tensor; contract in ptx/tensor_map.h), and element-wise reductions of
// one buffer into another (cp.reduce.async.bulk).
#pragma once

#include <cstdint>

#include "ptx/tensor_map.h"

namespace xcuda::runtime::host {

uint32_t tensor_copy(const ptx::tensor_map::TensorMap* map, uint32_t operation, const int32_t* coordinates,
                     uint8_t* shared, uint32_t shared_address);
void bulk_reduce(uint8_t* destination, const uint8_t* source, uint32_t bytes, uint32_t operation);

}  // namespace xcuda::runtime::host
