// The HIP backend: AMD GPUs through the ROCm HIP runtime, one CUDA device per HIP device that
// XCUDA_DEVICE_MAP shows (all of them, in HIP's order, by default).
#pragma once

#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/hip/hip_library.h"
#include "runtime/hip/hip_properties.h"

namespace xcuda::runtime::hip {

struct HipBackendOptions {
  int compute_major = 8;  // what the devices report, see hip_properties.h
  int compute_minor = 6;
  // CUDA ordinal → HIP ordinal; empty for all devices in HIP's order.
  std::vector<int> device_map;
};

// The AMDGPU code object version a HIP runtime of this hipRuntimeGetVersion reads best (major *
// 10000000 + minor * 100000 + patch; HIP's version is ROCm's): 4 before ROCm 5.3, which cannot
// read 5, else 5.
int code_object_version_for(int hip_runtime_version);

class HipBackend final : public Backend {
 public:
  // `devices[i]` describes HIP device `hip_ordinals[i]`, seen as CUDA device i; modules for them
  // are compiled to code objects of `code_object_version`.
  HipBackend(HipFunctions functions, std::vector<HipDeviceDescription> devices,
             std::vector<int> hip_ordinals, int code_object_version);

  std::string_view name() const override { return "hip"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  // Callers check the ordinal first (the API layer does); an unknown one gets defaults.
  const DeviceProperties& properties(int device) const override;
  const HipDeviceDescription& description(int device) const { return devices_.at(device); }

  Expected<void*> allocate(int device, size_t bytes) override;
  Status release(int device, void* pointer) override;
  Expected<void*> allocate_zeroed(int device, size_t bytes) override;
  // The device address of the texture's amdgpu_abi::TextureObject (hip_texture.h), copied to
  // memory of its own, which destroy_texture_object() frees.
  Expected<uint64_t> create_texture_object(int device, const TextureDescriptor& texture) override;
  Status destroy_texture_object(int device, uint64_t object) override;

  // Null for an unknown device or when HIP refuses a stream. Cooperative launches on the queue
  // are bounded by the device's compute units.
  std::unique_ptr<Queue> create_queue(int device) override;
  // `compiled` holds a code object compiled with compile_options(device).
  Expected<std::unique_ptr<LoadedModule>> load_module(int device,
                                                      ptx::CompileResult compiled) override;
  ptx::Target compile_target() const override { return ptx::Target::amdgpu; }
  // An unknown device gets the compiler's default processor: loading for it fails anyway.
  ptx::CompileOptions compile_options(int device) const override;

 private:
  // HIP's ordinal for a CUDA ordinal, or invalid_value.
  Expected<int> hip_ordinal(int device) const;

  HipFunctions functions_;
  std::vector<HipDeviceDescription> devices_;
  std::vector<int> hip_ordinals_;
  int code_object_version_;
};

// Initialises HIP and describes the devices the map selects. Fails, saying why, when HIP does
// not initialise, has no device, or cannot describe one; a map naming a device HIP lacks is
// reported in the log and replaced by the default.
Expected<std::unique_ptr<HipBackend>> open_hip_backend(HipFunctions functions,
                                                       const HipBackendOptions& options);

// A HIP backend without devices: what XCUDA_BACKEND=hip gets where no AMD GPU answers, so that
// cuInit fails with CUDA_ERROR_NO_DEVICE instead of silently running on the CPU.
std::unique_ptr<HipBackend> make_deviceless_hip_backend();

}  // namespace xcuda::runtime::hip
