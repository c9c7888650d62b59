#include "runtime/hip/hip_texture.h"

#include <algorithm>
#include <string>

namespace xcuda::runtime::hip {

namespace abi = ptx::amdgpu_abi;

Expected<abi::TextureObject> encode_texture_object(const TextureDescriptor& texture) {
  if (texture.cubemap) return make_error(ErrorCode::not_supported, "cube-map textures on AMD GPUs");
  if (texture.levels.empty() || texture.levels.size() > abi::max_texture_levels)
    return make_error(ErrorCode::not_supported, std::to_string(texture.levels.size()) + " mipmap levels on AMD GPUs");
  abi::TextureObject object{};
  object.channel_kind = static_cast<uint32_t>(texture.element.kind);
  object.channel_bytes = texture.element.channel_bytes;
  object.channels = texture.element.channels;
  const SamplerState& sampler = texture.sampler;
  object.flags = (sampler.normalized_coordinates ? abi::texture_normalized_coordinates : 0) |
                 (reads_float(texture) ? abi::texture_reads_float : 0) | (sampler.srgb ? abi::texture_srgb : 0) |
                 (sampler.filter == FilterMode::linear ? abi::texture_linear_filter : 0) |
                 (sampler.mipmap_filter == FilterMode::linear ? abi::texture_linear_mipmap_filter : 0) |
                 (texture.resource == ResourceKind::linear ? abi::texture_linear_memory : 0);
  for (uint32_t axis = 0; axis < 3; ++axis) object.address_mode[axis] = static_cast<uint32_t>(sampler.address[axis]);
  object.level_count = static_cast<uint32_t>(texture.levels.size());
  std::copy(std::begin(sampler.border), std::end(sampler.border), object.border);
  object.level_bias = sampler.level_bias;
  object.min_level = sampler.min_level;
  object.max_level = sampler.max_level;
  for (size_t index = 0; index < texture.levels.size(); ++index) {
    const TextureImage& image = texture.levels[index];
    abi::TextureLevel& level = object.levels[index];
    level.data = reinterpret_cast<uintptr_t>(image.data);
    level.row_pitch = image.row_pitch;
    level.slice_pitch = image.slice_pitch;
    level.width = static_cast<uint32_t>(image.width);
    level.height = static_cast<uint32_t>(image.height);
    level.depth = static_cast<uint32_t>(image.depth);
    level.layers = static_cast<uint32_t>(image.layers);
  }
  return object;
}

}  // namespace xcuda::runtime::hip
