// Cluster launch control (sm_100): a block that finished its own work asks, through
// clusterlaunchcontrol.try_cancel, that a block not yet started be cancelled, and does that
// block's work instead, until a request fails (libcu++'s cuda::ptx wrappers, as a persistent
// kernel uses them). What the PTX ISA promises, and this checks:
//   - a cancelled block never runs, and no two successful responses name the same block, so
//     every block's work is done exactly once, whoever does it;
//   - the response names the cancelled block's %ctaid, read whole (.v4) or by axis.
// The ISA lets any request fail; xcuda's only fail once every block has started, so on a grid
// much larger than the machine some must succeed, which the test requires of the sm_100 build.
// Other builds compile no request and only check the work.
#include "check.h"

#include <cuda/ptx>

#include <cstdint>
#include <cstring>
#include <vector>

constexpr unsigned kThreads = 64;
const dim3 kGrid(40, 25, 2);
constexpr unsigned kBlocks = 40 * 25 * 2;

struct Results {
  unsigned requests;                  // 1 where the sm_100 requests were compiled
  unsigned done[kBlocks];             // how often each block's work was done
  unsigned cancelled[kBlocks];        // blocks another block did the work of
  unsigned axes_agree[kBlocks];       // 1 where get_first_ctaid::x/::y/::z agree with .v4
  unsigned values[kBlocks * kThreads];
};

__device__ void do_work(Results* results, uint3 block) {
  unsigned linear = block.x + kGrid.x * (block.y + kGrid.y * block.z);
  results->values[linear * kThreads + threadIdx.x] = linear * 1000 + threadIdx.x;
  if (threadIdx.x == 0) atomicAdd(&results->done[linear], 1);
}

__global__ void persistent(Results* results) {
  uint3 block = blockIdx;
  do_work(results, block);
#if __CUDA_ARCH__ >= 1000
  __shared__ alignas(16) uint4 response;
  __shared__ uint64_t barrier;
  if (threadIdx.x == 0) {
    if (block.x + block.y + block.z == 0) results->requests = 1;
    cuda::ptx::mbarrier_init(&barrier, 1);
  }
  __syncthreads();
  for (uint32_t phase = 0;; phase ^= 1) {
    if (threadIdx.x == 0) {
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                           &barrier, sizeof(response));
      cuda::ptx::clusterlaunchcontrol_try_cancel(&response, &barrier);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(&barrier, phase)) {
    }
    __uint128_t answer;
    uint4 copy = response;
    std::memcpy(&answer, &copy, sizeof answer);
    // Every thread has read the response before thread 0 asks again.
    __syncthreads();
    if (!cuda::ptx::clusterlaunchcontrol_query_cancel_is_canceled(answer)) break;
    uint32_t whole[4];
    cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid(whole, answer);
    block = make_uint3(whole[0], whole[1], whole[2]);
    unsigned linear = block.x + kGrid.x * (block.y + kGrid.y * block.z);
    if (threadIdx.x == 0) {
      results->cancelled[linear] = 1;
      results->axes_agree[linear] = cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_x<uint32_t>(answer) == block.x &&
                                    cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_y<uint32_t>(answer) == block.y &&
                                    cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_z<uint32_t>(answer) == block.z;
    }
    do_work(results, block);
  }
#endif
}

int main() {
  Results* device;
  CHECK(cudaMalloc(&device, sizeof(Results)));
  CHECK(cudaMemset(device, 0, sizeof(Results)));
  persistent<<<kGrid, kThreads>>>(device);
  CHECK_LAUNCH();
  std::vector<Results> host(1);
  Results& results = host[0];
  CHECK(cudaMemcpy(&results, device, sizeof(Results), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(device));
  unsigned cancelled = 0;
  for (unsigned block = 0; block < kBlocks; ++block) {
    if (results.done[block] != 1) FAIL("block %u's work was done %u times", block, results.done[block]);
    for (unsigned t = 0; t < kThreads; ++t)
      if (results.values[block * kThreads + t] != block * 1000 + t)
        FAIL("block %u thread %u wrote %u", block, t, results.values[block * kThreads + t]);
    if (results.cancelled[block]) {
      ++cancelled;
      if (!results.axes_agree[block]) FAIL("block %u: get_first_ctaid by axis disagrees with .v4", block);
    }
  }
  if (results.requests && cancelled == 0) FAIL("no request cancelled any of %u blocks", kBlocks);
  std::printf("cluster_launch_control: ok (%s, %u of %u blocks cancelled)\n",
              results.requests ? "requests compiled" : "no requests before sm_100", cancelled, kBlocks);
  return 0;
}
