// Cooperative launches, the occupancy calculator, context limits and queries, and many host
// threads using the Driver API at once, each with its own context and streams.
#include "tests/unit/driver_api_fixture.h"

#include <atomic>
#include <string>
#include <vector>

namespace xcuda::testing {
namespace {

class LaunchApi : public DriverApiTest {};

TEST_F(LaunchApi, OccupancyAnswersAgreeWithEachOtherAndTheDevice) {
  CUfunction add_one = kernel("add_one");
  const int multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  const int max_threads = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const int max_blocks = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  const int threads_per_multiprocessor =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  ASSERT_GT(multiprocessors, 0);

  for (int block_size : {1, 32, 256, max_threads}) {
    int blocks = -1;
    ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, block_size, 0),
              CUDA_SUCCESS);
    EXPECT_GE(blocks, 1) << block_size;
    EXPECT_LE(blocks, max_blocks) << block_size;
    EXPECT_LE(blocks * block_size, threads_per_multiprocessor) << block_size;
  }
  int blocks = -1;
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, add_one, max_threads + 1,
                                                                 0, CU_OCCUPANCY_DEFAULT),
            CUDA_SUCCESS);
  EXPECT_EQ(blocks, 0) << "a block larger than the device allows never runs";
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, add_one, 32, 0, 0x8),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 0, 0),
            CUDA_ERROR_INVALID_VALUE);

  int min_grid = 0, block_size = 0;
  ASSERT_EQ(cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, add_one, nullptr, 0, 0),
            CUDA_SUCCESS);
  ASSERT_GT(block_size, 0);
  EXPECT_LE(block_size, max_threads);
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, block_size, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(min_grid, blocks * multiprocessors) << "the grid that fills every multiprocessor";
  ASSERT_EQ(cuOccupancyMaxPotentialBlockSizeWithFlags(&min_grid, &block_size, add_one, nullptr, 0,
                                                      100, 0),
            CUDA_SUCCESS);
  EXPECT_LE(block_size, 100) << "the block size limit";

  size_t dynamic = 0;
  ASSERT_EQ(cuOccupancyAvailableDynamicSMemPerBlock(&dynamic, add_one, 1, 32), CUDA_SUCCESS);
  EXPECT_GT(dynamic, 0u);
  EXPECT_LE(dynamic, size_t(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)));
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 32, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuOccupancyAvailableDynamicSMemPerBlock(&dynamic, add_one, blocks + 1, 32),
            CUDA_SUCCESS);
  EXPECT_EQ(dynamic, 0u) << "more blocks than can be resident leave no room at all";

  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  int clusters = -1, cluster_size = -1;
  ASSERT_EQ(cuOccupancyMaxPotentialClusterSize(&cluster_size, add_one, &config), CUDA_SUCCESS);
  EXPECT_GE(cluster_size, 1);
  ASSERT_EQ(cuOccupancyMaxActiveClusters(&clusters, add_one, &config), CUDA_SUCCESS);
  EXPECT_EQ(clusters, blocks * multiprocessors) << "one-block clusters are blocks";
}

