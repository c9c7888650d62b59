// Blocks that wait for other blocks of the same grid, which CUDA allows as long as the block
// waited for was started first: a decoupled look-back inclusive scan (each tile takes its index
// from an atomic counter, publishes its aggregate, then looks back at its predecessors' status
// words until it finds an inclusive prefix), a spin lock taken by every block in turn to
// update a counter no atomic protects, and threads of a block that take turns through a ticket,
// each waiting for the one before it (which CUDA allows from sm_70 on).
#include "check.h"

#include <vector>

constexpr int kThreads = 128;
constexpr int kTiles = 400;
constexpr unsigned long long kAggregate = 1ull << 32;  // status flag: the tile's own sum
constexpr unsigned long long kPrefix = 2ull << 32;     // status flag: the sum up to the tile

__global__ void lookback_scan(const unsigned* in, unsigned* out, unsigned long long* status,
                              unsigned* next_tile) {
  __shared__ unsigned values[kThreads];
  __shared__ unsigned tile;
  __shared__ unsigned exclusive;
  if (threadIdx.x == 0) tile = atomicAdd(next_tile, 1);
  __syncthreads();
  values[threadIdx.x] = in[tile * kThreads + threadIdx.x];
  __syncthreads();
  for (int stride = 1; stride < kThreads; stride *= 2) {  // Hillis-Steele scan of the tile
    unsigned add = threadIdx.x >= stride ? values[threadIdx.x - stride] : 0;
    __syncthreads();
    values[threadIdx.x] += add;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    unsigned aggregate = values[kThreads - 1];
    unsigned sum = 0;
    if (tile == 0) {
      atomicExch(&status[0], kPrefix | aggregate);
    } else {
      atomicExch(&status[tile], kAggregate | aggregate);
      for (int look = static_cast<int>(tile) - 1; look >= 0; --look) {
        unsigned long long word;
        do {
          word = atomicAdd(&status[look], 0ull);
        } while ((word >> 32) == 0);
        sum += static_cast<unsigned>(word);
        if ((word & ~0xffffffffull) == kPrefix) break;
      }
      atomicExch(&status[tile], kPrefix | (sum + aggregate));
    }
    exclusive = sum;
  }
  __syncthreads();
  out[tile * kThreads + threadIdx.x] = values[threadIdx.x] + exclusive;
}

constexpr int kLockBlocks = 64;
constexpr int kLockRounds = 50;

__global__ void locked_increments(int* lock, volatile int* counter, int* order) {
  if (threadIdx.x != 0) return;
  for (int round = 0; round < kLockRounds; ++round) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    int seen = *counter;
    *counter = seen + 1;
    order[seen] = blockIdx.x;
    __threadfence();
    atomicExch(lock, 0);
  }
}

constexpr int kTurnBlocks = 64;
constexpr int kTurnThreads = 64;

__global__ void take_turns(unsigned* tickets, unsigned* turns) {
  unsigned* ticket = tickets + blockIdx.x;
  while (atomicAdd(ticket, 0u) != threadIdx.x) {
  }
  turns[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(ticket, 1u);
}

int main() {
  const int n = kTiles * kThreads;
  std::vector<unsigned> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 2654435761u) >> 24;
  unsigned *d_in = nullptr, *d_out = nullptr, *d_next = nullptr;
  unsigned long long* d_status = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_status, kTiles * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d_next, sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_status, 0, kTiles * sizeof(unsigned long long)));
  CHECK(cudaMemset(d_next, 0, sizeof(unsigned)));
  lookback_scan<<<kTiles, kThreads>>>(d_in, d_out, d_status, d_next);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned running = 0;
  for (int i = 0; i < n; ++i) {
    running += in[i];
    if (out[i] != running) FAIL("scan element %d: got %u, want %u", i, out[i], running);
  }

  int *d_lock = nullptr, *d_counter = nullptr, *d_order = nullptr;
  const int increments = kLockBlocks * kLockRounds;
  CHECK(cudaMalloc(&d_lock, sizeof(int)));
  CHECK(cudaMalloc(&d_counter, sizeof(int)));
  CHECK(cudaMalloc(&d_order, increments * sizeof(int)));
  CHECK(cudaMemset(d_lock, 0, sizeof(int)));
  CHECK(cudaMemset(d_counter, 0, sizeof(int)));
  locked_increments<<<kLockBlocks, 64>>>(d_lock, d_counter, d_order);
  CHECK_LAUNCH();
  int counter = 0;
  std::vector<int> order(increments);
  CHECK(cudaMemcpy(&counter, d_counter, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(order.data(), d_order, increments * sizeof(int), cudaMemcpyDeviceToHost));
  if (counter != increments) FAIL("spin lock: counter %d, want %d", counter, increments);
  std::vector<int> per_block(kLockBlocks, 0);
  for (int block : order) {
    if (block < 0 || block >= kLockBlocks) FAIL("spin lock: increment by block %d", block);
    ++per_block[block];
  }
  for (int b = 0; b < kLockBlocks; ++b)
    if (per_block[b] != kLockRounds)
      FAIL("spin lock: block %d incremented %d times, want %d", b, per_block[b], kLockRounds);
  unsigned *d_tickets = nullptr, *d_turns = nullptr;
  CHECK(cudaMalloc(&d_tickets, kTurnBlocks * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_turns, kTurnBlocks * kTurnThreads * sizeof(unsigned)));
  CHECK(cudaMemset(d_tickets, 0, kTurnBlocks * sizeof(unsigned)));
  take_turns<<<kTurnBlocks, kTurnThreads>>>(d_tickets, d_turns);
  CHECK_LAUNCH();
  std::vector<unsigned> tickets(kTurnBlocks), turns(kTurnBlocks * kTurnThreads);
  CHECK(cudaMemcpy(tickets.data(), d_tickets, tickets.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(turns.data(), d_turns, turns.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kTurnBlocks; ++b) {
    if (tickets[b] != kTurnThreads) FAIL("turns: block %d ticket %u, want %d", b, tickets[b], kTurnThreads);
    for (int t = 0; t < kTurnThreads; ++t)
      if (turns[b * kTurnThreads + t] != static_cast<unsigned>(t))
        FAIL("turns: block %d thread %d took turn %u", b, t, turns[b * kTurnThreads + t]);
  }
  CHECK(cudaFree(d_tickets));
  CHECK(cudaFree(d_turns));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_status));
  CHECK(cudaFree(d_next));
  CHECK(cudaFree(d_lock));
  CHECK(cudaFree(d_counter));
  CHECK(cudaFree(d_order));
  std::printf("cross_block_progress: look-back scan of %d tiles, %d locked increments and %d blocks of turns match\n",
              kTiles, increments, kTurnBlocks);
  return 0;
}
