// JIT linking and JIT options on the Driver API alone (no cudart), with the same expectations
// on NVIDIA's driver and on ours: cuLink* joins a PTX kernel that declares `.extern` a function
// and a variable with the PTX that defines them (each also holding an internal variable of the
// same name, which must stay two variables); an undefined reference fails cuLinkComplete and is
// named in the error log; bad PTX fails cuModuleLoadDataEx and the logs, with their sizes written
// back, say where; unknown options are rejected; an archive of host objects with device code
// (nvcc -rdc=true -lib, CU_JIT_INPUT_LIBRARY) supplies what the kernel declares. Runs unchanged
// on NVIDIA's driver: the result codes and the log lengths written back are what driver 580 gave
// on an H100 (CUDA_ERROR_INVALID_SOURCE for the undefined reference; a log's length without its
// NUL, or the whole buffer's where it was cut short). What each driver writes in its logs is
// printed, not compared.
#include "driver_check.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// out[i] = scale(i) + offset + local_value, with scale and offset defined in the other input.
const char kernel_ptx[] = R"PTX(
.version 7.0
.target sm_80
.address_size 64

.extern .func (.param .b32 result) scale(.param .b32 x);
.extern .global .align 4 .u32 offset;
.global .align 4 .u32 local_value = 1;

.visible .entry fill(.param .u64 out)
{
  .reg .b32 %r<7>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  {
    .param .b32 argument;
    .param .b32 answer;
    st.param.b32 [argument], %r1;
    call.uni (answer), scale, (argument);
    ld.param.b32 %r2, [answer];
  }
  ld.global.u32 %r3, [offset];
  ld.global.u32 %r4, [local_value];
  add.s32 %r5, %r2, %r3;
  add.s32 %r6, %r5, %r4;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r6;
  ret;
}
)PTX";

// scale(x) = 3 * x + local_value (this input's own, 2).
const char library_ptx[] = R"PTX(
.version 7.0
.target sm_80
.address_size 64

.visible .global .align 4 .u32 offset = 7;
.global .align 4 .u32 local_value = 2;

.visible .func (.param .b32 result) scale(.param .b32 x)
{
  .reg .b32 %r<5>;
  ld.param.b32 %r1, [x];
  ld.global.u32 %r2, [local_value];
  mul.lo.s32 %r3, %r1, 3;
  add.s32 %r4, %r3, %r2;
  st.param.b32 [result], %r4;
  ret;
}
)PTX";

// Line 9 uses a register that was never declared.
const char bad_ptx[] = R"PTX(
.version 7.0
.target sm_80
.address_size 64

.visible .entry broken(.param .u64 out)
{
  .reg .b32 %r<2>;
  mov.u32 %r9, 1;
  ret;
}
)PTX";

constexpr unsigned threads = 32;
constexpr unsigned log_bytes = 4096;

std::string error_name(CUresult result) {
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  return name ? name : std::to_string(static_cast<int>(result));
}

// The option arrays of one JIT call that asks for both logs.
struct Logs {
  char info[log_bytes];
  char error[log_bytes];
  CUjit_option options[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_WALL_TIME};
  void* values[5];

  explicit Logs(unsigned error_capacity = log_bytes) {
    std::memset(info, 'X', sizeof info);
    std::memset(error, 'X', sizeof error);
    values[0] = info;
    values[1] = reinterpret_cast<void*>(uintptr_t{log_bytes});
    values[2] = error;
    values[3] = reinterpret_cast<void*>(uintptr_t{error_capacity});
    values[4] = nullptr;
  }
  size_t info_written() const { return reinterpret_cast<uintptr_t>(values[1]); }
  size_t error_written() const { return reinterpret_cast<uintptr_t>(values[3]); }
  float wall_milliseconds() const {
    float milliseconds;
    uint32_t bits = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(values[4]));
    std::memcpy(&milliseconds, &bits, sizeof bits);
    return milliseconds;
  }
  void print(const char* what) const {
    std::printf("%s: info log %zu bytes written back, strlen %zu: \"%.*s\"\n", what,
                info_written(), strnlen(info, log_bytes), static_cast<int>(strnlen(info, 300)),
                info);
    std::printf("%s: error log %zu bytes written back, strlen %zu: \"%.*s\"\n", what,
                error_written(), strnlen(error, log_bytes), static_cast<int>(strnlen(error, 300)),
                error);
    std::printf("%s: wall time %.3f ms\n", what, static_cast<double>(wall_milliseconds()));
  }
};

