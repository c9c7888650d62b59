// A loaded module: the application's image (fatbin, wrapper or PTX text) compiled for the
// context's backend, with its kernels and global variables.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/backend.h"
#include "runtime/context.h"
#include "runtime/handles.h"

namespace xcuda::runtime {

class Module;

class Function {
 public:
  Function(Module& module, LoadedKernel& kernel) : module_(module), kernel_(kernel) {}
  Module& module() const { return module_; }
  LoadedKernel& kernel() const { return kernel_; }
  const ptx::KernelInfo& info() const { return kernel_.info(); }

  // cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): what launches may ask.
  uint32_t max_dynamic_shared_bytes = 48 * 1024;

 private:
  Module& module_;
  LoadedKernel& kernel_;
};

struct GlobalVariable {
  void* address = nullptr;
  size_t size = 0;
};

class Module {
 public:
  // `image` is whatever the application passed: a fatbin wrapper, a fatbin, or PTX text
  // (NUL-terminated). `origin` names it in diagnostics.
  static Expected<std::unique_ptr<Module>> load(Context& context, const void* image,
                                                std::string_view origin);
  static Expected<std::unique_ptr<Module>> load_ptx(Context& context, std::string_view ptx_text,
                                                    std::string_view origin);
  ~Module();

  Context& context() const { return context_; }
  const ptx::ModuleInfo& info() const { return info_; }
  Expected<Function*> function(std::string_view name);
  Expected<GlobalVariable> global(std::string_view name);

 private:
  Module(Context& context, std::unique_ptr<LoadedModule> loaded, ptx::ModuleInfo info);

  Context& context_;
  std::unique_ptr<LoadedModule> loaded_;
  ptx::ModuleInfo info_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Function>, std::less<>> functions_;
};

HandleRegistry<Module>& live_modules();
HandleRegistry<Function>& live_functions();

}  // namespace xcuda::runtime
