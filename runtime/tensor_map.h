// Tensor maps (cuTensorMapEncodeTiled): the checks the CUDA documentation sets on a tiled
// description of a tensor, and the bytes xcuda writes into the CUtensorMap for it
// (ptx/tensor_map.h), which generated code reads when it copies a box.
#pragma once

#include <cstdint>

#include "runtime/status.h"

namespace xcuda::runtime {

// cuTensorMapEncodeTiled's arguments; enumerations carry their CUDA values.
struct TiledTensorDescription {
  uint32_t element_type = 0;
  uint32_t rank = 0;
  const void* global_address = nullptr;
  const uint64_t* global_dims = nullptr;     // rank entries
  const uint64_t* global_strides = nullptr;  // rank - 1 entries, in bytes
  const uint32_t* box = nullptr;             // rank entries
  const uint32_t* element_strides = nullptr; // rank entries
  uint32_t interleave = 0;
  uint32_t swizzle = 0;
  uint32_t l2_promotion = 0;
  uint32_t fill = 0;
};

// Writes the 128 bytes at `map` (64-byte aligned); invalid_value says which rule the
// description breaks.
Expected<void> encode_tiled_tensor_map(const TiledTensorDescription& description, void* map);
// cuTensorMapReplaceAddress: the same map over memory at `global_address`.
Expected<void> replace_tensor_map_address(void* map, const void* global_address);

}  // namespace xcuda::runtime
