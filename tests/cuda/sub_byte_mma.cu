// mma.sync and wmma.mma with sub-byte integer (.s4, .u4) and single-bit (.b1) inputs, exact as
// the PTX ISA defines them: every mma.sync shape (m8n8k32, m16n8k32 and m16n8k64 for
// .s4/.u4, signed and unsigned mixed, with and without .satfinite; m8n8k128, m16n8k128 and
// m16n8k256 for .b1, with .xor.popc and .and.popc) and wmma's m8n8k32 and m8n8k128. Each form
// takes 1024 warps' worth of inputs, made on the device from a hash of their place so that any
// implementation sees the same: random registers and matrices, and in one record of four a C
// near the .s32 limits, which .satfinite clamps and the others wrap. Each form's results, 4
// words per lane (a lane's D registers for mma.sync; its two elements of D, stored and read back
// row-major, for wmma), are compared as an FNV-1a hash with the ISA's: sub_byte_mma_reference.py
// makes the inputs again and computes every result from the ISA's fragment layouts and sums, and
// an H100 (driver 580.159.04) gave the same eleven hashes. On an NVIDIA GPU the program records: a first argument names a file for the results.
//   sub_byte_mma [RESULTS]
#include "check.h"

#include <mma.h>


__device__ uint32_t random_word(uint32_t form, uint32_t record, uint32_t index) {
  return mix_bits(mix_bits(mix_bits(form * 0x9e3779b9u + 23) ^ record) ^ index * 0x85ebca6bu);
}
// C: random, but near INT32_MAX or INT32_MIN in one record of four.
__device__ uint32_t random_accumulator(uint32_t form, uint32_t record, uint32_t index) {
  uint32_t word = random_word(form + 1000, record, index);
  if (record % 4 != 3) return word;
  return (word & 1) ? 0x7FFFFFFFu - (word >> 20) : 0x80000000u + (word >> 20);
}

constexpr int kRecords = 1024, kWords = 4;
constexpr int kRegisterForms = 7, kWmmaForms = 4, kForms = kRegisterForms + kWmmaForms;
const char* const kFormNames[kForms] = {
    "mma m8n8k32 .s4.s4",           "mma m8n8k32 .satfinite .u4.s4", "mma m16n8k32 .u4.u4",
    "mma m16n8k64 .satfinite .s4.u4", "mma m8n8k128 .b1 .xor.popc",  "mma m16n8k128 .b1 .and.popc",
    "mma m16n8k256 .b1 .xor.popc",  "wmma m8n8k32 .s4",              "wmma m8n8k32 .satfinite .u4",
    "wmma m8n8k128 .b1 .xor.popc",  "wmma m8n8k128 .b1 .and.popc"};
constexpr uint32_t kExpectedHashes[kForms] = {0x34cd9f1a, 0x1e0d9a96, 0x4acd48f4, 0xf95f71e8, 0x9e0b6d14, 0x8ac2bc77,
                                              0x543a9a82, 0x6efe3a06, 0x509c999d, 0xe5f10c7c, 0x7d35ac88};

#define M8N8(form) \
  asm volatile(form " {%0, %1}, {%2}, {%3}, {%4, %5};" : "=r"(d[0]), "=r"(d[1]) : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]))
#define M16N8_TWO_A(form)                                                                                     \
  asm volatile(form " {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"                                   \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                               \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))
#define M16N8_FOUR_A(form)                                                                                    \
  asm volatile(form " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"                    \
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                               \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), \
                 "r"(c[3]))

// One warp per record; blockIdx.y is the form. A lane's registers come straight from the hash.
__global__ void registers(uint32_t* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t form = blockIdx.y, record = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  uint32_t a[4], b[2], c[4], d[4] = {};
  for (int i = 0; i < 4; ++i) a[i] = random_word(form, record, lane * 16 + i);
  for (int i = 0; i < 2; ++i) b[i] = random_word(form, record, lane * 16 + 4 + i);
  for (int i = 0; i < 4; ++i) c[i] = random_accumulator(form, record, lane * 16 + 8 + i);
  switch (form) {
    case 0: M8N8("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32"); break;
    case 1: M8N8("mma.sync.aligned.m8n8k32.row.col.satfinite.s32.u4.s4.s32"); break;
    case 2: M16N8_TWO_A("mma.sync.aligned.m16n8k32.row.col.s32.u4.u4.s32"); break;
    case 3: M16N8_FOUR_A("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32"); break;
    case 4: M8N8("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc"); break;
    case 5: M16N8_TWO_A("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc"); break;
    case 6: M16N8_FOUR_A("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc"); break;
  }
  for (int i = 0; i < kWords; ++i) out[((form * kRecords + record) * 32 + lane) * kWords + i] = d[i];
#endif
}

