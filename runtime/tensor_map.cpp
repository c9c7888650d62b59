#include "runtime/tensor_map.h"

#include <cstring>
#include <string>

#include "ptx/tensor_map.h"

namespace xcuda::runtime {
namespace {

namespace abi = ptx::tensor_map;

// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill.
constexpr uint32_t interleave_none = 0, interleave_32b = 2, interleave_last = 2;
constexpr uint32_t swizzle_last = 6;
constexpr uint32_t l2_promotion_last = 3;
constexpr uint32_t fill_nan = 1, fill_last = 1;
constexpr uint32_t float_types[] = {6, 7, 8, 9, 10, 11, 12};  // f16 f32 f64 bf16 f32-ftz tf32 tf32-ftz

Error invalid(std::string message) { return {ErrorCode::invalid_value, std::move(message)}; }

bool is_float(uint32_t element_type) {
  for (uint32_t type : float_types)
    if (type == element_type) return true;
  return false;
}

std::string at(const char* array, uint32_t index) { return std::string(array) + "[" + std::to_string(index) + "]"; }

}  // namespace

Expected<void> encode_tiled_tensor_map(const TiledTensorDescription& description, void* map) {
  if (reinterpret_cast<uintptr_t>(map) % 64 != 0) return invalid("the tensor map is not 64-byte aligned");
  if (description.element_type >= 13 && description.element_type <= 15)
    return Error{ErrorCode::not_supported, "packed sub-byte element types (" + std::to_string(description.element_type) +
                                               ") are not supported yet"};
  uint32_t element = abi::element_bytes(description.element_type);
  if (element == 0) return invalid("element type " + std::to_string(description.element_type) + " is not a CUtensorMapDataType");
  uint32_t rank = description.rank;
  if (rank == 0 || rank > abi::max_rank) return invalid("rank " + std::to_string(rank) + " is not 1-5");
  if (description.interleave > interleave_last) return invalid("interleave " + std::to_string(description.interleave) + " is not a CUtensorMapInterleave");
  if (description.interleave != interleave_none && rank < 3) return invalid("an interleaved tensor needs rank 3 or more");
  if (description.swizzle > swizzle_last) return invalid("swizzle " + std::to_string(description.swizzle) + " is not a CUtensorMapSwizzle");
  if (description.l2_promotion > l2_promotion_last) return invalid("L2 promotion " + std::to_string(description.l2_promotion) + " is not a CUtensorMapL2promotion");
  if (description.fill > fill_last) return invalid("fill " + std::to_string(description.fill) + " is not a CUtensorMapFloatOOBfill");
  if (description.fill == fill_nan && !is_float(description.element_type)) return invalid("a NaN fill needs a floating-point element type");

  uint64_t address = reinterpret_cast<uintptr_t>(description.global_address);
  uint64_t address_alignment = description.interleave == interleave_32b ? 32 : 16;
  if (address % address_alignment != 0) return invalid("the global address is not " + std::to_string(address_alignment) + "-byte aligned");
  uint64_t stride_alignment = description.interleave == interleave_32b ? 32 : 16;
  for (uint32_t i = 0; i < rank; ++i) {
    uint64_t dimension = description.global_dims[i];
    if (dimension == 0 || dimension > (uint64_t{1} << 32)) return invalid(at("globalDim", i) + " = " + std::to_string(dimension) + " is not 1 to 2^32");
    if (i + 1 < rank) {
      uint64_t stride = description.global_strides[i];
      if (stride % stride_alignment != 0 || stride >= (uint64_t{1} << 40))
        return invalid(at("globalStrides", i) + " = " + std::to_string(stride) + " is not a multiple of " +
                       std::to_string(stride_alignment) + " below 2^40");
    }
    uint32_t box = description.box[i];
    if (box == 0 || box > 256) return invalid(at("boxDim", i) + " = " + std::to_string(box) + " is not 1-256");
    uint32_t step = description.element_strides[i];
    if (step == 0 || step > 8) return invalid(at("elementStrides", i) + " = " + std::to_string(step) + " is not 1-8");
  }
  uint64_t inner_bytes = uint64_t{description.box[0]} * element;
  if (description.interleave == interleave_none) {
    if (inner_bytes % 16 != 0) return invalid("boxDim[0] spans " + std::to_string(inner_bytes) + " bytes, not a multiple of 16");
    uint32_t span = abi::swizzle_span(description.swizzle);
    if (span != 0 && inner_bytes > span)
      return invalid("boxDim[0] spans " + std::to_string(inner_bytes) + " bytes, more than the swizzle's " + std::to_string(span));
  }
  if (description.interleave != interleave_none)
    return Error{ErrorCode::not_supported, "interleaved tensor maps are not supported yet"};
  if (abi::swizzle_span(description.swizzle) == 0 && description.swizzle != 0)
    return Error{ErrorCode::not_supported, "the 128-byte swizzle atoms (swizzle " + std::to_string(description.swizzle) +
                                               ") are not supported yet"};

  abi::TensorMap encoded{};
  encoded.magic = abi::encoded_magic;
  encoded.rank = static_cast<uint8_t>(rank);
  encoded.element_type = static_cast<uint8_t>(description.element_type);
  encoded.interleave = static_cast<uint8_t>(description.interleave);
  encoded.swizzle = static_cast<uint8_t>(description.swizzle);
  encoded.fill = static_cast<uint8_t>(description.fill);
  encoded.global_address = address;
  for (uint32_t i = 0; i < rank; ++i) {
    encoded.global_dims[i] = description.global_dims[i];
    if (i + 1 < rank) encoded.global_strides[i] = description.global_strides[i];
    encoded.box[i] = static_cast<uint16_t>(description.box[i]);
    // Without interleave TMA has no stride in the first dimension: the documentation says
    // elementStrides[0] is ignored.
    encoded.element_strides[i] = static_cast<uint8_t>(i == 0 ? 1 : description.element_strides[i]);
  }
  std::memset(map, 0, 128);
  std::memcpy(map, &encoded, sizeof encoded);
  return {};
}

Expected<void> replace_tensor_map_address(void* map, const void* global_address) {
  if (reinterpret_cast<uintptr_t>(map) % 64 != 0) return invalid("the tensor map is not 64-byte aligned");
  abi::TensorMap encoded;
  std::memcpy(&encoded, map, sizeof encoded);
  if (encoded.magic != abi::encoded_magic) return invalid("the tensor map was not encoded by cuTensorMapEncode*");
  uint64_t address = reinterpret_cast<uintptr_t>(global_address);
  if (address % 16 != 0) return invalid("the global address is not 16-byte aligned");
  encoded.global_address = address;
  std::memcpy(map, &encoded, sizeof encoded);
  return {};
}

}  // namespace xcuda::runtime
