// Atomic operations on shared memory, with every thread of a block colliding on a few words:
// add/sub, min/max (signed and unsigned), inc/dec with their wrap bounds, and/or/xor, exch and
// cas on 32 and 64 bits, float add. Each result is what the operations' definitions give
// whatever order the threads run in (the CUDA C++ programming guide's atomic functions), so the
// host computes it independently. Between the barriers, the host runs the threads in a loop
// it may vectorise: the operations must stay whole there too.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "check.h"

constexpr int threads = 256;
constexpr int blocks = 6;
constexpr int words = 4;  // threads collide on threadIdx.x % words

struct Results {
  unsigned sum[words];
  int minimum[words];
  int maximum[words];
  unsigned unsigned_minimum[words];
  unsigned unsigned_maximum[words];
  unsigned increment[words];
  unsigned decrement[words];
  unsigned bits_and[words];
  unsigned bits_or[words];
  unsigned bits_xor[words];
  unsigned long long wide_sum[words];
  unsigned long long wide_maximum[words];
  float float_sum[words];
  unsigned exchanged_count;  // how many distinct values atomicExch handed out
  unsigned cas_claims;       // atomicCAS on a zero word: exactly one thread wins
  unsigned histogram[threads];
};

__device__ int signed_value(unsigned block, unsigned thread) {
  return int((block * 7919u + thread * 104729u) % 2001u) - 1000;
}

// Every operation, each thread once per word group, then the results copied out.
__global__ void collide(Results* all, const unsigned char* input, unsigned input_per_block) {
  __shared__ unsigned sum[words], unsigned_minimum[words], unsigned_maximum[words];
  __shared__ int minimum[words], maximum[words];
  __shared__ unsigned increment[words], decrement[words], bits_and[words], bits_or[words], bits_xor[words];
  __shared__ unsigned long long wide_sum[words], wide_maximum[words];
  __shared__ float float_sum[words];
  __shared__ unsigned exchange_word, cas_word, claims, seen[threads];
  __shared__ unsigned histogram[threads];
  const unsigned t = threadIdx.x, word = t % words;
  histogram[t] = 0;
  seen[t] = 0;
  if (t < words) {
    sum[t] = 0;
    unsigned_minimum[t] = 0xffffffffu;
    unsigned_maximum[t] = 0;
    minimum[t] = 0x7fffffff;
    maximum[t] = int(0x80000000u);
    increment[t] = 0;
    decrement[t] = 0;
    bits_and[t] = 0xffffffffu;
    bits_or[t] = 0;
    bits_xor[t] = 0;
    wide_sum[t] = 0;
    wide_maximum[t] = 0;
    float_sum[t] = 0.0f;
  }
  if (t == 0) {
    exchange_word = threads;  // a value no thread offers
    cas_word = 0;
    claims = 0;
  }
  __syncthreads();
  const int value = signed_value(blockIdx.x, t);
  atomicAdd(&sum[word], unsigned(value));
  atomicSub(&sum[word], 3u);
  atomicMin(&minimum[word], value);
  atomicMax(&maximum[word], value);
  atomicMin(&unsigned_minimum[word], unsigned(value));
  atomicMax(&unsigned_maximum[word], unsigned(value));
  atomicInc(&increment[word], 9u);  // wraps to 0 after 9
  atomicDec(&decrement[word], 6u);  // 0 wraps to 6
  atomicAnd(&bits_and[word], ~(1u << (t % 32)));
  atomicOr(&bits_or[word], 1u << (t % 29));
  atomicXor(&bits_xor[word], unsigned(value) * 2654435761u);
  atomicAdd(&wide_sum[word], 0x100000001ull * unsigned(value + 1000));
  atomicMax(&wide_maximum[word], (unsigned long long)(value + 1000) << 33);
  atomicAdd(&float_sum[word], 0.25f * float(t % 8));  // exact in any order
  const unsigned previous = atomicExch(&exchange_word, t);
  if (previous < threads) atomicAdd(&seen[previous], 1u);
  if (atomicCAS(&cas_word, 0u, t + 1) == 0) atomicAdd(&claims, 1u);
  for (unsigned item = t; item < input_per_block; item += blockDim.x)
    atomicAdd(&histogram[input[blockIdx.x * input_per_block + item]], 1u);
  __syncthreads();
  Results& out = all[blockIdx.x];
  out.histogram[t] = histogram[t];
  atomicAdd(&out.exchanged_count, seen[t] == 1 ? 1u : 0u);
  if (t < words) {
    out.sum[t] = sum[t];
    out.minimum[t] = minimum[t];
    out.maximum[t] = maximum[t];
    out.unsigned_minimum[t] = unsigned_minimum[t];
    out.unsigned_maximum[t] = unsigned_maximum[t];
    out.increment[t] = increment[t];
    out.decrement[t] = decrement[t];
    out.bits_and[t] = bits_and[t];
    out.bits_or[t] = bits_or[t];
    out.bits_xor[t] = bits_xor[t];
    out.wide_sum[t] = wide_sum[t];
    out.wide_maximum[t] = wide_maximum[t];
    out.float_sum[t] = float_sum[t];
  }
  if (t == 0) out.cas_claims = claims;
}

// One colliding increment per thread and nothing else between the barriers: the loop over the
// threads there is one a vectoriser takes, and 16 bins make lanes of one vector collide.
__global__ void straight_histogram(unsigned* bins, const unsigned char* input) {
  __shared__ unsigned local[16];
  if (threadIdx.x < 16) local[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&local[input[blockIdx.x * blockDim.x + threadIdx.x] % 16], 1u);
  __syncthreads();
  if (threadIdx.x < 16) bins[blockIdx.x * 16 + threadIdx.x] = local[threadIdx.x];
}

