// What kernels on AMD GPUs read textures and surfaces from, through the fake HIP runtime: CUDA
// arrays in zeroed device memory, texture objects as device addresses of descriptor blocks laid
// out as ptx/target/amdgpu/amdgpu_abi.h says, and rectangular copies and fills, reached through
// runtime::Array and the Queue interface as the Driver API reaches them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hip_fake_runtime.h"
#include "ptx/target/amdgpu/amdgpu_abi.h"
#include "runtime/array.h"
#include "runtime/hip/hip_backend.h"
#include "runtime/strided_copy.h"
#include "runtime/texture.h"

namespace xcuda::runtime::hip {
namespace {

namespace abi = ptx::amdgpu_abi;

constexpr uint32_t format_float = 0x20;          // CU_AD_FORMAT_FLOAT
constexpr uint32_t format_unsigned_int8 = 0x01;  // CU_AD_FORMAT_UNSIGNED_INT8

class HipDeviceMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake::reset_fake_hip();
    auto opened = open_hip_backend(fake::fake_hip_functions(), HipBackendOptions{});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    backend_ = std::move(*opened);
  }

  // The descriptor block behind a texture object, read back from the fake's device memory.
  static abi::TextureObject block_of(uint64_t object) {
    abi::TextureObject block;
    std::memcpy(&block, reinterpret_cast<const void*>(object), sizeof block);
    return block;
  }

  std::unique_ptr<HipBackend> backend_;
};

TEST_F(HipDeviceMemoryTest, ArrayStorageIsZeroedDeviceMemory) {
  auto storage = backend_->allocate_zeroed(1, 100);
  ASSERT_TRUE(storage.ok()) << storage.error().message;
  ASSERT_EQ(fake::fake_hip().allocations.count(*storage), 1u);
  EXPECT_EQ(fake::fake_hip().allocations.at(*storage), 100u);
  EXPECT_EQ(
      std::vector<uint8_t>(static_cast<uint8_t*>(*storage), static_cast<uint8_t*>(*storage) + 100),
      std::vector<uint8_t>(100, 0));
  // Kernels on the backend's non-blocking streams do not wait for the null stream's memset.
  EXPECT_EQ(fake::fake_hip().calls.back(), "hipStreamSynchronize 1");
  EXPECT_TRUE(fake::was_called("hipMemset 1"));
  EXPECT_TRUE(backend_->release(1, *storage).ok());
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
}

TEST_F(HipDeviceMemoryTest, ArrayStorageFailuresAreTranslatedAndLeakNothing) {
  fake::fake_hip().malloc_result = hip_error_out_of_memory;
  EXPECT_EQ(backend_->allocate_zeroed(0, 64).error().code, ErrorCode::out_of_memory);
  fake::fake_hip().malloc_result = hip_success;
  fake::fake_hip().memset_result = hip_error_invalid_value;
  auto failed = backend_->allocate_zeroed(0, 64);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::invalid_value);
  EXPECT_NE(failed.error().message.find("hipMemset"), std::string::npos);
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
  EXPECT_EQ(backend_->allocate_zeroed(2, 64).error().code, ErrorCode::invalid_value);
}