// wmma's 8 × 8 D from an 8 × K A (row-major) and a K × 8 B (column-major), both 128 bytes.
template <int K, typename Precision, bool kSaturate, bool kExclusive>
__device__ void wmma_form(uint32_t form, uint32_t record, uint32_t* out, uint32_t* a, uint32_t* b, int* c, int* d) {
  using namespace nvcuda;
  const uint32_t lane = threadIdx.x % 32;
  a[lane] = random_word(form, record, lane);
  b[lane] = random_word(form, record, 32 + lane);
  c[lane] = static_cast<int>(random_accumulator(form, record, lane));
  c[lane + 32] = static_cast<int>(random_accumulator(form, record, 32 + lane));
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 8, 8, K, Precision, wmma::row_major> a_fragment;
  wmma::fragment<wmma::matrix_b, 8, 8, K, Precision, wmma::col_major> b_fragment;
  wmma::fragment<wmma::accumulator, 8, 8, K, int> c_fragment;
  wmma::load_matrix_sync(a_fragment, a, K);
  wmma::load_matrix_sync(b_fragment, b, K);
  wmma::load_matrix_sync(c_fragment, c, 8, wmma::mem_row_major);
  if constexpr (K == 128) {
    using namespace wmma::experimental;
    bmma_sync(c_fragment, a_fragment, b_fragment, c_fragment, kExclusive ? bmmaBitOpXOR : bmmaBitOpAND);
  } else {
    wmma::mma_sync(c_fragment, a_fragment, b_fragment, c_fragment, kSaturate);
  }
  wmma::store_matrix_sync(d, c_fragment, 8, wmma::mem_row_major);
  __syncwarp();
  for (int i = 0; i < kWords; ++i) out[((form * kRecords + record) * 32 + lane) * kWords + i] = i < 2 ? d[2 * lane + i] : 0;
}

__global__ void memory(uint32_t* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __shared__ __align__(128) uint32_t a[4][32];
  __shared__ __align__(128) uint32_t b[4][32];
  __shared__ __align__(128) int c[4][64];
  __shared__ __align__(128) int d[4][64];
  using namespace nvcuda::wmma::experimental;
  const uint32_t warp = threadIdx.x / 32, form = kRegisterForms + blockIdx.y, record = blockIdx.x * (blockDim.x / 32) + warp;
  switch (blockIdx.y) {
    case 0: wmma_form<32, precision::s4, false, false>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 1: wmma_form<32, precision::u4, true, false>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 2: wmma_form<128, precision::b1, false, true>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
    case 3: wmma_form<128, precision::b1, false, false>(form, record, out, a[warp], b[warp], c[warp], d[warp]); break;
  }
#endif
}

__global__ void architecture_has_forms(int* answer) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  *answer = 1;
#else
  *answer = 0;
#endif
}

int main(int argc, char** argv) {
  // Built without -arch=sm_80 or later (nvcc's default), the kernels hold none of the forms.
  int* built_with_forms = nullptr;
  CHECK(cudaMallocManaged(&built_with_forms, sizeof(int)));
  architecture_has_forms<<<1, 1>>>(built_with_forms);
  CHECK_LAUNCH();
  if (!*built_with_forms) {
    std::printf("sub_byte_mma: skipped, the m16n8 shapes need code built for compute_80 or later\n");
    return 0;
  }
  const size_t per_form = static_cast<size_t>(kRecords) * 32 * kWords, words = kForms * per_form;
  uint32_t* results = nullptr;
  CHECK(cudaMalloc(&results, words * 4));
  CHECK(cudaMemset(results, 0, words * 4));
  registers<<<dim3(kRecords / 4, kRegisterForms), 128>>>(results);
  CHECK_LAUNCH();
  memory<<<dim3(kRecords / 4, kWmmaForms), 128>>>(results);
  CHECK_LAUNCH();
  compare_form_hashes(results, per_form, kForms, kFormNames, kExpectedHashes, "ISA's", argc > 1 ? argv[1] : nullptr);
  CHECK(cudaFree(results));
  return failures == 0 ? 0 : 1;
}
