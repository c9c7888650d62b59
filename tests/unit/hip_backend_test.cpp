// The HIP backend driven through a fake HIP runtime with two devices: properties, memory, queues,
// modules and launches, checked by what the backend asked HIP to do and by the bytes that moved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "hip_fake_runtime.h"
#include "runtime/code_cache.h"
#include "runtime/hip/hip_backend.h"
#include "runtime/hip/hip_module.h"
#include "runtime/hip/hip_properties.h"
#include "runtime/log.h"

namespace xcuda::runtime::hip {
namespace {

class HipBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { fake::reset_fake_hip(); }

  std::unique_ptr<HipBackend> open(std::vector<int> device_map = {}, bool rocm_6 = true) {
    HipBackendOptions options;
    options.compute_major = 7;
    options.compute_minor = 5;
    options.device_map = std::move(device_map);
    auto opened = open_hip_backend(fake::fake_hip_functions(rocm_6), options);
    EXPECT_TRUE(opened.ok()) << (opened ? "" : opened.error().message);
    return opened ? std::move(*opened) : nullptr;
  }

  // The fake's code object, loaded on HIP device `device`.
  static std::unique_ptr<LoadedModule> load_scale(int device = 0) {
    std::vector<uint8_t> image(fake::code_object.begin(), fake::code_object.end());
    image.push_back(0);
    auto module = load_code_object(fake_functions(), device, image, scale_module());
    EXPECT_TRUE(module.ok()) << (module ? "" : module.error().message);
    return module ? std::move(*module) : nullptr;
  }

  // Modules keep a reference to the functions they were loaded with.
  static const HipFunctions& fake_functions() {
    static const HipFunctions functions = fake::fake_hip_functions();
    return functions;
  }

  static ptx::ModuleInfo scale_module() {
    ptx::KernelInfo kernel;
    kernel.name = fake::kernel_name;
    kernel.parameters = {{0, 8, 8}, {8, 4, 4}};
    kernel.parameter_buffer_size = 12;
    ptx::ModuleInfo info;
    info.kernels.push_back(kernel);
    info.globals.push_back({fake::global_name, 16, false});
    return info;
  }
};

TEST_F(HipBackendTest, ProcessorDropsTargetFeatures) {
  EXPECT_EQ(processor_of("gfx90a:sramecc+:xnack-"), "gfx90a");
  EXPECT_EQ(processor_of("gfx1100"), "gfx1100");
  EXPECT_EQ(processor_of(""), "");
}

TEST_F(HipBackendTest, TranslatesDeviceAttributes) {
  HipFunctions functions = fake::fake_hip_functions();
  auto described = describe_hip_device(functions, 0, 8, 9);
  ASSERT_TRUE(described.ok()) << described.error().message;
  const DeviceProperties& properties = described->properties;
  EXPECT_EQ(properties.name, "AMD Instinct MI210");
  EXPECT_EQ(described->architecture_name, "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(described->wavefront_size, 64);
  EXPECT_EQ(properties.warp_size, 32);  // CUDA's warp, whatever the wavefront
  EXPECT_EQ(properties.total_memory, uint64_t{64} << 30);
  EXPECT_EQ(properties.multiprocessor_count, 104);
  EXPECT_EQ(properties.clock_rate_khz, 1700000);
  EXPECT_EQ(properties.l2_cache_bytes, 8 << 20);
  EXPECT_EQ(properties.shared_memory_per_block, 65536);
  // No opt-in attribute: the opt-in limit is the default limit, never below it.
  EXPECT_EQ(properties.shared_memory_per_block_optin, 65536);
  EXPECT_FALSE(properties.integrated);
  EXPECT_EQ(properties.compute_major, 8);
  EXPECT_EQ(properties.compute_minor, 9);
  EXPECT_EQ(properties.uuid[0], 0x10);
  // Attributes the fake refuses keep our defaults.
  EXPECT_EQ(properties.max_block_dim[2], DeviceProperties{}.max_block_dim[2]);
  EXPECT_EQ(properties.registers_per_block, DeviceProperties{}.registers_per_block);

  auto rdna = describe_hip_device(functions, 1, 8, 6);
  ASSERT_TRUE(rdna.ok());
  EXPECT_EQ(rdna->wavefront_size, 32);
  EXPECT_EQ(processor_of(rdna->architecture_name), "gfx1100");
}

TEST_F(HipBackendTest, UnknownDeviceCannotBeDescribed) {
  auto described = describe_hip_device(fake::fake_hip_functions(), 5, 8, 6);
  ASSERT_FALSE(described.ok());
  EXPECT_EQ(described.error().code, ErrorCode::invalid_value);
  EXPECT_NE(described.error().message.find("hipDeviceGetName"), std::string::npos);
}

TEST_F(HipBackendTest, OpensEveryDeviceInHipOrder) {
  auto backend = open();
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->name(), "hip");
  ASSERT_EQ(backend->device_count(), 2);
  EXPECT_EQ(backend->properties(0).name, "AMD Instinct MI210");
  EXPECT_EQ(backend->properties(1).name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(backend->properties(0).compute_major, 7);
  EXPECT_TRUE(fake::was_called("hipInit 0"));
}

TEST_F(HipBackendTest, DeviceMapReordersAndHides) {
  auto swapped = open({1, 0});
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->properties(0).name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(swapped->description(0).wavefront_size, 32);
  auto only_second = open({1});
  ASSERT_TRUE(only_second);
  EXPECT_EQ(only_second->device_count(), 1);
  EXPECT_EQ(only_second->properties(0).name, "AMD Radeon RX 7900 XTX");
}

TEST_F(HipBackendTest, DeviceMapNamingAMissingDeviceFallsBackToAll) {
  auto backend = open({0, 7});
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->device_count(), 2);
  EXPECT_EQ(backend->properties(0).name, "AMD Instinct MI210");
}

TEST_F(HipBackendTest, FailsWhenHipInitFails) {
  fake::fake_hip().init_result = hip_error_invalid_device;
  auto opened = open_hip_backend(fake::fake_hip_functions(), {});
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("hipInit"), std::string::npos);
}

