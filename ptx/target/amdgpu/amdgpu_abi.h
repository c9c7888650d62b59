// The contract between code the PTX compiler emits for AMD GPUs and the HIP backend
// (runtime/hip/) that launches it, beyond what the code object's metadata says. Both sides
// include this header; it is plain C layout so generated code can address fields by offset.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xcuda::ptx::amdgpu_abi {

// %envreg0-31, as on the host (host_abi::BlockFrame::environment): a cooperative launch puts
// the address of its host_abi::GridWorkspace in %envreg1 (high half) and %envreg2 (low half);
// every other word, and every word of other launches, is 0. The kernels of a module that reads
// %envreg take that address (or 0) as one more kernarg after the PTX parameters, 8 bytes at
// grid_workspace_offset(KernelInfo::parameter_buffer_size); the code object's metadata lists it
// as a by-value argument before the hidden ones. HIP reads each argument at its metadata offset
// from the buffer it is given, so the backend appends the word to every launch's parameters.
inline constexpr uint32_t grid_workspace_offset(uint32_t parameter_buffer_size) {
  return (parameter_buffer_size + 7) / 8 * 8;
}
inline constexpr uint32_t grid_workspace_bytes = 8;

// %globaltimer counts the GPU's constant "real time" clock (s_memrealtime; s_sendmsg_rtn on
// gfx11+), which runs at 100 MHz on the processors xcuda compiles for (HIP's
// hipDeviceAttributeWallClockRate), so one tick is 10 ns. NVIDIA's %globaltimer also counts
// nanoseconds, updated about every microsecond.
inline constexpr uint64_t realtime_nanoseconds_per_tick = 10;

// Textures and surfaces. A CUtexObject or CUsurfObject on the HIP backend is the device address
// of a TextureObject, which generated code reads to sample the memory itself, with the
// addressing and filtering of the host backend's sampler (runtime/host/texture_sampling.cpp):
// AMD's image instructions take V#/S# descriptors whose formats and filtering differ from
// CUDA's (9-bit weights, unnormalised wrap), so they are not used. A surface is a TextureObject
// whose first level is the array.
// TextureObject::flags.
inline constexpr uint32_t texture_normalized_coordinates = 1u << 0;
inline constexpr uint32_t texture_reads_float = 1u << 1;  // runtime::reads_float(): floats, else integers
inline constexpr uint32_t texture_srgb = 1u << 2;
inline constexpr uint32_t texture_linear_filter = 1u << 3;
inline constexpr uint32_t texture_linear_mipmap_filter = 1u << 4;
inline constexpr uint32_t texture_linear_memory = 1u << 5;  // CU_RESOURCE_TYPE_LINEAR: every address mode is border

inline constexpr uint32_t max_texture_levels = 16;  // a 32768-texel axis has 16 mipmap levels

// One mipmap level (or the whole image): `layers` (0 when not layered) boxes of
// width × height × depth elements, 1 for an axis the geometry lacks.
struct TextureLevel {
  uint64_t data;         // device address of element (0, 0, 0) of layer 0
  uint64_t row_pitch;    // bytes between rows
  uint64_t slice_pitch;  // bytes between depth slices, and between layers
  uint32_t width, height, depth;
  uint32_t layers;
};

struct TextureObject {
  uint32_t channel_kind;   // runtime::ChannelKind: 0 unsigned integer, 1 signed integer, 2 float
  uint32_t channel_bytes;  // 1, 2 or 4
  uint32_t channels;       // 1, 2 or 4
  uint32_t flags;          // texture_normalized_coordinates, …
  uint32_t address_mode[3];  // CUaddress_mode: 0 wrap, 1 clamp, 2 mirror, 3 border
  uint32_t level_count;      // 1 to max_texture_levels
  float border[4];
  float level_bias, min_level, max_level;
  uint32_t reserved;
  TextureLevel levels[max_texture_levels];
};

static_assert(sizeof(TextureLevel) == 40);
static_assert(offsetof(TextureObject, border) == 32 && offsetof(TextureObject, level_bias) == 48 &&
              offsetof(TextureObject, levels) == 64);

}  // namespace xcuda::ptx::amdgpu_abi
