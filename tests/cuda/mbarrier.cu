// mbarrier objects: cuda::barrier<cuda::thread_scope_block> (libcu++ lowers it to mbarrier
// instructions from sm_80 on, to atomics before), and the instructions themselves through inline
// PTX (sm_80: init, arrive, arrive.noComplete, arrive_drop, test_wait, test_wait.parity,
// pending_count, cp.async.mbarrier.arrive; sm_90: try_wait.parity, expect_tx, complete_tx,
// arrive.expect_tx). The expected values follow
// the PTX ISA's description of the phases and were checked on an NVIDIA H200.
#include <cuda/barrier>

#include <vector>

#include "check.h"

constexpr int threads = 128;
constexpr int rounds = 6;

using block_barrier = cuda::barrier<cuda::thread_scope_block>;
// A __shared__ cuda::barrier is initialised by init(), not by its constructor, as libcu++ says.
#pragma nv_diag_suppress static_var_with_dynamic_init

// Each round every thread writes its slot, all meet, every thread reads its neighbour's slot,
// all meet again. From round `rounds / 2` the odd threads leave the barrier (arrive_and_drop),
// and the even ones go on alone, meeting through arrive() and wait() apart.
__global__ void barrier_rounds(unsigned* mismatches, unsigned* sums) {
  __shared__ block_barrier barrier;
  __shared__ unsigned slots[threads];
  const unsigned me = threadIdx.x;
  if (me == 0) init(&barrier, blockDim.x);
  __syncthreads();
  for (unsigned round = 0; round < rounds; ++round) {
    const bool dropping = round >= rounds / 2;
    if (dropping && me % 2 == 1) {
      barrier.arrive_and_drop();
      return;
    }
    const unsigned stride = dropping ? 2 : 1;
    slots[me] = round * 100 + me;
    barrier.arrive_and_wait();
    const unsigned peer = (me + stride) % blockDim.x;
    const unsigned seen = slots[peer];
    if (seen != round * 100 + peer) atomicAdd(mismatches, 1u);
    atomicAdd(&sums[round], seen);
    block_barrier::arrival_token token = barrier.arrive();
    barrier.wait(std::move(token));
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

__device__ void mbarrier_init(unsigned long long* barrier, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(count)
               : "memory");
}

__device__ unsigned long long mbarrier_arrive(unsigned long long* barrier) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];"
               : "=l"(state)
               : "r"(shared_address(barrier))
               : "memory");
  return state;
}

__device__ unsigned long long mbarrier_arrive_no_complete(unsigned long long* barrier,
                                                          unsigned count) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;"
               : "=l"(state)
               : "r"(shared_address(barrier)), "r"(count)
               : "memory");
  return state;
}

__device__ unsigned mbarrier_pending_count(unsigned long long state) {
  unsigned count;
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(count) : "l"(state));
  return count;
}

__device__ bool mbarrier_test_wait(unsigned long long* barrier, unsigned long long state) {
  unsigned done;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(shared_address(barrier)), "l"(state)
      : "memory");
  return done != 0;
}

// Whether the phase of `state` completes within a million tests.
__device__ bool poll_wait(unsigned long long* barrier, unsigned long long state) {
  for (int polls = 0; polls < 1000000; ++polls)
    if (mbarrier_test_wait(barrier, state)) return true;
  return false;
}

// try_wait (which may suspend the thread a while) from sm_90 on, test_wait before.
__device__ bool mbarrier_wait_parity(unsigned long long* barrier, unsigned parity) {
  unsigned done;
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(shared_address(barrier)), "r"(parity)
      : "memory");
#else
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(shared_address(barrier)), "r"(parity)
      : "memory");
#endif
  return done != 0;
}
#endif

// Answers, by index:
//  0  rounds through arrive + test_wait in which a thread read a stale slot (want 0)
//  1  rounds through try_wait.parity (sm_90) or test_wait.parity with a stale read (want 0)
//  2  pending_count of the state arrive.noComplete returned: the state is the object's before
//     the arrival (init 4, then 3 arrivals: want 4, as the H200 answers)
//  3  test_wait on that state before the phase completed (want 0)
//  4  test_wait on the state once the last arrival completed the phase (want 1)
//  5  test_wait before the transactions completed (sm_90; want 0)
//  6  try_wait.parity 0 after complete_tx (sm_90; want 1)
//  7  threads left after arrive_drop met at the barrier this many times (want rounds)
//  8  1 when this build had the mbarrier instructions (compute capability 8.0 and later)
//  9  cp.async.mbarrier.arrive.noinc counts as one of an mbarrier's 2 arrivals: a plain arrive
//     after it completes the phase (want 1)
// 10  cp.async.mbarrier.arrive without .noinc raises the count it then arrives on: a plain
//     arrive after it still completes a phase of 1 (want 1)
// 11  the 16 bytes cp.async copied arrived (want 1)
constexpr int answer_count = 12;

