// wgmma.mma_async (sm_90a) through inline PTX: two warpgroups of one block each multiply a 64 × K
// A by a K × N B from shared memory and accumulate into D. Layout cases use small integers, whose
// products and sums are exact in every format, so D follows from the PTX ISA alone: its
// canonical shared-memory layouts (CuTe notation, T = 16 bytes of elements, LBO and SBO in bytes)
//   K-major,  no swizzle   ((8,m),(T,2k)):((1T,SBO),(1,LBO))
//   K-major,  S·16-byte    ((8,m),(T,2k)):((S·T,SBO),(1,T))
//   MN-major, no swizzle   ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
//   MN-major, S·16-byte    ((T,S,m),(8,k)):((1,T,LBO),(S·T,SBO))
// with Swizzle<log2 S,4,3> on the byte address (bits 4… exclusive-ored with bits 7…, the buffers
// 1024-byte aligned), the matrix descriptor's fields, the register fragments of A and D (warp w
// of a warpgroup holding rows 16w…16w+15), scale-d, imm-scale-a and the transposes. Numerics
// cases (inexact sums) compare with D as an H200 computed it, recorded below as a hash of the
// first warpgroup's registers and a few samples. Built also for sm_90a, the only variant whose
// PTX has wgmma; the others report that they skipped.
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <vector>

enum Variant {
  f16_f32_n64, f16_f32_n256, f16_f32_n8_registers, f16_f32_n256_registers, f16_f16_n64, bf16_f32_n64,
  tf32_f32_n64, tf32_f32_n64_registers, e4m3_f32_n64, e4m3_f16_n64, s8_s32_n64, s8_s32_n64_satfinite,
  e5m2_f32_n64, e5m2_f16_n64,
};

constexpr int kThreads = 256, kWords = 128;  // D words kept per thread (the most any form uses)
constexpr unsigned kBOffset = 8192, kSharedBytes = 40960;

// "%0, %1, …" for the first D operands.
#define TEN(p) p "0, " p "1, " p "2, " p "3, " p "4, " p "5, " p "6, " p "7, " p "8, " p "9"
#define LIST4 "%0, %1, %2, %3"
#define LIST16 TEN("%") ", %10, %11, %12, %13, %14, %15"
#define LIST32 TEN("%") ", " TEN("%1") ", " TEN("%2") ", %30, %31"
#define LIST128                                                                                                 \
  TEN("%") ", " TEN("%1") ", " TEN("%2") ", " TEN("%3") ", " TEN("%4") ", " TEN("%5") ", " TEN("%6") ", " TEN("%7") \
  ", " TEN("%8") ", " TEN("%9") ", " TEN("%10") ", " TEN("%11") ", %120, %121, %122, %123, %124, %125, %126, %127"
#define D4(c, i) c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3])
#define D16(c, i) D4(c, i), D4(c, i + 4), D4(c, i + 8), D4(c, i + 12)
#define D64(c, i) D16(c, i), D16(c, i + 16), D16(c, i + 32), D16(c, i + 48)
#define D128(c) D64(c, 0), D64(c, 64)
// Operands after D: %128 a-desc, %129 b-desc, %130 scale-d, %131…%134 A's registers, %135
// imm-scale-a, %136 imm-scale-b, %137 imm-trans-a, %138 imm-trans-b.
#define INPUTS                                                                                                \
  "l"(a_desc), "l"(b_desc), "r"(scale_d), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "n"(ScaleA), "n"(1), \
      "n"(TransA), "n"(TransB)