TEST_F(HipBackendTest, AllocatesOnTheMappedDevice) {
  auto backend = open({1, 0});
  ASSERT_TRUE(backend);
  auto pointer = backend->allocate(0, 64);
  ASSERT_TRUE(pointer.ok());
  EXPECT_TRUE(fake::was_called("hipMalloc 1"));
  EXPECT_EQ(fake::fake_hip().allocations.count(*pointer), 1u);
  EXPECT_TRUE(backend->release(0, *pointer).ok());
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
  EXPECT_FALSE(backend->release(0, *pointer).ok());
}

TEST_F(HipBackendTest, AllocationErrorsAreTranslated) {
  auto backend = open();
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->allocate(0, 0).error().code, ErrorCode::invalid_value);
  EXPECT_EQ(backend->allocate(2, 64).error().code, ErrorCode::invalid_value);
  fake::fake_hip().malloc_result = hip_error_out_of_memory;
  auto failed = backend->allocate(0, 1 << 20);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::out_of_memory);
  EXPECT_NE(failed.error().message.find("hipErrorOutOfMemory"), std::string::npos);
}

TEST_F(HipBackendTest, QueueFillsAndCopiesBetweenDevices) {
  auto backend = open();
  ASSERT_TRUE(backend);
  void* first = *backend->allocate(0, 16);
  void* second = *backend->allocate(1, 16);
  auto queue = backend->create_queue(0);
  ASSERT_TRUE(queue);
  queue->fill(first, 0xdeadbeef, 4, 4);
  queue->copy(second, first, 16);
  queue->fill(second, 0x7777, 2, 1);
  queue->fill(second, 0x11, 1, 1);
  std::vector<uint32_t> result(4);
  queue->copy(result.data(), second, 16);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_TRUE(queue->idle());
  EXPECT_EQ(result[0], 0xdead7711u);
  EXPECT_EQ(result[3], 0xdeadbeefu);
  EXPECT_TRUE(fake::was_called("hipMemsetD32Async 0"));
  EXPECT_TRUE(fake::was_called("hipMemsetD16Async 0"));
  EXPECT_TRUE(fake::was_called("hipMemsetD8Async 0"));
  EXPECT_TRUE(fake::was_called("hipStreamSynchronize 0"));
}

