// Instructions of sm_90 and later that a program reaches through inline PTX: elect.sync,
// movmatrix (sm_75), mapa and getctarank, the cluster special registers, barrier.cluster,
// fence.proxy.async, createpolicy with a cache-hinted load, prefetchu, applypriority and discard,
// and bulk copies (cp.async.bulk) into shared memory on an mbarrier and out through a bulk group,
// which is also what libcu++'s cuda::memcpy_async with a cuda::barrier becomes on sm_90;
// st.async and red.async into shared memory, each completing its bytes on an mbarrier.
// The launch names no cluster, so each block is a cluster of one (PTX ISA: "a CTA that is not
// part of an explicit cluster is a cluster of one CTA"). Expected values follow from the ISA's
// definitions, computed here; the sm_90 parts exist only where the PTX targets sm_90.
#include "check.h"

#include <cooperative_groups.h>
#include <cuda/barrier>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int kThreads = 64;
constexpr int kBlocks = 3;
constexpr int kCount = kThreads * kBlocks;
// st.async: threads 0-15 store four words each (.v4.b32), 16-23 two double words each
// (.v2.b64), 24 a .u32, 25 an .s64 and 26 two .f32 (.v2.f32): async_words is written whole,
// async_wide but for the high half of the .u32's double word.
constexpr int kAsyncWide = 8 * 2 + 3;
constexpr unsigned kStoredBytes = 16 * 16 + 8 * 16 + 4 + 8 + 8;
// red.async: every thread reduces into each counter: add.u32, min.s32, max.u32, inc.u32,
// dec.u32, and.b32, or.b32, xor.b32, add.s32 (4 bytes each), and add.u64 (8 bytes).
constexpr int kReductions = 9;
constexpr unsigned kReducedBytes = kThreads * (kReductions * 4 + 8);
static_assert(kStoredBytes + kReducedBytes < (1u << 20), "an mbarrier's transaction count stays below 2^20");
constexpr unsigned kIncrementBound = 40, kDecrementBound = 50, kDecrementStart = 10;
// The ISA defines st.async and red.async only into another block of a cluster of two or more
// (an H200 stops a cluster of one with an illegal instruction): async_kernel runs as one cluster
// of two blocks, each storing into the other, where the launch may ask for it, and as a cluster
// of one block storing into itself on xcuda, whose clusters hold one block.
constexpr int kAsyncBlocks = 2;

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

