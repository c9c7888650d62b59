// The texture and surface functions the AMDGPU target defines in IR
// (ptx/target/amdgpu/texture_sampling.cpp) compiled for this CPU instead, and run against the
// host backend's sampler, whose results match an H200's: fed the same texels, the first through
// the descriptor the HIP backend encodes (runtime/hip/hip_texture.cpp), the second through the
// host's own, every fetch, query and surface access must give the same bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include "ptx/host_abi.h"
#include "ptx/target/amdgpu/amdgpu_target.h"
#include "runtime/hip/hip_texture.h"
#include "runtime/host/texture_sampling.h"

namespace xcuda::amdgpu_test {
namespace {

namespace abi = ptx::host_abi;
using abi::TextureWords;
using runtime::AddressMode;
using runtime::ChannelKind;
using runtime::FilterMode;
using runtime::TextureDescriptor;

using Fetch = TextureWords (*)(uint64_t, uint32_t, TextureWords, float);
using SurfaceLoad = TextureWords (*)(uint64_t, uint32_t, TextureWords);
using SurfaceStore = void (*)(uint64_t, uint32_t, TextureWords, TextureWords);
using Query = uint32_t (*)(uint64_t, uint32_t, uint32_t);

// The four functions, JIT-compiled once for the host.
struct SoftwareSampler {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  Fetch fetch = nullptr;
  SurfaceLoad load = nullptr;
  SurfaceStore store = nullptr;
  Query query = nullptr;
};

const SoftwareSampler& sampler() {
  static const SoftwareSampler compiled = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    SoftwareSampler result;
    result.jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("software_sampler", *context);
    module->setDataLayout(result.jit->getDataLayout());
    module->setTargetTriple(llvm::sys::getProcessTriple());
    auto* i32 = llvm::Type::getInt32Ty(*context);
    auto* i64 = llvm::Type::getInt64Ty(*context);
    auto* words = llvm::FixedVectorType::get(i32, 4);
    // The signatures lower/texture.cpp declares.
    std::pair<const char*, llvm::FunctionType*> functions[] = {
        {abi::texture_fetch_symbol, llvm::FunctionType::get(words, {i64, i32, words, llvm::Type::getFloatTy(*context)}, false)},
        {abi::surface_load_symbol, llvm::FunctionType::get(words, {i64, i32, words}, false)},
        {abi::surface_store_symbol, llvm::FunctionType::get(llvm::Type::getVoidTy(*context), {i64, i32, words, words}, false)},
        {abi::resource_query_symbol, llvm::FunctionType::get(i32, {i64, i32, i32}, false)},
    };
    for (const auto& [name, type] : functions) {
      auto* function = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, *module);
      EXPECT_TRUE(ptx::amdgpu::define_texture_function(*function)) << name;
      function->setLinkage(llvm::GlobalValue::ExternalLinkage);
    }
    // powf (sRGB) from this process's C library, as ocml provides it on the GPU.
    result.jit->getMainJITDylib().addGenerator(llvm::cantFail(
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(result.jit->getDataLayout().getGlobalPrefix())));
    llvm::cantFail(result.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
    result.fetch = llvm::cantFail(result.jit->lookup(abi::texture_fetch_symbol)).toPtr<Fetch>();
    result.load = llvm::cantFail(result.jit->lookup(abi::surface_load_symbol)).toPtr<SurfaceLoad>();
    result.store = llvm::cantFail(result.jit->lookup(abi::surface_store_symbol)).toPtr<SurfaceStore>();
    result.query = llvm::cantFail(result.jit->lookup(abi::resource_query_symbol)).toPtr<Query>();
    return result;
  }();
  return compiled;
}

TextureWords words(float x, float y = 0, float z = 0, int32_t layer = 0) {
  TextureWords result;
  std::memcpy(&result[0], &x, 4);
  std::memcpy(&result[1], &y, 4);
  std::memcpy(&result[2], &z, 4);
  result[3] = static_cast<uint32_t>(layer);
  return result;
}

TextureWords integer_words(int32_t x, int32_t y = 0, int32_t z = 0, int32_t layer = 0) {
  return TextureWords{static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(z), static_cast<uint32_t>(layer)};
}

::testing::AssertionResult same_words(TextureWords host, TextureWords device) {
  for (int index = 0; index < 4; ++index)
    if (host[index] != device[index]) {
      float host_float, device_float;
      std::memcpy(&host_float, &host[index], 4);
      std::memcpy(&device_float, &device[index], 4);
      return ::testing::AssertionFailure() << "word " << index << ": host " << std::hex << host[index] << " (" << host_float
                                           << "), software sampler " << device[index] << " (" << device_float << ")";
    }
  return ::testing::AssertionSuccess();
}

// A texture over `levels` images of `bytes` each, laid out densely.
struct Texture {
  TextureDescriptor descriptor;
  std::vector<std::vector<unsigned char>> storage;
  ptx::amdgpu_abi::TextureObject encoded{};

