// Warp collectives over the full member mask in blocks of whole warps, which the host runs with
// a warp's lanes side by side in vectors: shuffles of every mode and width, with the source
// lane a constant, a kernel parameter or a value each lane computes; votes, ballots, matches
// and reductions; __syncwarp between shared-memory stores and loads; a lane-0 store; lanes that
// took different branches before a shuffle; shuffles on both sides of a barrier and in the
// last warp only; atomics; a loop before the shuffles; and shuffles in a loop whose trip count
// comes from a parameter. Blocks of
// 64 x 1, 32 x 3 and 16 x 6 threads (whole warps, but not whole warps wide: the host runs such
// blocks with code of their own). Expected values are computed here from the documented lane
// arithmetic.
#include "check.h"

#include <algorithm>
#include <vector>

constexpr int kBlocks = 5;
constexpr int kResults = 16;
constexpr unsigned kFull = 0xffffffffu;

__device__ unsigned lane_of_thread() { return (threadIdx.x + threadIdx.y * blockDim.x) % 32; }

// Result k of thread t goes to out[k * threads + t]: the lanes of a warp write side by side.
__global__ void collectives(const unsigned* in, unsigned* out, unsigned* warp_sums, int broadcast_lane) {
  __shared__ unsigned neighbours[128];
  const unsigned local = threadIdx.x + threadIdx.y * blockDim.x;
  const unsigned t = blockIdx.x * blockDim.x * blockDim.y + local;
  const unsigned v = in[t], lane = lane_of_thread();
  unsigned* mine = out + t;
  const unsigned stride = gridDim.x * blockDim.x * blockDim.y;
  mine[0] = __shfl_sync(kFull, v, 5, 8);
  mine[1 * stride] = __shfl_up_sync(kFull, v, 3, 16);
  mine[2 * stride] = __shfl_down_sync(kFull, v, 4);
  mine[3 * stride] = __shfl_xor_sync(kFull, v, 6);
  mine[4 * stride] = __shfl_sync(kFull, v, v % 32);
  mine[5 * stride] = __shfl_sync(kFull, v, broadcast_lane);
  unsigned sum = v;
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(kFull, sum, offset);
  mine[6 * stride] = sum;
  mine[7 * stride] = __ballot_sync(kFull, v & 1);
  mine[8 * stride] = __any_sync(kFull, v % 7 == 3) | (__all_sync(kFull, v < 0x80000000u) << 1) | (__all_sync(kFull, v & 1) << 2);
  mine[9 * stride] = __match_any_sync(kFull, v % 5);
  int same_block = 0, same_parity = 0;
  mine[10 * stride] = __match_all_sync(kFull, blockIdx.x, &same_block) ^ __match_all_sync(kFull, v & 1, &same_parity);
  mine[11 * stride] = static_cast<unsigned>(same_block) | (static_cast<unsigned>(same_parity) << 1);
  mine[12 * stride] = __activemask();
  unsigned parted = v;
  if (lane & 1) parted = parted * 3;
  else parted = parted + 7;
  mine[13 * stride] = __shfl_down_sync(kFull, parted, 1);
  neighbours[local] = v ^ 0x5a5a;
  __syncwarp();
  mine[14 * stride] = neighbours[local ^ 1];
#if __CUDA_ARCH__ >= 800
  mine[15 * stride] = __reduce_add_sync(kFull, v) ^ __reduce_min_sync(kFull, v) ^ __reduce_max_sync(kFull, v);
#else
  unsigned total = v, least = v, most = v;
  for (int offset = 16; offset > 0; offset /= 2) {
    total += __shfl_xor_sync(kFull, total, offset);
    least = min(least, __shfl_xor_sync(kFull, least, offset));
    most = max(most, __shfl_xor_sync(kFull, most, offset));
  }
  mine[15 * stride] = total ^ least ^ most;
#endif
  if (lane == 0) warp_sums[t / 32] = sum;
}

