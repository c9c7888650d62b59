// What xcuda keeps in the 128 opaque bytes of a CUtensorMap, and how the tensor copies
// (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor) ask the runtime to move a box. The driver
// writes the map (cuTensorMapEncodeTiled), programs pass it around as bytes (a __grid_constant__
// kernel parameter, a copy in global memory), and generated code reads it through the runtime
// function below, so only those two sides need to agree on it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xcuda::ptx::tensor_map {

inline constexpr uint32_t max_rank = 5;
// Marks bytes the driver encoded: a copy through anything else fails the launch rather than
// reading memory a stray map happens to name.
inline constexpr uint32_t encoded_magic = 0x414d5458;  // "XTMA"
// What tensormap.replace writes over the magic when it sets a value xcuda's maps do not hold
// (one cuTensorMapEncodeTiled would refuse): a later copy through the map fails the launch.
inline constexpr uint32_t refused_magic = 0x464d5458;  // "XTMF"

struct TensorMap {
  uint32_t magic;
  uint8_t rank;          // 1-5
  uint8_t element_type;  // CUtensorMapDataType
  uint8_t interleave;    // CUtensorMapInterleave
  uint8_t swizzle;       // CUtensorMapSwizzle
  uint8_t fill;          // CUtensorMapFloatOOBfill
  uint8_t reserved[3];
  uint8_t element_strides[max_rank];  // traversal steps, 1-8
  uint8_t reserved_strides[3];
  uint16_t box[max_rank];             // elements the box spans in each dimension, 1-256
  uint16_t reserved_box[3];
  uint64_t global_address;
  uint64_t global_dims[max_rank];          // elements, 1 to 2^32
  uint64_t global_strides[max_rank - 1];   // bytes between consecutive indices of dimensions 1-4
};
static_assert(sizeof(TensorMap) <= 128, "a CUtensorMap has 128 bytes");
static_assert(offsetof(TensorMap, global_address) % 8 == 0);

// Bytes of one element of a CUtensorMapDataType; 0 for the packed sub-byte types (13-15), which
// xcuda does not encode, and for values outside the enumeration.
inline constexpr uint32_t element_bytes(uint32_t element_type) {
  constexpr uint8_t bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return element_type < sizeof bytes ? bytes[element_type] : 0;
}

// The span of CU_TENSOR_MAP_SWIZZLE_32B/64B/128B in bytes: 16-byte chunks trade places within
// it. 0 for no swizzle and for the 128-byte atom variants (sm_100), which xcuda does not encode.
inline constexpr uint32_t swizzle_span(uint32_t swizzle) { return swizzle >= 1 && swizzle <= 3 ? 16u << swizzle : 0; }

// The operation word of copy_symbol.
enum class Direction : uint32_t {
  load = 0,    // global -> shared, out-of-bounds elements filled
  store = 1,   // shared -> global, out-of-bounds elements left alone
  reduce = 2,  // shared -> global, combined with what is there by a Reduction
};
enum class Reduction : uint32_t { add, min, max, inc, dec, bitwise_and, bitwise_or, bitwise_xor };
inline constexpr uint32_t direction_mask = 0xff;
inline constexpr uint32_t reduction_shift = 8;
inline constexpr uint32_t rank_shift = 16;  // the instruction's .1d-.5d
inline constexpr uint32_t operation(Direction direction, uint32_t rank, Reduction reduction = Reduction::add) {
  return static_cast<uint32_t>(direction) | static_cast<uint32_t>(reduction) << reduction_shift | rank << rank_shift;
}

// uint32_t(const TensorMap* map, uint32_t operation, const int32_t* coordinates,
//          uint8_t* shared, uint32_t shared_address):
// moves the box whose first element is at `coordinates` (one per dimension of the map) between
// global memory and `shared`, whose shared-window address `shared_address` places the swizzle
// pattern. Returns the bytes the box occupies in shared memory, which a load's mbarrier counts
// as transactions. A map the driver did not encode, or a rank other than the map's, fails the
// launch.
inline constexpr const char* copy_symbol = "__xcuda_tensor_copy";

// void(uint8_t* destination, const uint8_t* source, uint32_t bytes, uint32_t operation):
// cp.reduce.async.bulk, each element of `destination` combined atomically with the one of
// `source`; `operation` is reduction_operation(). An element type the reduction does not take
// fails the launch.
inline constexpr const char* bulk_reduce_symbol = "__xcuda_bulk_reduce";
inline constexpr uint32_t element_type_shift = 24;  // a CUtensorMapDataType
inline constexpr uint32_t reduction_operation(Reduction reduction, uint32_t element_type) {
  return static_cast<uint32_t>(reduction) << reduction_shift | element_type << element_type_shift;
}

}  // namespace xcuda::ptx::tensor_map
