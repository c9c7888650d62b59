#include "runtime/host/texture_sampling.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "ptx/host_abi.h"
#include "runtime/host/worker_pool.h"
#include "runtime/texture.h"

namespace xcuda::runtime::host {
namespace {

namespace abi = ptx::host_abi;

const TextureDescriptor& descriptor(uint64_t object) {
  return *reinterpret_cast<const TextureDescriptor*>(static_cast<uintptr_t>(object));
}

uint32_t dimensions(uint32_t geometry) {
  switch (geometry) {
    case abi::geometry_2d:
    case abi::geometry_layered_2d: return 2;
    case abi::geometry_3d: return 3;
    default: return 1;
  }
}

bool is_layered(uint32_t geometry) {
  return geometry == abi::geometry_layered_1d || geometry == abi::geometry_layered_2d;
}

float half_to_float(uint16_t bits) {
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude = exponent == 0    ? std::ldexp(static_cast<float>(mantissa), -24)
                    : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                     : std::ldexp(static_cast<float>(mantissa | 0x400),
                                                  static_cast<int>(exponent) - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

// Integer channel `channel` of the element at `element`, sign-extended for signed formats.
int64_t integer_channel(const unsigned char* element, const ElementFormat& format,
                        uint32_t channel) {
  const unsigned char* at = element + channel * format.channel_bytes;
  bool is_signed = format.kind == ChannelKind::signed_integer;
  switch (format.channel_bytes) {
    case 1: return is_signed ? int64_t{static_cast<int8_t>(*at)} : int64_t{*at};
    case 2: {
      uint16_t value;
      std::memcpy(&value, at, 2);
      return is_signed ? int64_t{static_cast<int16_t>(value)} : int64_t{value};
    }
    default: {
      uint32_t value;
      std::memcpy(&value, at, 4);
      return is_signed ? int64_t{static_cast<int32_t>(value)} : int64_t{value};
    }
  }
}

float srgb_to_linear(float value) {
  return value <= 0.04045f ? value / 12.92f : std::pow((value + 0.055f) / 1.055f, 2.4f);
}

// Four channels of one texel as the texture returns them. Channels the format lacks read as 0,
// alpha included (measured on an H200).
struct Texel {
  float value[4] = {0, 0, 0, 0};
};

Texel float_texel(const TextureDescriptor& texture, const unsigned char* element) {
  const ElementFormat& format = texture.element;
  Texel texel;
  for (uint32_t channel = 0; channel < format.channels; ++channel) {
    float& value = texel.value[channel];
    if (format.kind == ChannelKind::floating) {
      if (format.channel_bytes == 2) {
        uint16_t bits;
        std::memcpy(&bits, element + 2 * channel, 2);
        value = half_to_float(bits);
      } else {
        std::memcpy(&value, element + 4 * channel, 4);
      }
      continue;
    }
    int64_t raw = integer_channel(element, format, channel);
    // Normalised-float read mode (Programming Guide, "Texture Fetching"): unsigned n-bit
    // integers map to [0, 1] over 2^n - 1, signed ones to [-1, 1] over 2^(n-1) - 1.
    bool is_signed = format.kind == ChannelKind::signed_integer;
    float scale = static_cast<float>((uint64_t{1} << (8 * format.channel_bytes - is_signed)) - 1);
    value = std::max(static_cast<float>(raw) / scale, -1.0f);
    if (texture.sampler.srgb && !is_signed && format.channel_bytes == 1 && channel < 3)
      value = srgb_to_linear(value);
  }
  return texel;
}

void integer_texel(const TextureDescriptor& texture, const unsigned char* element,
                   uint32_t result[4]) {
  const ElementFormat& format = texture.element;
  for (uint32_t channel = 0; channel < 4; ++channel)
    result[channel] = channel < format.channels
                          ? static_cast<uint32_t>(integer_channel(element, format, channel))
                          : 0;
}

// A texel index along one axis of `size` texels after the address mode; -1 for the border.
int64_t address(int64_t index, int64_t size, AddressMode mode) {
  switch (mode) {
    case AddressMode::wrap: return (index % size + size) % size;
    case AddressMode::mirror: {
      int64_t folded = (index % (2 * size) + 2 * size) % (2 * size);
      return folded < size ? folded : 2 * size - 1 - folded;
    }
    case AddressMode::border: return index >= 0 && index < size ? index : -1;
    default: return std::clamp<int64_t>(index, 0, size - 1);
  }
}

// The texels one axis contributes and their weights in 256ths: one tap for point sampling, two
// for linear filtering.
struct AxisTaps {
  int64_t index[2] = {0, 0};
  uint32_t weight[2] = {256, 0};
  uint32_t count = 1;
};

// 2^30 is far outside any texture (at most 2^28 texels) and keeps floor() in range.
int64_t floor_index(float coordinate) {
  if (std::isnan(coordinate)) return 0;
  return static_cast<int64_t>(std::floor(std::clamp(coordinate, -0x1p30f, 0x1p30f)));
}

// The guide's linear-filtering weight: frac(x - 0.5) in 9-bit fixed point with 8 fractional
// bits, rounded to nearest (measured on an H200), in 256ths.
uint32_t fixed_point_weight(float fraction) {
  return static_cast<uint32_t>(std::nearbyint(fraction * 256.0f));
}

AxisTaps axis_taps(float coordinate, int64_t size, AddressMode mode, bool linear) {
  AxisTaps taps;
  if (!linear) {
    taps.index[0] = address(floor_index(coordinate), size, mode);
    return taps;
  }
  float shifted = coordinate - 0.5f;
  int64_t first = floor_index(shifted);
  uint32_t alpha = fixed_point_weight(shifted - std::floor(shifted));
  taps.index[0] = address(first, size, mode);
  taps.index[1] = address(first + 1, size, mode);
  taps.weight[0] = 256 - alpha;
  taps.weight[1] = alpha;
  taps.count = 2;
  return taps;
}

struct Sample {
  const TextureDescriptor& texture;
  uint32_t geometry;
  bool integer_coordinates;
  const uint32_t* coordinates;

  float coordinate(uint32_t axis) const {
    if (!integer_coordinates) {
      float value;
      std::memcpy(&value, &coordinates[axis], 4);
      return value;
    }
    // An integer coordinate names a texel; its centre is half a texel further.
    return static_cast<float>(static_cast<int32_t>(coordinates[axis])) + 0.5f;
  }

  // Per-axis taps on one mipmap level.
  void taps(const TextureImage& image, bool linear, AxisTaps result[3]) const {
    const SamplerState& sampler = texture.sampler;
    size_t extents[3] = {image.width, image.height, image.depth};
    const TextureImage& base = texture.levels.front();
    size_t base_extents[3] = {base.width, base.height, base.depth};
    for (uint32_t axis = 0; axis < dimensions(geometry); ++axis) {
      auto size = static_cast<int64_t>(extents[axis]);
      float position = coordinate(axis);
      // Wrap and mirror need normalised coordinates; without them the hardware clamps.
      AddressMode mode = sampler.address[axis];
      if (!sampler.normalized_coordinates && !integer_coordinates &&
          (mode == AddressMode::wrap || mode == AddressMode::mirror))
        mode = AddressMode::clamp;
      if (texture.resource == ResourceKind::linear) mode = AddressMode::border;
      if (sampler.normalized_coordinates && !integer_coordinates)
        position *= static_cast<float>(size);
      else if (extents[axis] != base_extents[axis])
        position *= static_cast<float>(size) / static_cast<float>(base_extents[axis]);
      result[axis] = axis_taps(position, size, mode, linear && !integer_coordinates);
    }
  }

  const unsigned char* element(const TextureImage& image, const int64_t index[3],
                               size_t layer) const {
    return image.data + (layer * image.depth + static_cast<size_t>(index[2])) * image.slice_pitch +
           static_cast<size_t>(index[1]) * image.row_pitch +
           static_cast<size_t>(index[0]) * texture.element.bytes();
  }

  size_t layer(const TextureImage& image) const {
    if (!is_layered(geometry) || image.layers == 0) return 0;
    auto requested = static_cast<int64_t>(static_cast<int32_t>(coordinates[3]));
    return static_cast<size_t>(std::clamp<int64_t>(requested, 0, image.layers - 1));
  }

  // Filtered floats from one level: the weighted sum of every tap's texel.
  Texel filtered(const TextureImage& image) const {
    AxisTaps axes[3];
    taps(image, texture.sampler.filter == FilterMode::linear, axes);
    size_t slice = layer(image);
    Texel border;
    std::copy(std::begin(texture.sampler.border), std::end(texture.sampler.border), border.value);
    Texel sum{{0, 0, 0, 0}};
    bool single = axes[0].count * axes[1].count * axes[2].count == 1;
    for (uint32_t k = 0; k < axes[2].count; ++k)
      for (uint32_t j = 0; j < axes[1].count; ++j)
        for (uint32_t i = 0; i < axes[0].count; ++i) {
          int64_t index[3] = {axes[0].index[i], axes[1].index[j], axes[2].index[k]};
          bool outside = index[0] < 0 || index[1] < 0 || index[2] < 0;
          Texel texel = outside ? border : float_texel(texture, element(image, index, slice));
          // A point sample is the texel itself, -0 and NaN payloads included.
          if (single) return texel;
          // A texel's weight is the product of its axes' weights, itself rounded to 256ths:
          // an H200 gives exactly that where texels differ non-linearly (border colours).
          uint64_t product = uint64_t{axes[0].weight[i]} * axes[1].weight[j] * axes[2].weight[k];
          float weight = static_cast<float>((product + 32768) / 65536) / 256.0f;
          for (uint32_t channel = 0; channel < 4; ++channel)
            sum.value[channel] += weight * texel.value[channel];
        }
    return sum;
  }

  // The mipmap level of detail, clamped as the sampler says.
  float level_of_detail(bool explicit_level, float level) const {
    const SamplerState& sampler = texture.sampler;
    float lod = (explicit_level ? level : 0.0f) + sampler.level_bias;
    lod = std::clamp(lod, sampler.min_level, std::max(sampler.min_level, sampler.max_level));
    return std::clamp(lod, 0.0f, static_cast<float>(texture.levels.size() - 1));
  }

  Texel mipmapped(float lod) const {
    if (texture.levels.size() == 1) return filtered(texture.levels.front());
    if (texture.sampler.mipmap_filter == FilterMode::point)
      return filtered(texture.levels[static_cast<size_t>(std::floor(lod + 0.5f))]);
    auto lower = static_cast<size_t>(std::floor(lod));
    float fraction = static_cast<float>(fixed_point_weight(lod - std::floor(lod))) / 256.0f;
    Texel first = filtered(texture.levels[lower]);
    if (fraction == 0.0f || lower + 1 >= texture.levels.size()) return first;
    Texel second = filtered(texture.levels[lower + 1]);
    for (uint32_t channel = 0; channel < 4; ++channel)
      first.value[channel] =
          (1.0f - fraction) * first.value[channel] + fraction * second.value[channel];
    return first;
  }

  // tld4: channel `channel` of the 2 × 2 texels bilinear filtering would read, in the order
  // the PTX ISA gives: (i0, j1), (i1, j1), (i1, j0), (i0, j0).
  void gather(uint32_t channel, uint32_t result[4]) const {
    const TextureImage& image = texture.levels.front();
    AxisTaps axes[3];
    taps(image, true, axes);
    size_t slice = layer(image);
    static constexpr uint32_t corners[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
    bool floats = reads_float(texture);
    for (uint32_t corner = 0; corner < 4; ++corner) {
      int64_t index[3] = {axes[0].index[corners[corner][0]], axes[1].index[corners[corner][1]], 0};
      if (index[0] < 0 || index[1] < 0) {
        std::memcpy(&result[corner], &texture.sampler.border[channel], 4);
      } else if (floats) {
        float value = float_texel(texture, element(image, index, slice)).value[channel];
        std::memcpy(&result[corner], &value, 4);
      } else {
        uint32_t texel[4];
        integer_texel(texture, element(image, index, slice), texel);
        result[corner] = texel[channel];
      }
    }
  }
};

}  // namespace

TextureWords texture_fetch(uint64_t object, uint32_t operation, TextureWords coordinates,
                           float level) {
  const TextureDescriptor& texture = descriptor(object);
  uint32_t words[4];
  std::memcpy(words, &coordinates, sizeof words);
  Sample sample{texture, operation & abi::geometry_mask,
                (operation & abi::fetch_integer_coordinates) != 0, words};
  TextureWords result{};
  uint32_t channels[4] = {};
  if (operation & abi::fetch_gather) {
    sample.gather((operation >> abi::fetch_gather_channel_shift) & 3, channels);
    std::memcpy(&result, channels, sizeof channels);
    return result;
  }
  float lod = sample.level_of_detail((operation & abi::fetch_explicit_level) != 0, level);
  if (reads_float(texture)) {
    Texel texel = sample.mipmapped(lod);
    std::memcpy(&result, texel.value, sizeof texel.value);
    return result;
  }
  // Integer reads are never filtered: the nearest texel of the nearest level.
  const TextureImage& image = texture.levels[static_cast<size_t>(std::floor(lod + 0.5f))];
  AxisTaps axes[3];
  sample.taps(image, false, axes);
  int64_t index[3] = {axes[0].index[0], axes[1].index[0], axes[2].index[0]};
  if (index[0] < 0 || index[1] < 0 || index[2] < 0) return result;
  integer_texel(texture, sample.element(image, index, sample.layer(image)), channels);
  std::memcpy(&result, channels, sizeof channels);
  return result;
}

namespace {

// Where a surface access goes: null for an out-of-range access under .zero; under .trap the
// launch fails, as on NVIDIA hardware. With `aligned`, a byte column that is not a multiple of
// the access size fails the launch whatever the mode, as sured.b's does on an H200 even where
// .clamp or .zero would have moved or dropped the access (sured.p's element columns do not).
unsigned char* surface_location(uint64_t object, uint32_t operation, TextureWords coordinates,
                                bool aligned = false) {
  const TextureDescriptor& surface = descriptor(object);
  const TextureImage& image = surface.levels.front();
  uint32_t geometry = operation & abi::geometry_mask;
  uint32_t count = dimensions(geometry);
  int32_t words[4];
  std::memcpy(words, &coordinates, sizeof words);
  int64_t column = words[0];
  if (operation & abi::surface_element_column)
    column *= static_cast<int64_t>(surface.element.bytes());
  else if (aligned && column % abi::surface_access_bytes(operation) != 0)
    abandon_current_block(ErrorCode::misaligned_address, "misaligned surface access");
  // Column in bytes, row, slice, layer, and how many of each there are.
  int64_t position[4] = {column, count > 1 ? words[1] : 0, count > 2 ? words[2] : 0,
                         is_layered(geometry) ? words[3] : 0};
  int64_t limit[4] = {static_cast<int64_t>(image.width * surface.element.bytes()) -
                          abi::surface_access_bytes(operation) + 1,
                      static_cast<int64_t>(image.height), static_cast<int64_t>(image.depth),
                      static_cast<int64_t>(std::max<size_t>(image.layers, 1))};
  bool inside = true;
  for (uint32_t axis = 0; axis < 4; ++axis)
    inside = inside && position[axis] >= 0 && position[axis] < limit[axis];
  if (!inside) {
    if (operation & abi::surface_zero) return nullptr;
    if (!(operation & abi::surface_clamp) || limit[0] <= 0)
      abandon_current_block(ErrorCode::illegal_address, "surface access out of range");
    for (uint32_t axis = 0; axis < 4; ++axis)
      position[axis] = std::clamp<int64_t>(position[axis], 0, limit[axis] - 1);
  }
  return image.data +
         static_cast<size_t>(position[3] * static_cast<int64_t>(image.depth) + position[2]) *
             image.slice_pitch +
         static_cast<size_t>(position[1]) * image.row_pitch + static_cast<size_t>(position[0]);
}

}  // namespace

TextureWords surface_load(uint64_t object, uint32_t operation, TextureWords coordinates) {
  TextureWords result{};
  if (const unsigned char* at = surface_location(object, operation, coordinates))
    std::memcpy(&result, at, abi::surface_access_bytes(operation));
  return result;
}

void surface_store(uint64_t object, uint32_t operation, TextureWords coordinates,
                   TextureWords values) {
  if (unsigned char* at = surface_location(object, operation, coordinates))
    std::memcpy(at, &values, abi::surface_access_bytes(operation));
}

namespace {

// sured's operation on one 32- or 64-bit word, compared as signed integers when `is_signed`.
template <typename Word>
void reduce(unsigned char* at, uint32_t reduction, bool is_signed, Word value) {
  auto combined = [&](Word current) -> Word {
    switch (reduction) {
      case abi::reduce_add: return current + value;
      case abi::reduce_and: return current & value;
      case abi::reduce_or: return current | value;
      default: {
        using Signed = std::make_signed_t<Word>;
        bool below =
            is_signed ? static_cast<Signed>(value) < static_cast<Signed>(current) : value < current;
        return below == (reduction == abi::reduce_min) ? value : current;
      }
    }
  };
  if (reinterpret_cast<uintptr_t>(at) % sizeof(Word) == 0) {
    std::atomic_ref<Word> element(*reinterpret_cast<Word*>(at));
    Word current = element.load(std::memory_order_relaxed);
    while (!element.compare_exchange_weak(current, combined(current), std::memory_order_relaxed)) {
    }
    return;
  }
  // A column aligned within its row can still lie across a word in memory: rows are as long as
  // their elements, so an odd number of 4-byte elements leaves the next row's 8-byte columns
  // misaligned. Every reduction there goes through one lock.
  static std::mutex misaligned_words;
  std::lock_guard lock(misaligned_words);
  Word current;
  std::memcpy(&current, at, sizeof current);
  current = combined(current);
  std::memcpy(at, &current, sizeof current);
}

}  // namespace

void surface_reduce(uint64_t object, uint32_t operation, TextureWords coordinates, uint64_t value) {
  unsigned char* at = surface_location(object, operation, coordinates, true);
  if (!at) return;
  bool is_signed = operation & abi::surface_element_column
                       ? descriptor(object).element.kind == ChannelKind::signed_integer
                       : (operation & abi::surface_signed) != 0;
  uint32_t reduction = abi::surface_reduction(operation);
  if (abi::surface_access_bytes(operation) == 8)
    reduce(at, reduction, is_signed, value);
  else
    reduce(at, reduction, is_signed, static_cast<uint32_t>(value));
}

uint32_t resource_query(uint64_t object, uint32_t query, uint32_t level) {
  const TextureDescriptor& texture = descriptor(object);
  const TextureImage& image = texture.levels[std::min<size_t>(level, texture.levels.size() - 1)];
  const SamplerState& sampler = texture.sampler;
  switch (query) {
    case abi::query_width: return static_cast<uint32_t>(image.width);
    case abi::query_height: return static_cast<uint32_t>(image.height);
    case abi::query_depth: return static_cast<uint32_t>(image.depth);
    case abi::query_array_size: return static_cast<uint32_t>(image.layers);
    case abi::query_mipmap_levels: return static_cast<uint32_t>(texture.levels.size());
    case abi::query_normalized_coordinates: return sampler.normalized_coordinates;
    case abi::query_filter_mode: return static_cast<uint32_t>(sampler.filter);
    case abi::query_address_mode_0:
    case abi::query_address_mode_1:
    case abi::query_address_mode_2:
      return static_cast<uint32_t>(sampler.address[query - abi::query_address_mode_0]);
    default: return 0;
  }
}

}  // namespace xcuda::runtime::host
