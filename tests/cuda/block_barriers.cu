// Block barriers where a region-by-region schedule is easy to get wrong: a barrier inside a loop
// whose trip count differs from block to block, a loop left by a uniform break after a barrier,
// regions where one thread works or all but one, threads (part of a warp) returning before a
// barrier, or in two stages after two dozen barriers, loops around barriers after two dozen more,
// __syncthreads_count/_and/_or on a 2D block, a kernel's launch bounds far above the block it
// runs, and a thread's array kept across a barrier. Expected values follow from the CUDA
// Programming Guide's definitions.
#include "check.h"

#include <vector>

constexpr int kThreads = 256;
constexpr int kBlocks = 12;

__global__ void repeated_reduction(const int* in, int* out) {
  __shared__ int partial[kThreads];
  int total = 0;
  for (int round = 0; round <= static_cast<int>(blockIdx.x) % 5; ++round) {
    partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] * (round + 1);
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    total += partial[0];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

// Doubles a shared counter until it passes a block-specific limit; the break is uniform because
// every thread reads the counter after the same barrier.
__global__ void uniform_break(int* out) {
  __shared__ int counter;
  if (threadIdx.x == 0) counter = 1;
  __syncthreads();
  int steps = 0;
  while (true) {
    int seen = counter;
    __syncthreads();
    if (seen > static_cast<int>(blockIdx.x) * 100) break;
    if (threadIdx.x == 0) counter = seen * 2;
    ++steps;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = steps;
}

// Regions whose work stands behind a test of threadIdx.x against one value, between barriers:
// one thread works (== 0, == 37, mid-warp) or all but one (!= 0, != 5, != 9).
__global__ void single_threads(const int* in, int* out) {
  __shared__ int values[kThreads];
  const int thread = threadIdx.x;
  values[thread] = in[blockIdx.x * blockDim.x + thread];
  __syncthreads();
  if (thread == 0) values[0] += 1000;
  __syncthreads();
  if (thread == 37) values[37] = values[36] * 2;
  __syncthreads();
  if (thread != 0) values[thread] += 3;
  __syncthreads();
  if (thread != 5) values[thread] ^= 0x55;
  __syncthreads();
  if (thread == 9) {
  } else {
    values[thread] -= 7;
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + thread] = values[(thread + 1) % kThreads];
}

// Threads from `active` on (mid-warp) leave before the barrier; the rest reverse their values.
__global__ void early_return(const int* in, int* out, int active) {
  __shared__ int values[kThreads];
  if (static_cast<int>(threadIdx.x) >= active) return;
  values[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = values[active - 1 - threadIdx.x];
}

// After two dozen barriers (a block function then runs its regions from one loop over the
// threads), threads leave in two stages (mid-warp), each before a barrier, and those left trade
// values across the barriers: after either stage some threads have finished while others wait.
__global__ void staged_returns(const int* in, int* out, int first_active, int second_active) {
  __shared__ int values[kThreads];
  const int t = threadIdx.x;
  values[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
#pragma unroll
  for (int step = 0; step < 12; ++step) {
    const int next = values[(t + 1) % kThreads];
    __syncthreads();
    values[t] += next;
    __syncthreads();
  }
  if (t >= first_active) return;
  int v = values[first_active - 1 - t];
  __syncthreads();
  values[t] = v * 3 + blockIdx.x;
  __syncthreads();
  if (t >= second_active) return;
  v = values[(t + 5) % second_active] + values[t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = v;
}

// More than two dozen barriers (a block function then runs its regions from one loop over the
// threads), then two loops around barriers whose trip counts differ from block to block.
__global__ void many_barriers(const int* in, int* out) {
  __shared__ unsigned values[kThreads];
  const int t = threadIdx.x;
  unsigned v = in[blockIdx.x * blockDim.x + t];
#pragma unroll
  for (int step = 0; step < 13; ++step) {
    values[t] = v;
    __syncthreads();
    v += values[(t + step + 1) % kThreads];
    __syncthreads();
  }
  for (int trip = 0; trip < blockIdx.x % 4 + 1; ++trip) {
    values[t] = v;
    __syncthreads();
    v ^= values[(t + 7) % kThreads];
    __syncthreads();
  }
  for (int trip = 0; trip < blockIdx.x % 3 + 2; ++trip) {
    values[t] = v;
    __syncthreads();
    v -= values[(t * 5) % kThreads];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = static_cast<int>(v);
}

__global__ void barrier_votes(const int* in, int* out) {
  int thread = threadIdx.y * blockDim.x + threadIdx.x;
  int block_threads = blockDim.x * blockDim.y;
  int v = in[blockIdx.x * block_threads + thread];
  int count = __syncthreads_count(v % 3 == 0);
  // False for one thread of the odd blocks; true for one thread of every third block.
  int all = __syncthreads_and(v >= 0 && (blockIdx.x % 2 == 0 || thread != 37));
  int any = __syncthreads_or(blockIdx.x % 3 == 0 && thread == 200);
  int* mine = out + (blockIdx.x * block_threads + thread) * 3;
  mine[0] = count;
  mine[1] = all;
  mine[2] = any;
}

// Values the same in every thread, which the host keeps once per block: a counter updated
// between two barriers and read again before the second, a value the threads carry out of a
// loop they leave after different trip counts (it differs between them afterwards), and one
// read after some threads have returned.
__global__ void uniform_values(const int* in, int* out) {
  __shared__ int buffer[kThreads];
  const int thread = threadIdx.x;
  int step = in[blockIdx.x];  // one word for the whole block
  int mixed = 0;
  for (int round = 0; round < 4; ++round) {
    buffer[thread] = step * thread;
    __syncthreads();
    step = step * 3 + 1;
    const int scaled = buffer[(thread + step) % kThreads] + step;
    __syncthreads();
    buffer[thread] = scaled;
    mixed += scaled & 7;
  }
  int walk = step;
  for (int trip = 0; trip < thread % 5; ++trip) walk = walk * 2 + 1;
  if (thread >= kThreads - 3) return;
  __syncthreads();
  out[blockIdx.x * kThreads + thread] = buffer[(thread * 7) % kThreads] + walk + mixed + step;
}

// Launch bounds of 512 threads, for blocks of 16 x 6: what each thread keeps across the barriers,
// and a value all threads share, where a block of the bound would keep them.
constexpr int kBoundedWidth = 16, kBoundedHeight = 6, kBoundedThreads = kBoundedWidth * kBoundedHeight;
__global__ void __launch_bounds__(512) bounded_block(const int* in, int* out) {
  __shared__ int buffer[1024];
  const int thread = threadIdx.y * blockDim.x + threadIdx.x;
  int own = in[blockIdx.x * kBoundedThreads + thread];
  int step = in[blockIdx.x];  // one word for the whole block
  for (int round = 0; round < 3; ++round) {
    buffer[thread] = own + step;
    __syncthreads();
    own = own * 5 + buffer[(thread + round + 1) % kBoundedThreads];
    step = step * 3 + 1;
    __syncthreads();
  }
  out[blockIdx.x * kBoundedThreads + thread] = own ^ step;
}

// 4400 bytes of each thread's own array live across the barrier: more than a block of 1024 threads
// may keep on a host worker's stack, so the host keeps them for as many threads as the block has.
constexpr int kLargeThreads = 64, kLargeWords = 1100;
__global__ void large_state(const int* in, int* out) {
  int words[kLargeWords];
  const int thread = threadIdx.x;
  for (int i = 0; i < kLargeWords; ++i) words[i] = in[(thread + i) % kThreads] + i;
  __shared__ int picked[kLargeThreads];
  picked[thread] = words[(thread * 13) % kLargeWords];
  __syncthreads();
  const int neighbour = picked[(thread + 1) % kLargeThreads];
  out[blockIdx.x * kLargeThreads + thread] = words[(thread * 7 + neighbour) % kLargeWords] + neighbour;
}

int main() {
  const int n = kThreads * kBlocks;
  std::vector<int> in(n), out(n * 3);
  for (int i = 0; i < n; ++i) in[i] = static_cast<int>((i * 2654435761u) >> 22);
  int *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * 3 * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  repeated_reduction<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    long sum = 0;
    for (int t = 0; t < kThreads; ++t) sum += in[b * kThreads + t];
    long want = 0;
    for (int round = 0; round <= b % 5; ++round) want += sum * (round + 1);
    for (int t = 0; t < kThreads; ++t)
      if (out[b * kThreads + t] != want)
        FAIL("repeated_reduction block %d thread %d: got %d, want %ld", b, t, out[b * kThreads + t],
             want);
  }

  single_threads<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<int> values(in.begin() + b * kThreads, in.begin() + (b + 1) * kThreads);
    values[0] += 1000;
    values[37] = values[36] * 2;
    for (int t = 0; t < kThreads; ++t) {
      if (t != 0) values[t] += 3;
      if (t != 5) values[t] ^= 0x55;
      if (t != 9) values[t] -= 7;
    }
    for (int t = 0; t < kThreads; ++t)
      if (out[b * kThreads + t] != values[(t + 1) % kThreads])
        FAIL("single_threads block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t], values[(t + 1) % kThreads]);
  }

  uniform_break<<<kBlocks, kThreads>>>(d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    int want = 0;
    for (int counter = 1; counter <= b * 100; counter *= 2) ++want;
    for (int t = 0; t < kThreads; ++t)
      if (out[b * kThreads + t] != want)
        FAIL("uniform_break block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t],
             want);
  }

  const int active = 100;
  CHECK(cudaMemset(d_out, 0xff, n * sizeof(int)));
  early_return<<<kBlocks, kThreads>>>(d_in, d_out, active);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t) {
      int want = t < active ? in[b * kThreads + active - 1 - t] : -1;
      if (out[b * kThreads + t] != want)
        FAIL("early_return block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t], want);
    }

  const int first_active = 200, second_active = 77;
  CHECK(cudaMemset(d_out, 0xff, n * sizeof(int)));
  staged_returns<<<kBlocks, kThreads>>>(d_in, d_out, first_active, second_active);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<int> shared(in.begin() + b * kThreads, in.begin() + (b + 1) * kThreads), before, values(first_active);
    for (int step = 0; step < 12; ++step) {
      before = shared;
      for (int t = 0; t < kThreads; ++t) shared[t] += before[(t + 1) % kThreads];
    }
    for (int t = 0; t < first_active; ++t) values[t] = shared[first_active - 1 - t] * 3 + b;
    for (int t = 0; t < kThreads; ++t) {
      const int want = t < second_active ? values[(t + 5) % second_active] + values[t] : -1;
      if (out[b * kThreads + t] != want)
        FAIL("staged_returns block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t], want);
    }
  }

  many_barriers<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<unsigned> v(in.begin() + b * kThreads, in.begin() + (b + 1) * kThreads), values;
    for (int step = 0; step < 13; ++step) {
      values = v;
      for (int t = 0; t < kThreads; ++t) v[t] += values[(t + step + 1) % kThreads];
    }
    for (int trip = 0; trip < b % 4 + 1; ++trip) {
      values = v;
      for (int t = 0; t < kThreads; ++t) v[t] ^= values[(t + 7) % kThreads];
    }
    for (int trip = 0; trip < b % 3 + 2; ++trip) {
      values = v;
      for (int t = 0; t < kThreads; ++t) v[t] -= values[(t * 5) % kThreads];
    }
    for (int t = 0; t < kThreads; ++t)
      if (out[b * kThreads + t] != static_cast<int>(v[t]))
        FAIL("many_barriers block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t], static_cast<int>(v[t]));
  }

  CHECK(cudaMemset(d_out, 0xff, n * sizeof(int)));
  uniform_values<<<kBlocks, kThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    // The block's threads in lockstep, stretch by stretch between the barriers.
    std::vector<int> buffer(kThreads), scaled(kThreads), mixed(kThreads, 0);
    int step = in[b];
    for (int round = 0; round < 4; ++round) {
      for (int t = 0; t < kThreads; ++t) buffer[t] = step * t;
      step = step * 3 + 1;
      for (int t = 0; t < kThreads; ++t) scaled[t] = buffer[((t + step) % kThreads + kThreads) % kThreads] + step;
      for (int t = 0; t < kThreads; ++t) {
        buffer[t] = scaled[t];
        mixed[t] += scaled[t] & 7;
      }
    }
    for (int t = 0; t < kThreads; ++t) {
      int walk = step;
      for (int trip = 0; trip < t % 5; ++trip) walk = walk * 2 + 1;
      const int want = t >= kThreads - 3 ? -1 : buffer[(t * 7) % kThreads] + walk + mixed[t] + step;
      if (out[b * kThreads + t] != want)
        FAIL("uniform_values block %d thread %d: got %d, want %d", b, t, out[b * kThreads + t], want);
    }
  }

  const dim3 shape(32, 8);
  barrier_votes<<<kBlocks, shape>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * 3 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    int count = 0, all = b % 2 == 0, any = b % 3 == 0;
    for (int t = 0; t < kThreads; ++t) count += in[b * kThreads + t] % 3 == 0;
    for (int t = 0; t < kThreads; ++t) {
      const int* got = &out[(b * kThreads + t) * 3];
      if (got[0] != count || (got[1] != 0) != (all != 0) || (got[2] != 0) != (any != 0))
        FAIL("barrier_votes block %d thread %d: got %d %d %d, want %d %d %d", b, t, got[0], got[1],
             got[2], count, all, any);
    }
  }
  bounded_block<<<kBlocks, dim3(kBoundedWidth, kBoundedHeight)>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, kBlocks * kBoundedThreads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<int> own(in.begin() + b * kBoundedThreads, in.begin() + (b + 1) * kBoundedThreads), buffer(kBoundedThreads);
    int step = in[b];
    for (int round = 0; round < 3; ++round) {
      for (int t = 0; t < kBoundedThreads; ++t) buffer[t] = own[t] + step;
      for (int t = 0; t < kBoundedThreads; ++t) own[t] = own[t] * 5 + buffer[(t + round + 1) % kBoundedThreads];
      step = step * 3 + 1;
    }
    for (int t = 0; t < kBoundedThreads; ++t)
      if (out[b * kBoundedThreads + t] != (own[t] ^ step))
        FAIL("bounded_block block %d thread %d: got %d, want %d", b, t, out[b * kBoundedThreads + t], own[t] ^ step);
  }
  large_state<<<kBlocks, kLargeThreads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, kBlocks * kLargeThreads * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kLargeThreads; ++t) {
      auto word = [&](int thread, int i) { return in[(thread + i) % kThreads] + i; };
      const int neighbour = word((t + 1) % kLargeThreads, (((t + 1) % kLargeThreads) * 13) % kLargeWords);
      const int want = word(t, (t * 7 + neighbour) % kLargeWords) + neighbour;
      if (out[b * kLargeThreads + t] != want)
        FAIL("large_state block %d thread %d: got %d, want %d", b, t, out[b * kLargeThreads + t], want);
    }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("block_barriers: %d blocks of %d threads, all results match\n", kBlocks, kThreads);
  return 0;
}