TEST_F(HipBackendTest, BadFillPatternFailsTheQueue) {
  auto backend = open();
  auto queue = backend->create_queue(0);
  uint8_t bytes[8] = {};
  queue->fill(bytes, 1, 3, 2);
  EXPECT_EQ(queue->synchronize().error().code, ErrorCode::invalid_value);
}

TEST_F(HipBackendTest, WaitForRecordsOnTheOtherStreamAndWaitsOnOurs) {
  auto backend = open();
  auto first = backend->create_queue(0);
  auto second = backend->create_queue(1);
  ASSERT_TRUE(first && second);
  fake::fake_hip().calls.clear();
  first->wait_for(*second);
  EXPECT_EQ(fake::fake_hip().calls,
            (std::vector<std::string>{"hipEventCreateWithFlags 1", "hipEventRecord 1",
                                      "hipStreamWaitEvent 0", "hipEventDestroy 0"}));
  EXPECT_TRUE(first->synchronize().ok());
}

TEST_F(HipBackendTest, HostFunctionsRunThroughEitherEntryPoint) {
  for (bool launch_host_func : {true, false}) {
    fake::reset_fake_hip();
    auto backend = open({}, launch_host_func);
    auto queue = backend->create_queue(0);
    int ran = 0;
    queue->host_function([](void* counter) { ++*static_cast<int*>(counter); }, &ran);
    EXPECT_EQ(ran, 1);
    EXPECT_TRUE(
        fake::was_called(launch_host_func ? "hipLaunchHostFunc 0" : "hipStreamAddCallback 0"));
  }
}

TEST_F(HipBackendTest, LaunchPassesTheParameterBufferThroughExtra) {
  auto backend = open();
  HipFunctions functions = fake::fake_hip_functions();
  std::vector<uint8_t> image(fake::code_object.begin(), fake::code_object.end());
  image.push_back(0);
  auto module = load_code_object(functions, 0, image, scale_module());
  ASSERT_TRUE(module.ok()) << module.error().message;
  auto kernel = (*module)->kernel(fake::kernel_name);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ((*kernel)->info().parameter_buffer_size, 12u);
  EXPECT_EQ(*(*module)->kernel(fake::kernel_name), *kernel);  // resolved once
  EXPECT_EQ((*module)->kernel("missing").error().code, ErrorCode::not_found);
  auto global = (*module)->global(fake::global_name);
  ASSERT_TRUE(global.ok());
  EXPECT_EQ(*global, fake::fake_hip().global_storage);
  EXPECT_EQ((*module)->global("missing").error().code, ErrorCode::not_found);

  auto queue = backend->create_queue(0);
  LaunchShape shape;
  shape.grid[0] = 3;
  shape.block[0] = 256;
  shape.block[1] = 2;
  shape.dynamic_shared_bytes = 1024;
  std::vector<uint8_t> parameters(12);
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i] = static_cast<uint8_t>(i + 1);
  queue->launch(**kernel, shape, parameters);
  ASSERT_TRUE(queue->synchronize().ok());
  ASSERT_EQ(fake::fake_hip().launches.size(), 1u);
  const fake::Launch& launch = fake::fake_hip().launches[0];
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 1u);
  EXPECT_EQ(launch.block[0], 256u);
  EXPECT_EQ(launch.block[1], 2u);
  EXPECT_EQ(launch.shared_bytes, 1024u);
  // The parameters, then at offset 16 the grid-workspace word %envreg reads: 0 when the launch
  // is not cooperative (ptx/target/amdgpu/amdgpu_abi.h).
  std::vector<uint8_t> packed = parameters;
  packed.resize(24, 0);
  EXPECT_EQ(launch.parameters, packed);

  module->reset();
  EXPECT_TRUE(fake::was_called("hipModuleUnload 0"));
}

// The words of a grid workspace in device memory (ptx/host_abi.h's GridWorkspace).
std::vector<uint32_t> workspace_words(uint64_t address) {
  std::vector<uint32_t> words(4);
  std::memcpy(words.data(), reinterpret_cast<const void*>(address), 16);
  return words;
}

uint64_t workspace_address(const fake::Launch& launch) {
  uint64_t address = 0;
  EXPECT_EQ(launch.arguments.size(), 3u);
  if (launch.arguments.size() == 3) std::memcpy(&address, launch.arguments[2].data(), 8);
  return address;
}