TEST_F(HipDeviceMemoryTest, TextureObjectIsTheAddressOfItsDescriptorBlock) {
  // A 2D array of float2, sampled with normalised coordinates, linear filtering and wrapping.
  auto array = Array::create(*backend_, 0, ArrayDescription{24, 10, 0, format_float, 2, 0});
  ASSERT_TRUE(array.ok()) << array.error().message;
  SamplerState sampler;
  sampler.address[0] = sampler.address[1] = AddressMode::wrap;
  sampler.filter = FilterMode::linear;
  sampler.normalized_coordinates = true;
  sampler.border[2] = 0.5f;
  TextureResource resource;
  resource.array = array->get();
  auto texture = create_texture(resource, sampler);
  ASSERT_TRUE(texture.ok()) << texture.error().message;

  auto object = backend_->create_texture_object(0, **texture);
  ASSERT_TRUE(object.ok()) << object.error().message;
  auto* address = reinterpret_cast<void*>(*object);
  ASSERT_EQ(fake::fake_hip().allocations.count(address), 1u);
  EXPECT_EQ(fake::fake_hip().allocations.at(address), 704u);  // 64 bytes and 16 levels of 40
  abi::TextureObject block = block_of(*object);
  EXPECT_EQ(block.channel_kind, 2u);  // float
  EXPECT_EQ(block.channel_bytes, 4u);
  EXPECT_EQ(block.channels, 2u);
  EXPECT_EQ(block.flags, abi::texture_normalized_coordinates | abi::texture_reads_float |
                             abi::texture_linear_filter);
  EXPECT_EQ(block.address_mode[0], 0u);  // CU_TR_ADDRESS_MODE_WRAP
  EXPECT_EQ(block.address_mode[1], 0u);
  EXPECT_EQ(block.address_mode[2], 1u);  // CU_TR_ADDRESS_MODE_CLAMP
  EXPECT_EQ(block.border[2], 0.5f);
  EXPECT_EQ(block.level_count, 1u);
  EXPECT_EQ(block.levels[0].data, reinterpret_cast<uint64_t>((*array)->data()));
  EXPECT_EQ(block.levels[0].row_pitch, 24u * 8);
  EXPECT_EQ(block.levels[0].slice_pitch, 24u * 8 * 10);
  EXPECT_EQ(block.levels[0].width, 24u);
  EXPECT_EQ(block.levels[0].height, 10u);
  EXPECT_EQ(block.levels[0].depth, 1u);
  EXPECT_EQ(block.levels[0].layers, 0u);

  EXPECT_TRUE(backend_->destroy_texture_object(0, *object).ok());
  EXPECT_EQ(fake::fake_hip().allocations.count(address), 0u);
  EXPECT_TRUE(fake::was_called("hipFree 0"));
  array->reset();
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
}

TEST_F(HipDeviceMemoryTest, MipmappedLayeredTextureListsEveryLevel) {
  auto mipmapped = MipmappedArray::create(
      *backend_, 0, ArrayDescription{64, 32, 4, format_unsigned_int8, 4, array_layered}, 3);
  ASSERT_TRUE(mipmapped.ok()) << mipmapped.error().message;
  TextureResource resource;
  resource.kind = ResourceKind::mipmapped_array;
  resource.mipmapped_array = mipmapped->get();
  SamplerState sampler;
  sampler.normalized_coordinates = true;
  sampler.mipmap_filter = FilterMode::linear;
  sampler.max_level = 2;
  auto texture = create_texture(resource, sampler);
  ASSERT_TRUE(texture.ok()) << texture.error().message;
  auto object = backend_->create_texture_object(0, **texture);
  ASSERT_TRUE(object.ok()) << object.error().message;
  abi::TextureObject block = block_of(*object);
  EXPECT_EQ(block.channel_kind, 0u);  // unsigned, read as normalised floats
  EXPECT_EQ(block.channel_bytes, 1u);
  EXPECT_EQ(block.channels, 4u);
  EXPECT_EQ(block.flags, abi::texture_normalized_coordinates | abi::texture_reads_float |
                             abi::texture_linear_mipmap_filter);
  EXPECT_EQ(block.level_count, 3u);
  EXPECT_EQ(block.max_level, 2.0f);
  for (uint32_t index = 0; index < 3; ++index) {
    const Array& level = (*mipmapped)->level(index);
    SCOPED_TRACE(index);
    EXPECT_EQ(block.levels[index].data, reinterpret_cast<uint64_t>(level.data()));
    EXPECT_EQ(block.levels[index].width, 64u >> index);
    EXPECT_EQ(block.levels[index].height, 32u >> index);
    EXPECT_EQ(block.levels[index].depth, 1u);
    EXPECT_EQ(block.levels[index].layers, 4u);  // layers are not halved
    EXPECT_EQ(block.levels[index].row_pitch, (64u >> index) * 4);
    EXPECT_EQ(block.levels[index].slice_pitch, (64u >> index) * 4 * (32u >> index));
  }
  EXPECT_TRUE(backend_->destroy_texture_object(0, *object).ok());
}

