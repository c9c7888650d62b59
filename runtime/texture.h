// Texture and surface objects: immutable descriptions of the memory a kernel samples or
// accesses and how. A CUtexObject or CUsurfObject handle is the address of a
// TextureDescriptor; generated code passes it to the sampling functions of its backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/array.h"
#include "runtime/status.h"

namespace xcuda::runtime {

// Numbered as CUaddress_mode and CUfilter_mode.
enum class AddressMode : uint32_t { wrap = 0, clamp = 1, mirror = 2, border = 3 };
enum class FilterMode : uint32_t { point = 0, linear = 1 };

// One level of what a texture reads: `layers` (0 when not layered) boxes of
// width × height × depth elements.
struct TextureImage {
  unsigned char* data = nullptr;
  size_t width = 1, height = 1, depth = 1;
  size_t layers = 0;
  size_t row_pitch = 0;
  size_t slice_pitch = 0;  // between depth slices, and between layers
};

// CUDA_TEXTURE_DESC, decoded.
struct SamplerState {
  AddressMode address[3] = {AddressMode::clamp, AddressMode::clamp, AddressMode::clamp};
  FilterMode filter = FilterMode::point;
  FilterMode mipmap_filter = FilterMode::point;
  bool normalized_coordinates = false;
  bool read_as_integer = false;
  bool srgb = false;
  float border[4] = {0, 0, 0, 0};
  float level_bias = 0, min_level = 0, max_level = 0;
};

enum class ResourceKind { array, mipmapped_array, linear, pitch_2d };

struct TextureDescriptor {
  ResourceKind resource = ResourceKind::array;
  ElementFormat element;
  std::vector<TextureImage> levels;  // more than one for mipmapped arrays only
  SamplerState sampler;
  bool cubemap = false;
};

// The memory behind a texture, as CUDA_RESOURCE_DESC names it: an array, a mipmapped array,
// or linear memory (`data`, `format`, `channels`, and `width` × `height` elements `pitch` bytes
// apart; `height` is 1 for CU_RESOURCE_TYPE_LINEAR).
struct TextureResource {
  ResourceKind kind = ResourceKind::array;
  const Array* array = nullptr;
  const MipmappedArray* mipmapped_array = nullptr;
  unsigned char* data = nullptr;
  uint32_t format = 0;
  uint32_t channels = 1;
  size_t width = 0, height = 1, pitch = 0;
};

// Whether fetches return floats: 8- and 16-bit integers read as normalised floats unless the
// sampler asks for integers; 32-bit integers always read as integers (for them cudart passes
// no CU_TRSF_READ_AS_INTEGER even in cudaReadModeElementType).
bool reads_float(const ElementFormat& element, const SamplerState& sampler);
inline bool reads_float(const TextureDescriptor& texture) {
  return reads_float(texture.element, texture.sampler);
}

// Checks that the sampler suits the resource (linear filtering needs float results, linear
// memory only supports point sampling of integer coordinates, …).
Expected<std::unique_ptr<TextureDescriptor>> create_texture(const TextureResource& resource,
                                                            const SamplerState& sampler);
// A surface reads and writes an array made with CUDA_ARRAY3D_SURFACE_LDST.
Expected<std::unique_ptr<TextureDescriptor>> create_surface(const Array& array);

}  // namespace xcuda::runtime