// Each warp sums its values, the first warp sums the warps' sums (the reduction of the
// benchmark suite), and every thread then adds a shuffled neighbour of the block's total.
__global__ void block_sum(const unsigned* in, unsigned* out, unsigned* totals) {
  __shared__ unsigned partial[32];
  __shared__ unsigned total;
  const unsigned local = threadIdx.x + threadIdx.y * blockDim.x, threads = blockDim.x * blockDim.y;
  const unsigned t = blockIdx.x * threads + local;
  unsigned value = in[t];
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(kFull, value, offset);
  if (local % 32 == 0) partial[local / 32] = value;
  __syncthreads();
  if (local < 32) {
    value = local < threads / 32 ? partial[local] : 0;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(kFull, value, offset);
    if (local == 0) total = value;
  }
  __syncthreads();
  if (local == 0) totals[blockIdx.x] = total;
  unsigned mixed = in[t] + total;
  if (local < 48) mixed += 5;
  out[t] = mixed + __shfl_xor_sync(kFull, mixed, 1);
}

// Atomics in a warp's code: a warp's sum added by its first lane, a ticket for every thread from
// one counter, and a compare-and-swap on each thread's own slot, some of them already taken.
__global__ void warp_atomics(const unsigned* in, unsigned* total, unsigned* tickets, unsigned* counter, unsigned* slots,
                             unsigned* found, int n) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x * blockDim.y + threadIdx.x + threadIdx.y * blockDim.x);
  unsigned value = t < n ? in[t] : 0;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(kFull, value, offset);
  if (lane_of_thread() == 0) atomicAdd(total, value);
  tickets[t] = atomicAdd(counter, 1u);
  found[t] = atomicCAS(&slots[t], 0u, static_cast<unsigned>(t) + 1);
}

// A warp per row: each lane sums every 32nd value of the row in a loop, then the warp sums the
// lanes' sums with shuffles.
__global__ void row_sums(const unsigned* values, unsigned* sums, int width) {
  const unsigned local = threadIdx.x + threadIdx.y * blockDim.x;
  const unsigned row = (blockIdx.x * blockDim.x * blockDim.y + local) / 32, lane = lane_of_thread();
  unsigned sum = 0;
  for (int column = static_cast<int>(lane); column < width; column += 32) sum += values[row * width + column] * (column + 1);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(kFull, sum, offset);
  if (lane == 0) sums[row] = sum;
}

// A shuffle in a loop: the trip count comes from a parameter.
__global__ void rotations(const unsigned* in, unsigned* out, int trips) {
  const unsigned t = blockIdx.x * blockDim.x * blockDim.y + threadIdx.x + threadIdx.y * blockDim.x;
  unsigned value = in[t];
  for (int trip = 0; trip < trips; ++trip) value = __shfl_sync(kFull, value, (lane_of_thread() + 1) % 32) + trip;
  out[t] = value;
}