  Texture(runtime::ElementFormat element, std::vector<std::array<size_t, 4>> extents, uint32_t seed) {
    descriptor.element = element;
    for (const auto& [width, height, depth, layers] : extents) {
      size_t row = width * element.bytes();
      std::vector<unsigned char>& data = storage.emplace_back(row * height * depth * std::max<size_t>(layers, 1));
      // Texels with sign and fraction bits set throughout (and NaNs and infinities among floats).
      uint32_t state = seed;
      for (unsigned char& byte : data) {
        state = state * 1664525u + 1013904223u;
        byte = static_cast<unsigned char>(state >> 24);
      }
      if (element.kind == ChannelKind::floating && element.channel_bytes == 4)
        for (size_t at = 0; at + 4 <= data.size(); at += 4) {
          float value = static_cast<float>(static_cast<int32_t>(at * 2654435761u % 2001) - 1000) / 37.0f;
          std::memcpy(&data[at], &value, 4);
        }
      descriptor.levels.push_back({data.data(), width, height, depth, layers, row, row * height});
    }
  }
  void encode() {
    auto result = runtime::hip::encode_texture_object(descriptor);
    ASSERT_TRUE(result.ok()) << result.error().message;
    encoded = *result;
  }
  uint64_t host_handle() const { return reinterpret_cast<uintptr_t>(&descriptor); }
  uint64_t device_handle() const { return reinterpret_cast<uintptr_t>(&encoded); }