int host_signed_value(unsigned block, unsigned thread) {
  return int((block * 7919u + thread * 104729u) % 2001u) - 1000;
}

// What the operations give for the threads of block `block`.
Results expected(unsigned block, const std::vector<unsigned char>& input, unsigned input_per_block) {
  Results want{};
  for (int word = 0; word < words; ++word) {
    want.unsigned_minimum[word] = 0xffffffffu;
    want.minimum[word] = 0x7fffffff;
    want.maximum[word] = int(0x80000000u);
    want.bits_and[word] = 0xffffffffu;
  }
  for (unsigned t = 0; t < threads; ++t) {
    const unsigned word = t % words;
    const int value = host_signed_value(block, t);
    want.sum[word] += unsigned(value) - 3u;
    want.minimum[word] = std::min(want.minimum[word], value);
    want.maximum[word] = std::max(want.maximum[word], value);
    want.unsigned_minimum[word] = std::min(want.unsigned_minimum[word], unsigned(value));
    want.unsigned_maximum[word] = std::max(want.unsigned_maximum[word], unsigned(value));
    want.increment[word] = want.increment[word] >= 9u ? 0 : want.increment[word] + 1;
    want.decrement[word] = (want.decrement[word] == 0 || want.decrement[word] > 6u) ? 6u : want.decrement[word] - 1;
    want.bits_and[word] &= ~(1u << (t % 32));
    want.bits_or[word] |= 1u << (t % 29);
    want.bits_xor[word] ^= unsigned(value) * 2654435761u;
    want.wide_sum[word] += 0x100000001ull * unsigned(value + 1000);
    want.wide_maximum[word] = std::max(want.wide_maximum[word], (unsigned long long)(value + 1000) << 33);
    want.float_sum[word] += 0.25f * float(t % 8);
  }
  want.cas_claims = 1;
  // atomicExch hands each previous value on exactly once: all but the last thread's are seen.
  want.exchanged_count = threads - 1;
  for (unsigned item = 0; item < input_per_block; ++item) ++want.histogram[input[block * input_per_block + item]];
  return want;
}

template <typename T>
void compare(unsigned block, const char* what, const T* got, const T* want, int count) {
  for (int index = 0; index < count; ++index)
    if (!(got[index] == want[index]))
      FAIL("block %u: %s[%d] is %.17g, expected %.17g", block, what, index, double(got[index]),
           double(want[index]));
}

void check_block(unsigned block, const Results& got, const Results& want) {
  compare(block, "sum", got.sum, want.sum, words);
  compare(block, "minimum", got.minimum, want.minimum, words);
  compare(block, "maximum", got.maximum, want.maximum, words);
  compare(block, "unsigned_minimum", got.unsigned_minimum, want.unsigned_minimum, words);
  compare(block, "unsigned_maximum", got.unsigned_maximum, want.unsigned_maximum, words);
  compare(block, "increment", got.increment, want.increment, words);
  compare(block, "decrement", got.decrement, want.decrement, words);
  compare(block, "bits_and", got.bits_and, want.bits_and, words);
  compare(block, "bits_or", got.bits_or, want.bits_or, words);
  compare(block, "bits_xor", got.bits_xor, want.bits_xor, words);
  compare(block, "wide_sum", got.wide_sum, want.wide_sum, words);
  compare(block, "wide_maximum", got.wide_maximum, want.wide_maximum, words);
  compare(block, "float_sum", got.float_sum, want.float_sum, words);
  compare(block, "cas_claims", &got.cas_claims, &want.cas_claims, 1);
  compare(block, "exchanged_count", &got.exchanged_count, &want.exchanged_count, 1);
  compare(block, "histogram", got.histogram, want.histogram, threads);
}

int main() {
  constexpr unsigned input_per_block = 4096;
  std::vector<unsigned char> input(blocks * input_per_block);
  for (size_t index = 0; index < input.size(); ++index)
    input[index] = static_cast<unsigned char>((index * 2654435761u) >> 13) & (index % 3 == 0 ? 0x0f : 0xff);
  unsigned char* device_input;
  Results* device_results;
  CHECK(cudaMalloc(&device_input, input.size()));
  CHECK(cudaMemcpy(device_input, input.data(), input.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&device_results, blocks * sizeof(Results)));
  std::vector<Results> got(blocks);

  CHECK(cudaMemset(device_results, 0, blocks * sizeof(Results)));
  collide<<<blocks, threads>>>(device_results, device_input, input_per_block);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), device_results, blocks * sizeof(Results), cudaMemcpyDeviceToHost));
  for (unsigned block = 0; block < blocks; ++block) check_block(block, got[block], expected(block, input, input_per_block));

  unsigned* device_bins;
  CHECK(cudaMalloc(&device_bins, blocks * 16 * sizeof(unsigned)));
  straight_histogram<<<blocks, threads>>>(device_bins, device_input);
  CHECK_LAUNCH();
  std::vector<unsigned> bins(blocks * 16), want_bins(blocks * 16, 0);
  CHECK(cudaMemcpy(bins.data(), device_bins, bins.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (unsigned index = 0; index < blocks * threads; ++index) ++want_bins[index / threads * 16 + input[index] % 16];
  expect_equal("straight_histogram bins", bins.data(), want_bins.data(), bins.size());
  CHECK(cudaFree(device_bins));

  CHECK(cudaFree(device_input));
  CHECK(cudaFree(device_results));
  std::printf("shared_atomics: %d blocks of %d threads, all results match\n", blocks, threads);
  return 0;
}