#define DESCRIPTORS_TRANSPOSED "%128, %129, p, %135, %136, %137, %138"
#define DESCRIPTORS_SCALED "%128, %129, p, %135, %136"
#define REGISTERS_TRANSPOSED "{%131, %132, %133, %134}, %129, p, %135, %136, %138"
#define REGISTERS_SCALED "{%131, %132, %133, %134}, %129, p, %135, %136"
#define WGMMA(form, list, operands, constraint)                                                   \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\twgmma.fence.sync.aligned;\n\t" \
               "wgmma.mma_async.sync.aligned." form " {" list "}, " operands ";\n\t"             \
               "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\t}"      \
               : D128(constraint) : INPUTS : "memory")

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <int V, int ScaleA, int TransA, int TransB>
__device__ void multiply(uint32_t* words, uint64_t a_desc, uint64_t b_desc, uint32_t scale_d, const uint32_t* a) {
  constexpr bool single = V == f16_f32_n64 || V == f16_f32_n256 || V == f16_f32_n8_registers || V == f16_f32_n256_registers ||
                          V == bf16_f32_n64 || V == tf32_f32_n64 || V == tf32_f32_n64_registers || V == e4m3_f32_n64 ||
                          V == e5m2_f32_n64;
  if constexpr (single) {
    float d[kWords];
    for (int i = 0; i < kWords; ++i) d[i] = __uint_as_float(words[i]);
    if constexpr (V == f16_f32_n64) WGMMA("m64n64k16.f32.f16.f16", LIST32, DESCRIPTORS_TRANSPOSED, "+f");
    if constexpr (V == f16_f32_n256) WGMMA("m64n256k16.f32.f16.f16", LIST128, DESCRIPTORS_TRANSPOSED, "+f");
    if constexpr (V == f16_f32_n8_registers) WGMMA("m64n8k16.f32.f16.f16", LIST4, REGISTERS_TRANSPOSED, "+f");
    if constexpr (V == f16_f32_n256_registers) WGMMA("m64n256k16.f32.f16.f16", LIST128, REGISTERS_TRANSPOSED, "+f");
    if constexpr (V == bf16_f32_n64) WGMMA("m64n64k16.f32.bf16.bf16", LIST32, DESCRIPTORS_TRANSPOSED, "+f");
    if constexpr (V == tf32_f32_n64) WGMMA("m64n64k8.f32.tf32.tf32", LIST32, DESCRIPTORS_SCALED, "+f");
    if constexpr (V == tf32_f32_n64_registers) WGMMA("m64n64k8.f32.tf32.tf32", LIST32, REGISTERS_SCALED, "+f");
    if constexpr (V == e4m3_f32_n64) WGMMA("m64n64k32.f32.e4m3.e4m3", LIST32, DESCRIPTORS_SCALED, "+f");
    if constexpr (V == e5m2_f32_n64) WGMMA("m64n64k32.f32.e5m2.e5m2", LIST32, DESCRIPTORS_SCALED, "+f");
    for (int i = 0; i < kWords; ++i) words[i] = __float_as_uint(d[i]);
  } else {
    uint32_t* d = words;
    if constexpr (V == f16_f16_n64) WGMMA("m64n64k16.f16.f16.f16", LIST16, DESCRIPTORS_TRANSPOSED, "+r");
    if constexpr (V == e4m3_f16_n64) WGMMA("m64n64k32.f16.e4m3.e4m3", LIST16, DESCRIPTORS_SCALED, "+r");
    if constexpr (V == e5m2_f16_n64) WGMMA("m64n64k32.f16.e5m2.e5m2", LIST16, DESCRIPTORS_SCALED, "+r");
    if constexpr (V == s8_s32_n64) WGMMA("m64n64k32.s32.s8.s8", LIST32, "%128, %129, p", "+r");
    if constexpr (V == s8_s32_n64_satfinite) WGMMA("m64n64k32.satfinite.s32.s8.s8", LIST32, "%128, %129, p", "+r");
  }
}
#endif

struct Launch {
  const uint4 *a_image, *b_image;
  unsigned a_bytes, b_bytes;
  uint64_t a_fields, b_fields;  // the descriptors but for their start addresses
  unsigned scale_d;
  const uint32_t *a_registers, *c_words;
  uint32_t* d_words;
  unsigned* sm90a;
};

template <int V, int ScaleA, int TransA, int TransB>
__global__ void warpgroup_kernel(Launch launch) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(1024) uint4 shared[kSharedBytes / 16];
  for (unsigned i = threadIdx.x; i < launch.a_bytes / 16; i += blockDim.x) shared[i] = launch.a_image[i];
  for (unsigned i = threadIdx.x; i < launch.b_bytes / 16; i += blockDim.x) shared[kBOffset / 16 + i] = launch.b_image[i];
  // wgmma reads shared memory through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const uint64_t a_desc = launch.a_fields | ((base & 0x3FFFF) >> 4);
  const uint64_t b_desc = launch.b_fields | (((base + kBOffset) & 0x3FFFF) >> 4);
  uint32_t words[kWords];
  for (int i = 0; i < kWords; ++i) words[i] = launch.c_words[threadIdx.x * kWords + i];
  multiply<V, ScaleA, TransA, TransB>(words, a_desc, b_desc, launch.scale_d, launch.a_registers + threadIdx.x * 4);
  for (int i = 0; i < kWords; ++i) launch.d_words[threadIdx.x * kWords + i] = words[i];
  if (threadIdx.x == 0) *launch.sm90a = 1;