TEST_F(HipBackendTest, CooperativeLaunchPassesAFreshGridWorkspace) {
  auto backend = open();
  auto module = load_scale();
  LoadedKernel* kernel = *module->kernel(fake::kernel_name);
  auto queue = backend->create_queue(0);
  LaunchShape shape;
  shape.grid[0] = 4;
  shape.grid[1] = 2;
  shape.block[0] = 64;
  shape.block[1] = 2;
  shape.dynamic_shared_bytes = 256;
  shape.cooperative = true;
  std::vector<uint8_t> parameters(12);
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i] = static_cast<uint8_t>(i + 1);
  fake::fake_hip().calls.clear();
  queue->launch(*kernel, shape, parameters);
  ASSERT_TRUE(queue->synchronize().ok());

  ASSERT_EQ(fake::fake_hip().launches.size(), 1u);
  const fake::Launch& launch = fake::fake_hip().launches[0];
  EXPECT_TRUE(launch.cooperative);
  EXPECT_EQ(launch.grid[0], 4u);
  EXPECT_EQ(launch.grid[1], 2u);
  EXPECT_EQ(launch.block[0], 64u);
  EXPECT_EQ(launch.block[1], 2u);
  EXPECT_EQ(launch.shared_bytes, 256u);
  ASSERT_EQ(launch.arguments.size(), 3u);
  EXPECT_EQ(launch.arguments[0], std::vector<uint8_t>(parameters.begin(), parameters.begin() + 8));
  EXPECT_EQ(launch.arguments[1], std::vector<uint8_t>(parameters.begin() + 8, parameters.end()));
  // The workspace word holds the address of 16 bytes of device memory that say their size (16,
  // as NVIDIA's driver writes it) and an arrival counter of 0.
  uint64_t workspace = workspace_address(launch);
  ASSERT_EQ(fake::fake_hip().allocations.count(reinterpret_cast<void*>(workspace)), 1u);
  EXPECT_EQ(fake::fake_hip().allocations.at(reinterpret_cast<void*>(workspace)), 16u);
  EXPECT_EQ(workspace_words(workspace), (std::vector<uint32_t>{16, 0, 0, 0}));
  ASSERT_EQ(fake::fake_hip().occupancy_queries.size(), 1u);
  EXPECT_EQ(fake::fake_hip().occupancy_queries[0].block_size, 128);
  EXPECT_EQ(fake::fake_hip().occupancy_queries[0].dynamic_shared_bytes, 256u);
  EXPECT_TRUE(fake::was_called("hipModuleLaunchCooperativeKernel 0"));

  // grid.sync() leaves the counter with its generation bit; the next launch on the queue gets
  // the same workspace counting from 0 again.
  uint32_t after_a_sync = 0x80000008u;
  std::memcpy(reinterpret_cast<uint8_t*>(workspace) + 4, &after_a_sync, 4);
  queue->launch(*kernel, shape, parameters);
  ASSERT_TRUE(queue->synchronize().ok());
  ASSERT_EQ(fake::fake_hip().launches.size(), 2u);
  EXPECT_EQ(workspace_address(fake::fake_hip().launches[1]), workspace);
  EXPECT_EQ(workspace_words(workspace), (std::vector<uint32_t>{16, 0, 0, 0}));
  EXPECT_EQ(std::count(fake::fake_hip().calls.begin(), fake::fake_hip().calls.end(), "hipMalloc 0"),
            1);

  // Ordinary launches still get a workspace word of 0.
  shape.cooperative = false;
  queue->launch(*kernel, shape, parameters);
  ASSERT_TRUE(queue->synchronize().ok());
  ASSERT_EQ(fake::fake_hip().launches.size(), 3u);
  EXPECT_EQ(fake::fake_hip().launches[2].parameters,
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                  0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0}));

  queue.reset();
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
}