int main() {
  const unsigned shapes[][2] = {{64, 1}, {32, 3}, {16, 6}};
  for (const auto& shape : shapes) {
    const dim3 block(shape[0], shape[1]);
    const int threads = static_cast<int>(shape[0] * shape[1]), n = threads * kBlocks, warps = n / 32;
    std::vector<unsigned> in(n);
    for (int i = 0; i < n; ++i) in[i] = ((static_cast<unsigned>(i) + 11u) * 2654435761u) >> 3;  // below 2^31
    unsigned *d_in = nullptr, *d_out = nullptr, *d_warp_sums = nullptr, *d_totals = nullptr;
    CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, n * kResults * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_warp_sums, warps * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_totals, kBlocks * sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    const int broadcast_lane = 19;
    collectives<<<kBlocks, block>>>(d_in, d_out, d_warp_sums, broadcast_lane);
    CHECK_LAUNCH();
    std::vector<unsigned> out(n * kResults), warp_sums(warps);
    CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(warp_sums.data(), d_warp_sums, warps * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int t = 0; t < n; ++t) {
      const int warp = t / 32 * 32, lane = t % 32, block_index = t / threads;
      auto at = [&](int source) { return in[warp + source]; };
      auto warp_where = [&](auto test) {
        unsigned mask = 0;
        for (int other = 0; other < 32; ++other)
          if (test(at(other))) mask |= 1u << other;
        return mask;
      };
      unsigned sum = 0, least = ~0u, most = 0;
      for (int other = 0; other < 32; ++other) {
        sum += at(other);
        least = std::min(least, at(other));
        most = std::max(most, at(other));
      }
      auto parted = [](unsigned value, int source) { return source & 1 ? value * 3 : value + 7; };
      const unsigned odd = warp_where([](unsigned value) { return (value & 1) != 0; });
      const bool same_parity = odd == 0 || odd == kFull;
      unsigned want[kResults];
      want[0] = at(lane / 8 * 8 + 5);
      want[1] = lane % 16 >= 3 ? at(lane - 3) : at(lane);
      want[2] = lane + 4 < 32 ? at(lane + 4) : at(lane);
      want[3] = at(lane ^ 6);
      want[4] = at(static_cast<int>(at(lane) % 32));
      want[5] = at(broadcast_lane);
      want[6] = sum;
      want[7] = odd;
      want[8] = (warp_where([](unsigned value) { return value % 7 == 3; }) != 0 ? 1u : 0u) | 2u | (odd == kFull ? 4u : 0u);
      want[9] = warp_where([&](unsigned value) { return value % 5 == at(lane) % 5; });
      want[10] = kFull ^ (same_parity ? kFull : 0u);
      want[11] = 1u | (same_parity ? 2u : 0u);
      want[12] = kFull;
      want[13] = lane + 1 < 32 ? parted(at(lane + 1), lane + 1) : parted(at(lane), lane);
      want[14] = at(lane ^ 1) ^ 0x5a5a;
      want[15] = sum ^ least ^ most;
      for (int result = 0; result < kResults; ++result)
        if (out[result * n + t] != want[result])
          FAIL("%ux%u block, thread %d (block %d, lane %d), result %d: got %#x, want %#x", shape[0], shape[1], t, block_index, lane,
               result, out[result * n + t], want[result]);
      if (lane == 0 && warp_sums[t / 32] != sum) FAIL("%ux%u block, warp %d: sum %#x, want %#x", shape[0], shape[1], t / 32, warp_sums[t / 32], sum);
    }

    block_sum<<<kBlocks, block>>>(d_in, d_out, d_totals);
    CHECK_LAUNCH();
    std::vector<unsigned> sums(n), totals(kBlocks);
    CHECK(cudaMemcpy(sums.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(totals.data(), d_totals, kBlocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int block_index = 0; block_index < kBlocks; ++block_index) {
      unsigned total = 0;
      for (int local = 0; local < threads; ++local) total += in[block_index * threads + local];
      if (totals[block_index] != total) FAIL("%ux%u block %d: total %#x, want %#x", shape[0], shape[1], block_index, totals[block_index], total);
      auto mixed = [&](int local) { return in[block_index * threads + local] + total + (local < 48 ? 5u : 0u); };
      for (int local = 0; local < threads; ++local) {
        const unsigned want = mixed(local) + mixed(local ^ 1);
        if (sums[block_index * threads + local] != want)
          FAIL("%ux%u block %d, thread %d: got %#x, want %#x", shape[0], shape[1], block_index, local, sums[block_index * threads + local], want);
      }
    }

    {
      const int count = n - 7;  // the last warp is partly past the end
      std::vector<unsigned> slots(n, 0);
      for (int t = 0; t < n; t += 5) slots[t] = 0xabcu;
      unsigned *d_total = nullptr, *d_tickets = nullptr, *d_counter = nullptr, *d_slots = nullptr, *d_found = nullptr;
      CHECK(cudaMalloc(&d_total, sizeof(unsigned)));
      CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
      CHECK(cudaMalloc(&d_tickets, n * sizeof(unsigned)));
      CHECK(cudaMalloc(&d_slots, n * sizeof(unsigned)));
      CHECK(cudaMalloc(&d_found, n * sizeof(unsigned)));
      CHECK(cudaMemset(d_total, 0, sizeof(unsigned)));
      CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));
      CHECK(cudaMemcpy(d_slots, slots.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
      warp_atomics<<<kBlocks, block>>>(d_in, d_total, d_tickets, d_counter, d_slots, d_found, count);
      CHECK_LAUNCH();
      unsigned total = 0, counter = 0;
      std::vector<unsigned> tickets(n), after(n), found(n);
      CHECK(cudaMemcpy(&total, d_total, sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(&counter, d_counter, sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(tickets.data(), d_tickets, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(after.data(), d_slots, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(found.data(), d_found, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
      unsigned want_total = 0;
      for (int t = 0; t < count; ++t) want_total += in[t];
      if (total != want_total) FAIL("%ux%u block: atomic total %#x, want %#x", shape[0], shape[1], total, want_total);
      if (counter != static_cast<unsigned>(n)) FAIL("%ux%u block: counter %u, want %d", shape[0], shape[1], counter, n);
      std::vector<bool> issued(n, false);
      for (int t = 0; t < n; ++t) {
        if (tickets[t] >= static_cast<unsigned>(n) || issued[tickets[t]])
          FAIL("%ux%u block, thread %d: ticket %u twice or out of range", shape[0], shape[1], t, tickets[t]);
        issued[tickets[t]] = true;
        const unsigned want_found = t % 5 == 0 ? 0xabcu : 0u, want_after = t % 5 == 0 ? 0xabcu : static_cast<unsigned>(t) + 1;
        if (found[t] != want_found || after[t] != want_after)
          FAIL("%ux%u block, thread %d: CAS found %#x and left %#x, want %#x and %#x", shape[0], shape[1], t, found[t], after[t], want_found,
               want_after);
      }
      for (unsigned* pointer : {d_total, d_tickets, d_counter, d_slots, d_found}) CHECK(cudaFree(pointer));
    }

    {
      const int width = 77;
      std::vector<unsigned> values(warps * width);
      for (size_t index = 0; index < values.size(); ++index) values[index] = static_cast<unsigned>(index * 2654435761u >> 7);
      unsigned *d_values = nullptr, *d_sums = nullptr;
      CHECK(cudaMalloc(&d_values, values.size() * sizeof(unsigned)));
      CHECK(cudaMalloc(&d_sums, warps * sizeof(unsigned)));
      CHECK(cudaMemcpy(d_values, values.data(), values.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
      row_sums<<<kBlocks, block>>>(d_values, d_sums, width);
      CHECK_LAUNCH();
      std::vector<unsigned> sums(warps);
      CHECK(cudaMemcpy(sums.data(), d_sums, warps * sizeof(unsigned), cudaMemcpyDeviceToHost));
      for (int row = 0; row < warps; ++row) {
        unsigned want = 0;
        for (int column = 0; column < width; ++column) want += values[row * width + column] * static_cast<unsigned>(column + 1);
        if (sums[row] != want) FAIL("%ux%u block, row %d: sum %#x, want %#x", shape[0], shape[1], row, sums[row], want);
      }
      CHECK(cudaFree(d_values));
      CHECK(cudaFree(d_sums));
    }

    const int trips = 37;
    rotations<<<kBlocks, block>>>(d_in, d_out, trips);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(sums.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int t = 0; t < n; ++t) {
      const int warp = t / 32 * 32, lane = t % 32;
      std::vector<unsigned> values(in.begin() + warp, in.begin() + warp + 32);
      for (int trip = 0; trip < trips; ++trip) {
        std::vector<unsigned> next(32);
        for (int other = 0; other < 32; ++other) next[other] = values[(other + 1) % 32] + static_cast<unsigned>(trip);
        values = next;
      }
      if (sums[t] != values[lane]) FAIL("%ux%u block, thread %d: rotation %#x, want %#x", shape[0], shape[1], t, sums[t], values[lane]);
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_warp_sums));
    CHECK(cudaFree(d_totals));
  }
  std::puts("whole_warps: ok");
  return 0;
}