TEST_F(HipDeviceMemoryTest, SurfaceObjectDescribesItsArray) {
  auto array = Array::create(*backend_, 1,
                             ArrayDescription{8, 4, 3, format_float, 1, array_surface_load_store});
  ASSERT_TRUE(array.ok()) << array.error().message;
  auto surface = create_surface(**array);
  ASSERT_TRUE(surface.ok()) << surface.error().message;
  auto object = backend_->create_texture_object(1, **surface);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_TRUE(fake::was_called("hipMemcpy 1"));
  EXPECT_EQ(fake::fake_hip().calls.back(), "hipStreamSynchronize 1");
  abi::TextureObject block = block_of(*object);
  EXPECT_EQ(block.level_count, 1u);
  EXPECT_EQ(block.levels[0].data, reinterpret_cast<uint64_t>((*array)->data()));
  EXPECT_EQ(block.levels[0].width, 8u);
  EXPECT_EQ(block.levels[0].height, 4u);
  EXPECT_EQ(block.levels[0].depth, 3u);
  EXPECT_EQ(block.levels[0].slice_pitch, 8u * 4 * 4);
  EXPECT_TRUE(backend_->destroy_texture_object(1, *object).ok());
}

TEST_F(HipDeviceMemoryTest, TextureObjectFailuresLeakNothing) {
  auto array = Array::create(*backend_, 0, ArrayDescription{16, 16, 0, format_float, 1, 0});
  ASSERT_TRUE(array.ok());
  TextureResource resource;
  resource.array = array->get();
  auto texture = create_texture(resource, SamplerState{});
  ASSERT_TRUE(texture.ok()) << texture.error().message;

  fake::fake_hip().malloc_result = hip_error_out_of_memory;
  EXPECT_EQ(backend_->create_texture_object(0, **texture).error().code, ErrorCode::out_of_memory);
  fake::fake_hip().malloc_result = hip_success;
  fake::fake_hip().memcpy_result = hip_error_illegal_address;
  auto failed = backend_->create_texture_object(0, **texture);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::illegal_address);
  EXPECT_EQ(fake::fake_hip().allocations.size(), 1u);  // only the array's texels
  fake::fake_hip().memcpy_result = hip_success;
  EXPECT_EQ(backend_->create_texture_object(2, **texture).error().code, ErrorCode::invalid_value);

  // The sampler has no cube maps; nothing reaches HIP.
  TextureDescriptor cube = **texture;
  cube.cubemap = true;
  fake::fake_hip().calls.clear();
  EXPECT_EQ(backend_->create_texture_object(0, cube).error().code, ErrorCode::not_supported);
  EXPECT_TRUE(fake::fake_hip().calls.empty());
}