#else
  (void)launch;
#endif
}

enum class Kind { f16, bf16, tf32, e4m3, e5m2, s8, f32, s32 };

struct Form {
  Variant variant;
  int n, k;
  Kind input, accumulator;
  bool a_in_registers;
};

constexpr Form forms[] = {
    {f16_f32_n64, 64, 16, Kind::f16, Kind::f32, false},
    {f16_f32_n256, 256, 16, Kind::f16, Kind::f32, false},
    {f16_f32_n8_registers, 8, 16, Kind::f16, Kind::f32, true},
    {f16_f32_n256_registers, 256, 16, Kind::f16, Kind::f32, true},
    {f16_f16_n64, 64, 16, Kind::f16, Kind::f16, false},
    {bf16_f32_n64, 64, 16, Kind::bf16, Kind::f32, false},
    {tf32_f32_n64, 64, 8, Kind::tf32, Kind::f32, false},
    {tf32_f32_n64_registers, 64, 8, Kind::tf32, Kind::f32, true},
    {e4m3_f32_n64, 64, 32, Kind::e4m3, Kind::f32, false},
    {e4m3_f16_n64, 64, 32, Kind::e4m3, Kind::f16, false},
    {s8_s32_n64, 64, 32, Kind::s8, Kind::s32, false},
    {s8_s32_n64_satfinite, 64, 32, Kind::s8, Kind::s32, false},
    {e5m2_f32_n64, 64, 32, Kind::e5m2, Kind::f32, false},
    {e5m2_f16_n64, 64, 32, Kind::e5m2, Kind::f16, false},
};

int element_bytes(Kind kind) {
  switch (kind) {
    case Kind::f16: case Kind::bf16: return 2;
    case Kind::e4m3: case Kind::e5m2: case Kind::s8: return 1;
    default: return 4;
  }
}

// An exact small integer in `kind`'s encoding.
uint32_t encode(Kind kind, int value) {
  switch (kind) {
    case Kind::f16: { __half h = __float2half(static_cast<float>(value)); uint16_t bits; std::memcpy(&bits, &h, 2); return bits; }
    case Kind::bf16: { __nv_bfloat16 h = __float2bfloat16(static_cast<float>(value)); uint16_t bits; std::memcpy(&bits, &h, 2); return bits; }
    case Kind::e4m3: return __nv_fp8_e4m3(static_cast<float>(value)).__x;
    case Kind::e5m2: return __nv_fp8_e5m2(static_cast<float>(value)).__x;
    case Kind::tf32: case Kind::f32: { float f = static_cast<float>(value); uint32_t bits; std::memcpy(&bits, &f, 4); return bits; }
    default: return static_cast<uint32_t>(value) & (element_bytes(kind) == 1 ? 0xFFu : 0xFFFFFFFFu);
  }
}

// Swizzle modes as the descriptor encodes them, by the swizzle's bytes (0: none).
uint64_t swizzle_mode(int bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : 0; }

// One operand in shared memory: `mn` rows of A (columns of B) by k, in a canonical layout.
struct SharedOperand {
  bool mn_major;
  int swizzle;  // bytes, 0 for none
  unsigned leading, stride;  // LBO and SBO in bytes
  unsigned bytes;

  // The byte offset of element (mn, k), from the canonical layouts above.
  unsigned offset(int mn, int k, int element) const {
    const int t = 16 / element, s = swizzle / 16;
    unsigned elements = 0, extra = 0;
    if (!mn_major) {
      const int i0 = mn % 8, i1 = mn / 8;
      if (swizzle == 0) {
        elements = i0 * t + k % t;
        extra = i1 * stride + (k / t) * leading;
      } else {
        elements = i0 * s * t + k;
        extra = i1 * stride;
      }
    } else {
      const int j0 = k % 8, j1 = k / 8;
      if (swizzle == 0) {
        elements = mn % t + j0 * t;
        extra = (mn / t) * stride + j1 * leading;
      } else {
        elements = mn % (s * t) + j0 * s * t;
        extra = (mn / (s * t)) * leading + j1 * stride;
      }
    }
    const unsigned plain = elements * element + extra;
    return swizzle == 0 ? plain : plain ^ (((plain >> 7) & (s - 1)) << 4);
  }
  uint64_t fields() const {
    return (uint64_t{(leading & 0x3FFFF) >> 4} << 16) | (uint64_t{(stride & 0x3FFFF) >> 4} << 32) | (swizzle_mode(swizzle) << 62);
  }
};

