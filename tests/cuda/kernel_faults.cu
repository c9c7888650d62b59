// Kernels that fail, each in a child process of its own (a CUDA context that saw a fault is
// unusable, and each case starts clean): trap gives cudaErrorLaunchFailure, and so does brkpt
// with no debugger attached (as on an H100), a store to an
// unmapped address gives cudaErrorIllegalAddress and stays on the context (the next call fails
// the same way), and a failed device assert gives cudaErrorAssert. The same kernels run inside a
// block whose threads synchronise (__syncthreads, __syncthreads_count) to cover xcuda's
// execution paths.
#include "check.h"

#include <cassert>
#include <cstdint>

__global__ void trap_kernel(int* data, int culprit) {
  data[threadIdx.x] = 1;
  if (static_cast<int>(threadIdx.x) == culprit) __trap();
}

__global__ void breakpoint_kernel(int* data, int culprit) {
  data[threadIdx.x] = 1;
  if (static_cast<int>(threadIdx.x) == culprit) asm volatile("brkpt;");
}

__global__ void wild_store(int* wild, int culprit) {
  if (static_cast<int>(threadIdx.x) == culprit) *wild = 42;
}

__global__ void failing_assert(const int* data, int culprit) {
  assert(data[threadIdx.x] != culprit);
}

__global__ void trap_after_barrier(int* data, int culprit) {
  __shared__ int values[64];
  values[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  data[threadIdx.x] = values[63 - threadIdx.x];
  if (static_cast<int>(threadIdx.x) == culprit) __trap();
}

// __syncthreads_count makes the threads of the block wait for each other in a way xcuda runs
// on fibers: the trap must leave those too.
__global__ void trap_after_counting(int* data, int culprit) {
  int count = __syncthreads_count(data[threadIdx.x] == 0);
  data[threadIdx.x] = count;
  if (static_cast<int>(threadIdx.x) == culprit) __trap();
}

// Deadlocks: warp 0 waits at a barrier of 64 threads that warp 1 never reaches, and lane 0
// shuffles with lane 1 while lane 1 waits at such a barrier. A GPU hangs on these; xcuda fails
// the launch with cudaErrorLaunchFailure instead, so they run on xcuda's host device only.
__global__ void barrier_never_complete(int* data) {
  if (threadIdx.x >= 32) return;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  data[threadIdx.x] = 1;
}

__global__ void lanes_never_meet(int* data) {
  int value = static_cast<int>(threadIdx.x);
  if (threadIdx.x == 0) value = __shfl_sync(0x3, value, 1);
  if (threadIdx.x == 1) asm volatile("bar.sync 1, 64;" ::: "memory");
  data[threadIdx.x] = value;
}

enum class Case {
  trap,
  breakpoint,
  wild_store,
  assertion,
  trap_after_barrier,
  trap_after_counting,
  barrier_deadlock,
  warp_deadlock
};

// Runs one case; returns the child's exit status: 0 when the launch failed as expected.
int run_case(Case which) {
  if (which == Case::barrier_deadlock || which == Case::warp_deadlock) {
    cudaDeviceProp properties{};
    CHECK(cudaGetDeviceProperties(&properties, 0));
    if (std::strncmp(properties.name, "xcuda host", 10) != 0) return 0;
  }
  int* data = nullptr;
  CHECK(cudaMalloc(&data, 64 * sizeof(int)));
  CHECK(cudaMemset(data, 0, 64 * sizeof(int)));
  cudaError_t want = cudaErrorLaunchFailure;
  switch (which) {
    case Case::trap: trap_kernel<<<4, 64>>>(data, 17); break;
    case Case::breakpoint: breakpoint_kernel<<<2, 64>>>(data, 33); break;
    case Case::wild_store:
      want = cudaErrorIllegalAddress;
      wild_store<<<4, 64>>>(reinterpret_cast<int*>(uintptr_t{64}), 5);
      break;
    case Case::assertion:
      want = cudaErrorAssert;
      failing_assert<<<2, 64>>>(data, 1);  // data is all zero: no thread fails; then one does
      CHECK_LAUNCH();
      CHECK(cudaMemset(data, 0, 64 * sizeof(int)));
      failing_assert<<<2, 64>>>(data, 0);
      break;
    case Case::trap_after_barrier: trap_after_barrier<<<3, 64>>>(data, 40); break;
    case Case::trap_after_counting: trap_after_counting<<<3, 64>>>(data, 63); break;
    case Case::barrier_deadlock: barrier_never_complete<<<2, 64>>>(data); break;
    case Case::warp_deadlock: lanes_never_meet<<<1, 64>>>(data); break;
  }
  CHECK(cudaGetLastError());  // the launch itself is fine; its execution fails
  cudaError_t got = cudaDeviceSynchronize();
  if (got != want)
    FAIL("case %d: synchronize gave %s, want %s", static_cast<int>(which), cudaGetErrorName(got),
         cudaGetErrorName(want));
  // The error is sticky: the context cannot be used any more.
  cudaError_t after = cudaMemset(data, 0, sizeof(int));
  if (after != want)
    FAIL("case %d: the next call gave %s, want %s again", static_cast<int>(which),
         cudaGetErrorName(after), cudaGetErrorName(want));
  return 0;
}

int main() {
  const Case cases[] = {Case::trap,
                        Case::breakpoint,
                        Case::wild_store,
                        Case::assertion,
                        Case::trap_after_barrier,
                        Case::trap_after_counting,
                        Case::barrier_deadlock,
                        Case::warp_deadlock};
  for (Case which : cases)
    if (!succeeds_in_child([which] { return run_case(which); }))
      FAIL("case %d: the child process failed", static_cast<int>(which));
  std::printf(
      "kernel_faults: trap, brkpt, wild store, assert and traps after barriers fail their launches as "
      "CUDA does\n");
  return 0;
}