// A 5-byte × 3-row × 2-slice box out of pitched host memory into packed device memory (an
// array's layout), and back out through slices with gaps between them.
TEST_F(HipDeviceMemoryTest, RectangularCopiesAreOneHipMemcpy2DPerSlice) {
  constexpr size_t width = 5, height = 3, depth = 2, source_pitch = 8;
  std::vector<uint8_t> source(source_pitch * height * depth);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<uint8_t>(i);
  auto storage = backend_->allocate_zeroed(0, width * height * depth);
  ASSERT_TRUE(storage.ok());
  auto* texels = static_cast<uint8_t*>(*storage);
  std::unique_ptr<Queue> queue = backend_->create_queue(0);

  StridedCopy in;
  in.region = {width, height, depth};
  in.source = source.data();
  in.source_pitch = source_pitch;
  in.source_slice_pitch = source_pitch * height;
  in.destination = texels;
  in.destination_pitch = width;
  in.destination_slice_pitch = width * height;
  queue->copy_region(in);
  ASSERT_TRUE(queue->synchronize().ok());
  ASSERT_EQ(fake::fake_hip().copies_2d.size(), 1u);  // packed slices: one copy of 6 rows
  EXPECT_EQ(fake::fake_hip().copies_2d[0].height, height * depth);
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < height; ++y)
      for (size_t x = 0; x < width; ++x)
        ASSERT_EQ(texels[(z * height + y) * width + x],
                  source[(z * height + y) * source_pitch + x]);

  constexpr size_t slice_gap = 7;
  std::vector<uint8_t> back((width * height + slice_gap) * depth, 0xee);
  StridedCopy out;
  out.region = {width, height, depth};
  out.source = texels;
  out.source_pitch = width;
  out.source_slice_pitch = width * height;
  out.destination = back.data();
  out.destination_pitch = width;
  out.destination_slice_pitch = width * height + slice_gap;
  queue->copy_region(out);
  ASSERT_TRUE(queue->synchronize().ok());
  ASSERT_EQ(fake::fake_hip().copies_2d.size(), 3u);  // one per slice
  EXPECT_EQ(fake::fake_hip().copies_2d[1].height, height);
  for (size_t z = 0; z < depth; ++z) {
    const uint8_t* slice = back.data() + z * (width * height + slice_gap);
    EXPECT_EQ(std::vector<uint8_t>(slice, slice + width * height),
              std::vector<uint8_t>(texels + z * width * height, texels + (z + 1) * width * height));
    EXPECT_EQ(slice[width * height], 0xee);  // the gap is left alone
  }
  queue.reset();
  EXPECT_TRUE(backend_->release(0, *storage).ok());
}

// cuArrayCreate, cuMemcpy2D from pitched host memory into the array and cuTexObjectCreate over
// it, as src/ does them: the texels are zeroed memory of the context's device, the copy is a
// hipMemcpy2DAsync on the stream (no host function touches device memory), and the texture
// object's block points at the texels.
TEST_F(HipDeviceMemoryTest, ArrayFilledByACopyAndReadThroughATextureObject) {
  constexpr size_t width = 6, height = 4, row_bytes = width * 4, source_pitch = 32;
  auto array = Array::create(*backend_, 1, ArrayDescription{width, height, 0, format_float, 1, 0});
  ASSERT_TRUE(array.ok()) << array.error().message;
  unsigned char* texels = (*array)->data();
  ASSERT_EQ(fake::fake_hip().allocations.count(texels), 1u);
  EXPECT_EQ(fake::fake_hip().allocations.at(texels), row_bytes * height);
  EXPECT_TRUE(fake::was_called("hipMemset 1"));
  EXPECT_EQ(std::vector<uint8_t>(texels, texels + row_bytes * height),
            std::vector<uint8_t>(row_bytes * height, 0));

  std::vector<float> source(source_pitch / sizeof(float) * height);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<float>(i);
  StridedCopy copy;  // as src/memory_copy.cpp describes a host-to-array cuMemcpy2D
  copy.region = {row_bytes, height, 1};
  copy.source = reinterpret_cast<const unsigned char*>(source.data());
  copy.source_pitch = source_pitch;
  copy.source_slice_pitch = source_pitch * height;
  copy.destination = texels;
  copy.destination_pitch = (*array)->row_pitch();
  copy.destination_slice_pitch = (*array)->slice_pitch();
  std::unique_ptr<Queue> queue = backend_->create_queue(1);
  queue->copy_region(copy);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_TRUE(fake::was_called("hipMemcpy2DAsync 1"));
  EXPECT_FALSE(fake::was_called("hipLaunchHostFunc 1"));
  ASSERT_EQ(fake::fake_hip().copies_2d.size(), 1u);
  EXPECT_EQ(fake::fake_hip().copies_2d[0].destination_pitch, row_bytes);
  EXPECT_EQ(fake::fake_hip().copies_2d[0].source_pitch, source_pitch);
  EXPECT_EQ(fake::fake_hip().copies_2d[0].width, row_bytes);
  EXPECT_EQ(fake::fake_hip().copies_2d[0].height, height);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x) {
      float texel;
      std::memcpy(&texel, texels + y * row_bytes + x * sizeof texel, sizeof texel);
      EXPECT_EQ(texel, source[y * source_pitch / sizeof(float) + x]) << x << ", " << y;
    }

  TextureResource resource;
  resource.array = array->get();
  auto texture = create_texture(resource, SamplerState{});
  ASSERT_TRUE(texture.ok()) << texture.error().message;
  auto object = backend_->create_texture_object(1, **texture);
  ASSERT_TRUE(object.ok()) << object.error().message;
  EXPECT_TRUE(fake::was_called("hipMemcpy 1"));
  abi::TextureObject block = block_of(*object);
  EXPECT_EQ(block.channel_kind, 2u);  // float
  EXPECT_EQ(block.level_count, 1u);
  EXPECT_EQ(block.levels[0].data, reinterpret_cast<uint64_t>(texels));
  EXPECT_EQ(block.levels[0].row_pitch, row_bytes);
  EXPECT_EQ(block.levels[0].width, width);
  EXPECT_EQ(block.levels[0].height, height);

  EXPECT_TRUE(backend_->destroy_texture_object(1, *object).ok());
  array->reset();
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
  EXPECT_EQ(std::count(fake::fake_hip().calls.begin(), fake::fake_hip().calls.end(), "hipFree 1"),
            2);
}

