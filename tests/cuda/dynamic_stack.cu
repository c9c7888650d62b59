// Memory a thread allocates on its stack at run time: alloca() in device code (PTX `alloca`,
// sm_52 and later) and the stacksave/stackrestore pair around it. Checked against the PTX ISA's
// definitions:
//   - each thread's allocations are its own and hold their contents across __syncthreads();
//   - an allocation honours its alignment (8 at least, more when asked);
//   - a function's allocations are released when it returns, so a loop of calls that each
//     allocate does not exhaust the stack;
//   - stackrestore releases what was allocated after the matching stacksave: the next
//     allocation of that size lands where the released one was;
//   - stacksave moves by at least an allocation's size (the stack may grow either way);
//   - cudaLimitStackSize sets how much a thread may allocate: 32 KB fit under a 64 KB limit,
//     and 4 KB under the default 1 KB stop the kernel with an illegal address, as on an H200.
// The kernels run once with only block barriers and once with a barrier for some threads only
// (bar.sync with a count), which runs each thread on a stack of its own.
#include "check.h"

#include <cstdint>
#include <cstring>

constexpr int kThreads = 96;
constexpr int kRounds = 3;

// A checksum of `count` values the function keeps in its own allocation.
__device__ __noinline__ unsigned weighted_sum(unsigned count, const unsigned* values) {
  auto* copy = static_cast<unsigned*>(alloca(count * sizeof(unsigned)));
  for (unsigned i = 0; i < count; ++i) copy[i] = values[i] * 2 + 1;
  unsigned sum = 0;
  for (unsigned i = 0; i < count; ++i) sum += copy[count - 1 - i] * (i + 1);
  return sum;
}

// About 480 bytes per call: without the release at return, 40 calls need 19 KB, past the 1 KB
// stack every thread has by default. The size is not a constant, or nvcc would make the
// allocation a fixed .local array.
__device__ __noinline__ unsigned releasing_call(unsigned seed, unsigned count) {
  auto* words = static_cast<volatile unsigned*>(alloca(count * sizeof(unsigned)));
  for (unsigned i = 0; i < count; ++i) words[i] = seed + i;
  unsigned sum = 0;
  for (unsigned i = 0; i < count; ++i) sum += words[i];
  return sum;
}

struct Results {
  unsigned sums[kThreads * kRounds];     // weighted_sum of values kept across a barrier
  unsigned kept[kThreads * kRounds];     // 1 where a thread's allocation kept its values
  unsigned aligned[kThreads];            // 1 where a 64-aligned allocation is 64-aligned
  unsigned released[kThreads];           // the sum of 40 releasing calls
  unsigned restored[kThreads];           // 1 where an allocation after stackrestore reuses the address
  unsigned moved[kThreads];              // 1 where stacksave moved by 64 or more across an alloca
};

template <bool kPartialBarrier>
__device__ void synchronise() {
  if (kPartialBarrier) {
    asm volatile("bar.sync 1, %0;" ::"r"(kThreads));
  } else {
    __syncthreads();
  }
}

template <bool kPartialBarrier>
__global__ void kernel(Results* results) {
  const unsigned t = threadIdx.x;
  for (unsigned round = 0; round < kRounds; ++round) {
    // Each thread and round asks for a different size, as a variable-length array would.
    unsigned count = 5 + (t % 7) + round;
    auto* values = static_cast<unsigned*>(alloca(count * sizeof(unsigned)));
    for (unsigned i = 0; i < count; ++i) values[i] = t * 100 + round * 10 + i;
    synchronise<kPartialBarrier>();
    bool kept = true;
    for (unsigned i = 0; i < count; ++i) kept = kept && values[i] == t * 100 + round * 10 + i;
    results->kept[t * kRounds + round] = kept;
    results->sums[t * kRounds + round] = weighted_sum(count, values);
    synchronise<kPartialBarrier>();
  }

  void* wide;
  asm volatile("{\n\t.reg .u64 local;\n\talloca.u64 local, 100, 64;\n\tcvta.local.u64 %0, local;\n\t}" : "=l"(wide));
  static_cast<unsigned*>(wide)[24] = t;
  results->aligned[t] = (reinterpret_cast<uintptr_t>(wide) % 64 == 0) && static_cast<unsigned*>(wide)[24] == t;

  unsigned released = 0;
  for (unsigned call = 0; call < 40; ++call) released += releasing_call(t + call, 118 + t % 3);
  results->released[t] = released;

  uint64_t before, after, first, second;
  asm volatile(
      "{\n\t.reg .u64 local;\n\t"
      "stacksave.u64 %0;\n\t"
      "alloca.u64 local, 64, 16;\n\t"
      "cvta.local.u64 %2, local;\n\t"
      "stacksave.u64 %1;\n\t"
      "stackrestore.u64 %0;\n\t"
      "alloca.u64 local, 64, 16;\n\t"
      "cvta.local.u64 %3, local;\n\t"
      "}"
      : "=l"(before), "=l"(after), "=l"(first), "=l"(second));
  results->restored[t] = first == second;
  results->moved[t] = (after > before ? after - before : before - after) >= 64;
}