// What async_kernel's blocks find in their shared memory, written there by `sender`'s threads.
struct AsyncResults {
  unsigned sender[kAsyncBlocks];
  unsigned stored[kAsyncBlocks * kThreads];                  // async_words
  unsigned long long stored_wide[kAsyncBlocks][kAsyncWide];  // async_wide
  unsigned reduced[kAsyncBlocks][kReductions];               // the red.async counters
  unsigned long long reduced_wide[kAsyncBlocks];             // the red.async .add.u64 counter
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

// st.async and red.async, each completing its bytes on the receiving block's mbarrier.
__global__ void async_kernel(const unsigned* in, AsyncResults* results) {
#if __CUDA_ARCH__ >= 900
  const unsigned t = threadIdx.x, global = blockIdx.x * kThreads + t;
  // Each block's thread 0 arrives on its own mbarrier expecting every byte the next rank of the
  // cluster stores into it; after barrier.cluster each thread stores into the next rank's
  // shared memory (mapa) and waits for its own mbarrier's phase to complete.
  __shared__ alignas(16) unsigned async_words[kThreads];
  __shared__ alignas(16) unsigned long long async_wide[kAsyncWide];
  __shared__ alignas(8) unsigned counters[kReductions];
  __shared__ alignas(8) unsigned long long wide_counter;
  __shared__ alignas(8) unsigned long long async_barrier;
  unsigned rank, ranks;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(ranks));
  const unsigned target = (rank + 1) % ranks, source = (rank + ranks - 1) % ranks;
  auto cluster_address = [&](const void* pointer) {
    unsigned address;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(address) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(pointer))), "r"(target));
    return address;
  };
  const unsigned async_bar = cluster_address(&async_barrier);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&async_barrier)))
                 : "memory");
    const unsigned initial[kReductions] = {7, 0x7fffffff, 0, 0, kDecrementStart, 0xffffffff, 0, 0x5a5a5a5a, 100};
    for (int k = 0; k < kReductions; ++k) counters[k] = initial[k];
    wide_counter = 1;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&async_barrier))), "r"(kStoredBytes + kReducedBytes)
                 : "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const unsigned value = in[global];
  if (t < 16) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
                 ::"r"(cluster_address(&async_words[4 * t])), "r"(value), "r"(value + 1), "r"(value ^ 0xffff), "r"(t),
                   "r"(async_bar) : "memory");
  } else if (t < 24) {
    const unsigned long long high = static_cast<unsigned long long>(value) << 32;
    asm volatile("st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%0], {%1, %2}, [%3];"
                 ::"r"(cluster_address(&async_wide[2 * (t - 16)])), "l"(high | t), "l"(~high), "r"(async_bar) : "memory");
  } else if (t == 24) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];"
                 ::"r"(cluster_address(&async_wide[16])), "r"(value), "r"(async_bar) : "memory");
  } else if (t == 25) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.s64 [%0], %1, [%2];"
                 ::"r"(cluster_address(&async_wide[17])), "l"(-static_cast<long long>(value)), "r"(async_bar) : "memory");
  } else if (t == 26) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
                 ::"r"(cluster_address(&async_wide[18])), "f"(1.5f), "f"(-0.25f), "r"(async_bar) : "memory");
  }
  const unsigned counter_base = cluster_address(counters);
  asm volatile(
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.min.s32 [%0+4], %3, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.max.u32 [%0+8], %4, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.u32 [%0+12], %5, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.dec.u32 [%0+16], %6, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.and.b32 [%0+20], %4, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.or.b32 [%0+24], %4, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.xor.b32 [%0+28], %4, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.s32 [%0+32], %7, [%2];\n\t"
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 [%8], %9, [%2];"
      ::"r"(counter_base), "r"(t + 1), "r"(async_bar), "r"(static_cast<int>(value) - 0x40000000), "r"(value),
        "r"(kIncrementBound), "r"(kDecrementBound), "r"(-static_cast<int>(3 * t)), "r"(cluster_address(&wide_counter)),
        "l"(static_cast<unsigned long long>(value) << 20)
      : "memory");
  for (unsigned arrived = 0; !arrived;)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(arrived) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(&async_barrier))) : "memory");
  results->stored[global] = async_words[(t + 9) % kThreads];
  if (t < kAsyncWide) results->stored_wide[blockIdx.x][t] = async_wide[t];
  if (t < kReductions) results->reduced[blockIdx.x][t] = counters[t];
  if (t == 0) {
    results->reduced_wide[blockIdx.x] = wide_counter;
    results->sender[blockIdx.x] = blockIdx.x - rank + source;
  }
  // No block leaves while another may still store into its shared memory.
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
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

// What the st.async and red.async part of `kernel` leaves, from the ISA's definitions: each
// store writes its values at its address; red.async.inc stores (old >= b) ? 0 : old + 1,
// red.async.dec (old == 0 || old > b) ? b : old - 1, min and max compare as the type's
// integers, add wraps.
Results results;             // what `kernel` wrote, copied back
AsyncResults async_results;  // what `async_kernel` wrote

