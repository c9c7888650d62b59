// Matrix products of .f16 inputs that the tensor-core model of mma_numerics does not cover, as an
// H100 (driver 580.159.04) computes them: mma.sync m8n8k4, the Volta shape, whose four quad
// pairs of lanes each multiply matrices of their own (in each layout of A and B, into .f32 and
// .f16, and into .f32 from an .f16 C), and wmma.mma whose D is .f16 and C .f32 or the other way
// round (m16n16k16, m32n8k16, m8n32k16). Each form takes 2048 warps' worth of random inputs, made
// on the device from a hash of their place so that any implementation sees the same, with
// exponents spread over 2, 8 or 20 binades (cancellations), a zero or a subnormal now and then,
// and in one record of seven values large enough to overflow an .f16 D. Each form's results, 8
// words per lane (a lane's D registers for mma.sync, its 8 elements of D in row-major order for
// wmma, stored and read back), are compared as an FNV-1a hash with the H100's.
// On an NVIDIA GPU the program records: a first argument names a file for the results.
//   half_accumulators [RESULTS]
#include "check.h"

#include <mma.h>


__host__ __device__ uint32_t random_word(uint32_t form, uint32_t record, uint32_t index) {
  return mix_bits(mix_bits(mix_bits(form * 0x9e3779b9u + 17) ^ record) ^ index * 0x85ebca6bu);
}
__device__ uint32_t spread_of(uint32_t record, uint32_t widest) { return record % 3 == 0 ? 2 : record % 3 == 1 ? 8 : widest; }
__device__ uint16_t random_half(uint32_t form, uint32_t record, uint32_t index) {
  uint32_t word = random_word(form, record, index), spread = spread_of(record, 20);
  uint32_t kind = (word >> 24) & 63, sign = (word >> 31) << 15, fraction = word & 0x3FF;
  if (kind == 0) return static_cast<uint16_t>(sign);
  if (kind == 1) return static_cast<uint16_t>(sign | fraction);
  int exponent = 15 - static_cast<int>(spread) / 2 + static_cast<int>((word >> 10) % (spread + 1));
  if (record % 7 == 6) exponent += 10;
  exponent = exponent < 1 ? 1 : exponent > 30 ? 30 : exponent;
  return static_cast<uint16_t>(sign | (exponent << 10) | fraction);
}
__device__ uint32_t random_single(uint32_t form, uint32_t record, uint32_t index) {
  uint32_t word = random_word(form + 1000, record, index), spread = spread_of(record, 24);
  uint32_t kind = (word >> 24) & 63, sign = (word >> 31) << 31;
  if (kind == 0) return sign;
  int exponent = 127 - static_cast<int>(spread) / 2 + static_cast<int>((word >> 8) % (spread + 1));
  if (record % 7 == 6) exponent += 10;
  return sign | (static_cast<uint32_t>(exponent) << 23) | (mix_bits(word) & 0x7FFFFF);
}
__device__ uint32_t random_halves(uint32_t form, uint32_t record, uint32_t index) {
  return random_half(form, record, 2 * index) | static_cast<uint32_t>(random_half(form, record, 2 * index + 1)) << 16;
}

constexpr int kRecords = 2048, kWords = 8;
constexpr int kRegisterForms = 3, kWmmaForms = 6, kLayoutForms = 3;
constexpr int kForms = kRegisterForms + kWmmaForms + kLayoutForms;
const char* const kFormNames[kForms] = {
    "mma m8n8k4.row.col .f32 from .f16 C", "mma m8n8k4.row.col .f32", "mma m8n8k4.row.col .f16",
    "wmma m16n16k16 .f32 from .f16 C", "wmma m16n16k16 .f16 from .f32 C", "wmma m32n8k16 .f32 from .f16 C",
    "wmma m32n8k16 .f16 from .f32 C", "wmma m8n32k16 .f32 from .f16 C", "wmma m8n32k16 .f16 from .f32 C",
    "mma m8n8k4.row.row .f32", "mma m8n8k4.col.col .f32", "mma m8n8k4.col.row .f16"};
constexpr uint32_t kRecordedHashes[kForms] = {0x88665046, 0xda707ee4, 0xce61153f, 0x2e5cc977, 0xdf8b1e76, 0x23014271,
                                              0x88d1db89, 0xc4f962d2, 0xd4635b26, 0x9ecc8323, 0x4a51ca17, 0xa56e0787};

#define M8N8K4_F32(layouts)                                                                                              \
  asm volatile("mma.sync.aligned.m8n8k4." layouts ".f32.f16.f16.f32"                                                    \
               " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};"                    \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])        \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]),     \
                 "r"(c[5]), "r"(c[6]), "r"(c[7]))
#define M8N8K4_F32_FROM_F16(layouts)                                                                                     \
  asm volatile("mma.sync.aligned.m8n8k4." layouts ".f32.f16.f16.f16"                                                    \
               " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};"                                    \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7])        \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
#define M8N8K4_F16(layouts)                                                                                              \
  asm volatile("mma.sync.aligned.m8n8k4." layouts ".f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};" \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                                         \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))