// A compact canonical layout of `mn` × k elements.
SharedOperand canonical(bool mn_major, int swizzle, int mn, int k, int element) {
  const int row = swizzle == 0 ? 16 : swizzle;  // bytes
  const int k_bytes = k * element;
  if (!mn_major) {
    // 8 rows of `row` bytes; without swizzle the K halves lie one after the other's rows.
    if (swizzle == 0) return {false, 0, static_cast<unsigned>(mn / 8 * 128), 128, static_cast<unsigned>(mn / 8 * 128 * (k_bytes / 16))};
    return {false, swizzle, 16, static_cast<unsigned>(8 * row), static_cast<unsigned>(mn / 8 * 8 * row)};
  }
  const int groups = k / 8;  // of 8 rows of K
  const int columns = (mn * element + row - 1) / row;  // row-wide slices of M or N
  if (swizzle == 0) return {true, 0, static_cast<unsigned>(columns * 128), 128, static_cast<unsigned>(columns * 128 * groups)};
  return {true, swizzle, static_cast<unsigned>(groups * 8 * row), static_cast<unsigned>(8 * row), static_cast<unsigned>(columns * groups * 8 * row)};
}

// Where element `index` of thread `thread`'s D, or of its A in registers, lies in the matrix.
void d_position(int thread, int index, int& row, int& column) {
  const int warp = (thread / 32) % 4, lane = thread % 32;
  row = 16 * warp + lane / 4 + 8 * ((index >> 1) & 1);
  column = 8 * (index >> 2) + 2 * (lane % 4) + (index & 1);
}
void a_position(Kind kind, int thread, int index, int& row, int& k) {
  const int warp = (thread / 32) % 4, lane = thread % 32, group = lane / 4, quad = lane % 4;
  if (kind == Kind::tf32) {
    row = group + 8 * (index & 1), k = quad + 4 * (index >> 1);
  } else if (element_bytes(kind) == 2) {
    row = group + 8 * ((index >> 1) & 1), k = 2 * quad + (index & 1) + 8 * (index >> 2);
  } else {
    row = group + 8 * ((index >> 2) & 1), k = 4 * quad + (index & 3) + 16 * (index >> 3);
  }
  row += 16 * warp;
}

using Kernel = void (*)(Launch);

struct Case {
  const char* name;
  Kernel kernel;
  Form form;
  int scale_a;
  bool a_mn_major, b_mn_major;
  int a_swizzle, b_swizzle;
  unsigned scale_d;
  bool numerics;    // inexact: compared with the H200's recording
  int32_t c_base;   // added to every C (the satfinite case)
};

template <int V, int ScaleA, int TransA, int TransB>
constexpr Kernel kernel = warpgroup_kernel<V, ScaleA, TransA, TransB>;

const Form& form_of(Variant variant) {
  for (const Form& form : forms)
    if (form.variant == variant) return form;
  std::abort();
}

#define CASE(name, v, scale_a, ta, tb, a_swizzle, b_swizzle, scale_d, numerics, c_base) \
  Case { name, kernel<v, scale_a, ta, tb>, form_of(v), scale_a, ta == 1, tb == 1, a_swizzle, b_swizzle, scale_d, numerics, c_base }

