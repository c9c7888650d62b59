// Instructions of sm_90 and later that a program reaches through inline PTX: elect.sync,
// movmatrix (sm_75), mapa and getctarank, the cluster special registers, barrier.cluster,
// fence.proxy.async, createpolicy with a cache-hinted load, prefetchu, applypriority and discard,
// and bulk copies (cp.async.bulk) into shared memory on an mbarrier and out through a bulk group,
// which is also what libcu++'s cuda::memcpy_async with a cuda::barrier becomes on sm_90.
// The launch names no cluster, so each block is a cluster of one (PTX ISA: "a CTA that is not
// part of an explicit cluster is a cluster of one CTA"). Expected values follow from the ISA's
// definitions, computed here; the sm_90 parts exist only where the PTX targets sm_90.
#include "check.h"

#include <cooperative_groups.h>
#include <cuda/barrier>

#include <cstdint>
#include <vector>

constexpr int kThreads = 64;
constexpr int kBlocks = 3;
constexpr int kCount = kThreads * kBlocks;

struct Results {
  unsigned sm90;                   // 1 where the sm_90 parts were compiled
  unsigned transposed[kCount];     // movmatrix
  unsigned elected[kCount];        // elect.sync: lane | is-leader << 8, or 0xffff outside
  unsigned mapped[kCount];         // values read back through mapa's addresses
  unsigned ranks[kCount];          // getctarank, generic and shared::cluster
  unsigned cluster[kCount][7];     // the cluster registers
  unsigned neighbours[kCount];     // read after barrier.cluster
  unsigned hinted[kCount];         // a load with a createpolicy cache hint
  unsigned bulk_in[kCount];        // read from shared memory after a bulk copy into it
  alignas(16) unsigned bulk_out[kCount];  // a bulk copy of that shared memory back out
};

__global__ void kernel(const unsigned* in, Results* results, unsigned* scratch) {
  const unsigned t = threadIdx.x, global = blockIdx.x * kThreads + t, lane = t % 32, warp = t / 32;
  // movmatrix: element (r, c) of the warp's 8 x 8 matrix is r * 8 + c + 256 * warp, lane l holds
  // row l / 4, columns 2(l % 4) (low half) and 2(l % 4) + 1.
  const unsigned row = lane / 4, column = 2 * (lane % 4);
  const unsigned held = (row * 8 + column + 256 * warp) | (row * 8 + column + 1 + 256 * warp) << 16;
  unsigned transposed;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(transposed) : "r"(held));
  results->transposed[global] = transposed;