void add_ptx(CUlinkState link, const char* text, const char* name) {
  CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(text), std::strlen(text) + 1,
                         name, 0, nullptr, nullptr));
}

// Completes the link of `fill` with a `scale` and an `offset` from the other inputs, and checks
// what the linked kernel computes.
void check_linked_fill(CUlinkState link, const char* what) {
  void* image = nullptr;
  size_t image_bytes = 0;
  CHECK_CU(cuLinkComplete(link, &image, &image_bytes));
  if (!image || image_bytes == 0) FAIL("%s: cuLinkComplete returned no image", what);
  CUmodule module = nullptr;
  CHECK_CU(cuModuleLoadData(&module, image));
  // The image belongs to the link state, but a module loaded from it does not need it.
  CHECK_CU(cuLinkDestroy(link));
  CUfunction fill = nullptr;
  CHECK_CU(cuModuleGetFunction(&fill, module, "fill"));
  CUdeviceptr out = 0;
  CHECK_CU(cuMemAlloc(&out, threads * sizeof(uint32_t)));
  void* arguments[] = {&out};
  CHECK_CU(cuLaunchKernel(fill, 1, 1, 1, threads, 1, 1, 0, nullptr, arguments, nullptr));
  uint32_t values[threads];
  CHECK_CU(cuMemcpyDtoH(values, out, sizeof values));
  for (unsigned i = 0; i < threads; ++i)
    if (values[i] != 3 * i + 2 + 7 + 1)
      FAIL("%s: out[%u] = %u, expected %u", what, i, values[i], 3 * i + 10);
  CUdeviceptr offset = 0;
  size_t offset_bytes = 0;
  CHECK_CU(cuModuleGetGlobal(&offset, &offset_bytes, module, "offset"));
  if (offset_bytes != 4) FAIL("%s: offset has %zu bytes", what, offset_bytes);
  CHECK_CU(cuMemFree(out));
  CHECK_CU(cuModuleUnload(module));
  std::printf("%s: %u values right\n", what, threads);
}

void linked_kernel_runs() {
  Logs logs;
  CUlinkState link = nullptr;
  CHECK_CU(cuLinkCreate(5, logs.options, logs.values, &link));
  add_ptx(link, kernel_ptx, "kernel.ptx");
  add_ptx(link, library_ptx, "library.ptx");
  check_linked_fill(link, "linked kernel");
  logs.print("link");
  if (logs.wall_milliseconds() < 0) FAIL("negative wall time");
}

// `scale` and `offset` from an archive that nvcc -rdc=true -lib built (jit_link_library.cu),
// given as a file and as data.
void library_links(const char* archive_path) {
  CUlinkState link = nullptr;
  CHECK_CU(cuLinkCreate(0, nullptr, nullptr, &link));
  add_ptx(link, kernel_ptx, "kernel.ptx");
  CHECK_CU(cuLinkAddFile(link, CU_JIT_INPUT_LIBRARY, archive_path, 0, nullptr, nullptr));
  check_linked_fill(link, "library file");

  std::FILE* file = std::fopen(archive_path, "rb");
  if (!file) FAIL("cannot open %s", archive_path);
  std::vector<char> archive;
  char chunk[4096];
  for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, file)) > 0;)
    archive.insert(archive.end(), chunk, chunk + got);
  std::fclose(file);
  CHECK_CU(cuLinkCreate(0, nullptr, nullptr, &link));
  add_ptx(link, kernel_ptx, "kernel.ptx");
  CHECK_CU(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, archive.data(), archive.size(),
                         "jit_link_library.a", 0, nullptr, nullptr));
  check_linked_fill(link, "library data");
}

