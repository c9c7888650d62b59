// mma.sp (sparse A) on every shape and type family an H100 runs: .f16 (.f32 and .f16 D) and .bf16
// m16n8k16 and m16n8k32, .tf32 m16n8k8 and m16n8k16, .s8/.u8 m16n8k32 and m16n8k64, .s4/.u4
// m16n8k64 and m16n8k128 (with and without .satfinite), .e4m3/.e5m2 m16n8k64, under each
// sparsity selector the shapes take, and mma.sp::ordered_metadata. A warp's registers, metadata
// and C come from a hash of their place, so that any implementation sees the same: the metadata
// any bits in half the records, else a valid index pair for every chunk (two of four in order;
// for .tf32 0b0100 or 0b1110), the
// floating-point elements in one record of four any bits (NaN and infinity among them), else
// finite with exponents in a window that makes products align and cancel, .s32 C near its limits
// in one record of four. Each form's D registers, 4 words a lane, are compared as an FNV-1a hash
// with those an H100 gave (driver 580.159.04). On an NVIDIA GPU the program records: a first
// argument names a file for the results.
//   sparse_mma [RESULTS]
#include "check.h"

__device__ uint32_t random_word(uint32_t form, uint32_t record, uint32_t index) {
  return mix_bits(mix_bits(mix_bits(form * 0x9e3779b9u + 77) ^ record) ^ index * 0x85ebca6bu);
}

// How a form's A and B elements lie in a register: their width and, for floating point, the
// place and width of the exponent and where a window of exponents starts.
struct ElementFormat {
  uint32_t bits, exponent_shift, exponent_bits, window;
};
constexpr ElementFormat kF16{16, 10, 5, 8}, kBf16{16, 7, 8, 120}, kTf32{32, 23, 8, 120}, kE4m3{8, 3, 4, 3},
    kE5m2{8, 2, 5, 8}, kInteger8{8, 0, 0, 0}, kInteger4{4, 0, 0, 0};

// A register of elements: any bits in one record of four, else each floating-point element's
// exponent moved into a window 8 wide (its lowest value 0 in one record of four: subnormals).
__device__ uint32_t elements(ElementFormat format, uint32_t form, uint32_t record, uint32_t index) {
  uint32_t word = random_word(form, record, index);
  if (format.exponent_bits == 0 || record % 4 == 0) return word;
  uint32_t low = record % 4 == 1 ? 0 : format.window, mask = (1u << format.exponent_bits) - 1;
  for (uint32_t shift = 0; shift < 32; shift += format.bits) {
    uint32_t exponent = low + (word >> (shift + format.exponent_shift)) % 8;
    word = (word & ~(mask << (shift + format.exponent_shift))) | ((exponent & mask) << (shift + format.exponent_shift));
  }
  return word;
}

// Metadata: in odd records any bits, which the ISA leaves undefined but an H100 answers the
// same each time; else for each 4-bit chunk two indices in order (.tf32: its first or second
// element).
__device__ uint32_t metadata(uint32_t form, uint32_t record, uint32_t lane, bool tf32) {
  if (record % 2) return random_word(form + 700, record, lane);
  const uint32_t pairs[6] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE};
  uint32_t word = 0;
  for (uint32_t chunk = 0; chunk < 8; ++chunk) {
    uint32_t choice = random_word(form + 500, record, lane * 8 + chunk);
    word |= (tf32 ? ((choice & 1) ? 0xEu : 0x4u) : pairs[choice % 6]) << (4 * chunk);
  }
  return word;
}

