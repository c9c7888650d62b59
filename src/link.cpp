// JIT linking: cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkDestroy. Each
// input is checked when added, as NVIDIA's driver compiles it then; cuLinkComplete joins them
// (runtime/linker.h) into one PTX image, which cuModuleLoadData and cuLibraryLoadData accept.
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/api.h"
#include "src/jit_options.h"

#include "runtime/backend.h"
#include "runtime/device_code_archive.h"
#include "runtime/fatbin_reader.h"
#include "runtime/handles.h"
#include "runtime/linker.h"

using namespace xcuda;

namespace {

struct LinkState {
  api::JitOptions options;
  int device = 0;
  std::vector<runtime::LinkInput> inputs;
  std::string image;  // cuLinkComplete's result, which lives as long as the state
  double milliseconds = 0;
};

runtime::HandleRegistry<LinkState>& live_links() {
  static auto& registry = *new runtime::HandleRegistry<LinkState>;
  return registry;
}

LinkState* as_link(CUlinkState handle) { return reinterpret_cast<LinkState*>(handle); }

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Reports `error` through the state's logs and as the entry point's result.
CUresult fail_with_log(const char* function, LinkState& link, const Error& error) {
  link.options.write_back("", error.message, link.milliseconds);
  return api::fail(function, error);
}

// The PTX of one input: PTX text as it is, the PTX entry of a fatbin (cubins hold only SASS),
// the device code of host objects and of archives of them, one input per translation unit.
Expected<std::vector<runtime::LinkInput>> input_ptx(CUjitInputType type, const void* data,
                                                    size_t size, int arch,
                                                    const std::string& name) {
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data), size);
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      const char* text = static_cast<const char*>(data);
      return std::vector<runtime::LinkInput>{{std::string(text, strnlen(text, size)), name}};
    }
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_FATBINARY: {
      Expected<runtime::LoadedPtx> loaded = runtime::load_ptx(data, arch, size);
      if (!loaded) return loaded.error();
      return std::vector<runtime::LinkInput>{{std::move(loaded->text), name}};
    }
    case CU_JIT_INPUT_OBJECT: return runtime::object_device_code(bytes, arch, name);
    case CU_JIT_INPUT_LIBRARY: return runtime::archive_device_code(bytes, arch, name);
    case CU_JIT_INPUT_NVVM:
    case CU_JIT_NUM_INPUT_TYPES: break;
  }
  return make_error(ErrorCode::not_supported,
                    fmt::format("input type {} is not supported: xcuda links PTX, fatbins with "
                                "PTX, cubins that are PTX text, and host objects and archives "
                                "holding those",
                                static_cast<int>(type)));
}

CUresult add_data(const char* function, CUlinkState handle, CUjitInputType type,
                  const void* data, size_t size, const char* name, unsigned option_count,
                  CUjit_option* options, void** option_values) {
  XCUDA_REQUIRE(live_links().contains(handle), CUDA_ERROR_INVALID_HANDLE, "not a live link state");
  XCUDA_REQUIRE(data && size > 0, CUDA_ERROR_INVALID_VALUE, "no input data");
  // Options for one input tune NVIDIA's compiler; they are checked but change nothing here.
  api::JitOptions input_options;
  if (CUresult status = api::JitOptions::read(function, option_count, options, option_values,
                                              input_options);
      status != CUDA_SUCCESS)
    return status;
  LinkState& link = *as_link(handle);
  auto start = Clock::now();
  std::string input_name =
      name && *name ? name : fmt::format("input {}", link.inputs.size());
  const runtime::DeviceProperties& device = runtime::backend().properties(link.device);
  auto inputs = input_ptx(type, data, size, device.compute_major * 10 + device.compute_minor,
                          input_name);
  if (!inputs) return fail_with_log(function, link, inputs.error());
  // Every input is checked before any joins the link, so a failed call adds nothing.
  for (const runtime::LinkInput& input : *inputs) {
    ptx::CompileOptions compile = runtime::backend().compile_options(link.device);
    compile.file_name = input.name;
    Expected<ptx::ModuleInfo> scanned = runtime::scan_ptx(input.ptx, compile);
    if (!scanned) {
      link.milliseconds += milliseconds_since(start);
      return fail_with_log(function, link, scanned.error());
    }
  }
  link.milliseconds += milliseconds_since(start);
  for (runtime::LinkInput& input : *inputs) link.inputs.push_back(std::move(input));
  return CUDA_SUCCESS;
}