// Recorded on an H200 (driver 580.159.04, CUDA 13.0): the FNV-1a hash of the first warpgroup's
// D words (thread by thread) and words 0, 1, 2, 3 of threads 0, 37, 77 and 127.
struct Recording {
  const char* name;
  uint32_t hash;
  uint32_t samples[16];
};
const Recording recordings[] = {
    {"numerics f16 x f16 + f32", 0x8ece164b, {0x4332e0b8, 0xc2f6f84f, 0xc50e0e7f, 0x433f83b7, 0x41b44b7b, 0x43890cae, 0x4292656c, 0x416fafa4,
                                              0xc4e6d8a0, 0xc50fdd1b, 0x44093828, 0x44adb7bf, 0xc4ab8f8f, 0xc3df86c4, 0x451c1650, 0x409240d8}},
    {"numerics bf16 x bf16 + f32", 0xeecddf4b, {0xc4330bc8, 0x46f589cb, 0x4416b952, 0x44c1417e, 0xc4fa720b, 0x44989a3d, 0xc43befda, 0x4611fd02,
                                                0x4649343e, 0x4521b93d, 0x445bb4a2, 0xc45bf649, 0x4572ba21, 0xc496f167, 0xc640e57c, 0x44bc4447}},
    {"numerics tf32 x tf32 + f32", 0x395113a0, {0x4465aca6, 0x45e2de10, 0x45bcfa68, 0x44b5df2e, 0x446594fc, 0x43fc4f73, 0x424e7e4c, 0x44870c77,
                                                0x43fbc17e, 0x42def519, 0x4360ea2d, 0x4330ff94, 0x450961eb, 0x4193671c, 0x43537548, 0x436d2b7f}},
    {"numerics e4m3 x e4m3 + f32", 0x9def8574, {0xc23b4000, 0x4362e800, 0x41b48000, 0x4355e400, 0x43412000, 0xc45a5800, 0x43e5e000, 0xc31fc000,
                                                0xc1988400, 0xc29ae000, 0xc4790c00, 0x444cf000, 0xc365f800, 0x4341e400, 0x403d8000, 0xc35b6400}},
    {"numerics f16 x f16 + f16", 0x6bc7be78, {0x5ff96274, 0x68c06d2c, 0xe5cadd08, 0xe619e372, 0x632de702, 0x583a60e6, 0xe253d722, 0xe5b0637a,
                                              0xd4da5b4e, 0xe1176545, 0x578ee4be, 0xd68d54f4, 0x5ff7d21c, 0x6575e012, 0xde03e01d, 0xd9c3dd4f}},
    {"numerics e4m3 x e4m3 + f16", 0x86c4bff6, {0x48694ef2, 0x59a05957, 0x55795196, 0x5d486006, 0x5721d8bf, 0xe2214ed2, 0xb804e1b7, 0x54c5549c,
                                                0x542fdecf, 0xe08bdefa, 0x6268deab, 0x59c25de0, 0xd56e5040, 0x597a5614, 0x5a2c44d4, 0x5f625395}},
    {"numerics e5m2 x e5m2 + f32", 0x3afdb1ed, {0xc23cb000, 0x405a8000, 0xc3b4a000, 0xc2072000, 0x43cf8c00, 0x43377400, 0x4145a400, 0x42d51c00,
                                                0x4371f800, 0xc245b000, 0x41d1e800, 0xc1684800, 0x4136a000, 0xc1eb2400, 0xc17d6000, 0x3eb34000}},
    {"numerics e5m2 x e5m2 + f16", 0xf1c52011, {0xca095a4b, 0x47decc84, 0x53f0cd37, 0xc2fac804, 0x5a435879, 0x55b2cdf5, 0x4e3fd5e0, 0x49775662,
                                                0xbbb16213, 0x56fb5722, 0xc90ad0c1, 0xd0fe5512, 0x5d37451d, 0x4cd4ccaa, 0xd875d74f, 0xd594d82f}},
};
constexpr int kSampleThreads[4] = {0, 37, 77, 127};

uint32_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<uint32_t>(state >> 33);
}

// A finite value of moderate magnitude with random bits, for the numerics cases.
uint32_t random_element(Kind kind, uint64_t& state) {
  const uint32_t r = next_random(state);
  switch (kind) {
    case Kind::f16: return (r & 0x83FF) | ((10 + (r >> 16) % 11) << 10);
    case Kind::bf16: return (r & 0x807F) | ((120 + (r >> 16) % 15) << 7);
    case Kind::tf32: case Kind::f32: return (r & 0x807FFFFF) | ((120 + (next_random(state) % 15)) << 23);
    // Exponent fields up to 11 keep the sums within .f16's range.
    case Kind::e4m3: return (r & 0x87) | (((r >> 8) % 12) << 3);
    case Kind::e5m2: return (r & 0x83) | (((r >> 8) % 20) << 2);
    default: return r;
  }
}