// Writes and sums every 16th word of `bytes` allocated at run time.
__global__ void touch(unsigned bytes, unsigned* sums) {
  auto* words = static_cast<volatile unsigned*>(alloca(bytes));
  for (unsigned i = 0; i < bytes / 4; i += 16) words[i] = i + threadIdx.x;
  unsigned sum = 0;
  for (unsigned i = 0; i < bytes / 4; i += 16) sum += words[i];
  sums[threadIdx.x] = sum;
}

// Last: the overflow leaves the context unusable.
void check_stack_limit() {
  constexpr unsigned kBytes = 32 * 1024, kLanes = 32;
  unsigned* device;
  CHECK(cudaMalloc(&device, kLanes * sizeof(unsigned)));
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 64 * 1024));
  touch<<<1, kLanes>>>(kBytes, device);
  CHECK_LAUNCH();
  unsigned sums[kLanes];
  CHECK(cudaMemcpy(sums, device, sizeof(sums), cudaMemcpyDeviceToHost));
  for (unsigned t = 0; t < kLanes; ++t) {
    unsigned want = 0;
    for (unsigned i = 0; i < kBytes / 4; i += 16) want += i + t;
    if (sums[t] != want) FAIL("32 KB under a 64 KB stack: thread %u sums %u, expected %u", t, sums[t], want);
  }
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 1024));
  touch<<<1, kLanes>>>(4096, device);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
}

template <bool kPartialBarrier>
void run(const char* name) {
  Results* device;
  CHECK(cudaMalloc(&device, sizeof(Results)));
  CHECK(cudaMemset(device, 0, sizeof(Results)));
  kernel<kPartialBarrier><<<2, kThreads>>>(device);
  CHECK_LAUNCH();
  Results results;
  CHECK(cudaMemcpy(&results, device, sizeof(Results), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(device));
  for (unsigned t = 0; t < kThreads; ++t) {
    for (unsigned round = 0; round < kRounds; ++round) {
      unsigned count = 5 + (t % 7) + round, base = t * 100 + round * 10;
      unsigned want = 0;
      for (unsigned i = 0; i < count; ++i) want += ((base + count - 1 - i) * 2 + 1) * (i + 1);
      if (results.sums[t * kRounds + round] != want)
        FAIL("%s: thread %u round %u: sum %u, expected %u", name, t, round, results.sums[t * kRounds + round], want);
      if (!results.kept[t * kRounds + round]) FAIL("%s: thread %u round %u lost its values at the barrier", name, t, round);
    }
    if (!results.aligned[t]) FAIL("%s: thread %u: an allocation aligned to 64 is not", name, t);
    unsigned want = 0;
    for (unsigned call = 0; call < 40; ++call)
      for (unsigned i = 0; i < 118 + t % 3; ++i) want += t + call + i;
    if (results.released[t] != want) FAIL("%s: thread %u: releasing calls sum %u, expected %u", name, t, results.released[t], want);
    if (!results.restored[t]) FAIL("%s: thread %u: stackrestore did not release the allocation", name, t);
    if (!results.moved[t]) FAIL("%s: thread %u: stacksave did not move across a 64-byte alloca", name, t);
  }
}

int main() {
  run<false>("block barriers");
  run<true>("counted barriers");
  check_stack_limit();
  if (failures) return 1;
  std::printf("dynamic_stack: ok\n");
  return 0;
}