  ::testing::AssertionResult same_fetch(uint32_t operation, TextureWords coordinates, float level = 0) const {
    return same_words(runtime::host::texture_fetch(host_handle(), operation, coordinates, level),
                      sampler().fetch(device_handle(), operation, coordinates, level));
  }
};

runtime::ElementFormat format(ChannelKind kind, uint32_t channel_bytes, uint32_t channels) {
  return runtime::ElementFormat{kind, channel_bytes, channels, false};
}

constexpr AddressMode address_modes[] = {AddressMode::wrap, AddressMode::clamp, AddressMode::mirror, AddressMode::border};

// Coordinates from before the first texel to past the last, off the texel grid.
std::vector<float> positions(size_t size, bool normalized) {
  std::vector<float> result;
  for (float position = -1.3f; position < static_cast<float>(size) + 1.5f; position += 0.37f)
    result.push_back(normalized ? position / static_cast<float>(size) : position);
  result.push_back(NAN);
  return result;
}

TEST(SoftwareSampler, FiltersAndAddressesLikeTheHostSampler) {
  const runtime::ElementFormat formats[] = {format(ChannelKind::floating, 4, 2), format(ChannelKind::unsigned_integer, 1, 4),
                                            format(ChannelKind::signed_integer, 2, 2), format(ChannelKind::floating, 2, 1)};
  size_t compared = 0;
  for (const runtime::ElementFormat& element : formats)
    for (AddressMode mode : address_modes)
      for (FilterMode filter : {FilterMode::point, FilterMode::linear})
        for (bool normalized : {false, true})
          for (bool srgb : {false, true}) {
            if (srgb && element.channel_bytes != 1) continue;
            Texture texture(element, {{5, 4, 1, 0}}, 7);
            runtime::SamplerState& state = texture.descriptor.sampler;
            state.address[0] = state.address[1] = mode;
            state.filter = filter;
            state.normalized_coordinates = normalized;
            state.srgb = srgb;
            state.border[0] = 0.25f;
            state.border[1] = -2.0f;
            state.border[3] = 1.0f;
            texture.encode();
            for (float x : positions(5, normalized))
              for (float y : positions(4, normalized)) {
                ASSERT_TRUE(texture.same_fetch(abi::geometry_2d, words(x, y))) << "at " << x << ", " << y;
                ++compared;
              }
            for (int32_t x = -2; x < 7; ++x)
              ASSERT_TRUE(texture.same_fetch(abi::geometry_2d | abi::fetch_integer_coordinates, integer_words(x, x - 1)));
          }
  EXPECT_GT(compared, 10000u);
}

TEST(SoftwareSampler, IntegerTexelsAndLinearMemory) {
  Texture texture(format(ChannelKind::signed_integer, 4, 1), {{9, 1, 1, 0}}, 3);
  texture.descriptor.resource = runtime::ResourceKind::linear;
  texture.encode();
  for (int32_t x = -3; x < 12; ++x)
    ASSERT_TRUE(texture.same_fetch(abi::geometry_1d | abi::fetch_integer_coordinates, integer_words(x)));
  Texture bytes(format(ChannelKind::unsigned_integer, 1, 2), {{6, 3, 1, 0}}, 5);
  bytes.descriptor.sampler.read_as_integer = true;
  bytes.descriptor.sampler.address[0] = AddressMode::wrap;
  bytes.descriptor.sampler.normalized_coordinates = true;
  bytes.encode();
  for (float x : positions(6, true)) ASSERT_TRUE(bytes.same_fetch(abi::geometry_2d, words(x, 0.5f)));
}

TEST(SoftwareSampler, VolumesLayersAndGathers) {
  Texture volume(format(ChannelKind::floating, 2, 4), {{3, 3, 3, 0}}, 11);
  volume.descriptor.sampler.filter = FilterMode::linear;
  volume.descriptor.sampler.address[2] = AddressMode::border;
  volume.encode();
  for (float x : positions(3, false))
    for (float z : positions(3, false)) ASSERT_TRUE(volume.same_fetch(abi::geometry_3d, words(x, 1.2f, z)));

  Texture layers(format(ChannelKind::floating, 4, 1), {{4, 4, 1, 3}}, 13);
  layers.descriptor.sampler.filter = FilterMode::linear;
  layers.encode();
  for (int32_t layer = -1; layer < 5; ++layer)
    for (float x : positions(4, false)) ASSERT_TRUE(layers.same_fetch(abi::geometry_layered_2d, words(x, 2.1f, 0, layer)));

  for (bool integers : {false, true}) {
    Texture gathered(format(integers ? ChannelKind::unsigned_integer : ChannelKind::floating, 4, 4), {{5, 4, 1, 0}}, 17);
    gathered.descriptor.sampler.address[0] = AddressMode::border;
    gathered.descriptor.sampler.border[2] = 0.5f;
    gathered.encode();
    for (uint32_t channel = 0; channel < 4; ++channel)
      for (float x : positions(5, false)) {
        uint32_t operation = abi::geometry_2d | abi::fetch_gather | channel << abi::fetch_gather_channel_shift;
        ASSERT_TRUE(gathered.same_fetch(operation, words(x, 1.7f))) << "channel " << channel << " at " << x;
      }
  }
}

TEST(SoftwareSampler, MipmapLevelsAndQueries) {
  for (FilterMode mipmap_filter : {FilterMode::point, FilterMode::linear}) {
    Texture texture(format(ChannelKind::floating, 4, 1), {{8, 8, 1, 0}, {4, 4, 1, 0}, {2, 2, 1, 0}, {1, 1, 1, 0}}, 19);
    runtime::SamplerState& state = texture.descriptor.sampler;
    state.filter = FilterMode::linear;
    state.mipmap_filter = mipmap_filter;
    state.normalized_coordinates = true;
    state.level_bias = 0.25f;
    state.max_level = 3;
    texture.encode();
    for (float level : {-1.0f, 0.0f, 0.3f, 0.5f, 1.7f, 2.5f, 5.0f})
      for (float x : positions(8, true)) {
        ASSERT_TRUE(texture.same_fetch(abi::geometry_2d | abi::fetch_explicit_level, words(x, 0.4f), level)) << level;
        ASSERT_TRUE(texture.same_fetch(abi::geometry_2d, words(x, 0.4f), level)) << level;
      }
    for (uint32_t query = abi::query_width; query <= abi::query_address_mode_2; ++query)
      for (uint32_t level = 0; level < 6; ++level)
        EXPECT_EQ(runtime::host::resource_query(texture.host_handle(), query, level),
                  sampler().query(texture.device_handle(), query, level))
            << "query " << query << " level " << level;
  }
}

// Loads and stores of 1 to 16 bytes, in range and out of it under .clamp and .zero (.trap ends
// the launch on both, which a test cannot run).
TEST(SoftwareSampler, SurfaceAccesses) {
  Texture host(format(ChannelKind::unsigned_integer, 4, 1), {{6, 3, 1, 2}}, 23);
  Texture device(format(ChannelKind::unsigned_integer, 4, 1), {{6, 3, 1, 2}}, 23);
  device.encode();
  for (uint32_t bytes = 1; bytes <= 16; bytes *= 2)
    for (uint32_t bounds : {abi::surface_clamp, abi::surface_zero})
      for (int32_t x = -8; x < 30; x += 3)
        for (int32_t y = -1; y < 4; ++y) {
          uint32_t operation = abi::geometry_layered_2d | bounds | bytes << abi::surface_bytes_shift;
          TextureWords at = integer_words(x, y, 0, y - 1);
          ASSERT_TRUE(same_words(runtime::host::surface_load(host.host_handle(), operation, at),
                                 sampler().load(device.device_handle(), operation, at)))
              << bytes << " bytes at " << x << ", " << y;
          TextureWords values = integer_words(x * 77, y, -x, 5);
          runtime::host::surface_store(host.host_handle(), operation, at, values);
          sampler().store(device.device_handle(), operation, at, values);
          ASSERT_EQ(host.storage[0], device.storage[0]) << bytes << " bytes at " << x << ", " << y;
        }
}

}  // namespace
}  // namespace xcuda::amdgpu_test
