#include "runtime/array.h"

#include <algorithm>
#include <string>

#include "runtime/backend.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

// The limits NVIDIA's sm_90 devices report (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE*), which every
// CUDA program has been written against.
constexpr size_t max_1d_width = 131072;
constexpr size_t max_2d_width = 131072;
constexpr size_t max_2d_height = 65536;
constexpr size_t max_3d_extent = 16384;
constexpr size_t max_layers = 2048;

Error invalid(std::string message) { return make_error(ErrorCode::invalid_value, std::move(message)); }

Status check_extents(const ArrayDescription& description) {
  size_t width = description.width, height = description.height, depth = description.depth;
  bool layered = description.flags & array_layered;
  bool cubemap = description.flags & array_cubemap;
  if (width == 0) return invalid("array width is 0");
  if (cubemap) {
    if (width != height) return invalid("a cubemap's faces must be square");
    if (layered ? depth == 0 || depth % 6 != 0 : depth != 6)
      return invalid("a cubemap has 6 faces per layer (depth " + std::to_string(depth) + ")");
  }
  if (layered && depth == 0) return invalid("a layered array needs at least one layer");
  if (layered && depth > max_layers * (cubemap ? 6 : 1))
    return invalid("more than " + std::to_string(max_layers) + " layers");
  if (!layered && depth != 0 && height == 0) return invalid("a 3D array needs a height");
  bool three_d = depth != 0 && !layered;
  if (three_d && !cubemap && std::max({width, height, depth}) > max_3d_extent)
    return invalid("3D array extent above " + std::to_string(max_3d_extent));
  if (height == 0 && width > max_1d_width)
    return invalid("1D array width above " + std::to_string(max_1d_width));
  if (height != 0 && (width > max_2d_width || height > max_2d_height))
    return invalid("2D array larger than " + std::to_string(max_2d_width) + " x " +
                   std::to_string(max_2d_height));
  return {};
}

}  // namespace

Expected<ElementFormat> element_format(uint32_t format, uint32_t channels) {
  using enum ChannelKind;
  // UNORM_INT8X1 (0xc0) to SNORM_INT16X4 (0xcb): signedness, width, then 1, 2 or 4 channels.
  if (format >= 0xc0 && format <= 0xcb) {
    uint32_t index = format - 0xc0;
    static constexpr uint32_t counts[] = {1, 2, 4};
    return ElementFormat{index >= 6 ? signed_integer : unsigned_integer, index % 6 >= 3 ? 2u : 1u,
                         counts[index % 3], true};
  }
  if (channels != 1 && channels != 2 && channels != 4)
    return invalid("channel count " + std::to_string(channels) + " is not 1, 2 or 4");
  switch (format) {
    case 0x01: return ElementFormat{unsigned_integer, 1, channels, false};
    case 0x02: return ElementFormat{unsigned_integer, 2, channels, false};
    case 0x03: return ElementFormat{unsigned_integer, 4, channels, false};
    case 0x08: return ElementFormat{signed_integer, 1, channels, false};
    case 0x09: return ElementFormat{signed_integer, 2, channels, false};
    case 0x0a: return ElementFormat{signed_integer, 4, channels, false};
    case 0x10: return ElementFormat{floating, 2, channels, false};
    case 0x20: return ElementFormat{floating, 4, channels, false};
    default:
      return make_error(ErrorCode::not_supported,
                        "array format " + std::to_string(format) +
                            " (block-compressed or video) is not supported");
  }
}

Array::Array(Backend& backend, int device, const ArrayDescription& description,
             const ElementFormat& element, bool mipmap_level)
    : backend_(backend),
      device_(device),
      description_(description),
      element_(element),
      mipmap_level_(mipmap_level) {}

Array::~Array() {
  if (!data_) return;
  if (Status released = backend_.release(device_, data_); !released)
    logger().error("CUDA array storage on device {}: {}", device_, released.error().message);
}

size_t Array::depth() const {
  return description_.flags & (array_layered | array_cubemap) ? 1 : slice_count();
}

size_t Array::layers() const { return description_.flags & array_layered ? slice_count() : 0; }

Expected<std::unique_ptr<Array>> Array::create(Backend& backend, int device,
                                               const ArrayDescription& description,
                                               bool mipmap_level) {
  constexpr uint32_t known_flags =
      array_layered | array_surface_load_store | array_cubemap | array_texture_gather;
  if (description.flags & ~known_flags)
    return make_error(ErrorCode::not_supported,
                      "array flags " + std::to_string(description.flags & ~known_flags) +
                          " (depth, sparse, deferred mapping …) are not supported");
  if (Status status = check_extents(description); !status) return status.error();
  Expected<ElementFormat> element = element_format(description.format, description.channels);
  if (!element) return element.error();
  std::unique_ptr<Array> array(new Array(backend, device, description, *element, mipmap_level));
  array->description_.channels = element->channels;
  array->row_pitch_ = description.width * element->bytes();
  // Extents are bounded above, so bytes() cannot overflow.
  Expected<void*> storage = backend.allocate_zeroed(device, array->bytes());
  if (!storage) return storage.error();
  array->data_ = static_cast<unsigned char*>(*storage);
  return array;
}

Expected<std::unique_ptr<MipmappedArray>> MipmappedArray::create(
    Backend& backend, int device, const ArrayDescription& description, uint32_t levels) {
  size_t largest = std::max({description.width, description.height,
                             description.flags & (array_layered | array_cubemap) ? 0 : description.depth});
  uint32_t possible = 1;
  while (largest >> possible) ++possible;
  if (levels == 0 || levels > possible)
    return invalid("a " + std::to_string(largest) + "-wide mipmapped array has 1 to " +
                   std::to_string(possible) + " levels, not " + std::to_string(levels));
  auto result = std::unique_ptr<MipmappedArray>(new MipmappedArray());
  ArrayDescription level = description;
  bool keeps_depth = description.flags & (array_layered | array_cubemap);
  for (uint32_t index = 0; index < levels; ++index) {
    Expected<std::unique_ptr<Array>> array = Array::create(backend, device, level, true);
    if (!array) return array.error();
    result->levels_.push_back(std::move(*array));
    level.width = std::max<size_t>(1, level.width / 2);
    if (level.height) level.height = std::max<size_t>(1, level.height / 2);
    if (level.depth && !keeps_depth) level.depth = std::max<size_t>(1, level.depth / 2);
  }
  return result;
}

HandleRegistry<Array>& live_arrays() {
  static HandleRegistry<Array> registry;
  return registry;
}

HandleRegistry<MipmappedArray>& live_mipmapped_arrays() {
  static HandleRegistry<MipmappedArray> registry;
  return registry;
}

}  // namespace xcuda::runtime