TEST_F(LaunchApi, CooperativeGridsMustFitOnTheDeviceAtOnce) {
  CUfunction add_one = kernel("add_one");
  ASSERT_EQ(attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH), 1);
  constexpr unsigned threads = 32;
  int per_multiprocessor = 0;
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, add_one, threads, 0),
            CUDA_SUCCESS);
  const unsigned resident =
      unsigned(per_multiprocessor * attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  const unsigned count = resident * threads;
  CUdeviceptr data = 0;
  ASSERT_EQ(cuMemAlloc_v2(&data, (count + threads) * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(data, 41, count + threads), CUDA_SUCCESS);
  unsigned n = count;
  void* arguments[] = {&data, &n};
  ASSERT_EQ(cuLaunchCooperativeKernel(add_one, resident, 1, 1, threads, 1, 1, 0, nullptr,
                                      arguments),
            CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchCooperativeKernel_ptsz(add_one, resident + 1, 1, 1, threads, 1, 1, 0,
                                           nullptr, arguments),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

  CUlaunchAttribute cooperative{};
  cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  cooperative.value.cooperative = 1;
  CUlaunchConfig config{};
  config.gridDimX = resident + 1;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  EXPECT_EQ(cuLaunchKernelEx(&config, add_one, arguments, nullptr),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  cooperative.value.cooperative = 0;  // an ordinary launch may be as large as it likes
  n = count + threads;
  ASSERT_EQ(cuLaunchKernelEx(&config, add_one, arguments, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  const auto* values = reinterpret_cast<const uint32_t*>(data);
  for (unsigned i = 0; i < count; ++i) ASSERT_EQ(values[i], 43u) << i;
  for (unsigned i = count; i < count + threads; ++i) ASSERT_EQ(values[i], 42u) << i;
  EXPECT_EQ(cuMemFree_v2(data), CUDA_SUCCESS);
}

// CUDA's limits on a block: 1024 threads, at most 64 along z (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z).
TEST_F(LaunchApi, BlocksBeyondTheLimitsAreRefused) {
  CUfunction add_one = kernel("add_one");
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z), 64);
  CUdeviceptr data = 0;
  ASSERT_EQ(cuMemAlloc_v2(&data, 1024 * sizeof(uint32_t)), CUDA_SUCCESS);
  unsigned n = 0;
  void* arguments[] = {&data, &n};
  EXPECT_EQ(cuLaunchKernel(add_one, 1, 1, 1, 1, 1, 65, 0, nullptr, arguments, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(add_one, 1, 1, 1, 1025, 1, 1, 0, nullptr, arguments, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(add_one, 1, 1, 1, 16, 1, 64, 0, nullptr, arguments, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(data), CUDA_SUCCESS);
}

TEST_F(LaunchApi, FunctionAttributesDescribeTheKernel) {
  CUfunction add_one = kernel("add_one");
  int value = -1;
  ASSERT_EQ(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add_one),
            CUDA_SUCCESS);
  EXPECT_EQ(value, attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  ASSERT_EQ(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, add_one),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 0) << "add_one declares no shared memory";
  ASSERT_EQ(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, add_one),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 0);
  EXPECT_EQ(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX, add_one), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(LaunchApi, FunctionsLoadOnFirstUseOrWhenAskedTo) {
  CUfunction add_one = kernel("add_one");
  CUfunction set_flag = kernel("set_flag");
  CUmoduleLoadingMode mode;
  ASSERT_EQ(cuModuleGetLoadingMode(&mode), CUDA_SUCCESS);
  CUfunctionLoadingState before = CU_FUNCTION_LOADING_STATE_MAX;
  ASSERT_EQ(cuFuncIsLoaded(&before, add_one), CUDA_SUCCESS);
  EXPECT_EQ(before, mode == CU_MODULE_EAGER_LOADING ? CU_FUNCTION_LOADING_STATE_LOADED
                                                    : CU_FUNCTION_LOADING_STATE_UNLOADED);
  ASSERT_EQ(cuFuncLoad(add_one), CUDA_SUCCESS);
  CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_MAX;
  ASSERT_EQ(cuFuncIsLoaded(&state, add_one), CUDA_SUCCESS);
  EXPECT_EQ(state, CU_FUNCTION_LOADING_STATE_LOADED);
  // Loading again is allowed and changes nothing.
  EXPECT_EQ(cuFuncLoad(add_one), CUDA_SUCCESS);
  if (mode == CU_MODULE_LAZY_LOADING) {
    // Each kernel is its own unit: loading one leaves the others unloaded.
    ASSERT_EQ(cuFuncIsLoaded(&state, set_flag), CUDA_SUCCESS);
    EXPECT_EQ(state, CU_FUNCTION_LOADING_STATE_UNLOADED);
  }
  EXPECT_EQ(cuFuncIsLoaded(nullptr, add_one), CUDA_ERROR_INVALID_VALUE);
  int not_a_function = 0;
  auto bogus = reinterpret_cast<CUfunction>(&not_a_function);
  EXPECT_EQ(cuFuncIsLoaded(&state, bogus), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncLoad(bogus), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncLoad(nullptr), CUDA_ERROR_INVALID_HANDLE);
}

// A kernel with a warp exchange is compiled for blocks of whole warps (its launches' usual
// width), and again, for every width, when a launch of other blocks first comes: each launch
// must run code that handles its blocks (runtime/module.h, compile_units).
TEST_F(LaunchApi, BlocksNotWholeWarpsWideGetCodeForThem) {
  static constexpr char ptx[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64
.visible .entry neighbour(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r3;
  ret;
}
)PTX";
  CUmodule module = nullptr;
  ASSERT_EQ(cuModuleLoadData(&module, ptx), CUDA_SUCCESS);
  CUfunction neighbour = nullptr;
  ASSERT_EQ(cuModuleGetFunction(&neighbour, module, "neighbour"), CUDA_SUCCESS);
  constexpr unsigned most = 96;
  CUdeviceptr in = 0, out = 0;
  ASSERT_EQ(cuMemAlloc_v2(&in, most * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc_v2(&out, most * sizeof(uint32_t)), CUDA_SUCCESS);
  std::vector<uint32_t> values(most);
  for (unsigned index = 0; index < most; ++index) values[index] = index * 2654435761u;
  ASSERT_EQ(cuMemcpyHtoD_v2(in, values.data(), most * sizeof(uint32_t)), CUDA_SUCCESS);
  void* arguments[] = {&in, &out};
  // A partial warp of 16 lanes: lane 47 reads lane 46, as in a whole warp.
  for (unsigned width : {48u, 64u, 96u, 80u, 64u}) {
    ASSERT_EQ(cuMemsetD32_v2(out, 0xDEADBEEF, most), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchKernel(neighbour, 1, 1, 1, width, 1, 1, 0, nullptr, arguments, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS) << width << " threads";
    std::vector<uint32_t> result(most);
    ASSERT_EQ(cuMemcpyDtoH_v2(result.data(), out, most * sizeof(uint32_t)), CUDA_SUCCESS);
    for (unsigned thread = 0; thread < width; ++thread)
      ASSERT_EQ(result[thread], values[thread ^ 1]) << width << " threads, thread " << thread;
    CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_MAX;
    ASSERT_EQ(cuFuncIsLoaded(&state, neighbour), CUDA_SUCCESS);
    EXPECT_EQ(state, CU_FUNCTION_LOADING_STATE_LOADED) << width << " threads";
  }
  EXPECT_EQ(cuMemFree_v2(in), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(out), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

TEST_F(LaunchApi, ModuleEnumeratesItsFunctionsInOrder) {
  kernel("add_one");  // loads the module
  unsigned count = 0;
  ASSERT_EQ(cuModuleGetFunctionCount(&count, module_), CUDA_SUCCESS);
  ASSERT_EQ(count, 3u);
  std::vector<CUfunction> functions(count);
  ASSERT_EQ(cuModuleEnumerateFunctions(functions.data(), count, module_), CUDA_SUCCESS);
  const char* names[] = {"spin_until_set", "set_flag", "add_one"};
  for (unsigned index = 0; index < count; ++index) {
    const char* name = nullptr;
    ASSERT_EQ(cuFuncGetName(&name, functions[index]), CUDA_SUCCESS);
    EXPECT_STREQ(name, names[index]);
    // The same handle cuModuleGetFunction gives.
    EXPECT_EQ(functions[index], kernel(names[index]));
  }
  EXPECT_EQ(cuModuleEnumerateFunctions(functions.data(), count - 1, module_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleEnumerateFunctions(nullptr, count, module_), CUDA_ERROR_INVALID_VALUE);
  int not_a_module = 0;
  EXPECT_EQ(cuModuleEnumerateFunctions(functions.data(), count,
                                       reinterpret_cast<CUmodule>(&not_a_module)),
            CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(LaunchApi, LibrariesHaveNoUnifiedFunctions) {
  CUlibrary library = nullptr;
  ASSERT_EQ(cuLibraryLoadData(&library, kernels_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  void* pointer = nullptr;
  EXPECT_EQ(cuLibraryGetUnifiedFunction(&pointer, library, "add_one"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(cuLibraryGetUnifiedFunction(nullptr, library, "add_one"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLibraryGetUnifiedFunction(&pointer, library, nullptr), CUDA_ERROR_INVALID_VALUE);
  int not_a_library = 0;
  EXPECT_EQ(cuLibraryGetUnifiedFunction(&pointer, reinterpret_cast<CUlibrary>(&not_a_library),
                                        "add_one"),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryUnload(library), CUDA_SUCCESS);
}

// --- Contexts ---

class ContextApi : public DriverApiTest {};

TEST_F(ContextApi, LimitsKeepWhatWasSet) {
  size_t value = 0;
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_PRINTF_FIFO_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, size_t{1} << 20) << "the documented default";
  for (CUlimit limit :
       {CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE}) {
    const size_t wanted = 3 << 20;
    ASSERT_EQ(cuCtxSetLimit(limit, wanted), CUDA_SUCCESS) << limit;
    ASSERT_EQ(cuCtxGetLimit(&value, limit), CUDA_SUCCESS) << limit;
    EXPECT_EQ(value, wanted) << limit;
  }
  EXPECT_EQ(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 4096), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxGetLimit(&value, CU_LIMIT_MAX), CUDA_ERROR_UNSUPPORTED_LIMIT);
  EXPECT_EQ(cuCtxSetLimit(static_cast<CUlimit>(77), 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
  // Limits belong to the context: a new one starts from the defaults.
  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate_v2(&other, 0, device_), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, 1024u);
  EXPECT_EQ(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  // The primary context keeps its limits (for as long as this test retains it).
  ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetLimit(&value, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  EXPECT_EQ(value, size_t{3} << 20);
}

TEST_F(ContextApi, IdsConfigsAndAffinity) {
  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate_v2(&other, 0, device_), CUDA_SUCCESS);
  unsigned long long current = 0, primary = 0, created = 0;
  ASSERT_EQ(cuCtxGetId(nullptr, &current), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetId(other, &created), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetId(context_, &primary), CUDA_SUCCESS);
  EXPECT_EQ(current, created) << "cuCtxCreate makes the new context current";
  EXPECT_NE(primary, created);
  EXPECT_EQ(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxGetId(other, &created), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);

  CUsharedconfig config = CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
  ASSERT_EQ(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetSharedMemConfig(&config), CUDA_SUCCESS);
  EXPECT_EQ(config, CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE)
      << "bank size is fixed on every device since Maxwell";
  EXPECT_EQ(cuCtxSetSharedMemConfig(static_cast<CUsharedconfig>(9)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxResetPersistingL2Cache(), CUDA_SUCCESS);

  CUexecAffinityParam affinity{};
  ASSERT_EQ(cuCtxGetExecAffinity(&affinity, CU_EXEC_AFFINITY_TYPE_SM_COUNT), CUDA_SUCCESS);
  EXPECT_EQ(affinity.type, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
  EXPECT_EQ(int(affinity.param.smCount.val), attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  EXPECT_EQ(cuCtxGetExecAffinity(&affinity, CU_EXEC_AFFINITY_TYPE_MAX),
            CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
  unsigned flags = 0;
  ASSERT_EQ(cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxGetFlags(&flags), CUDA_SUCCESS);
  EXPECT_EQ(flags & CU_CTX_SCHED_MASK, unsigned(CU_CTX_SCHED_BLOCKING_SYNC));
  ASSERT_EQ(cuCtxSetFlags(0), CUDA_SUCCESS);
}

TEST_F(ContextApi, ContextEventsCaptureEveryStream) {
  CUdeviceptr words = 0;
  ASSERT_EQ(cuMemAlloc_v2(&words, 16), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8_v2(words, 0, 16), CUDA_SUCCESS);
  CUstream independent = nullptr;
  ASSERT_EQ(cuStreamCreate(&independent, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWaitValue32_v2(independent, words, 1, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  CUevent everything = nullptr;
  ASSERT_EQ(cuEventCreate(&everything, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxRecordEvent(context_, everything), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(cuEventQuery(everything), CUDA_ERROR_NOT_READY)
      << "a non-blocking stream's work is part of the context's";

  // Work submitted after cuCtxWaitEvent, in any stream, waits for what the event captured.
  CUstream later = nullptr;
  ASSERT_EQ(cuStreamCreate(&later, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxWaitEvent(context_, everything), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(independent, words + 4, 1, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(independent), CUDA_ERROR_NOT_READY);

  *reinterpret_cast<uint32_t*>(words) = 1;
  ASSERT_EQ(cuEventSynchronize(everything), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(independent), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint32_t*>(words)[1], 1u);

  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate_v2(&other, 0, device_), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxRecordEvent(other, everything), CUDA_ERROR_INVALID_HANDLE)
      << "the event belongs to another context";
  EXPECT_EQ(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxRecordEvent(nullptr, everything), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuEventDestroy_v2(everything), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(independent), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(later), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(words), CUDA_SUCCESS);
}

// --- Many host threads at once ---

// Each thread makes a context of its own, loads the module into it, and runs rounds of: a
// stream, an event, memory, a launch in the stream, a copy back, a check, a push and pop of its
// context, and cleanup.
// Returns the first problem it saw, or an empty string.
std::string stress_thread(CUdevice device, int thread_index, int rounds) {
  auto problem = [&](const char* what, CUresult result) {
    return "thread " + std::to_string(thread_index) + ": " + what + " returned " +
           std::to_string(static_cast<int>(result));
  };
#define STRESS_CHECK(call)                                                   \
  do {                                                                       \
    CUresult stress_result_ = (call);                                        \
    if (stress_result_ != CUDA_SUCCESS) return problem(#call, stress_result_); \
  } while (0)
  CUcontext context = nullptr;
  STRESS_CHECK(cuCtxCreate_v2(&context, 0, device));
  CUmodule module = nullptr;
  STRESS_CHECK(cuModuleLoadData(&module, kernels_ptx));
  CUfunction add_one = nullptr;
  STRESS_CHECK(cuModuleGetFunction(&add_one, module, "add_one"));
  constexpr unsigned count = 1000;
  std::vector<uint32_t> host(count);
  for (int round = 0; round < rounds; ++round) {
    CUstream stream = nullptr;
    STRESS_CHECK(cuStreamCreate(&stream, round % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
    CUevent done = nullptr;
    STRESS_CHECK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr data = 0;
    STRESS_CHECK(cuMemAlloc_v2(&data, count * sizeof(uint32_t)));
    const uint32_t start = uint32_t(thread_index * 1000 + round);
    for (unsigned i = 0; i < count; ++i) host[i] = start + i;
    STRESS_CHECK(cuMemcpyHtoDAsync_v2(data, host.data(), count * sizeof(uint32_t), stream));
    unsigned n = count;
    void* arguments[] = {&data, &n};
    STRESS_CHECK(cuLaunchKernel(add_one, (count + 127) / 128, 1, 1, 128, 1, 1, 0, stream,
                                arguments, nullptr));
    STRESS_CHECK(cuEventRecord(done, stream));
    STRESS_CHECK(cuStreamWaitEvent(nullptr, done, 0));
    STRESS_CHECK(cuMemcpyDtoH_v2(host.data(), data, count * sizeof(uint32_t)));
    for (unsigned i = 0; i < count; ++i)
      if (host[i] != start + i + 1)
        return "thread " + std::to_string(thread_index) + " round " + std::to_string(round) +
               ": element " + std::to_string(i) + " is " + std::to_string(host[i]);
    STRESS_CHECK(cuEventQuery(done));
    // The context stack is per thread: a push and pop here never disturbs another thread's.
    CUcontext popped = nullptr;
    STRESS_CHECK(cuCtxPushCurrent_v2(context));
    STRESS_CHECK(cuCtxPopCurrent_v2(&popped));
    if (popped != context)
      return "thread " + std::to_string(thread_index) + ": popped another thread's context";
    STRESS_CHECK(cuMemFree_v2(data));
    STRESS_CHECK(cuEventDestroy_v2(done));
    STRESS_CHECK(cuStreamDestroy_v2(stream));
  }
  STRESS_CHECK(cuModuleUnload(module));
  CUcontext current = nullptr;
  STRESS_CHECK(cuCtxGetCurrent(&current));
  if (current != context) return "thread " + std::to_string(thread_index) + ": lost its context";
  STRESS_CHECK(cuCtxDestroy_v2(context));
#undef STRESS_CHECK
  return {};
}

extern "C" CUresult cuProfilerInitialize(const char*, const char*, int);
extern "C" CUresult cuProfilerStart();
extern "C" CUresult cuProfilerStop();

TEST_F(ContextApi, ProfilerControlNeedsAContext) {
  EXPECT_EQ(cuProfilerStart(), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStart(), CUDA_SUCCESS) << "starting twice has no effect";
  EXPECT_EQ(cuProfilerStop(), CUDA_SUCCESS);
  // Deprecated: since CUDA 12.0 it always answers NOT_SUPPORTED.
  EXPECT_EQ(cuProfilerInitialize("config", "output", 0), CUDA_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuProfilerStop(), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
}

TEST(ThreadSafety, ManyThreadsEachWithTheirOwnContextAndStreams) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice device = 0;
  ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  constexpr int thread_count = 16;
  constexpr int rounds = 40;
  std::vector<std::string> problems(thread_count);
  std::vector<std::thread> threads;
  for (int index = 0; index < thread_count; ++index)
    threads.emplace_back([&, index] { problems[index] = stress_thread(device, index, rounds); });
  for (std::thread& thread : threads) thread.join();
  for (const std::string& problem : problems) EXPECT_EQ(problem, "");
}

}  // namespace
}  // namespace xcuda::testing