void check_async_stores_and_reductions(const std::vector<unsigned>& in, bool clustered) {
  const AsyncResults& results = async_results;
  for (int block = 0; block < kAsyncBlocks; ++block) {
    const int sender = clustered ? block ^ 1 : block;
    if (static_cast<int>(results.sender[block]) != sender)
      FAIL("async_kernel, block %d: stored into by block %u, expected %d", block, results.sender[block], sender);
    const unsigned* values = &in[sender * kThreads];
    unsigned words[kThreads];
    for (int t = 0; t < 16; ++t) {
      const unsigned stored[4] = {values[t], values[t] + 1, values[t] ^ 0xffff, static_cast<unsigned>(t)};
      for (int k = 0; k < 4; ++k) words[4 * t + k] = stored[k];
    }
    for (int t = 0; t < kThreads; ++t) {
      const unsigned want = words[(t + 9) % kThreads];
      if (results.stored[block * kThreads + t] != want)
        FAIL("st.async, block %d thread %d: 0x%x, expected 0x%x", block, t, results.stored[block * kThreads + t], want);
    }
    unsigned long long wide[kAsyncWide];
    for (int t = 16; t < 24; ++t) {
      const unsigned long long high = static_cast<unsigned long long>(values[t]) << 32;
      wide[2 * (t - 16)] = high | static_cast<unsigned>(t);
      wide[2 * (t - 16) + 1] = ~high;
    }
    wide[16] = values[24];
    wide[17] = static_cast<unsigned long long>(-static_cast<long long>(values[25]));
    const float pair[2] = {1.5f, -0.25f};
    std::memcpy(&wide[18], pair, sizeof pair);
    for (int k = 0; k < kAsyncWide; ++k) {
      // wide[16] holds a .u32 store in its low half; the high half was never written.
      const unsigned long long got = k == 16 ? results.stored_wide[block][k] & 0xffffffffu : results.stored_wide[block][k];
      if (got != wide[k]) FAIL("st.async, block %d double word %d: 0x%llx, expected 0x%llx", block, k, got, wide[k]);
    }
    unsigned want[kReductions] = {7, 0x7fffffff, 0, 0, kDecrementStart, 0xffffffff, 0, 0x5a5a5a5a, 100};
    unsigned long long want_wide = 1;
    for (int t = 0; t < kThreads; ++t) {
      const unsigned value = values[t];
      want[0] += t + 1;
      want[1] = static_cast<unsigned>(std::min(static_cast<int>(want[1]), static_cast<int>(value) - 0x40000000));
      want[2] = std::max(want[2], value);
      want[3] = want[3] >= kIncrementBound ? 0 : want[3] + 1;
      want[4] = want[4] == 0 || want[4] > kDecrementBound ? kDecrementBound : want[4] - 1;
      want[5] &= value;
      want[6] |= value;
      want[7] ^= value;
      want[8] += static_cast<unsigned>(-3 * t);
      want_wide += static_cast<unsigned long long>(value) << 20;
    }
    const char* names[kReductions] = {"add.u32", "min.s32", "max.u32", "inc.u32", "dec.u32", "and.b32", "or.b32", "xor.b32", "add.s32"};
    for (int k = 0; k < kReductions; ++k)
      if (results.reduced[block][k] != want[k])
        FAIL("red.async.%s, block %d: 0x%x, expected 0x%x", names[k], block, results.reduced[block][k], want[k]);
    if (results.reduced_wide[block] != want_wide)
      FAIL("red.async.add.u64, block %d: 0x%llx, expected 0x%llx", block, results.reduced_wide[block], want_wide);
  }
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
    // A cluster of two where the launch takes it; xcuda answers cudaErrorNotSupported.
    AsyncResults* async_device;
    CHECK(cudaMalloc(&async_device, sizeof(AsyncResults)));
    CHECK(cudaMemset(async_device, 0, sizeof(AsyncResults)));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(kAsyncBlocks);
    config.blockDim = dim3(kThreads);
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kAsyncBlocks;
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    cudaError_t launched = cudaLaunchKernelEx(&config, async_kernel, static_cast<const unsigned*>(in_device), async_device);
    const bool clustered = launched == cudaSuccess;
    if (!clustered) {
      if (launched != cudaErrorNotSupported) CHECK(launched);
      (void)cudaGetLastError();
      async_kernel<<<kAsyncBlocks, kThreads>>>(in_device, async_device);
    }
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(&async_results, async_device, sizeof(AsyncResults), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(async_device));
    check_async_stores_and_reductions(in, clustered);
    std::printf(", st.async, red.async (%s) ok", clustered ? "clusters of two" : "clusters of one");
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
