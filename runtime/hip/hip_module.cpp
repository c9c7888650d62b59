#include "runtime/hip/hip_module.h"

#include <algorithm>

#include "runtime/hip/hip_errors.h"

namespace xcuda::runtime::hip {

HipLoadedModule::HipLoadedModule(const HipFunctions& functions, int device, HipModule module,
                                 ptx::ModuleInfo info)
    : functions_(functions), device_(device), module_(module), info_(std::move(info)) {}

HipLoadedModule::~HipLoadedModule() {
  // Nothing to report to: a module is unloaded when its context goes, errors or not.
  (void)functions_.set_device(device_);
  (void)functions_.module_unload(module_);
}

Expected<LoadedKernel*> HipLoadedModule::kernel(std::string_view name) {
  std::lock_guard lock(kernels_mutex_);
  if (auto found = kernels_.find(name); found != kernels_.end()) return found->second.get();
  auto described = std::find_if(info_.kernels.begin(), info_.kernels.end(),
                                [&](const ptx::KernelInfo& kernel) { return kernel.name == name; });
  if (described == info_.kernels.end())
    return make_error(ErrorCode::not_found, "the module has no kernel " + std::string(name));
  std::string symbol(name);
  HipFunction function = nullptr;
  if (Status status =
          check_hip(functions_, functions_.module_get_function(&function, module_, symbol.c_str()),
                    "hipModuleGetFunction of " + symbol);
      !status)
    return status.error();
  auto kernel = std::make_unique<HipKernel>(*described, function);
  LoadedKernel* result = kernel.get();
  kernels_.emplace(std::move(symbol), std::move(kernel));
  return result;
}

Expected<void*> HipLoadedModule::global(std::string_view name) {
  std::string symbol(name);
  void* address = nullptr;
  size_t bytes = 0;
  if (Status status = check_hip(
          functions_, functions_.module_get_global(&address, &bytes, module_, symbol.c_str()),
          "hipModuleGetGlobal of " + symbol);
      !status)
    return status.error();
  return address;
}

Expected<std::unique_ptr<LoadedModule>> load_code_object(const HipFunctions& functions, int device,
                                                         const std::vector<uint8_t>& code_object,
                                                         ptx::ModuleInfo info) {
  if (Status status = check_hip(functions, functions.set_device(device), "hipSetDevice"); !status)
    return status.error();
  HipModule module = nullptr;
  if (Status status = check_hip(functions, functions.module_load_data(&module, code_object.data()),
                                "hipModuleLoadData");
      !status)
    return status.error();
  return std::unique_ptr<LoadedModule>(
      std::make_unique<HipLoadedModule>(functions, device, module, std::move(info)));
}

}  // namespace xcuda::runtime::hip