TEST_F(HipBackendTest, CooperativeGridMustFitOnTheDeviceAtOnce) {
  auto backend = open({1, 0});  // CUDA device 0 is the gfx1100 with 48 compute units
  auto module = load_scale(1);
  LoadedKernel* kernel = *module->kernel(fake::kernel_name);
  fake::fake_hip().blocks_per_compute_unit = 2;
  LaunchShape shape;
  shape.grid[0] = 96;
  shape.block[0] = 256;
  shape.cooperative = true;
  auto queue = backend->create_queue(0);
  queue->launch(*kernel, shape, std::vector<uint8_t>(12));
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(fake::fake_hip().launches.size(), 1u);

  shape.grid[0] = 97;
  auto other = backend->create_queue(0);
  other->launch(*kernel, shape, std::vector<uint8_t>(12));
  Status status = other->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::cooperative_launch_too_large);
  EXPECT_NE(status.error().message.find("at most 96"), std::string::npos) << status.error().message;
  EXPECT_EQ(fake::fake_hip().launches.size(), 1u);
}

TEST_F(HipBackendTest, CooperativeLaunchNeedsHipModuleLaunchCooperativeKernel) {
  auto backend = open({}, false);  // ROCm 5.2 has no hipModuleLaunchCooperativeKernel
  auto module = load_scale();
  LoadedKernel* kernel = *module->kernel(fake::kernel_name);
  LaunchShape shape;
  shape.cooperative = true;
  auto queue = backend->create_queue(0);
  spdlog::level::level_enum level = logger().level();
  logger().set_level(spdlog::level::warn);
  testing::internal::CaptureStderr();
  queue->launch(*kernel, shape, std::vector<uint8_t>(12));
  std::string said = testing::internal::GetCapturedStderr();
  logger().set_level(level);
  EXPECT_EQ(queue->synchronize().error().code, ErrorCode::not_supported);
  EXPECT_NE(said.find("hipModuleLaunchCooperativeKernel"), std::string::npos) << said;
  EXPECT_TRUE(fake::fake_hip().launches.empty());
  EXPECT_TRUE(fake::fake_hip().allocations.empty());
}

TEST_F(HipBackendTest, CooperativeLaunchWithoutMemoryForItsWorkspaceFails) {
  auto backend = open();
  auto module = load_scale();
  LoadedKernel* kernel = *module->kernel(fake::kernel_name);
  LaunchShape shape;
  shape.cooperative = true;
  auto queue = backend->create_queue(0);
  fake::fake_hip().malloc_result = hip_error_out_of_memory;
  queue->launch(*kernel, shape, std::vector<uint8_t>(12));
  EXPECT_EQ(queue->synchronize().error().code, ErrorCode::out_of_memory);
  EXPECT_TRUE(fake::fake_hip().launches.empty());
}

TEST_F(HipBackendTest, FailedLaunchIsStickyAndSkipsLaterWork) {
  auto backend = open();
  HipFunctions functions = fake::fake_hip_functions();
  std::vector<uint8_t> image(fake::code_object.begin(), fake::code_object.end());
  image.push_back(0);
  auto module = load_code_object(functions, 0, image, scale_module());
  ASSERT_TRUE(module.ok());
  LoadedKernel* kernel = *(*module)->kernel(fake::kernel_name);
  auto queue = backend->create_queue(0);

  queue->launch(*kernel, LaunchShape{}, std::vector<uint8_t>(4));  // too few parameter bytes
  EXPECT_EQ(queue->synchronize().error().code, ErrorCode::invalid_value);
  EXPECT_TRUE(fake::fake_hip().launches.empty());

  auto other = backend->create_queue(0);
  fake::fake_hip().launch_result = hip_error_illegal_address;
  other->launch(*kernel, LaunchShape{}, std::vector<uint8_t>(12));
  uint32_t source = 5, destination = 0;
  other->copy(&destination, &source, 4);
  Status status = other->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::illegal_address);
  EXPECT_NE(status.error().message.find(fake::kernel_name), std::string::npos);
  EXPECT_EQ(destination, 0u);
  EXPECT_FALSE(other->synchronize().ok());
  int ran = 0;  // host functions still run: something may be waiting on them
  other->host_function([](void* counter) { ++*static_cast<int*>(counter); }, &ran);
  EXPECT_EQ(ran, 1);
}

TEST_F(HipBackendTest, BadCodeObjectIsAnInvalidImage) {
  std::vector<uint8_t> image(64, 0x7f);
  auto module = load_code_object(fake::fake_hip_functions(), 0, image, scale_module());
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.error().code, ErrorCode::invalid_image);
}

