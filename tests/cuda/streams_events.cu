// Streams and events through the runtime API: kernels of two streams running at once (one
// spins on a flag the other sets), cross-stream ordering with events, host functions in stream
// order, event timing and its errors, stream priorities, cooperative launch limits from the
// occupancy calculator, and device limits kept as set.
#include "check.h"

#include <vector>

// Gives up after 2^34 polls and reports 0, so that a scheduler that never runs the setter fails
// the test instead of hanging it.
__global__ void spin_until_set(const volatile unsigned* flag, unsigned* seen) {
  unsigned value = 0;
  for (unsigned long long poll = 0; poll < (1ull << 34) && (value = *flag) == 0; ++poll) {
  }
  seen[blockIdx.x] = value;
}

__global__ void set_flag(volatile unsigned* flag, unsigned value) { *flag = value; }

__global__ void add_one(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

__global__ void twice(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2;
}

static void record_order(void* data) {
  auto* order = static_cast<std::vector<int>*>(data);
  order->push_back(static_cast<int>(order->size()));
}

int main() {
  // --- Kernels in two streams at once.
  constexpr int spinning_blocks = 32;
  unsigned* flag = nullptr;
  unsigned* seen = nullptr;
  CHECK(cudaMalloc(&flag, sizeof(unsigned)));
  CHECK(cudaMalloc(&seen, spinning_blocks * sizeof(unsigned)));
  CHECK(cudaMemset(flag, 0, sizeof(unsigned)));
  cudaStream_t spinner, setter;
  CHECK(cudaStreamCreateWithFlags(&spinner, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&setter, cudaStreamNonBlocking));
  // With lazy loading (CUDA's default) the setter's first launch would load it, which waits for
  // the spinning grid: an H100 hung there. Asking for its attributes loads it now.
  cudaFuncAttributes attributes;
  CHECK(cudaFuncGetAttributes(&attributes, set_flag));
  spin_until_set<<<spinning_blocks, 1, 0, spinner>>>(flag, seen);
  CHECK(cudaGetLastError());
  set_flag<<<1, 1, 0, setter>>>(flag, 7u);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(setter));
  CHECK(cudaStreamSynchronize(spinner));
  std::vector<unsigned> seen_host(spinning_blocks);
  CHECK(cudaMemcpy(seen_host.data(), seen, spinning_blocks * sizeof(unsigned),
                   cudaMemcpyDeviceToHost));
  for (int block = 0; block < spinning_blocks; ++block)
    if (seen_host[block] != 7u)
      FAIL("block %d of the spinning grid saw %u", block, seen_host[block]);

  // --- Event ordering across streams: (x + 1) * 2, never x * 2 + 1.
  constexpr int n = 1 << 16;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i - 1000;
  int* data = nullptr;
  CHECK(cudaMalloc(&data, n * sizeof(int)));
  CHECK(cudaMemcpy(data, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t start, added, end, untimed;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&added));
  CHECK(cudaEventCreateWithFlags(&end, cudaEventBlockingSync));
  CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  CHECK(cudaEventRecord(start, spinner));
  add_one<<<(n + 255) / 256, 256, 0, spinner>>>(data, n);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(added, spinner));
  CHECK(cudaStreamWaitEvent(setter, added, 0));
  twice<<<(n + 255) / 256, 256, 0, setter>>>(data, n);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(end, setter));
  CHECK(cudaEventRecord(untimed, setter));
  CHECK(cudaEventSynchronize(end));
  CHECK(cudaEventQuery(end));
  float milliseconds = -1;
  CHECK(cudaEventElapsedTime(&milliseconds, start, end));
  if (!(milliseconds >= 0)) FAIL("elapsed time %f between ordered events", milliseconds);
  CHECK(cudaEventSynchronize(untimed));
  if (cudaEventElapsedTime(&milliseconds, start, untimed) != cudaErrorInvalidResourceHandle)
    FAIL("elapsed time with a timing-disabled event must be cudaErrorInvalidResourceHandle");
  std::vector<int> result(n);
  CHECK(cudaMemcpy(result.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (result[i] != (host[i] + 1) * 2)
      FAIL("element %d: %d, want %d", i, result[i], (host[i] + 1) * 2);

  // --- Host functions run in stream order, after the work before them.
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) CHECK(cudaLaunchHostFunc(cudaStreamPerThread, record_order, &order));
  CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  for (int i = 0; i < 5; ++i)
    if (order.size() != 5 || order[i] != i) FAIL("host functions ran out of order");

  // --- Priorities.
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t urgent;
  CHECK(cudaStreamCreateWithPriority(&urgent, cudaStreamDefault, greatest - 10));
  int priority = 1;
  CHECK(cudaStreamGetPriority(urgent, &priority));
  if (priority != greatest) FAIL("priority %d, want the clamped %d", priority, greatest);

  // --- Cooperative launches: the occupancy calculator says how large a grid may be.
  cudaDeviceProp properties{};
  CHECK(cudaGetDeviceProperties(&properties, 0));
  if (!properties.cooperativeLaunch) FAIL("the device does not report cooperative launch");
  int per_multiprocessor = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, add_one, 128, 0));
  if (per_multiprocessor < 1) FAIL("occupancy %d for 128-thread blocks", per_multiprocessor);
  int blocks = per_multiprocessor * properties.multiProcessorCount;
  int count = n;
  void* arguments[] = {&data, &count};
  CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(add_one), blocks, 128, arguments, 0,
                                    urgent));
  CHECK(cudaStreamSynchronize(urgent));
  if (cudaLaunchCooperativeKernel(reinterpret_cast<void*>(add_one), blocks + 1, 128, arguments,
                                  0, urgent) != cudaErrorCooperativeLaunchTooLarge)
    FAIL("a cooperative grid larger than the device holds must be refused");
  // cudaGetLastError reports the refusal once; it does not stick to the context.
  if (cudaGetLastError() != cudaErrorCooperativeLaunchTooLarge)
    FAIL("cudaGetLastError did not report the refused cooperative launch");
  CHECK(cudaGetLastError());
  int min_grid = 0, block_size = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, add_one));
  if (block_size < 1 || block_size > properties.maxThreadsPerBlock || min_grid < 1)
    FAIL("potential block size %d, minimum grid %d", block_size, min_grid);

  // --- Limits keep what was set.
  size_t fifo = 0;
  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4 << 20));
  CHECK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  if (fifo != (4u << 20)) FAIL("printf FIFO size %zu after setting 4 MiB", fifo);

  for (cudaEvent_t event : {start, added, end, untimed}) CHECK(cudaEventDestroy(event));
  for (cudaStream_t stream : {spinner, setter, urgent}) CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  CHECK(cudaFree(flag));
  CHECK(cudaFree(seen));
  std::printf("streams_events: ok\n");
  return 0;
}