constexpr int kRecords = 256, kWords = 4, kForms = 23;
struct Form {
  const char* name;
  ElementFormat a, b;
  bool integer_c;
};
const Form kFormDescriptions[kForms] = {
    {"m16n8k16 .f32.f16 selector 0", kF16, kF16, false},   {"m16n8k16 .f32.f16 selector 1", kF16, kF16, false},
    {"m16n8k16 .f32.f16 selector 2", kF16, kF16, false},   {"m16n8k16 .f32.f16 selector 3", kF16, kF16, false},
    {"m16n8k32 .f32.f16 selector 0", kF16, kF16, false},   {"m16n8k32 .f32.f16 selector 1", kF16, kF16, false},
    {"m16n8k16 .f16.f16 selector 0", kF16, kF16, false},   {"m16n8k16 .f32.bf16 selector 0", kBf16, kBf16, false},
    {"m16n8k32 .f32.bf16 selector 1", kBf16, kBf16, false}, {"m16n8k8 .f32.tf32 selector 0", kTf32, kTf32, false},
    {"m16n8k8 .f32.tf32 selector 3", kTf32, kTf32, false}, {"m16n8k16 .f32.tf32 selector 0", kTf32, kTf32, false},
    {"m16n8k16 .f32.tf32 selector 1", kTf32, kTf32, false}, {"m16n8k32 .s32.s8.s8 selector 0", kInteger8, kInteger8, true},
    {"m16n8k32 .satfinite .u8.s8 selector 1", kInteger8, kInteger8, true},
    {"m16n8k64 .s32.s8.u8 selector 0", kInteger8, kInteger8, true},
    {"m16n8k64 .s32.s4.s4 selector 0", kInteger4, kInteger4, true},
    {"m16n8k64 .satfinite .u4.s4 selector 1", kInteger4, kInteger4, true},
    {"m16n8k128 .s32.u4.u4 selector 0", kInteger4, kInteger4, true},
    {"m16n8k64 .f32.e4m3.e4m3 selector 0", kE4m3, kE4m3, false},
    {"m16n8k64 .f32.e5m2.e4m3 selector 0", kE5m2, kE4m3, false},
    {"ordered_metadata m16n8k16 .f16 sel 1", kF16, kF16, false},
    {"ordered_metadata m16n8k32 .s8 sel 1", kInteger8, kInteger8, true}};
__constant__ Form kDeviceForms[kForms];
const char* kFormNames[kForms];
constexpr uint32_t kExpectedHashes[kForms] = {
    0x956186f4u, 0x391ebfcau, 0xc6431081u, 0x77725c57u, 0x0e4f38c2u, 0x8518cfe7u,
    0x677b3c7au, 0xb65889c1u, 0x40537e03u, 0xe1855820u, 0x88f0f892u, 0x66772bc3u,
    0x5b9e3eacu, 0xc3fecd78u, 0x6e54a19cu, 0xd77b094cu, 0x79afa0e2u, 0x8b4103c5u,
    0x0ed03318u, 0x078184b3u, 0x049dbebfu, 0x90957d1au, 0x1ba2913cu};

#define SPARSE(form, selector, ...) \
  asm volatile(form " " __VA_ARGS__ : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), \
               "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(e), "n"(selector))
// Operands: %0-%3 D, %4-%7 A, %8-%11 B, %12-%15 C, %16 the metadata, %17 the selector.
#define TWO_A_FOUR_C "{%0, %1, %2, %3}, {%4, %5}, {%8, %9}, {%12, %13, %14, %15}, %16, %17;"
#define FOUR_A_FOUR_C "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%12, %13, %14, %15}, %16, %17;"
#define TWO_A_TWO_C "{%0, %1}, {%4, %5}, {%8, %9}, {%12, %13}, %16, %17;"

