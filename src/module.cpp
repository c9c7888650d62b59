// Modules: loading images (fatbins, PTX), looking up kernels and global variables.
#include <chrono>
#include <memory>

#include "src/api.h"
#include "src/jit_options.h"

#include "runtime/environment.h"
#include "runtime/module.h"

using namespace xcuda;
using runtime::Context;
using runtime::Module;

namespace {

CUresult finish_load(const char* function, CUmodule* result,
                     Expected<std::unique_ptr<Module>> loaded) {
  if (!loaded) return api::fail(function, loaded.error());
  *result = reinterpret_cast<CUmodule>(loaded->release());
  return CUDA_SUCCESS;
}

// `jit`, when the caller passed JIT options, receives the logs and the time taken.
CUresult load_image(const char* function, CUmodule* result, const void* image,
                    const api::JitOptions* jit = nullptr) {
  XCUDA_REQUIRE(result && image, CUDA_ERROR_INVALID_VALUE, "null pointer");
  CUresult status;
  Context* context = api::current_context(function, status);
  if (!context) return status;
  auto start = std::chrono::steady_clock::now();
  auto loaded = Module::load(*context, image, "module image");
  if (jit) {
    std::string info;
    if (loaded && jit->verbose())
      info = fmt::format("xcuda: {} kernels, {} global variables; each kernel is compiled on "
                         "its first launch",
                         (*loaded)->info().kernels.size(), (*loaded)->info().globals.size());
    jit->write_back(
        info, loaded ? std::string_view() : std::string_view(loaded.error().message),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return finish_load(function, result, std::move(loaded));
}

Module* as_module(CUmodule handle) { return reinterpret_cast<Module*>(handle); }

}  // namespace

XCUDA_EXPORT CUresult cuModuleLoadData(CUmodule* result, const void* image) {
  return load_image(__func__, result, image);
}

XCUDA_EXPORT CUresult cuModuleLoadDataEx(CUmodule* result, const void* image,
                                         unsigned int option_count, CUjit_option* options,
                                         void** option_values) {
  api::JitOptions jit;
  if (CUresult status = api::JitOptions::read(__func__, option_count, options, option_values, jit);
      status != CUDA_SUCCESS)
    return status;
  return load_image(__func__, result, image, &jit);
}

XCUDA_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* result, const void* image) {
  return load_image(__func__, result, image);
}

XCUDA_EXPORT CUresult cuModuleLoad(CUmodule* result, const char* path) {
  XCUDA_REQUIRE(result && path, CUDA_ERROR_INVALID_VALUE, "null pointer");
  CUresult status;
  Context* context = api::current_context(__func__, status);
  if (!context) return status;
  std::string contents;
  if (CUresult status = api::read_image_file(__func__, path, contents); status != CUDA_SUCCESS)
    return status;
  return finish_load(__func__, result, Module::load(*context, contents.data(), path));
}

XCUDA_EXPORT CUresult cuModuleUnload(CUmodule handle) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(runtime::live_modules().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live module");
  Module* module = as_module(handle);
  // Kernels still queued may belong to this module.
  (void)module->context().synchronize();
  delete module;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuModuleGetFunction(CUfunction* result, CUmodule handle, const char* name) {
  XCUDA_REQUIRE(result && name, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(runtime::live_modules().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live module");
  auto function = as_module(handle)->function(name);
  if (!function) return api::fail(__func__, function.error());
  *result = reinterpret_cast<CUfunction>(*function);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* address, size_t* bytes, CUmodule handle,
                                           const char* name) {
  XCUDA_REQUIRE(name, CUDA_ERROR_INVALID_VALUE, "name is null");
  XCUDA_REQUIRE(runtime::live_modules().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live module");
  auto global = as_module(handle)->global(name);
  if (!global) return api::fail(__func__, global.error());
  if (address) *address = reinterpret_cast<CUdeviceptr>(global->address);
  if (bytes) *bytes = global->size;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule handle) {
  XCUDA_REQUIRE(count, CUDA_ERROR_INVALID_VALUE, "count output pointer is null");
  XCUDA_REQUIRE(runtime::live_modules().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live module");
  *count = static_cast<unsigned>(as_module(handle)->info().kernels.size());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  XCUDA_REQUIRE(mode, CUDA_ERROR_INVALID_VALUE, "mode output pointer is null");
  *mode = runtime::environment().eager ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction* functions, unsigned int count,
                                                 CUmodule handle) {
  XCUDA_REQUIRE(functions, CUDA_ERROR_INVALID_VALUE, "functions output pointer is null");
  XCUDA_REQUIRE(runtime::live_modules().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live module");
  Module* module = as_module(handle);
  const auto& kernels = module->info().kernels;
  XCUDA_REQUIRE(count >= kernels.size(), CUDA_ERROR_INVALID_VALUE, "array too small");
  for (size_t index = 0; index < kernels.size(); ++index) {
    auto function = module->function(kernels[index].name);
    if (!function) return api::fail(__func__, function.error());
    functions[index] = reinterpret_cast<CUfunction>(*function);
  }
  return CUDA_SUCCESS;
}
