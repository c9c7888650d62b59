// Thread-safety stress on the Driver API alone: 16 host threads, each with its own context and
// two streams, allocate, copy, launch, record and wait on events, copy back, free, and now and
// then unload and reload their module, a fixed number of times, checking every result and
// every value. What is checked depends only on the thread and iteration numbers, never on
// timing, so a failure is a real race. Runs unchanged on NVIDIA's driver.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

// data[i] += value for i < count.
const char add_ptx[] = R"PTX(
.version 7.0
.target sm_80
.address_size 64

.visible .entry add(.param .u64 data, .param .u32 value, .param .u32 count)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [data];
  ld.param.u32 %r1, [value];
  ld.param.u32 %r2, [count];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r6, %r2;
  @%p1 bra done;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r7, [%rd4];
  add.s32 %r7, %r7, %r1;
  st.global.u32 [%rd4], %r7;
done:
  ret;
}
)PTX";

constexpr unsigned thread_count = 16;
constexpr unsigned iterations = 48;
constexpr unsigned reload_every = 12;
constexpr unsigned block = 128;

// Runs one thread's whole loop; returns "" or what went wrong first.
std::string work(unsigned thread) {
  auto failed = [&](const char* call, CUresult result, unsigned iteration) {
    const char* name = nullptr;
    cuGetErrorName(result, &name);
    return "thread " + std::to_string(thread) + " iteration " + std::to_string(iteration) + ": " +
           call + " returned " + (name ? name : std::to_string(static_cast<int>(result)));
  };
#define STRESS_CHECK(call, iteration)                                         \
  do {                                                                        \
    if (CUresult result_ = (call); result_ != CUDA_SUCCESS)                   \
      return failed(#call, result_, iteration);                               \
  } while (0)
  CUdevice device = 0;
  STRESS_CHECK(cuDeviceGet(&device, 0), 0);
  CUcontext context = nullptr;
  STRESS_CHECK(cuCtxCreate(&context, nullptr, 0, device), 0);
  CUstream streams[2] = {};
  for (CUstream& stream : streams) STRESS_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), 0);
  CUevent copied = nullptr;
  STRESS_CHECK(cuEventCreate(&copied, CU_EVENT_DISABLE_TIMING), 0);
  CUmodule module = nullptr;
  CUfunction add = nullptr;
  std::vector<uint32_t> input, output;
  for (unsigned iteration = 0; iteration < iterations; ++iteration) {
    if (iteration % reload_every == 0) {
      if (module) STRESS_CHECK(cuModuleUnload(module), iteration);
      STRESS_CHECK(cuModuleLoadData(&module, add_ptx), iteration);
      STRESS_CHECK(cuModuleGetFunction(&add, module, "add"), iteration);
    }
    uint32_t count = 256 + (thread * 37 + iteration * 101) % 4096;
    uint32_t value = thread * 1000 + iteration;
    input.resize(count);
    output.assign(count, 0);
    for (uint32_t i = 0; i < count; ++i) input[i] = i ^ (thread << 20);
    CUstream first = streams[iteration % 2], second = streams[(iteration + 1) % 2];
    CUdeviceptr data = 0;
    STRESS_CHECK(cuMemAlloc(&data, count * sizeof(uint32_t)), iteration);
    STRESS_CHECK(cuMemcpyHtoDAsync(data, input.data(), count * sizeof(uint32_t), first),
                 iteration);
    void* arguments[] = {&data, &value, &count};
    STRESS_CHECK(cuLaunchKernel(add, (count + block - 1) / block, 1, 1, block, 1, 1, 0, first,
                                arguments, nullptr),
                 iteration);
    STRESS_CHECK(cuEventRecord(copied, first), iteration);
    STRESS_CHECK(cuStreamWaitEvent(second, copied, 0), iteration);
    STRESS_CHECK(cuMemcpyDtoHAsync(output.data(), data, count * sizeof(uint32_t), second),
                 iteration);
    STRESS_CHECK(cuStreamSynchronize(second), iteration);
    STRESS_CHECK(cuMemFree(data), iteration);
    for (uint32_t i = 0; i < count; ++i)
      if (output[i] != input[i] + value)
        return "thread " + std::to_string(thread) + " iteration " + std::to_string(iteration) +
               ": element " + std::to_string(i) + " is " + std::to_string(output[i]) +
               ", expected " + std::to_string(input[i] + value);
  }
  STRESS_CHECK(cuModuleUnload(module), iterations);
  STRESS_CHECK(cuEventDestroy(copied), iterations);
  for (CUstream stream : streams) STRESS_CHECK(cuStreamDestroy(stream), iterations);
  STRESS_CHECK(cuCtxDestroy(context), iterations);
#undef STRESS_CHECK
  return "";
}

}  // namespace

int main() {
  if (CUresult result = cuInit(0); result != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuInit failed: %d\n", static_cast<int>(result));
    return 1;
  }
  std::vector<std::string> failures(thread_count);
  std::vector<std::thread> threads;
  for (unsigned thread = 0; thread < thread_count; ++thread)
    threads.emplace_back([thread, &failures] { failures[thread] = work(thread); });
  for (std::thread& thread : threads) thread.join();
  int failed = 0;
  for (const std::string& failure : failures)
    if (!failure.empty()) {
      std::fprintf(stderr, "FAILED: %s\n", failure.c_str());
      ++failed;
    }
  if (failed) return 1;
  std::printf("thread_stress: %u threads x %u iterations, every value right\n", thread_count,
              iterations);
  return 0;
}