TEST_F(HipBackendTest, CompilesForEachDevicesProcessor) {
  auto backend = open();
  EXPECT_EQ(backend->compile_target(), ptx::Target::amdgpu);
  ptx::CompileOptions first = backend->compile_options(0);
  EXPECT_EQ(first.target, ptx::Target::amdgpu);
  EXPECT_EQ(first.amdgpu_processor, "gfx90a");
  EXPECT_EQ(first.code_object_version, 5);  // the fake says ROCm 6.0
  ptx::CompileOptions second = backend->compile_options(1);
  EXPECT_EQ(second.amdgpu_processor, "gfx1100");
  EXPECT_NE(CodeCache::key("", first), CodeCache::key("", second));
  second.amdgpu_processor = first.amdgpu_processor;
  second.code_object_version = 4;
  EXPECT_NE(CodeCache::key("", first), CodeCache::key("", second));
}

TEST_F(HipBackendTest, RocmBefore5Point3GetsCodeObjectV4) {
  EXPECT_EQ(code_object_version_for(50221151), 4);  // HIP 5.2.21151: ROCm 5.2
  EXPECT_EQ(code_object_version_for(50300000), 5);
  EXPECT_EQ(code_object_version_for(70000000), 5);
  EXPECT_EQ(code_object_version_for(0), 4);  // a runtime that cannot say
  fake::fake_hip().runtime_version = 50200000;
  EXPECT_EQ(open()->compile_options(0).code_object_version, 4);
}

TEST_F(HipBackendTest, ModuleLoadsTheCodeObjectCompiledForTheDevice) {
  fake::fake_hip().runtime_version = 50200000;
  auto backend = open();
  // The fake's module defines one kernel, `scale`.
  constexpr std::string_view scale_ptx = R"(
.version 7.0
.target sm_70
.address_size 64

.visible .entry scale(.param .u64 data, .param .f32 factor)
{
  .reg .b64 %rd<3>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [data];
  ld.param.f32 %f1, [factor];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f2, [%rd2];
  mul.f32 %f3, %f2, %f1;
  st.global.f32 [%rd2], %f3;
  ret;
}
)";
  ptx::CompileResult compiled = ptx::compile(scale_ptx, backend->compile_options(0));
  ASSERT_TRUE(compiled.ok()) << compiled.diagnostics.front().to_string();
  auto module = backend->load_module(0, std::move(compiled));
  ASSERT_TRUE(module.ok()) << module.error().message;
  ASSERT_EQ(fake::fake_hip().elf_headers.size(), 1u);
  const fake::ElfHeader& elf = fake::fake_hip().elf_headers[0];
  EXPECT_EQ(elf.machine, fake::elf_machine_amdgpu);
  constexpr uint32_t mach_mask = 0xff, mach_gfx90a = 0x3f;  // EF_AMDGPU_MACH_AMDGCN_GFX90A
  EXPECT_EQ(elf.flags & mach_mask, mach_gfx90a);
  EXPECT_EQ(elf.abi_version, 2);  // ELFABIVERSION_AMDGPU_HSA_V4
  auto kernel = (*module)->kernel(fake::kernel_name);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ((*kernel)->info().parameters.size(), 2u);
  EXPECT_TRUE(fake::was_called("hipModuleGetFunction 0"));
  EXPECT_EQ(backend->load_module(3, ptx::CompileResult{}).error().code, ErrorCode::invalid_value);
}

TEST_F(HipBackendTest, UnknownDeviceGetsNoQueue) {
  auto backend = open();
  EXPECT_EQ(backend->create_queue(2), nullptr);
  EXPECT_EQ(backend->create_queue(-1), nullptr);
}

TEST_F(HipBackendTest, DevicelessBackendHasNoDevices) {
  auto backend = make_deviceless_hip_backend();
  EXPECT_EQ(backend->name(), "hip");
  EXPECT_EQ(backend->device_count(), 0);
  EXPECT_EQ(backend->allocate(0, 64).error().code, ErrorCode::invalid_value);
  EXPECT_EQ(backend->create_queue(0), nullptr);
}

}  // namespace
}  // namespace xcuda::runtime::hip