// One warp per record; blockIdx.y is the form.
__global__ void sparse(uint32_t* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const uint32_t form = blockIdx.y, record = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  const Form& described = kDeviceForms[form];
  uint32_t a[4], b[4], c[4], d[4] = {};
  for (int i = 0; i < 4; ++i) a[i] = elements(described.a, form, record, lane * 16 + i);
  for (int i = 0; i < 4; ++i) b[i] = elements(described.b, form, record, lane * 16 + 4 + i);
  for (int i = 0; i < 4; ++i) {
    uint32_t word = random_word(form + 1000, record, lane * 16 + 8 + i);
    if (described.integer_c && record % 4 == 3) word = (word & 1) ? 0x7FFFFFFFu - (word >> 20) : 0x80000000u + (word >> 20);
    // .f32 C finite but in one record of four, with exponents near the products'.
    if (!described.integer_c && record % 4 != 0) word = (word & 0x807FFFFFu) | ((120 + (word >> 23) % 16) << 23);
    c[i] = word;
  }
  const uint32_t e = metadata(form, record, lane, described.a.bits == 32);
  switch (form) {
    case 0: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0, TWO_A_FOUR_C); break;
    case 1: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 1, TWO_A_FOUR_C); break;
    case 2: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, TWO_A_FOUR_C); break;
    case 3: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 3, TWO_A_FOUR_C); break;
    case 4: SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 0, FOUR_A_FOUR_C); break;
    case 5: SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 1, FOUR_A_FOUR_C); break;
    case 6:
      SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 0, TWO_A_TWO_C);
      d[2] = d[3] = 0;
      break;
    case 7: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 0, TWO_A_FOUR_C); break;
    case 8: SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", 1, FOUR_A_FOUR_C); break;
    case 9: SPARSE("mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 0, TWO_A_FOUR_C); break;
    case 10: SPARSE("mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 3, TWO_A_FOUR_C); break;
    case 11: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 0, FOUR_A_FOUR_C); break;
    case 12: SPARSE("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 1, FOUR_A_FOUR_C); break;
    case 13: SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 0, TWO_A_FOUR_C); break;
    case 14: SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32", 1, TWO_A_FOUR_C); break;
    case 15: SPARSE("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.u8.s32", 0, FOUR_A_FOUR_C); break;
    case 16: SPARSE("mma.sp.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 0, TWO_A_FOUR_C); break;
    case 17: SPARSE("mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32", 1, TWO_A_FOUR_C); break;
    case 18: SPARSE("mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32", 0, FOUR_A_FOUR_C); break;
    case 19: SPARSE("mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32", 0, FOUR_A_FOUR_C); break;
    case 20: SPARSE("mma.sp.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32", 0, FOUR_A_FOUR_C); break;
    case 21: SPARSE("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 1, TWO_A_FOUR_C); break;
    case 22: SPARSE("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 1, TWO_A_FOUR_C); break;
  }
  for (int i = 0; i < kWords; ++i) out[((form * kRecords + record) * 32 + lane) * kWords + i] = d[i];
#endif
}

// ptxas takes the selectors 2 and 3 in m16n8k32 .f16, which the ISA leaves out: an H100 stops the
// launch with an illegal instruction.
__global__ void refused_selector(uint32_t* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  uint32_t a[4] = {}, b[4] = {}, c[4] = {}, d[4] = {}, e = 0x44444444u;
  SPARSE("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 2, FOUR_A_FOUR_C);
  out[threadIdx.x] = d[0];
#endif
}

__global__ void architecture_has_forms(int* answer) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  *answer = 1;
#else
  *answer = 0;
#endif
}

// Built for an architecture before sm_89 (nvcc's default among them), the kernels hold none of
// the forms: the FP8 ones need sm_89.
bool built_with_forms() {
  int* answer = nullptr;
  CHECK(cudaMallocManaged(&answer, sizeof(int)));
  architecture_has_forms<<<1, 1>>>(answer);
  CHECK_LAUNCH();
  return *answer != 0;
}

// In a child process: the failed launch leaves its context unusable.
int refused_selector_fails() {
  if (!built_with_forms()) return 0;
  uint32_t* out = nullptr;
  CHECK(cudaMalloc(&out, 32 * sizeof(uint32_t)));
  refused_selector<<<1, 32>>>(out);
  CHECK(cudaGetLastError());
  cudaError_t got = cudaDeviceSynchronize();
  if (got != cudaErrorIllegalInstruction) FAIL("selector 2 of m16n8k32 .f16 gave %s, want cudaErrorIllegalInstruction", cudaGetErrorName(got));
  return 0;
}

int main(int argc, char** argv) {
  if (!succeeds_in_child(refused_selector_fails)) FAIL("the child process of the refused selector failed");
  if (!built_with_forms()) {
    std::printf("sparse_mma: skipped, the forms need code built for compute_89 or later\n");
    return 0;
  }
  for (int form = 0; form < kForms; ++form) kFormNames[form] = kFormDescriptions[form].name;
  CHECK(cudaMemcpyToSymbol(kDeviceForms, kFormDescriptions, sizeof(kFormDescriptions)));
  const size_t per_form = static_cast<size_t>(kRecords) * 32 * kWords, words = kForms * per_form;
  uint32_t* results = nullptr;
  CHECK(cudaMalloc(&results, words * 4));
  CHECK(cudaMemset(results, 0, words * 4));
  sparse<<<dim3(kRecords / 4, kForms), 128>>>(results);
  CHECK_LAUNCH();
  compare_form_hashes(results, per_form, kForms, kFormNames, kExpectedHashes, "H100's", argc > 1 ? argv[1] : nullptr);
  CHECK(cudaFree(results));
  return failures == 0 ? 0 : 1;
}