#if __CUDA_ARCH__ >= 900
  __shared__ unsigned shared[kThreads];
  if (global == 0) results->sm90 = 1;
  // elect.sync among the lanes whose input is odd.
  unsigned elected = 0xffff;
  if (in[global] & 1) {
    unsigned lane_elected, leader;
    asm volatile("{\n\t.reg .pred p;\n\tactivemask.b32 %1;\n\telect.sync %0|p, %1;\n\tselp.u32 %1, 1, 0, p;\n\t}"
                 : "=r"(lane_elected), "=r"(leader));
    elected = lane_elected | leader << 8;
  }
  results->elected[global] = elected;

  shared[t] = in[global] * 3 + 1;
  // barrier.cluster: every block of the cluster (this one) has written its shared memory.
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  results->neighbours[global] = shared[(t + 1) % kThreads];
  // mapa and getctarank, for rank 0 of the cluster: this block.
  unsigned* generic = &shared[(t + 5) % kThreads];
  unsigned long long mapped_generic;
  asm volatile("mapa.u64 %0, %1, 0;" : "=l"(mapped_generic) : "l"(generic));
  unsigned shared_address = static_cast<unsigned>(__cvta_generic_to_shared(generic)), mapped_shared, through_shared;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(mapped_shared) : "r"(shared_address));
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(through_shared) : "r"(mapped_shared));
  results->mapped[global] = *reinterpret_cast<const unsigned*>(mapped_generic) ^ through_shared << 1;
  unsigned rank_generic, rank_shared;
  asm volatile("getctarank.u64 %0, %1;" : "=r"(rank_generic) : "l"(generic));
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(rank_shared) : "r"(mapped_shared));
  results->ranks[global] = rank_generic | rank_shared << 8;
  unsigned* cluster = results->cluster[global];
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster[0]));
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(cluster[1]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(cluster[2]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(cluster[3]));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(cluster[4]));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(cluster[5]));
  asm volatile("{\n\t.reg .pred p;\n\tmov.pred p, %%is_explicit_cluster;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(cluster[6]));

  // Cache steering: the hinted load reads what is there; prefetchu, applypriority and discard
  // (which leaves the line undefined: scratch is never read) change no answer.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  unsigned hinted;
  asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(hinted) : "l"(in + global), "l"(policy));
  asm volatile("prefetchu.L1 [%0];" ::"l"(in + global));
  if (t == 0) {
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(scratch + blockIdx.x * 32) : "memory");
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(scratch + blockIdx.x * 32) : "memory");
  }
  results->hinted[global] = hinted ^ 0x5a5a5a5a;

  // Bulk copies: the block's 256 bytes of `in` into shared memory, completing on an mbarrier
  // that expects them, then out again into bulk_out through a bulk group.
  __shared__ alignas(16) unsigned bulk[kThreads];
  __shared__ alignas(8) unsigned long long bulk_barrier;
  const unsigned bulk_address = static_cast<unsigned>(__cvta_generic_to_shared(bulk));
  const unsigned barrier_address = static_cast<unsigned>(__cvta_generic_to_shared(&bulk_barrier));
  if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier_address) : "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier_address), "r"(kThreads * 4)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(bulk_address), "l"(in + blockIdx.x * kThreads), "r"(kThreads * 4), "r"(barrier_address) : "memory");
  }
  for (unsigned arrived = 0; !arrived;)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(arrived) : "r"(barrier_address) : "memory");
  results->bulk_in[global] = bulk[(t + 7) % kThreads];
  __syncthreads();
  if (t == 0)
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\t"
                 "cp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;"
                 ::"l"(results->bulk_out + blockIdx.x * kThreads), "r"(bulk_address), "r"(kThreads * 4) : "memory");
#endif
}

// cuda::memcpy_async of 16-byte-aligned data with a block's cuda::barrier: cp.async.bulk with
// mbarrier transactions on sm_90, cp.async on sm_80, plain copies before.
__global__ void library_copy(const int4* in, int4* out) {
  __shared__ alignas(16) int4 staged[kThreads];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> barrier;
  auto block = cooperative_groups::this_thread_block();
  if (block.thread_rank() == 0) init(&barrier, block.size());
  block.sync();
  cuda::memcpy_async(block, staged, in + blockIdx.x * kThreads, cuda::aligned_size_t<16>(sizeof(staged)), barrier);
  barrier.arrive_and_wait();
  out[blockIdx.x * kThreads + threadIdx.x] = staged[(threadIdx.x + 3) % kThreads];
}

