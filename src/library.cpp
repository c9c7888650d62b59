// Libraries and kernels: the context-independent loading API that cudart 12+ registers its
// fatbins with. A CUkernel stands for the same kernel in every context.
#include "src/api.h"
#include "src/jit_options.h"

#include "runtime/backend.h"
#include "runtime/library.h"

using namespace xcuda;
using runtime::Kernel;
using runtime::Library;

namespace {

Library* as_library(CUlibrary handle) { return reinterpret_cast<Library*>(handle); }
Kernel* as_kernel(CUkernel handle) { return reinterpret_cast<Kernel*>(handle); }

CUresult load(const char* function, CUlibrary* result, const void* image, const char* origin,
              unsigned jit_option_count, CUjit_option* jit_options, void** jit_values,
              unsigned library_option_count, CUlibraryOption* library_options,
              void** library_values) {
  XCUDA_REQUIRE(result && image, CUDA_ERROR_INVALID_VALUE, "null pointer");
  api::JitOptions jit;
  if (CUresult status = api::JitOptions::read(function, jit_option_count, jit_options,
                                              jit_values, jit);
      status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE(library_option_count == 0 || (library_options && library_values),
                CUDA_ERROR_INVALID_VALUE, "library options are null");
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  auto library = Library::load(image, origin);
  // Loading only finds the PTX; compiling, and so any error log, comes with the first use.
  jit.write_back("", library ? std::string_view() : std::string_view(library.error().message), 0);
  if (!library) return api::fail(function, library.error());
  *result = reinterpret_cast<CUlibrary>(library->release());
  return CUDA_SUCCESS;
}

// The library's module in the calling thread's context.
// The library's module in `context`, or in the current context.
CUresult module_of(const char* function, CUlibrary handle, runtime::Module*& module,
                   runtime::Context* context = nullptr) {
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  CUresult status;
  if (!context) context = api::current_context(function, status);
  if (!context) return status;
  auto compiled = as_library(handle)->module(*context);
  if (!compiled) return api::fail(function, compiled.error());
  module = *compiled;
  return CUDA_SUCCESS;
}

}  // namespace

namespace xcuda::api {

CUresult resolve_function(const char* function, CUfunction handle, runtime::Function*& result) {
  if (runtime::live_functions().contains(handle)) {
    result = reinterpret_cast<runtime::Function*>(handle);
    return CUDA_SUCCESS;
  }
  // cuLaunchKernel and friends take a CUkernel cast to CUfunction as well.
  XCUDA_REQUIRE(runtime::live_kernels().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live function or kernel");
  CUresult status;
  runtime::Context* context = current_context(function, status);
  if (!context) return status;
  auto resolved = reinterpret_cast<Kernel*>(handle)->function(*context);
  if (!resolved) return fail(function, resolved.error());
  result = *resolved;
  return CUDA_SUCCESS;
}

}  // namespace xcuda::api

XCUDA_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code,
                                        CUjit_option* jit_options, void** jit_values,
                                        unsigned int jit_option_count,
                                        CUlibraryOption* library_options, void** library_values,
                                        unsigned int library_option_count) {
  return load(__func__, library, code, "library image", jit_option_count, jit_options,
              jit_values, library_option_count, library_options, library_values);
}

XCUDA_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* path,
                                            CUjit_option* jit_options, void** jit_values,
                                            unsigned int jit_option_count,
                                            CUlibraryOption* library_options,
                                            void** library_values,
                                            unsigned int library_option_count) {
  std::string contents;
  if (CUresult status = api::read_image_file(__func__, path, contents); status != CUDA_SUCCESS)
    return status;
  return load(__func__, library, contents.data(), path, jit_option_count, jit_options,
              jit_values, library_option_count, library_options, library_values);
}

