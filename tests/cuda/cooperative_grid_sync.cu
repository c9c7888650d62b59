// Cooperative launches: cooperative_groups::this_grid().sync() across every block the device
// holds at once (the occupancy calculator's count), repeated in a loop, through
// cudaLaunchCooperativeKernel and through cudaLaunchKernelEx with the cooperative attribute; a
// grid one block larger is refused with cudaErrorCooperativeLaunchTooLarge; this_grid() is
// valid in a cooperative launch. Expectations are the CUDA programming guide's and were checked
// on an NVIDIA H200.
#include <cooperative_groups.h>

#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

constexpr int threads = 128;
constexpr int rounds = 8;

// Each round every block publishes a value, the grid synchronises, and every block reads what
// its neighbours published; the grid synchronises again before the values change. A block that
// read before its neighbour wrote (no real grid-wide barrier) records a mismatch.
__global__ void exchange_rounds(unsigned* published, unsigned* mismatches, unsigned* sums) {
  cg::grid_group grid = cg::this_grid();
  const unsigned blocks = gridDim.x;
  for (unsigned round = 0; round < rounds; ++round) {
    if (threadIdx.x == 0) published[blockIdx.x] = round * 1000 + blockIdx.x;
    grid.sync();
    unsigned total = 0;
    for (unsigned peer = threadIdx.x; peer < blocks; peer += blockDim.x) {
      unsigned seen = published[peer];
      if (seen != round * 1000 + peer) atomicAdd(mismatches, 1u);
      total += seen;
    }
    atomicAdd(&sums[round], total);
    grid.sync();
  }
}

__global__ void report_validity(int* valid, unsigned long long* ranks) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0 && blockIdx.x == 0) *valid = grid.is_valid() ? 1 : 0;
  ranks[blockIdx.x * blockDim.x + threadIdx.x] = grid.thread_rank();
}

int main() {
  int device = 0;
  CHECK(cudaGetDevice(&device));
  int cooperative = 0;
  CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (cooperative != 1) FAIL("cudaDevAttrCooperativeLaunch is %d, expected 1", cooperative);
  int multiprocessors = 0;
  CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  int per_multiprocessor = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, exchange_rounds,
                                                      threads, 0));
  const unsigned blocks = unsigned(per_multiprocessor) * unsigned(multiprocessors);
  if (blocks == 0) FAIL("the occupancy calculator admits no block of %d threads", threads);

  unsigned *published, *mismatches, *sums;
  CHECK(cudaMalloc(&published, blocks * sizeof(unsigned)));
  CHECK(cudaMalloc(&mismatches, sizeof(unsigned)));
  CHECK(cudaMalloc(&sums, rounds * sizeof(unsigned)));
  // Every block adds up the whole row each round.
  std::vector<unsigned> want(rounds, 0);
  for (unsigned round = 0; round < rounds; ++round)
    for (unsigned block = 0; block < blocks; ++block) want[round] += (round * 1000 + block) * blocks;

  auto check_run = [&](const char* how) {
    unsigned got_mismatches = 0;
    std::vector<unsigned> got(rounds);
    CHECK(cudaMemcpy(&got_mismatches, mismatches, sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got.data(), sums, rounds * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (got_mismatches != 0)
      FAIL("%s: %u reads saw a value from another round (grid.sync did not wait)", how,
           got_mismatches);
    expect_equal(how, got.data(), want.data(), rounds);
  };

  // cudaLaunchCooperativeKernel with every resident block.
  CHECK(cudaMemset(mismatches, 0, sizeof(unsigned)));
  CHECK(cudaMemset(sums, 0, rounds * sizeof(unsigned)));
  void* arguments[] = {&published, &mismatches, &sums};
  CHECK(cudaLaunchCooperativeKernel((void*)exchange_rounds, dim3(blocks), dim3(threads),
                                    arguments, 0, nullptr));
  CHECK_LAUNCH();
  check_run("cudaLaunchCooperativeKernel");

  // cudaLaunchKernelEx with cudaLaunchAttributeCooperative.
  CHECK(cudaMemset(mismatches, 0, sizeof(unsigned)));
  CHECK(cudaMemset(sums, 0, rounds * sizeof(unsigned)));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, exchange_rounds, published, mismatches, sums));
  CHECK_LAUNCH();
  check_run("cudaLaunchKernelEx");

  // One block more than can be resident: refused at launch, nothing runs, no sticky error.
  cudaError_t too_large = cudaLaunchCooperativeKernel(
      (void*)exchange_rounds, dim3(blocks + 1), dim3(threads), arguments, 0, nullptr);
  if (too_large != cudaErrorCooperativeLaunchTooLarge)
    FAIL("a cooperative launch of %u blocks (%u resident) answered %s, expected "
         "cudaErrorCooperativeLaunchTooLarge",
         blocks + 1, blocks, cudaGetErrorName(too_large));
  cudaGetLastError();
  config.gridDim = dim3(blocks + 1);
  too_large = cudaLaunchKernelEx(&config, exchange_rounds, published, mismatches, sums);
  if (too_large != cudaErrorCooperativeLaunchTooLarge)
    FAIL("cudaLaunchKernelEx, cooperative, %u blocks: %s, expected "
         "cudaErrorCooperativeLaunchTooLarge",
         blocks + 1, cudaGetErrorName(too_large));
  cudaGetLastError();
  CHECK(cudaDeviceSynchronize());

  // this_grid() is valid in a cooperative launch; thread_rank counts across the grid. (After a
  // cooperative launch, NVIDIA's driver gives later ordinary launches a grid workspace too, and
  // this_grid() is valid there as well: the H200 answered 1 here for the ordinary launch.)
  int* valid;
  unsigned long long* ranks;
  const unsigned small_blocks = 2 <= blocks ? 2 : 1;
  CHECK(cudaMalloc(&valid, sizeof(int)));
  CHECK(cudaMalloc(&ranks, small_blocks * 32 * sizeof(unsigned long long)));
  for (int launch_cooperatively = 0; launch_cooperatively < 2; ++launch_cooperatively) {
    CHECK(cudaMemset(valid, 0xff, sizeof(int)));
    if (launch_cooperatively) {
      void* validity_arguments[] = {&valid, &ranks};
      CHECK(cudaLaunchCooperativeKernel((void*)report_validity, dim3(small_blocks), dim3(32),
                                        validity_arguments, 0, nullptr));
    } else {
      report_validity<<<small_blocks, 32>>>(valid, ranks);
    }
    CHECK_LAUNCH();
    int got = -1;
    CHECK(cudaMemcpy(&got, valid, sizeof(int), cudaMemcpyDeviceToHost));
    if (launch_cooperatively && got != 1)
      FAIL("this_grid().is_valid() is %d in a cooperative launch", got);
    std::vector<unsigned long long> got_ranks(small_blocks * 32);
    CHECK(cudaMemcpy(got_ranks.data(), ranks, got_ranks.size() * sizeof(unsigned long long),
                     cudaMemcpyDeviceToHost));
    for (unsigned index = 0; index < got_ranks.size(); ++index)
      if (got_ranks[index] != index) FAIL("thread %u has grid rank %llu", index, got_ranks[index]);
  }

  CHECK(cudaFree(published));
  CHECK(cudaFree(mismatches));
  CHECK(cudaFree(sums));
  CHECK(cudaFree(valid));
  CHECK(cudaFree(ranks));
  std::printf("cooperative_grid_sync: %u blocks x %d rounds, ok\n", blocks, rounds);
  return 0;
}
