// CUDA arrays: opaque, typed storage for textures and surfaces (1D, 2D, 3D, layered, cubemap,
// and the levels of mipmapped arrays). An array is memory of its device, from the backend, with
// rows packed back to back; only textures, surfaces and array copies ever see its layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Backend;

enum class ChannelKind : uint8_t { unsigned_integer, signed_integer, floating };

// How one element is stored: `channels` channels of `channel_bytes` each. `normalized` formats
// (the UNORM/SNORM ones) always read as floats in [0, 1] or [-1, 1].
struct ElementFormat {
  ChannelKind kind = ChannelKind::floating;
  uint32_t channel_bytes = 4;
  uint32_t channels = 1;
  bool normalized = false;

  uint32_t bytes() const { return channel_bytes * channels; }
};

// `format` is a CUarray_format value and `channels` the descriptor's NumChannels (1, 2 or 4),
// which the UNORM/SNORM formats fix themselves.
Expected<ElementFormat> element_format(uint32_t format, uint32_t channels);

// Flags of ArrayDescription, numbered as CUDA_ARRAY3D_*.
inline constexpr uint32_t array_layered = 0x01;
inline constexpr uint32_t array_surface_load_store = 0x02;
inline constexpr uint32_t array_cubemap = 0x04;
inline constexpr uint32_t array_texture_gather = 0x08;

// What the application asked for, as CUDA_ARRAY3D_DESCRIPTOR says it: a height or depth of 0
// means the array has fewer dimensions; for a layered array `depth` counts layers.
struct ArrayDescription {
  size_t width = 0;
  size_t height = 0;
  size_t depth = 0;
  uint32_t format = 0;
  uint32_t channels = 1;
  uint32_t flags = 0;
};

class Array {
 public:
  // Checks the description (dimensions, format, flags) and takes zeroed storage on `device`
  // from `backend`, which gets it back when the array is destroyed and must outlive it.
  static Expected<std::unique_ptr<Array>> create(Backend& backend, int device,
                                                 const ArrayDescription& description,
                                                 bool mipmap_level = false);
  ~Array();
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  const ArrayDescription& description() const { return description_; }
  const ElementFormat& element() const { return element_; }
  // Device memory: only the backend's queues and kernels may touch it.
  unsigned char* data() const { return data_; }
  // Extents in elements, at least 1 each; `layers` is 0 unless the array is layered.
  size_t width() const { return description_.width; }
  size_t height() const { return description_.height ? description_.height : 1; }
  size_t depth() const;
  size_t layers() const;
  size_t row_pitch() const { return row_pitch_; }
  size_t slice_pitch() const { return row_pitch_ * height(); }
  size_t bytes() const { return slice_pitch() * slice_count(); }
  // Rows stacked on one another: the depth of a 3D array or the layers of a layered one.
  size_t slice_count() const { return description_.depth ? description_.depth : 1; }
  // Levels of a mipmapped array belong to it and are destroyed with it.
  bool is_mipmap_level() const { return mipmap_level_; }

 private:
  Array(Backend& backend, int device, const ArrayDescription& description,
        const ElementFormat& element, bool mipmap_level);

  Backend& backend_;
  int device_;
  ArrayDescription description_;
  ElementFormat element_;
  bool mipmap_level_;
  size_t row_pitch_ = 0;
  unsigned char* data_ = nullptr;
};

class MipmappedArray {
 public:
  // Level 0 has the description's extents; each further level halves them (at least 1), except
  // the layer count of a layered array.
  static Expected<std::unique_ptr<MipmappedArray>> create(Backend& backend, int device,
                                                          const ArrayDescription& description,
                                                          uint32_t levels);

  const ArrayDescription& description() const { return levels_.front()->description(); }
  uint32_t level_count() const { return static_cast<uint32_t>(levels_.size()); }
  Array& level(uint32_t index) const { return *levels_[index]; }

 private:
  std::vector<std::unique_ptr<Array>> levels_;
};

HandleRegistry<Array>& live_arrays();
HandleRegistry<MipmappedArray>& live_mipmapped_arrays();

}  // namespace xcuda::runtime