// cuMemcpy2D leaves the pitches of a single row unchecked (the host backend copies it whatever
// they say); hipMemcpy2DAsync refuses pitches narrower than the row.
TEST_F(HipDeviceMemoryTest, SingleRowCopyNeedsNoPitch) {
  auto memory = backend_->allocate_zeroed(0, 8);
  ASSERT_TRUE(memory.ok());
  const uint8_t source[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  StridedCopy copy;
  copy.region = {8, 1, 1};
  copy.source = source;
  copy.destination = static_cast<unsigned char*>(*memory);
  std::unique_ptr<Queue> queue = backend_->create_queue(0);
  queue->copy_region(copy);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(std::vector<uint8_t>(copy.destination, copy.destination + 8),
            std::vector<uint8_t>(source, source + 8));
  queue.reset();
  EXPECT_TRUE(backend_->release(0, *memory).ok());
}

TEST_F(HipDeviceMemoryTest, ArrayWithoutDeviceMemoryFails) {
  fake::fake_hip().malloc_result = hip_error_out_of_memory;
  auto array = Array::create(*backend_, 0, ArrayDescription{16, 16, 0, format_float, 1, 0});
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().code, ErrorCode::out_of_memory);
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
}

TEST_F(HipDeviceMemoryTest, RectangularFillsAreOneHipMemsetPerRow) {
  constexpr size_t pitch = 16, rows = 3;
  auto memory = backend_->allocate_zeroed(0, pitch * rows);
  ASSERT_TRUE(memory.ok());
  auto* bytes = static_cast<uint8_t*>(*memory);
  auto queue = backend_->create_queue(0);
  StridedFill fill;
  fill.region = {12, rows, 1};  // three 4-byte patterns a row
  fill.destination = bytes;
  fill.destination_pitch = pitch;
  fill.pattern = 0x01020304;
  fill.pattern_bytes = 4;
  fake::fake_hip().calls.clear();
  queue->fill_region(fill);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(std::count(fake::fake_hip().calls.begin(), fake::fake_hip().calls.end(),
                       "hipMemsetD32Async 0"),
            3);
  for (size_t row = 0; row < rows; ++row) {
    SCOPED_TRACE(row);
    const uint8_t* start = bytes + row * pitch;
    EXPECT_EQ(std::vector<uint8_t>(start, start + pitch),
              (std::vector<uint8_t>{4, 3, 2, 1, 4, 3, 2, 1, 4, 3, 2, 1, 0, 0, 0, 0}));
  }
  queue.reset();
  EXPECT_TRUE(backend_->release(0, *memory).ok());
}

}  // namespace
}  // namespace xcuda::runtime::hip