XCUDA_EXPORT CUresult cuLibraryUnload(CUlibrary handle) {
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  delete as_library(handle);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetKernel(CUkernel* result, CUlibrary handle, const char* name) {
  XCUDA_REQUIRE(result && name, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  auto kernel = as_library(handle)->kernel(name);
  if (!kernel) return api::fail(__func__, kernel.error());
  *result = reinterpret_cast<CUkernel>(*kernel);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetModule(CUmodule* result, CUlibrary handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "module output pointer is null");
  runtime::Module* module = nullptr;
  if (CUresult status = module_of(__func__, handle, module); status != CUDA_SUCCESS) return status;
  *result = reinterpret_cast<CUmodule>(module);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary handle) {
  XCUDA_REQUIRE(count, CUDA_ERROR_INVALID_VALUE, "count output pointer is null");
  runtime::Module* module = nullptr;
  if (CUresult status = module_of(__func__, handle, module); status != CUDA_SUCCESS) return status;
  *count = static_cast<unsigned>(module->info().kernels.size());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int count,
                                                CUlibrary handle) {
  XCUDA_REQUIRE(kernels, CUDA_ERROR_INVALID_VALUE, "kernels output pointer is null");
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  CUresult status;
  runtime::Context* context = api::current_context(__func__, status);
  if (!context) return status;
  auto all = as_library(handle)->kernels(*context);
  if (!all) return api::fail(__func__, all.error());
  XCUDA_REQUIRE(count >= all->size(), CUDA_ERROR_INVALID_VALUE, "array too small");
  for (size_t index = 0; index < all->size(); ++index)
    kernels[index] = reinterpret_cast<CUkernel>((*all)[index]);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr* address, size_t* bytes, CUlibrary handle,
                                         const char* name) {
  XCUDA_REQUIRE(name, CUDA_ERROR_INVALID_VALUE, "name is null");
  runtime::Module* module = nullptr;
  if (CUresult status = module_of(__func__, handle, module); status != CUDA_SUCCESS) return status;
  auto global = module->global(name);
  if (!global) return api::fail(__func__, global.error());
  if (address) *address = reinterpret_cast<CUdeviceptr>(global->address);
  if (bytes) *bytes = global->size;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr* address, size_t* bytes, CUlibrary handle,
                                          const char* name) {
  XCUDA_REQUIRE(name, CUDA_ERROR_INVALID_VALUE, "name is null");
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  // On an AMD GPU a module's variables are the GPU's memory, which the host's code cannot read
  // as it reads a managed variable.
  XCUDA_REQUIRE(runtime::backend().compile_target() == ptx::Target::host, CUDA_ERROR_NOT_SUPPORTED,
                "managed variables need the host backend");
  // A managed variable belongs to no context, and cudart asks for it before making one current:
  // xcuda keeps it in the module of the current context, else of device 0's primary context,
  // which cudart's launches use (and which stays retained for it).
  runtime::Context* context = runtime::current_context();
  if (!context) context = runtime::primary_context_if_active(0);
  if (!context) context = &runtime::retain_primary_context(0);
  runtime::Module* module = nullptr;
  if (CUresult status = module_of(__func__, handle, module, context); status != CUDA_SUCCESS) return status;
  auto global = module->global(name);
  if (!global) return api::fail(__func__, global.error());
  if (!global->is_managed)
    return api::fail(__func__, CUDA_ERROR_NOT_FOUND, std::string("'") + name + "' is not a managed variable");
  if (address) *address = reinterpret_cast<CUdeviceptr>(global->address);
  if (bytes) *bytes = global->size;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLibraryGetUnifiedFunction(void** result, CUlibrary handle,
                                                  const char* name) {
  XCUDA_REQUIRE(result && name, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(runtime::live_libraries().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live library");
  // No device reports CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, so no library has unified
  // functions; NVIDIA answers NOT_FOUND then.
  return api::fail(__func__, CUDA_ERROR_NOT_FOUND,
                   std::string("no unified function named '") + name + "'");
}

XCUDA_EXPORT CUresult cuKernelGetFunction(CUfunction* result, CUkernel handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "function output pointer is null");
  XCUDA_REQUIRE(runtime::live_kernels().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live kernel");
  runtime::Function* function = nullptr;
  CUresult status =
      api::resolve_function(__func__, reinterpret_cast<CUfunction>(handle), function);
  if (status == CUDA_SUCCESS) *result = reinterpret_cast<CUfunction>(function);
  return status;
}

XCUDA_EXPORT CUresult cuKernelGetLibrary(CUlibrary* result, CUkernel handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "library output pointer is null");
  XCUDA_REQUIRE(runtime::live_kernels().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live kernel");
  *result = reinterpret_cast<CUlibrary>(&as_kernel(handle)->library());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuKernelGetName(const char** name, CUkernel handle) {
  XCUDA_REQUIRE(name, CUDA_ERROR_INVALID_VALUE, "name output pointer is null");
  XCUDA_REQUIRE(runtime::live_kernels().contains(handle), CUDA_ERROR_INVALID_HANDLE,
                "not a live kernel");
  *name = as_kernel(handle)->name().c_str();
  return CUDA_SUCCESS;
}

// Per-device kernel attributes are the function's attributes in the current context; the host
// backend has one device.
XCUDA_EXPORT CUresult cuKernelGetAttribute(int* value, CUfunction_attribute attribute,
                                           CUkernel handle, CUdevice device) {
  return cuFuncGetAttribute(value, attribute, reinterpret_cast<CUfunction>(handle));
}

XCUDA_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attribute, int value,
                                           CUkernel handle, CUdevice device) {
  return cuFuncSetAttribute(reinterpret_cast<CUfunction>(handle), attribute, value);
}

XCUDA_EXPORT CUresult cuKernelSetCacheConfig(CUkernel handle, CUfunc_cache config,
                                             CUdevice device) {
  return cuFuncSetCacheConfig(reinterpret_cast<CUfunction>(handle), config);
}

XCUDA_EXPORT CUresult cuKernelGetParamInfo(CUkernel handle, size_t index, size_t* offset,
                                           size_t* size) {
  return cuFuncGetParamInfo(reinterpret_cast<CUfunction>(handle), index, offset, size);
}
