#include "runtime/hip/hip_backend.h"

#include <numeric>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "runtime/hip/hip_errors.h"
#include "runtime/hip/hip_module.h"
#include "runtime/hip/hip_queue.h"
#include "runtime/hip/hip_texture.h"
#include "runtime/log.h"

namespace xcuda::runtime::hip {
namespace {

// The map's HIP ordinals when all exist, else every device in HIP's order.
std::vector<int> choose_ordinals(const std::vector<int>& device_map, int hip_device_count) {
  for (int ordinal : device_map) {
    if (ordinal < hip_device_count) continue;
    logger().warn(
        "XCUDA_DEVICE_MAP names HIP device {}, but HIP has {} devices; using all of "
        "them in HIP's order",
        ordinal, hip_device_count);
    return choose_ordinals({}, hip_device_count);
  }
  if (!device_map.empty()) return device_map;
  std::vector<int> identity(static_cast<size_t>(hip_device_count));
  std::iota(identity.begin(), identity.end(), 0);
  return identity;
}

// hipMemset and hipMemcpy run on the null stream, which our non-blocking streams do not wait for,
// and may return before the device is done, as CUDA's do; work queued next must see the result.
Status finish_null_stream(const HipFunctions& functions) {
  return check_hip(functions, functions.stream_synchronize(nullptr),
                   "hipStreamSynchronize of the null stream");
}

}  // namespace

int code_object_version_for(int hip_runtime_version) {
  constexpr int rocm_5_3 = 50300000;
  return hip_runtime_version < rocm_5_3 ? 4 : 5;
}

HipBackend::HipBackend(HipFunctions functions, std::vector<HipDeviceDescription> devices,
                       std::vector<int> hip_ordinals, int code_object_version)
    : functions_(std::move(functions)),
      devices_(std::move(devices)),
      hip_ordinals_(std::move(hip_ordinals)),
      code_object_version_(code_object_version) {}

const DeviceProperties& HipBackend::properties(int device) const {
  static const DeviceProperties unknown;
  if (device < 0 || device >= device_count()) return unknown;
  return devices_[static_cast<size_t>(device)].properties;
}

Expected<int> HipBackend::hip_ordinal(int device) const {
  if (device >= 0 && device < device_count()) return hip_ordinals_[static_cast<size_t>(device)];
  return make_error(ErrorCode::invalid_value,
                    fmt::format("the HIP backend has {} devices; device {} does not exist",
                                device_count(), device));
}

Expected<void*> HipBackend::allocate(int device, size_t bytes) {
  Expected<int> ordinal = hip_ordinal(device);
  if (!ordinal) return ordinal.error();
  if (bytes == 0) return make_error(ErrorCode::invalid_value, "allocation of 0 bytes");
  void* pointer = nullptr;
  Status status = check_hip(functions_, functions_.set_device(*ordinal), "hipSetDevice");
  if (status)
    status = check_hip(functions_, functions_.malloc(&pointer, bytes),
                       fmt::format("hipMalloc of {} bytes", bytes));
  if (!status) return status.error();
  return pointer;
}

Expected<void*> HipBackend::allocate_zeroed(int device, size_t bytes) {
  Expected<void*> pointer = allocate(device, bytes);
  if (!pointer) return pointer;
  // allocate() left the device current.
  Status status = check_hip(functions_, functions_.memset(*pointer, 0, bytes),
                            fmt::format("hipMemset of {} bytes", bytes));
  if (status) status = finish_null_stream(functions_);
  if (!status) {
    (void)functions_.free(*pointer);
    return status.error();
  }
  return pointer;
}

Expected<uint64_t> HipBackend::create_texture_object(int device, const TextureDescriptor& texture) {
  Expected<ptx::amdgpu_abi::TextureObject> encoded = encode_texture_object(texture);
  if (!encoded) return encoded.error();
  Expected<void*> block = allocate(device, sizeof *encoded);
  if (!block) return block.error();
  Status status = check_hip(
      functions_, functions_.memcpy(*block, &*encoded, sizeof *encoded, hip_memcpy_default),
      "hipMemcpy of a texture descriptor");
  if (status) status = finish_null_stream(functions_);
  if (!status) {
    (void)functions_.free(*block);
    return status.error();
  }
  return reinterpret_cast<uint64_t>(*block);
}

Status HipBackend::destroy_texture_object(int device, uint64_t object) {
  return release(device, reinterpret_cast<void*>(object));
}

Status HipBackend::release(int device, void* pointer) {
  Expected<int> ordinal = hip_ordinal(device);
  if (!ordinal) return ordinal.error();
  if (Status status = check_hip(functions_, functions_.set_device(*ordinal), "hipSetDevice");
      !status)
    return status;
  return check_hip(functions_, functions_.free(pointer), fmt::format("hipFree of {}", pointer));
}

std::unique_ptr<Queue> HipBackend::create_queue(int device) {
  Expected<int> ordinal = hip_ordinal(device);
  if (!ordinal) return nullptr;
  return HipQueue::create(functions_, *ordinal,
                          devices_[static_cast<size_t>(device)].properties.multiprocessor_count);
}

ptx::CompileOptions HipBackend::compile_options(int device) const {
  ptx::CompileOptions options;
  options.target = ptx::Target::amdgpu;
  options.code_object_version = code_object_version_;
  if (device >= 0 && device < device_count())
    options.amdgpu_processor =
        processor_of(devices_[static_cast<size_t>(device)].architecture_name);
  return options;
}

Expected<std::unique_ptr<LoadedModule>> HipBackend::load_module(int device,
                                                                ptx::CompileResult compiled) {
  Expected<int> ordinal = hip_ordinal(device);
  if (!ordinal) return ordinal.error();
  return load_code_object(functions_, *ordinal, compiled.object, std::move(compiled.module));
}

Expected<std::unique_ptr<HipBackend>> open_hip_backend(HipFunctions functions,
                                                       const HipBackendOptions& options) {
  if (Status status = check_hip(functions, functions.init(0), "hipInit"); !status)
    return status.error();
  int count = 0;
  if (Status status = check_hip(functions, functions.get_device_count(&count), "hipGetDeviceCount");
      !status)
    return status.error();
  if (count <= 0) return make_error(ErrorCode::not_found, "HIP reports no device");
  // A runtime that cannot say its version stays at 0 and gets code object v4, the version
  // every ROCm from 5.0 on reads.
  int runtime_version = 0;
  (void)functions.runtime_get_version(&runtime_version);
  int code_object_version = code_object_version_for(runtime_version);
  logger().info("HIP: {}, runtime version {}, {} devices, code object v{}", functions.library,
                runtime_version, count, code_object_version);
  std::vector<int> ordinals = choose_ordinals(options.device_map, count);
  std::vector<HipDeviceDescription> devices;
  for (int ordinal : ordinals) {
    Expected<HipDeviceDescription> described =
        describe_hip_device(functions, ordinal, options.compute_major, options.compute_minor);
    if (!described) return described.error();
    logger().debug("HIP device {}: {} ({}, wave{})", ordinal, described->properties.name,
                   described->architecture_name, described->wavefront_size);
    devices.push_back(std::move(*described));
  }
  return std::make_unique<HipBackend>(std::move(functions), std::move(devices),
                                      std::move(ordinals), code_object_version);
}

std::unique_ptr<HipBackend> make_deviceless_hip_backend() {
  return std::make_unique<HipBackend>(HipFunctions{}, std::vector<HipDeviceDescription>{},
                                      std::vector<int>{}, code_object_version_for(0));
}

}  // namespace xcuda::runtime::hip