// One warp per record; blockIdx.y picks the form. A lane's registers come straight from the hash.
__global__ void registers(uint32_t* out, uint32_t first_form) {
  const uint32_t form = first_form + blockIdx.y, record = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool single_c = form == 1 || form == 9 || form == 10;
  uint32_t a[2], b[2], c[8], d[8] = {};
  for (int i = 0; i < 2; ++i) a[i] = random_halves(form, record, lane * 16 + i);
  for (int i = 0; i < 2; ++i) b[i] = random_halves(form, record, lane * 16 + 4 + i);
  for (int i = 0; i < 8; ++i) c[i] = single_c ? random_single(form, record, lane * 16 + 8 + i) : random_halves(form, record, lane * 16 + 8 + i);
  // .f32 D takes an .f16 C only in m8n8k4; the other mma.sync shapes take D and C alike.
  switch (form) {
    case 0: M8N8K4_F32_FROM_F16("row.col"); break;
    case 1: M8N8K4_F32("row.col"); break;
    case 2: M8N8K4_F16("row.col"); break;
    case 9: M8N8K4_F32("row.row"); break;
    case 10: M8N8K4_F32("col.col"); break;
    case 11: M8N8K4_F16("col.row"); break;
  }
  for (int i = 0; i < kWords; ++i) out[((form * kRecords + record) * 32 + lane) * kWords + i] = d[i];
}

template <int M, int N, int K, typename C, typename D>
__device__ void wmma_form(uint32_t form, uint32_t record, uint32_t* out, __half* a, __half* b, void* c, void* d) {
  using namespace nvcuda;
  const uint32_t lane = threadIdx.x % 32;
  for (int i = lane; i < M * K; i += 32) {
    uint16_t bits = random_half(form, record, i);
    memcpy(&a[i], &bits, 2);
  }
  for (int i = lane; i < K * N; i += 32) {
    uint16_t bits = random_half(form, record, 4096 + i);
    memcpy(&b[i], &bits, 2);
  }
  for (int i = lane; i < M * N; i += 32) {
    if (sizeof(C) == 4) {
      uint32_t bits = random_single(form, record, 8192 + i);
      memcpy(static_cast<char*>(c) + 4 * i, &bits, 4);
    } else {
      uint16_t bits = random_half(form, record, 8192 + i);
      memcpy(static_cast<char*>(c) + 2 * i, &bits, 2);
    }
  }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, M, N, K, __half, wmma::row_major> a_fragment;
  wmma::fragment<wmma::matrix_b, M, N, K, __half, wmma::col_major> b_fragment;
  wmma::fragment<wmma::accumulator, M, N, K, C> c_fragment;
  wmma::fragment<wmma::accumulator, M, N, K, D> d_fragment;
  wmma::load_matrix_sync(a_fragment, a, K);
  wmma::load_matrix_sync(b_fragment, b, K);
  wmma::load_matrix_sync(c_fragment, static_cast<const C*>(c), N, wmma::mem_row_major);
  wmma::mma_sync(d_fragment, a_fragment, b_fragment, c_fragment);
  wmma::store_matrix_sync(static_cast<D*>(d), d_fragment, N, wmma::mem_row_major);
  __syncwarp();
  for (int i = 0; i < kWords; ++i) {
    uint32_t word = 0;
    const int element = lane * kWords + i;
    if (sizeof(D) == 4) {
      memcpy(&word, static_cast<char*>(d) + 4 * element, 4);
    } else {
      uint16_t bits;
      memcpy(&bits, static_cast<char*>(d) + 2 * element, 2);
      word = bits;
    }
    out[((form * kRecords + record) * 32 + lane) * kWords + i] = word;
  }
}

__global__ void memory(uint32_t* out) {
  __shared__ __align__(32) __half a[4][512];
  __shared__ __align__(32) __half b[4][512];
  __shared__ __align__(32) float c[4][256];
  __shared__ __align__(32) float d[4][256];
  const uint32_t warp = threadIdx.x / 32, form = kRegisterForms + blockIdx.y, record = blockIdx.x * (blockDim.x / 32) + warp;
  switch (blockIdx.y) {
    case 0: wmma_form<16, 16, 16, __half, float>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 1: wmma_form<16, 16, 16, float, __half>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 2: wmma_form<32, 8, 16, __half, float>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 3: wmma_form<32, 8, 16, float, __half>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 4: wmma_form<8, 32, 16, __half, float>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 5: wmma_form<8, 32, 16, float, __half>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
  }
}

int main(int argc, char** argv) {
  const size_t per_form = static_cast<size_t>(kRecords) * 32 * kWords, words = kForms * per_form;
  uint32_t* results = nullptr;
  CHECK(cudaMalloc(&results, words * 4));
  CHECK(cudaMemset(results, 0, words * 4));
  registers<<<dim3(kRecords / 4, kRegisterForms), 128>>>(results, 0);
  CHECK_LAUNCH();
  memory<<<dim3(kRecords / 4, kWmmaForms), 128>>>(results);
  CHECK_LAUNCH();
  registers<<<dim3(kRecords / 4, kLayoutForms), 128>>>(results, kRegisterForms + kWmmaForms);
  CHECK_LAUNCH();
  compare_form_hashes(results, per_form, kForms, kFormNames, kRecordedHashes, "H100's", argc > 1 ? argv[1] : nullptr);
  CHECK(cudaFree(results));
  return failures == 0 ? 0 : 1;
}