int main() {
  std::vector<unsigned> in(kCount);
  for (int i = 0; i < kCount; ++i) in[i] = static_cast<unsigned>(i) * 2654435761u >> 7;
  unsigned *in_device, *scratch;
  Results* results_device;
  CHECK(cudaMalloc(&in_device, kCount * sizeof(unsigned)));
  CHECK(cudaMalloc(&scratch, kBlocks * 128));
  CHECK(cudaMalloc(&results_device, sizeof(Results)));
  CHECK(cudaMemset(results_device, 0, sizeof(Results)));
  CHECK(cudaMemcpy(in_device, in.data(), kCount * sizeof(unsigned), cudaMemcpyHostToDevice));
  kernel<<<kBlocks, kThreads>>>(in_device, results_device, scratch);
  CHECK_LAUNCH();
  static Results results;
  CHECK(cudaMemcpy(&results, results_device, sizeof(Results), cudaMemcpyDeviceToHost));

  for (int global = 0; global < kCount; ++global) {
    const unsigned t = global % kThreads, lane = t % 32, warp = t / 32;
    // Lane l receives column l / 4, rows 2(l % 4) and 2(l % 4) + 1: element (r, c) was r * 8 + c.
    const unsigned column = lane / 4, row = 2 * (lane % 4);
    const unsigned transposed = (row * 8 + column + 256 * warp) | ((row + 1) * 8 + column + 256 * warp) << 16;
    if (results.transposed[global] != transposed)
      FAIL("movmatrix, thread %d: 0x%08x, expected 0x%08x", global, results.transposed[global], transposed);
  }
  std::printf("sm90_instructions: movmatrix ok");
  if (results.sm90) {
    for (int global = 0; global < kCount; ++global) {
      const int t = global % kThreads, block = global / kThreads, lane = t % 32, warp_base = global - lane;
      unsigned elected = 0xffff;
      if (in[global] & 1) {
        int leader = 0;
        while (!(in[warp_base + leader] & 1)) ++leader;
        elected = static_cast<unsigned>(leader) | (leader == lane ? 1u : 0u) << 8;
      }
      if (results.elected[global] != elected)
        FAIL("elect.sync, thread %d: 0x%x, expected 0x%x", global, results.elected[global], elected);
      const unsigned neighbour = in[block * kThreads + (t + 1) % kThreads] * 3 + 1;
      if (results.neighbours[global] != neighbour)
        FAIL("barrier.cluster, thread %d: %u, expected %u", global, results.neighbours[global], neighbour);
      const unsigned value = in[block * kThreads + (t + 5) % kThreads] * 3 + 1;
      if (results.mapped[global] != (value ^ value << 1))
        FAIL("mapa, thread %d: 0x%x, expected 0x%x", global, results.mapped[global], value ^ value << 1);
      if (results.ranks[global] != 0) FAIL("getctarank, thread %d: 0x%x, expected 0", global, results.ranks[global]);
      const unsigned cluster[7] = {static_cast<unsigned>(block), kBlocks, 0, 1, 0, 1, 0};
      for (int k = 0; k < 7; ++k)
        if (results.cluster[global][k] != cluster[k])
          FAIL("cluster register %d, thread %d: %u, expected %u", k, global, results.cluster[global][k], cluster[k]);
      if (results.hinted[global] != (in[global] ^ 0x5a5a5a5au))
        FAIL("hinted load, thread %d: 0x%x, expected 0x%x", global, results.hinted[global], in[global] ^ 0x5a5a5a5au);
      const unsigned bulk_in = in[block * kThreads + (t + 7) % kThreads];
      if (results.bulk_in[global] != bulk_in)
        FAIL("cp.async.bulk into shared memory, thread %d: 0x%x, expected 0x%x", global, results.bulk_in[global], bulk_in);
      if (results.bulk_out[global] != in[global])
        FAIL("cp.async.bulk out of shared memory, element %d: 0x%x, expected 0x%x", global, results.bulk_out[global], in[global]);
    }
    std::printf(", elect.sync, barrier.cluster, mapa, getctarank, cluster registers, cache hints, bulk copies ok");
  }
  std::vector<int4> copy_in(kCount), copy_out(kCount);
  for (int i = 0; i < kCount; ++i) copy_in[i] = make_int4(i, i * 3, -i, i ^ 0x55);
  int4 *copy_in_device, *copy_out_device;
  CHECK(cudaMalloc(&copy_in_device, kCount * sizeof(int4)));
  CHECK(cudaMalloc(&copy_out_device, kCount * sizeof(int4)));
  CHECK(cudaMemcpy(copy_in_device, copy_in.data(), kCount * sizeof(int4), cudaMemcpyHostToDevice));
  library_copy<<<kBlocks, kThreads>>>(copy_in_device, copy_out_device);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(copy_out.data(), copy_out_device, kCount * sizeof(int4), cudaMemcpyDeviceToHost));
  for (int global = 0; global < kCount; ++global) {
    const int4 want = copy_in[global / kThreads * kThreads + (global % kThreads + 3) % kThreads];
    const int4 got = copy_out[global];
    if (got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w)
      FAIL("cuda::memcpy_async, thread %d: (%d, %d, %d, %d), expected (%d, %d, %d, %d)", global, got.x, got.y, got.z,
           got.w, want.x, want.y, want.z, want.w);
  }
  CHECK(cudaFree(copy_in_device));
  CHECK(cudaFree(copy_out_device));
  std::printf(", cuda::memcpy_async ok\n");
  CHECK(cudaFree(in_device));
  CHECK(cudaFree(scratch));
  CHECK(cudaFree(results_device));
  return 0;
}