void undefined_reference_fails() {
  Logs logs;
  CUlinkState link = nullptr;
  CHECK_CU(cuLinkCreate(5, logs.options, logs.values, &link));
  add_ptx(link, kernel_ptx, "kernel.ptx");
  void* image = nullptr;
  size_t image_bytes = 0;
  CUresult result = cuLinkComplete(link, &image, &image_bytes);
  std::printf("undefined reference: cuLinkComplete %s\n", error_name(result).c_str());
  logs.print("undefined reference");
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_SOURCE);
  std::string log(logs.error, strnlen(logs.error, log_bytes));
  if (log.find("scale") == std::string::npos && log.find("offset") == std::string::npos)
    FAIL("the error log names neither undefined symbol");
  CHECK_CU(cuLinkDestroy(link));
}

void bad_ptx_is_logged() {
  Logs logs;
  CUmodule module = nullptr;
  CUresult result = cuModuleLoadDataEx(&module, bad_ptx, 5, logs.options, logs.values);
  std::printf("bad PTX: cuModuleLoadDataEx %s\n", error_name(result).c_str());
  logs.print("bad PTX");
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_PTX);
  size_t length = strnlen(logs.error, log_bytes);
  if (length == 0 || length == log_bytes) FAIL("the error log is empty or not terminated");
  if (std::string(logs.error, length).find("9") == std::string::npos)
    FAIL("the error log does not give the line");
  if (logs.error_written() != length) FAIL("error log: %zu bytes written back, want its length %zu", logs.error_written(), length);

  // A buffer too small for the message holds its start, NUL-terminated.
  Logs small(8);
  result = cuModuleLoadDataEx(&module, bad_ptx, 5, small.options, small.values);
  std::printf("bad PTX, 8-byte error log: cuModuleLoadDataEx %s\n", error_name(result).c_str());
  small.print("bad PTX, 8-byte error log");
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_PTX);
  if (strnlen(small.error, 8) == 8) FAIL("the 8-byte error log is not NUL-terminated");
  if (small.error_written() != 8) FAIL("the 8-byte error log: %zu bytes written back, want 8", small.error_written());

  // Through the linker the same PTX fails when added.
  Logs link_logs;
  CUlinkState link = nullptr;
  CHECK_CU(cuLinkCreate(5, link_logs.options, link_logs.values, &link));
  result = cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(bad_ptx), sizeof bad_ptx,
                         "bad.ptx", 0, nullptr, nullptr);
  std::printf("bad PTX: cuLinkAddData %s\n", error_name(result).c_str());
  link_logs.print("bad PTX, linker");
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_PTX);
  CHECK_CU(cuLinkDestroy(link));
}

void options_are_checked() {
  CUmodule module = nullptr;
  CUjit_option unknown[] = {static_cast<CUjit_option>(9999)};
  void* unknown_values[] = {nullptr};
  CUresult result = cuModuleLoadDataEx(&module, library_ptx, 1, unknown, unknown_values);
  std::printf("unknown option: cuModuleLoadDataEx %s\n", error_name(result).c_str());
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_VALUE);
  CUlinkState link = nullptr;
  result = cuLinkCreate(1, unknown, unknown_values, &link);
  std::printf("unknown option: cuLinkCreate %s\n", error_name(result).c_str());
  EXPECT_RESULT(result, CUDA_ERROR_INVALID_VALUE);

  // Options that tune the compiler are accepted and change nothing observable here.
  CUjit_option tuning[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_LOG_VERBOSE,
                           CU_JIT_TARGET_FROM_CUCONTEXT, CU_JIT_GENERATE_LINE_INFO};
  void* tuning_values[] = {reinterpret_cast<void*>(uintptr_t{0}),
                           reinterpret_cast<void*>(uintptr_t{1}), nullptr,
                           reinterpret_cast<void*>(uintptr_t{1})};
  CHECK_CU(cuModuleLoadDataEx(&module, library_ptx, 4, tuning, tuning_values));
  CHECK_CU(cuModuleUnload(module));
  CHECK_CU(cuLinkCreate(4, tuning, tuning_values, &link));
  CHECK_CU(cuLinkDestroy(link));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) FAIL("usage: jit_link ARCHIVE (built from jit_link_library.cu)");
  CHECK_CU(cuInit(0));
  CUdevice device = 0;
  CHECK_CU(cuDeviceGet(&device, 0));
  CUcontext context = nullptr;
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  linked_kernel_runs();
  library_links(argv[1]);
  undefined_reference_fails();
  bad_ptx_is_logged();
  options_are_checked();
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  std::printf("jit_link: all checks passed\n");
  return 0;
}