bool run(const Case& test) {
  const Form& form = test.form;
  const int element = element_bytes(form.input), m = 64, n = form.n, k = form.k;
  // Small integers, so that every sum is exact (|A·B| ≤ 32 · 64 + |C|).
  auto value_a = [&](int row, int kk) { return static_cast<int>((row * 37 + kk * 11 + (row * kk) % 7) % 17) - 8; };
  auto value_b = [&](int kk, int column) { return static_cast<int>((kk * 23 + column * 5 + (kk ^ column) % 5) % 15) - 7; };
  auto value_c = [&](int row, int column) { return static_cast<int>((row * 3 + column * 7) % 11) - 5 + test.c_base; };
  uint64_t state = 0x5eed0000u + static_cast<uint64_t>(form.variant);
  std::vector<uint32_t> a_bits(m * k), b_bits(k * n), c_bits(m * n);
  for (int row = 0; row < m; ++row)
    for (int kk = 0; kk < k; ++kk)
      a_bits[row * k + kk] = test.numerics ? random_element(form.input, state) : encode(form.input, value_a(row, kk));
  for (int kk = 0; kk < k; ++kk)
    for (int column = 0; column < n; ++column)
      b_bits[kk * n + column] = test.numerics ? random_element(form.input, state) : encode(form.input, value_b(kk, column));
  for (int row = 0; row < m; ++row)
    for (int column = 0; column < n; ++column)
      c_bits[row * n + column] = test.numerics ? random_element(form.accumulator, state) : encode(form.accumulator, value_c(row, column));

  const SharedOperand a_layout = canonical(test.a_mn_major, test.a_swizzle, m, k, element);
  const SharedOperand b_layout = canonical(test.b_mn_major, test.b_swizzle, n, k, element);
  std::vector<uint8_t> a_image(form.a_in_registers ? 16 : a_layout.bytes), b_image(b_layout.bytes);
  if (a_image.size() > kBOffset || b_image.size() > kSharedBytes - kBOffset) FAIL("%s: the operands do not fit", test.name);
  if (!form.a_in_registers)
    for (int row = 0; row < m; ++row)
      for (int kk = 0; kk < k; ++kk) std::memcpy(&a_image[a_layout.offset(row, kk, element)], &a_bits[row * k + kk], element);
  for (int kk = 0; kk < k; ++kk)
    for (int column = 0; column < n; ++column) std::memcpy(&b_image[b_layout.offset(column, kk, element)], &b_bits[kk * n + column], element);

  const int per_register = 4 / element;
  std::vector<uint32_t> a_registers(kThreads * 4, 0), c_words(kThreads * kWords, 0);
  for (int thread = 0; thread < kThreads; ++thread)
    for (int index = 0; index < 4 * per_register; ++index) {
      int row, kk;
      a_position(form.input, thread, index, row, kk);
      a_registers[thread * 4 + index / per_register] |= a_bits[row * k + kk] << (8 * element * (index % per_register));
    }
  const int accumulator_bits = form.accumulator == Kind::f16 ? 16 : 32, registers = n / 2 * accumulator_bits / 32;
  auto place_d = [&](std::vector<uint32_t>& words, auto&& element_of) {
    for (int thread = 0; thread < kThreads; ++thread)
      for (int index = 0; index < n / 2; ++index) {
        int row, column;
        d_position(thread, index, row, column);
        const int slot = index * accumulator_bits / 32, shift = accumulator_bits * (index % (32 / accumulator_bits));
        words[thread * kWords + slot] |= element_of(row, column) << shift;
      }
  };
  place_d(c_words, [&](int row, int column) { return c_bits[row * n + column]; });

  uint8_t *a_device, *b_device;
  uint32_t *a_registers_device, *c_device, *d_device;
  unsigned* sm90a_device;
  CHECK(cudaMalloc(&a_device, a_image.size()));
  CHECK(cudaMalloc(&b_device, b_image.size()));
  CHECK(cudaMalloc(&a_registers_device, a_registers.size() * 4));
  CHECK(cudaMalloc(&c_device, c_words.size() * 4));
  CHECK(cudaMalloc(&d_device, c_words.size() * 4));
  CHECK(cudaMalloc(&sm90a_device, 4));
  CHECK(cudaMemcpy(a_device, a_image.data(), a_image.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b_device, b_image.data(), b_image.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(a_registers_device, a_registers.data(), a_registers.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(c_device, c_words.data(), c_words.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_device, 0, c_words.size() * 4));
  CHECK(cudaMemset(sm90a_device, 0, 4));
  Launch launch{reinterpret_cast<const uint4*>(a_device), reinterpret_cast<const uint4*>(b_device),
                form.a_in_registers ? 0u : static_cast<unsigned>(a_image.size()), static_cast<unsigned>(b_image.size()),
                form.a_in_registers ? 0 : a_layout.fields(), b_layout.fields(), test.scale_d,
                a_registers_device, c_device, d_device, sm90a_device};
  test.kernel<<<1, kThreads>>>(launch);
  CHECK_LAUNCH();
  unsigned sm90a = 0;
  std::vector<uint32_t> d_words(c_words.size());
  CHECK(cudaMemcpy(&sm90a, sm90a_device, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(d_words.data(), d_device, d_words.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(a_device));
  CHECK(cudaFree(b_device));
  CHECK(cudaFree(a_registers_device));
  CHECK(cudaFree(c_device));
  CHECK(cudaFree(d_device));
  CHECK(cudaFree(sm90a_device));
  if (!sm90a) return false;

  // The second warpgroup computes what the first does.
  for (int thread = 0; thread < kThreads / 2; ++thread)
    for (int word = 0; word < registers; ++word)
      if (d_words[thread * kWords + word] != d_words[(thread + kThreads / 2) * kWords + word]) {
        std::fprintf(stderr, "%s: thread %d word %d: 0x%08x, but 0x%08x in the second warpgroup\n", test.name, thread, word,
                     d_words[thread * kWords + word], d_words[(thread + kThreads / 2) * kWords + word]);
        ++failures;
        return true;
      }
  if (test.numerics) {
    uint32_t hash = kFnvStart;
    for (int thread = 0; thread < kThreads / 2; ++thread)
      for (int word = 0; word < registers; ++word) hash = fnv1a(hash, d_words[thread * kWords + word]);
    uint32_t samples[16];
    for (int i = 0; i < 16; ++i) samples[i] = d_words[kSampleThreads[i / 4] * kWords + i % 4];
    const Recording* recording = nullptr;
    for (const Recording& candidate : recordings)
      if (std::strcmp(candidate.name, test.name) == 0) recording = &candidate;
    if (!recording || recording->hash != hash || std::memcmp(recording->samples, samples, sizeof samples) != 0) {
      std::fprintf(stderr, "%s: D differs from the H200's; got {\"%s\", 0x%08x, {", test.name, test.name, hash);
      for (int i = 0; i < 16; ++i) std::fprintf(stderr, "0x%08x%s", samples[i], i < 15 ? ", " : "}},\n");
      ++failures;
    }
    return true;
  }
  std::vector<uint32_t> expected(c_words.size(), 0);
  place_d(expected, [&](int row, int column) {
    int64_t sum = test.scale_d ? value_c(row, column) : 0;
    for (int kk = 0; kk < k; ++kk) sum += int64_t{test.scale_a} * value_a(row, kk) * value_b(kk, column);
    if (form.accumulator == Kind::s32 && test.form.variant == s8_s32_n64_satfinite) sum = sum > INT32_MAX ? INT32_MAX : sum;
    return encode(form.accumulator, static_cast<int>(sum));
  });
  for (int thread = 0; thread < kThreads; ++thread)
    for (int word = 0; word < registers; ++word)
      if (d_words[thread * kWords + word] != expected[thread * kWords + word]) {
        std::fprintf(stderr, "%s: thread %d word %d: 0x%08x, expected 0x%08x\n", test.name, thread, word, d_words[thread * kWords + word],
                     expected[thread * kWords + word]);
        ++failures;
        return true;
      }
  return true;
}

int main() {
  const Case cases[] = {
      // Layouts: f16, A and B from descriptors, K-major and MN-major in each swizzle mode.
      CASE("f16 K-major, no swizzle", f16_f32_n64, 1, 0, 0, 0, 0, 1, false, 0),
      CASE("f16 K-major, 32-byte swizzle", f16_f32_n64, 1, 0, 0, 32, 32, 1, false, 0),
      CASE("f16 K-major, 64-byte swizzle", f16_f32_n64, 1, 0, 0, 64, 64, 1, false, 0),
      CASE("f16 K-major, 128-byte swizzle", f16_f32_n64, 1, 0, 0, 128, 128, 1, false, 0),
      CASE("f16 MN-major, no swizzle", f16_f32_n64, 1, 1, 1, 0, 0, 1, false, 0),
      CASE("f16 MN-major, 32-byte swizzle", f16_f32_n64, 1, 1, 1, 32, 32, 1, false, 0),
      CASE("f16 MN-major, 64-byte swizzle", f16_f32_n64, 1, 1, 1, 64, 64, 1, false, 0),
      CASE("f16 MN-major, 128-byte swizzle", f16_f32_n64, 1, 1, 1, 128, 128, 1, false, 0),
      CASE("f16 K-major A, MN-major B, 64-byte swizzle", f16_f32_n64, 1, 0, 1, 64, 64, 1, false, 0),
      CASE("f16 N = 256, K-major A, MN-major B, 128-byte swizzle", f16_f32_n256, 1, 0, 1, 128, 128, 1, false, 0),
      CASE("f16 N = 256, MN-major A no swizzle, K-major B 32-byte swizzle", f16_f32_n256, 1, 1, 0, 0, 32, 1, false, 0),
      // scale-d and imm-scale-a.
      CASE("f16 scale-d 0", f16_f32_n64, 1, 0, 0, 128, 128, 0, false, 0),
      CASE("f16 imm-scale-a -1", f16_f32_n64, -1, 0, 1, 128, 64, 1, false, 0),
      // A from registers.
      CASE("f16 A in registers, N = 8", f16_f32_n8_registers, 1, 0, 0, 0, 128, 1, false, 0),
      CASE("f16 A in registers, N = 256, MN-major B", f16_f32_n256_registers, -1, 0, 1, 0, 64, 1, false, 0),
      CASE("tf32 A in registers", tf32_f32_n64_registers, 1, 0, 0, 0, 32, 1, false, 0),
      // The other input types.
      CASE("f16 x f16 + f16", f16_f16_n64, 1, 0, 0, 64, 128, 1, false, 0),
      CASE("bf16 MN-major", bf16_f32_n64, 1, 1, 1, 128, 32, 1, false, 0),
      CASE("tf32 K-major, 128-byte swizzle", tf32_f32_n64, 1, 0, 0, 128, 0, 1, false, 0),
      CASE("e4m3 K-major, 64-byte swizzle", e4m3_f32_n64, -1, 0, 0, 64, 128, 1, false, 0),
      CASE("e4m3 x e4m3 + f16", e4m3_f16_n64, 1, 0, 0, 32, 0, 0, false, 0),
      CASE("e5m2 x e5m2 + f32", e5m2_f32_n64, 1, 0, 0, 32, 64, 1, false, 0),
      CASE("s8 K-major", s8_s32_n64, 1, 0, 0, 128, 0, 1, false, 0),
      CASE("s8 .satfinite", s8_s32_n64_satfinite, 1, 0, 0, 0, 64, 1, false, INT32_MAX - 600),
      // Numerics: inexact sums, as the H200 computed them.
      CASE("numerics f16 x f16 + f32", f16_f32_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics bf16 x bf16 + f32", bf16_f32_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics tf32 x tf32 + f32", tf32_f32_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics e4m3 x e4m3 + f32", e4m3_f32_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics f16 x f16 + f16", f16_f16_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics e4m3 x e4m3 + f16", e4m3_f16_n64, 1, 0, 0, 128, 128, 1, true, 0),
      CASE("numerics e5m2 x e5m2 + f32", e5m2_f32_n64, 1, 0, 0, 64, 32, 1, true, 0),
      CASE("numerics e5m2 x e5m2 + f16", e5m2_f16_n64, 1, 0, 0, 0, 128, 1, true, 0),
  };
  int run_cases = 0;
  for (const Case& test : cases) run_cases += run(test) ? 1 : 0;
  if (run_cases == 0) {
    std::printf("warpgroup_mma: not built for sm_90a, nothing to check\n");
    return 0;
  }
  if (failures) FAIL("warpgroup_mma: %d of %d cases failed", failures, run_cases);
  std::printf("warpgroup_mma: %d wgmma cases ok\n", run_cases);
  return 0;
}
