// An AMDGPU code object loaded into a HIP device with hipModuleLoadData, and its kernels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/hip/hip_library.h"

namespace xcuda::runtime::hip {

class HipKernel final : public LoadedKernel {
 public:
  HipKernel(ptx::KernelInfo info, HipFunction function)
      : info_(std::move(info)), function_(function) {}
  const ptx::KernelInfo& info() const override { return info_; }
  HipFunction function() const { return function_; }

 private:
  ptx::KernelInfo info_;
  HipFunction function_;
};

class HipLoadedModule final : public LoadedModule {
 public:
  HipLoadedModule(const HipFunctions& functions, int device, HipModule module,
                  ptx::ModuleInfo info);
  ~HipLoadedModule() override;

  Expected<LoadedKernel*> kernel(std::string_view name) override;
  Expected<void*> global(std::string_view name) override;

 private:
  const HipFunctions& functions_;
  int device_;  // HIP's ordinal
  HipModule module_;
  ptx::ModuleInfo info_;
  std::mutex kernels_mutex_;
  std::map<std::string, std::unique_ptr<HipKernel>, std::less<>> kernels_;  // resolved so far
};

// `device` is HIP's ordinal; `functions` must outlive the module.
Expected<std::unique_ptr<LoadedModule>> load_code_object(const HipFunctions& functions, int device,
                                                         const std::vector<uint8_t>& code_object,
                                                         ptx::ModuleInfo info);

}  // namespace xcuda::runtime::hip