__global__ void raw_mbarrier(unsigned* answers) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __shared__ unsigned long long all, single, transactions;
  __shared__ unsigned slots[threads];
  const unsigned me = threadIdx.x;
  if (me == 0) {
    mbarrier_init(&all, blockDim.x);
    mbarrier_init(&single, 4);
    mbarrier_init(&transactions, 1);
    answers[8] = 1;
  }
  __syncthreads();

  for (unsigned round = 0; round < rounds; ++round) {
    slots[me] = round * 7 + me;
    unsigned long long state = mbarrier_arrive(&all);
    while (!mbarrier_test_wait(&all, state)) {
    }
    unsigned peer = (me + 1) % blockDim.x;
    if (slots[peer] != round * 7 + peer) atomicAdd(&answers[0], 1u);
    state = mbarrier_arrive(&all);
    while (!mbarrier_test_wait(&all, state)) {
    }
  }
  // Phases continue from 2 * rounds: even parity is the current phase again.
  for (unsigned round = 0; round < rounds; ++round) {
    slots[me] = round * 11 + me;
    mbarrier_arrive(&all);
    while (!mbarrier_wait_parity(&all, 0)) {
    }
    unsigned peer = (me + 3) % blockDim.x;
    if (slots[peer] != round * 11 + peer) atomicAdd(&answers[1], 1u);
    mbarrier_arrive(&all);
    while (!mbarrier_wait_parity(&all, 1)) {
    }
  }

  if (me == 0) {
    unsigned long long state = mbarrier_arrive_no_complete(&single, 3);
    answers[2] = mbarrier_pending_count(state);
    answers[3] = mbarrier_test_wait(&single, state);
    mbarrier_arrive(&single);
    answers[4] = mbarrier_test_wait(&single, state);
  }
#if __CUDA_ARCH__ >= 900
  if (me == 0) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], 16;"
                 : "=l"(state)
                 : "r"(shared_address(&transactions))
                 : "memory");
    answers[5] = mbarrier_test_wait(&transactions, state);
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 8;" ::"r"(
                     shared_address(&transactions))
                 : "memory");
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 24;" ::"r"(
                     shared_address(&transactions))
                 : "memory");
    answers[6] = mbarrier_wait_parity(&transactions, 0);
  }
#else
  if (me == 0) answers[6] = 1;
#endif
  if (me == 0) {
    __shared__ alignas(16) unsigned copied[4];
    __shared__ unsigned long long counted, raised;
    mbarrier_init(&counted, 2);
    mbarrier_init(&raised, 1);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(shared_address(copied)), "l"(answers + 8) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(shared_address(&counted)) : "memory");
    asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" ::"r"(shared_address(&raised)) : "memory");
    // The copies' arrivals come when the copies complete, later on a GPU: poll (an H100 had
    // not yet completed the phase at the first test).
    answers[9] = poll_wait(&counted, mbarrier_arrive(&counted));
    answers[10] = poll_wait(&raised, mbarrier_arrive(&raised));
    answers[11] = copied[0] == 1;
  }
  // arrive_drop: the odd threads leave; the even ones meet `rounds` more times on their own.
  if (me % 2 == 1) {
    asm volatile("mbarrier.arrive_drop.shared.b64 _, [%0];" ::"r"(shared_address(&all))
                 : "memory");
    return;
  }
  for (unsigned round = 0; round < rounds; ++round) {
    unsigned long long state = mbarrier_arrive(&all);
    while (!mbarrier_test_wait(&all, state)) {
    }
    if (me == 0) atomicAdd(&answers[7], 1u);
  }
#else
  if (threadIdx.x == 0) {
    answers[4] = 1;
    answers[6] = 1;
    answers[2] = 4;
    answers[9] = answers[10] = answers[11] = 1;
    atomicAdd(&answers[7], unsigned(rounds));
  }
#endif
}

int main() {
  unsigned *mismatches, *sums, *answers;
  CHECK(cudaMalloc(&mismatches, sizeof(unsigned)));
  CHECK(cudaMalloc(&sums, rounds * sizeof(unsigned)));
  CHECK(cudaMalloc(&answers, answer_count * sizeof(unsigned)));
  CHECK(cudaMemset(mismatches, 0, sizeof(unsigned)));
  CHECK(cudaMemset(sums, 0, rounds * sizeof(unsigned)));
  CHECK(cudaMemset(answers, 0, answer_count * sizeof(unsigned)));

  barrier_rounds<<<3, threads>>>(mismatches, sums);
  CHECK_LAUNCH();
  unsigned got_mismatches = 0;
  std::vector<unsigned> got_sums(rounds), want_sums(rounds, 0);
  CHECK(cudaMemcpy(&got_mismatches, mismatches, sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_sums.data(), sums, rounds * sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (got_mismatches != 0) FAIL("cuda::barrier: %u reads of a stale slot", got_mismatches);
  for (unsigned round = 0; round < rounds; ++round) {
    const bool dropping = round >= rounds / 2;
    const unsigned stride = dropping ? 2 : 1;
    for (unsigned thread = 0; thread < threads; thread += stride)
      want_sums[round] += 3 * (round * 100 + (thread + stride) % threads);
  }
  expect_equal("cuda::barrier sums", got_sums.data(), want_sums.data(), rounds);

  raw_mbarrier<<<2, threads>>>(answers);
  CHECK_LAUNCH();
  std::vector<unsigned> got(answer_count);
  CHECK(cudaMemcpy(got.data(), answers, answer_count * sizeof(unsigned), cudaMemcpyDeviceToHost));
  const bool has_mbarrier = got[8] == 1;
  // Two blocks add to answers 7; the others are written by one thread.
  const unsigned want[answer_count] = {0, 0, 4, 0, 1, 0, 1, 2 * rounds, got[8], 1, 1, 1};
  expect_equal("mbarrier answers", got.data(), want, answer_count);
  std::printf("mbarrier: ok (%s)\n", has_mbarrier ? "mbarrier instructions" : "atomics only");
  return 0;
}