CUresult add_file(const char* function, CUlinkState handle, CUjitInputType type,
                  const char* path, unsigned option_count, CUjit_option* options,
                  void** option_values) {
  XCUDA_REQUIRE(live_links().contains(handle), CUDA_ERROR_INVALID_HANDLE, "not a live link state");
  std::string contents;
  if (CUresult status = api::read_image_file(function, path, contents); status != CUDA_SUCCESS)
    return status;
  return add_data(function, handle, type, contents.data(), contents.size(), path, option_count,
                  options, option_values);
}

CUresult create(const char* function, unsigned option_count, CUjit_option* options,
                void** option_values, CUlinkState* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "link state output pointer is null");
  CUresult status;
  runtime::Context* context = api::current_context(function, status);
  if (!context) return status;
  auto link = std::make_unique<LinkState>();
  if ((status = api::JitOptions::read(function, option_count, options, option_values,
                                      link->options)) != CUDA_SUCCESS)
    return status;
  link->device = context->device();
  live_links().add(link.get());
  *result = reinterpret_cast<CUlinkState>(link.release());
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuLinkCreate_v2(unsigned int option_count, CUjit_option* options,
                                      void** option_values, CUlinkState* result) {
  return create(__func__, option_count, options, option_values, result);
}

XCUDA_EXPORT CUresult cuLinkCreate(unsigned int option_count, CUjit_option* options,
                                   void** option_values, CUlinkState* result) {
  return create(__func__, option_count, options, option_values, result);
}

XCUDA_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data,
                                       size_t size, const char* name, unsigned int option_count,
                                       CUjit_option* options, void** option_values) {
  return add_data(__func__, state, type, data, size, name, option_count, options, option_values);
}

XCUDA_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data,
                                    size_t size, const char* name, unsigned int option_count,
                                    CUjit_option* options, void** option_values) {
  return add_data(__func__, state, type, data, size, name, option_count, options, option_values);
}

XCUDA_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path,
                                       unsigned int option_count, CUjit_option* options,
                                       void** option_values) {
  return add_file(__func__, state, type, path, option_count, options, option_values);
}

XCUDA_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
                                    unsigned int option_count, CUjit_option* options,
                                    void** option_values) {
  return add_file(__func__, state, type, path, option_count, options, option_values);
}

XCUDA_EXPORT CUresult cuLinkComplete(CUlinkState state, void** image, size_t* image_bytes) {
  XCUDA_REQUIRE(live_links().contains(state), CUDA_ERROR_INVALID_HANDLE, "not a live link state");
  XCUDA_REQUIRE(image && image_bytes, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  LinkState& link = *as_link(state);
  XCUDA_REQUIRE(!link.inputs.empty(), CUDA_ERROR_INVALID_VALUE, "nothing was added to link");
  auto start = Clock::now();
  Expected<std::string> linked = runtime::link_ptx(link.inputs);
  link.milliseconds += milliseconds_since(start);
  if (!linked) return fail_with_log(__func__, link, linked.error());
  link.image = std::move(*linked);
  std::string info;
  if (link.options.verbose()) {
    info = fmt::format("xcuda: linked {} inputs into one PTX image of {} bytes:",
                       link.inputs.size(), link.image.size());
    for (const runtime::LinkInput& input : link.inputs) info += " " + input.name;
  }
  link.options.write_back(info, "", link.milliseconds);
  *image = link.image.data();
  *image_bytes = link.image.size() + 1;  // with its NUL: PTX text is a C string
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuLinkDestroy(CUlinkState state) {
  XCUDA_REQUIRE(live_links().contains(state), CUDA_ERROR_INVALID_HANDLE, "not a live link state");
  live_links().remove(as_link(state));
  delete as_link(state);
  return CUDA_SUCCESS;
}
