#include "runtime/texture.h"

#include <string>

namespace xcuda::runtime {
namespace {

// The largest linear-memory texture NVIDIA's sm_90 devices accept
// (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH).
constexpr size_t max_linear_width = size_t{1} << 28;

Error invalid(std::string message) { return make_error(ErrorCode::invalid_value, std::move(message)); }

TextureImage image_of(const Array& array) {
  return TextureImage{array.data(), array.width(), array.height(), array.depth(),
                      array.layers(), array.row_pitch(), array.slice_pitch()};
}

}  // namespace

bool reads_float(const ElementFormat& element, const SamplerState& sampler) {
  return element.kind == ChannelKind::floating || element.normalized ||
         (!sampler.read_as_integer && element.channel_bytes < 4);
}

Expected<std::unique_ptr<TextureDescriptor>> create_texture(const TextureResource& resource,
                                                            const SamplerState& sampler) {
  auto texture = std::make_unique<TextureDescriptor>();
  texture->resource = resource.kind;
  texture->sampler = sampler;
  switch (resource.kind) {
    case ResourceKind::array:
      texture->element = resource.array->element();
      texture->levels.push_back(image_of(*resource.array));
      texture->cubemap = resource.array->description().flags & array_cubemap;
      break;
    case ResourceKind::mipmapped_array:
      texture->element = resource.mipmapped_array->level(0).element();
      for (uint32_t level = 0; level < resource.mipmapped_array->level_count(); ++level)
        texture->levels.push_back(image_of(resource.mipmapped_array->level(level)));
      texture->cubemap = resource.mipmapped_array->description().flags & array_cubemap;
      break;
    case ResourceKind::linear:
    case ResourceKind::pitch_2d: {
      Expected<ElementFormat> element = element_format(resource.format, resource.channels);
      if (!element) return element.error();
      texture->element = *element;
      if (!resource.data) return invalid("the texture's memory pointer is null");
      if (reinterpret_cast<uintptr_t>(resource.data) % element->channel_bytes)
        return invalid("the texture's memory is not aligned to its channel size");
      if (resource.width == 0 || resource.height == 0) return invalid("the texture is empty");
      if (resource.kind == ResourceKind::linear && resource.width > max_linear_width)
        return invalid("a linear texture holds at most 2^28 elements");
      if (resource.width > resource.pitch / element->bytes())
        return invalid("pitch " + std::to_string(resource.pitch) + " is smaller than a row of " +
                       std::to_string(resource.width) + " elements");
      texture->levels.push_back(TextureImage{resource.data, resource.width, resource.height, 1, 0,
                                             resource.pitch, resource.pitch * resource.height});
      break;
    }
  }
  if (sampler.filter == FilterMode::linear && !reads_float(texture->element, sampler))
    return invalid("linear filtering needs a float result: the format reads as integers");
  if (texture->cubemap)
    return make_error(ErrorCode::not_supported, "cubemap textures are not supported yet");
  return texture;
}

Expected<std::unique_ptr<TextureDescriptor>> create_surface(const Array& array) {
  if (!(array.description().flags & array_surface_load_store))
    return invalid("the array was not created with CUDA_ARRAY3D_SURFACE_LDST");
  auto surface = std::make_unique<TextureDescriptor>();
  surface->element = array.element();
  surface->levels.push_back(image_of(array));
  surface->cubemap = array.description().flags & array_cubemap;
  return surface;
}

}  // namespace xcuda::runtime
