// Instruction semantics, one small hand-written PTX kernel at a time. Expected values come
// from the PTX ISA's definitions, computed here on the host (with the host's rounding mode set
// where PTX asks for a directed rounding; this file is built with -frounding-math).
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <ctime>
#include <limits>
#include <random>

#include "ptx_object_loader.h"

namespace xcuda::ptx::testing {
namespace {

using Slots = std::array<uint64_t, 8>;

// A one-thread kernel around `body`: %rd1 points at eight 8-byte input slots, %rd2 at eight
// output slots.
class Snippet {
 public:
  explicit Snippet(std::string_view body) : module_(wrap(body)) {}

  bool ok() const { return module_.ok(); }
  std::string diagnostics() const { return module_.diagnostics_text(); }

  Slots run(const Slots& input) {
    Slots in = input;
    return run_on(in);
  }

  // The same with `memory` as the input slots, which the kernel may write.
  Slots run_on(Slots& memory) {
    Slots out{};
    ParameterBuffer parameters(module_.kernel("snippet"));
    parameters.set(0, memory.data()).set(1, out.data());
    module_.launch("snippet", {1, 1, 1}, {1, 1, 1}, parameters);
    return out;
  }

 private:
  static std::string wrap(std::string_view body) {
    return std::string(".version 9.0\n.target sm_100a\n.address_size 64\n"
                       ".visible .entry snippet(.param .u64 in, .param .u64 out)\n{\n"
                       "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<16>;\n"
                       "\t.reg .f32 %f<16>;\n\t.reg .f64 %fd<16>;\n"
                       "\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n") +
           std::string(body) + "\n\tret;\n}\n";
  }

  LoadedModule module_;
};

// Runs `kernel` of `module` as one thread of one block, its only parameter pointing at `out`.
template <class Out>
void run_one_thread(LoadedModule& module, std::string_view kernel, Out& out, uint32_t dynamic_shared_bytes = 0) {
  ParameterBuffer parameters(module.kernel(kernel));
  parameters.set(0, out.data());
  module.launch(kernel, {1, 1, 1}, {1, 1, 1}, parameters, dynamic_shared_bytes);
}

uint64_t bits(float value) { return std::bit_cast<uint32_t>(value); }
uint64_t bits(double value) { return std::bit_cast<uint64_t>(value); }
float as_float(uint64_t slot) { return std::bit_cast<float>(static_cast<uint32_t>(slot)); }
double as_double(uint64_t slot) { return std::bit_cast<double>(slot); }
uint64_t word(int32_t value) { return static_cast<uint32_t>(value); }

// Floats that exercise rounding: random bit patterns of moderate exponent plus specials.
std::vector<float> float_samples() {
  std::vector<float> samples{0.0f, -0.0f, 1.0f, -1.0f, 3.0f, 0.1f, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f,
                             std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 1.0f / 3.0f};
  std::mt19937 random(7);
  for (int i = 0; i < 60; ++i) {
    uint32_t pattern = (random() & 0x807FFFFFu) | ((100u + random() % 56u) << 23);
    samples.push_back(std::bit_cast<float>(pattern));
  }
  return samples;
}

template <typename Operation>
auto with_host_rounding(int mode, Operation operation) {
  int saved = std::fegetround();
  std::fesetround(mode);
  auto result = operation();
  std::fesetround(saved);
  return result;
}

bool same_float(float left, float right) {
  return (std::isnan(left) && std::isnan(right)) || std::bit_cast<uint32_t>(left) == std::bit_cast<uint32_t>(right);
}

struct RoundingCase {
  const char* modifier;
  int host_mode;
};
constexpr RoundingCase directed_roundings[] = {{"rn", FE_TONEAREST}, {"rz", FE_TOWARDZERO}, {"rm", FE_DOWNWARD}, {"rp", FE_UPWARD}};

TEST(PtxInstructions, BinaryFloatArithmeticHonoursEveryRoundingMode) {
  auto samples = float_samples();
  for (const RoundingCase& rounding : directed_roundings) {
    std::string m = rounding.modifier;
    Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n"
                    "\tadd." + m + ".f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2], %f3;\n"
                    "\tmul." + m + ".f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+8], %f3;\n"
                    "\tdiv." + m + ".f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+16], %f3;\n"
                    "\tfma." + m + ".f32 %f3, %f1, %f2, %f1;\n\tst.global.f32 [%rd2+24], %f3;\n"
                    "\tsqrt." + m + ".f32 %f3, %f1;\n\tst.global.f32 [%rd2+32], %f3;\n"
                    "\tsub." + m + ".f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+40], %f3;\n");
    ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
    for (size_t i = 0; i + 1 < samples.size(); ++i) {
      volatile float x = samples[i], y = samples[samples.size() - 1 - i];
      Slots out = snippet.run({bits(x), bits(y)});
      auto expected = with_host_rounding(rounding.host_mode, [&] {
        return std::array<float, 6>{x + y, x * y, x / y, std::fma(x, y, x), std::sqrt(x), x - y};
      });
      for (size_t k = 0; k < expected.size(); ++k)
        EXPECT_TRUE(same_float(as_float(out[k]), expected[k]))
            << m << " operation " << k << " of " << x << ", " << y << ": " << as_float(out[k]) << " vs " << expected[k];
    }
  }
}

TEST(PtxInstructions, FloatToIntegerConversionsRoundAndSaturate) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n"
                  "\tcvt.rni.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2], %r1;\n"
                  "\tcvt.rzi.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+8], %r1;\n"
                  "\tcvt.rmi.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+16], %r1;\n"
                  "\tcvt.rpi.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+24], %r1;\n"
                  "\tcvt.rzi.u32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+32], %r1;\n"
                  "\tcvt.rni.s64.f32 %rd3, %f1;\n\tst.global.u64 [%rd2+40], %rd3;\n"
                  "\tcvt.rpi.ftz.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+48], %r1;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  struct Case {
    float input;
    int32_t nearest, toward_zero, down, up;
    uint32_t unsigned_toward_zero;
    int64_t wide_nearest;
    int32_t up_flushed;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Case cases[] = {
      {2.5f, 2, 2, 2, 3, 2, 2, 3},
      {-2.5f, -2, -2, -3, -2, 0, -2, -2},
      {3.5f, 4, 3, 3, 4, 3, 4, 4},
      {-0.4f, 0, 0, -1, 0, 0, 0, 0},
      {1e10f, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, UINT32_MAX, 10000000000, INT32_MAX},
      {-1e10f, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 0, -10000000000, INT32_MIN},
      {nan, 0, 0, 0, 0, 0, INT64_MIN, 0},  // NaN into 64 bits is 0x80…0 (H200)
      {1e-40f, 0, 0, 0, 1, 0, 0, 0},
  };
  for (const Case& c : cases) {
    Slots out = snippet.run({bits(c.input)});
    EXPECT_EQ(static_cast<int32_t>(out[0]), c.nearest) << c.input;
    EXPECT_EQ(static_cast<int32_t>(out[1]), c.toward_zero) << c.input;
    EXPECT_EQ(static_cast<int32_t>(out[2]), c.down) << c.input;
    EXPECT_EQ(static_cast<int32_t>(out[3]), c.up) << c.input;
    EXPECT_EQ(static_cast<uint32_t>(out[4]), c.unsigned_toward_zero) << c.input;
    EXPECT_EQ(static_cast<int64_t>(out[5]), c.wide_nearest) << c.input;
    EXPECT_EQ(static_cast<int32_t>(out[6]), c.up_flushed) << c.input;
  }
}

TEST(PtxInstructions, ConversionsToFloatRoundAsAsked) {
  for (const RoundingCase& rounding : directed_roundings) {
    std::string m = rounding.modifier;
    Snippet snippet("\tld.global.f64 %fd1, [%rd1];\n\tld.global.s64 %rd3, [%rd1+8];\n"
                    "\tcvt." + m + ".f32.f64 %f1, %fd1;\n\tst.global.f32 [%rd2], %f1;\n"
                    "\tcvt." + m + ".f32.s64 %f1, %rd3;\n\tst.global.f32 [%rd2+8], %f1;\n"
                    "\tcvt." + m + ".f64.s64 %fd2, %rd3;\n\tst.global.f64 [%rd2+16], %fd2;\n");
    ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
    std::mt19937_64 random(11);
    for (int i = 0; i < 50; ++i) {
      volatile double wide = std::ldexp(static_cast<double>(random() % 1000000007) - 5e8, static_cast<int>(random() % 40) - 20);
      volatile int64_t integer = static_cast<int64_t>(random()) >> (random() % 40);
      Slots out = snippet.run({bits(wide), static_cast<uint64_t>(integer)});
      auto expected = with_host_rounding(rounding.host_mode, [&] {
        return std::tuple<float, float, double>{static_cast<float>(wide), static_cast<float>(integer), static_cast<double>(integer)};
      });
      EXPECT_TRUE(same_float(as_float(out[0]), std::get<0>(expected))) << m << " " << wide;
      EXPECT_TRUE(same_float(as_float(out[1]), std::get<1>(expected))) << m << " " << integer;
      EXPECT_EQ(as_double(out[2]), std::get<2>(expected)) << m << " " << integer;
    }
  }
}

TEST(PtxInstructions, IntegerConversionsExtendTruncateAndSaturate) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n"
                  "\tcvt.s64.s32 %rd3, %r1;\n\tst.global.u64 [%rd2], %rd3;\n"
                  "\tcvt.u64.u32 %rd3, %r1;\n\tst.global.u64 [%rd2+8], %rd3;\n"
                  "\tcvt.u16.u32 %rs1, %r1;\n\tcvt.s32.s16 %r2, %rs1;\n\tst.global.u32 [%rd2+16], %r2;\n"
                  "\tcvt.sat.u8.s32 %r2, %r1;\n\tst.global.u32 [%rd2+24], %r2;\n"
                  "\tcvt.sat.s16.s32 %r2, %r1;\n\tst.global.u32 [%rd2+32], %r2;\n"
                  "\tcvt.rn.f16.f32 %rs2, %f1;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  for (int32_t value : {0, 1, -1, 200, 300, -300, 40000, -40000, INT32_MIN, INT32_MAX}) {
    Slots out = snippet.run({word(value)});
    EXPECT_EQ(static_cast<int64_t>(out[0]), value);
    EXPECT_EQ(out[1], static_cast<uint32_t>(value));
    EXPECT_EQ(static_cast<int32_t>(out[2]), static_cast<int16_t>(value));
    EXPECT_EQ(static_cast<int32_t>(out[3]), std::clamp(value, 0, 255));
    EXPECT_EQ(static_cast<int32_t>(out[4]), std::clamp(value, -32768, 32767));
  }
}

TEST(PtxInstructions, HalfPrecisionConversionsRoundTrip) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tcvt.rn.f16.f32 %rs1, %f1;\n\tst.global.b16 [%rd2], %rs1;\n"
                  "\tcvt.f32.f16 %f2, %rs1;\n\tst.global.f32 [%rd2+8], %f2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({bits(1.0f / 3.0f)});
  EXPECT_EQ(out[0] & 0xFFFF, 0x3555u);  // 1/3 to nearest half
  EXPECT_EQ(as_float(out[1]), 0.333251953125f);
  out = snippet.run({bits(70000.0f)});
  EXPECT_EQ(out[0] & 0xFFFF, 0x7C00u);  // overflows to infinity
}

TEST(PtxInstructions, PackingConversionsRoundEachHalfToNearestEven) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n"
                  "\tcvt.rn.f16x2.f32 %r1, %f1, %f2;\n\tst.global.u32 [%rd2], %r1;\n"
                  "\tcvt.rn.bf16x2.f32 %r1, %f1, %f2;\n\tst.global.u32 [%rd2+8], %r1;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  auto half_bits = [](float value) -> uint32_t {
    return std::isnan(value) ? 0x7FFFu : std::bit_cast<uint16_t>(static_cast<_Float16>(value));
  };
  // bf16 is the upper half of an f32: round the lower 16 bits away, ties to even.
  auto bfloat_bits = [](float value) -> uint32_t {
    if (std::isnan(value)) return 0x7FFFu;
    uint32_t pattern = std::bit_cast<uint32_t>(value);
    return (pattern + 0x7FFFu + ((pattern >> 16) & 1)) >> 16;
  };
  std::vector<float> samples = float_samples();
  samples.insert(samples.end(), {65520.0f, 65519.0f, 1.0009765625f + 0x1p-11f, 0x1p-25f, 0x1.008p0f, 0x1.018p0f});
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    float upper = samples[i], lower = samples[i + 1];
    Slots out = snippet.run({bits(upper), bits(lower)});
    EXPECT_EQ(out[0], half_bits(upper) << 16 | half_bits(lower)) << upper << " " << lower;
    EXPECT_EQ(out[1], bfloat_bits(upper) << 16 | bfloat_bits(lower)) << upper << " " << lower;
  }
}

TEST(PtxInstructions, IntegerDivisionNeverTraps) {
  Snippet snippet("\tld.global.s32 %r1, [%rd1];\n\tld.global.s32 %r2, [%rd1+8];\n"
                  "\tdiv.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\trem.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tdiv.u32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+16], %r3;\n"
                  "\trem.u32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+24], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  // Division by zero as an H200 answers it: all ones, quotient and remainder alike.
  Slots out = snippet.run({word(17), word(0)});
  EXPECT_EQ(static_cast<uint32_t>(out[0]), 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<uint32_t>(out[1]), 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<uint32_t>(out[2]), 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<uint32_t>(out[3]), 0xFFFFFFFFu);
  out = snippet.run({word(-17), word(0)});
  EXPECT_EQ(static_cast<uint32_t>(out[0]), 0xFFFFFFFFu);
  EXPECT_EQ(static_cast<uint32_t>(out[1]), 0xFFFFFFFFu);
  out = snippet.run({word(INT32_MIN), word(-1)});
  EXPECT_EQ(static_cast<int32_t>(out[0]), INT32_MIN);
  EXPECT_EQ(static_cast<int32_t>(out[1]), 0);
  out = snippet.run({word(-7), word(2)});
  EXPECT_EQ(static_cast<int32_t>(out[0]), -3);
  EXPECT_EQ(static_cast<int32_t>(out[1]), -1);
  EXPECT_EQ(static_cast<uint32_t>(out[2]), 0xFFFFFFF9u / 2);
}

TEST(PtxInstructions, MinAndMaxHandleNaNAndSignedZeros) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n"
                  "\tmin.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2], %f3;\n"
                  "\tmax.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+8], %f3;\n"
                  "\tmin.NaN.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+16], %f3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Slots out = snippet.run({bits(nan), bits(2.0f)});
  EXPECT_EQ(as_float(out[0]), 2.0f);
  EXPECT_EQ(as_float(out[1]), 2.0f);
  EXPECT_TRUE(std::isnan(as_float(out[2])));
  out = snippet.run({bits(0.0f), bits(-0.0f)});
  EXPECT_EQ(out[0], bits(-0.0f));
  EXPECT_EQ(out[1], bits(0.0f));
  out = snippet.run({bits(nan), bits(nan)});
  EXPECT_EQ(out[0], 0x7FFFFFFFu);  // the canonical NaN
}

// NaN results recorded on an NVIDIA H200 (driver 580): f32 and f16 results are the canonical
// NaN, f64 results keep x86's behaviour, and conversions to integers follow their own rule.
TEST(PtxInstructions, NaNResultsMatchAnH200) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n"
                  "\tld.global.f64 %fd1, [%rd1+16];\n\tld.global.f64 %fd2, [%rd1+24];\n"
                  "\tadd.f32 %f3, %f1, 0f40000000;\n\tst.global.f32 [%rd2], %f3;\n"
                  "\tsqrt.rn.f32 %f3, 0fC0A00000;\n\tst.global.f32 [%rd2+4], %f3;\n"
                  "\tabs.f32 %f3, %f2;\n\tst.global.f32 [%rd2+8], %f3;\n"
                  "\tneg.f32 %f3, %f1;\n\tst.global.f32 [%rd2+12], %f3;\n"
                  "\tmin.f64 %fd3, %fd1, %fd2;\n\tst.global.f64 [%rd2+16], %fd3;\n"
                  "\tsqrt.rn.f64 %fd3, 0dBFF0000000000000;\n\tst.global.f64 [%rd2+24], %fd3;\n"
                  "\tcvt.rzi.s32.f64 %r1, %fd1;\n\tst.global.u32 [%rd2+32], %r1;\n"
                  "\tcvt.rzi.s32.f32 %r1, %f1;\n\tst.global.u32 [%rd2+36], %r1;\n"
                  "\tcvt.rzi.u64.f32 %rd3, %f1;\n\tst.global.u64 [%rd2+40], %rd3;\n"
                  "\tcvt.rn.f16.f32 %rs1, %f1;\n\tst.global.b16 [%rd2+48], %rs1;\n"
                  "\tcvt.rn.f32.f64 %f3, %fd2;\n\tst.global.f32 [%rd2+52], %f3;\n"
                  "\tadd.f64 %fd3, %fd1, 0d4000000000000000;\n\tst.global.f64 [%rd2+56], %fd3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({0x7FC00001u, 0xFFA00000u, 0x7FF8000000000001ull, 0xFFF4000000000002ull});
  EXPECT_EQ(out[0], 0x7FFFFFFF'7FFFFFFFull);  // add and sqrt
  EXPECT_EQ(out[1], 0x7FFFFFFF'7FFFFFFFull);  // abs and neg too (conformance float/abs_f32, neg_f32)
  EXPECT_EQ(out[2], 0xFFFC000000000002ull);   // min.f64 of two NaNs: b, quieted
  EXPECT_EQ(out[3], 0xFFF8000000000000ull);
  EXPECT_EQ(out[4], 0x00000000'80000000ull);  // f64 → s32 gives 0x80000000, f32 → s32 gives 0
  EXPECT_EQ(out[5], 0x8000000000000000ull);
  EXPECT_EQ(out[6], 0xFFE00000'00007FFFull);
  EXPECT_EQ(out[7], 0x7FF8000000000001ull);
}

TEST(PtxInstructions, FlushToZeroAndSaturation) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n"
                  "\tadd.ftz.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2], %f3;\n"
                  "\tadd.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+8], %f3;\n"
                  "\tadd.sat.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+16], %f3;\n"
                  "\tmul.ftz.f32 %f3, %f1, 0f3F000000;\n\tst.global.f32 [%rd2+24], %f3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({bits(-1e-39f), bits(-0.0f)});
  EXPECT_EQ(out[0], bits(-0.0f));  // the input flushed to -0, and -0 + -0 is -0
  EXPECT_EQ(as_float(out[1]), -1e-39f);
  EXPECT_EQ(out[2], bits(0.0f));
  out = snippet.run({bits(0x1p-126f), bits(0.75f)});
  EXPECT_EQ(as_float(out[2]), 0.75f);
  EXPECT_EQ(out[3], bits(0.0f));  // the halved minimum normal is subnormal: flushed
  out = snippet.run({bits(0.5f), bits(0.75f)});
  EXPECT_EQ(as_float(out[2]), 1.0f);
}

TEST(PtxInstructions, ComparisonsCombineAndSelect) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n\tld.global.s32 %r1, [%rd1+16];\n"
                  "\tsetp.lt.f32 %p1|%p2, %f1, %f2;\n\tselp.u32 %r2, 1, 0, %p1;\n\tst.global.u32 [%rd2], %r2;\n"
                  "\tselp.u32 %r2, 1, 0, %p2;\n\tst.global.u32 [%rd2+8], %r2;\n"
                  "\tsetp.ltu.f32 %p3, %f1, %f2;\n\tselp.u32 %r2, 1, 0, %p3;\n\tst.global.u32 [%rd2+16], %r2;\n"
                  "\tsetp.gt.and.s32 %p4, %r1, 0, !%p1;\n\tselp.u32 %r2, 1, 0, %p4;\n\tst.global.u32 [%rd2+24], %r2;\n"
                  "\tsetp.hi.u32 %p5, %r1, 5;\n\tselp.u32 %r2, 1, 0, %p5;\n\tst.global.u32 [%rd2+32], %r2;\n"
                  "\tsetp.nan.f32 %p6, %f1, %f2;\n\t@%p6 st.global.u32 [%rd2+40], 7;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Slots out = snippet.run({bits(1.0f), bits(2.0f), word(3)});
  EXPECT_EQ(out, (Slots{1, 0, 1, 0, 0, 0, 0, 0}));
  out = snippet.run({bits(nan), bits(2.0f), word(-3)});
  EXPECT_EQ(out, (Slots{0, 1, 1, 0, 1, 7, 0, 0}));  // -3 is above 5 unsigned; the p|q pair is p and not p
  out = snippet.run({bits(3.0f), bits(2.0f), word(9)});
  EXPECT_EQ(out, (Slots{0, 1, 0, 1, 1, 0, 0, 0}));
}

TEST(PtxInstructions, BitFieldsPermutesAndFunnelShifts) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n"
                  "\tbfe.u32 %r3, %r1, 4, 8;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\tbfe.s32 %r3, %r1, 28, 8;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tbfi.b32 %r3, %r2, %r1, 8, 12;\n\tst.global.u32 [%rd2+16], %r3;\n"
                  "\tprmt.b32 %r3, %r1, %r2, 0x5140;\n\tst.global.u32 [%rd2+24], %r3;\n"
                  "\tlop3.b32 %r3, %r1, %r2, 0xFF00FF00, 0xE8;\n\tst.global.u32 [%rd2+32], %r3;\n"
                  "\tshf.l.wrap.b32 %r3, %r1, %r2, 36;\n\tst.global.u32 [%rd2+40], %r3;\n"
                  "\tshf.r.clamp.b32 %r3, %r1, %r2, 40;\n\tst.global.u32 [%rd2+48], %r3;\n"
                  "\tbfind.u32 %r3, %r2;\n\tst.global.u32 [%rd2+56], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  uint32_t a = 0x89ABCDEFu, b = 0x00012345u;
  Slots out = snippet.run({a, b});
  EXPECT_EQ(out[0], (a >> 4) & 0xFFu);
  EXPECT_EQ(static_cast<uint32_t>(out[1]), 0xFFFFFFF8u);  // bits 28..31 = 0x8, sign-extended from bit 31
  EXPECT_EQ(out[2], (a & ~0xFFF00u) | ((b & 0xFFFu) << 8));
  uint64_t both = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t permuted = 0;
  for (int i = 0; i < 4; ++i) permuted |= static_cast<uint32_t>((both >> (8 * ((0x5140 >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  EXPECT_EQ(out[3], permuted);
  uint32_t c = 0xFF00FF00u;
  EXPECT_EQ(out[4], (a & b) | (a & c) | (b & c));  // 0xE8 is the majority function
  EXPECT_EQ(out[5], static_cast<uint32_t>(((both << 4) >> 32)));
  EXPECT_EQ(out[6], b);
  EXPECT_EQ(out[7], 16u);
}

TEST(PtxInstructions, SetWritesMasksOrOnesAndSlctPicksBySign) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.f32 %f2, [%rd1+8];\n\tld.global.s32 %r1, [%rd1+16];\n"
                  "\tset.lt.u32.f32 %r2, %f1, %f2;\n\tst.global.u32 [%rd2], %r2;\n"
                  "\tset.gtu.f32.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd2+8], %f3;\n"
                  "\tsetp.ne.s32 %p1, %r1, 0;\n\tset.hi.or.s32.u32 %r2, %r1, 5, !%p1;\n\tst.global.u32 [%rd2+16], %r2;\n"
                  "\tset.eq.ftz.u32.f32 %r2, %f1, 0f00000000;\n\tst.global.u32 [%rd2+24], %r2;\n"
                  "\tslct.u32.s32 %r2, 10, 20, %r1;\n\tst.global.u32 [%rd2+32], %r2;\n"
                  "\tslct.f32.f32 %f3, %f1, %f2, %f1;\n\tst.global.f32 [%rd2+40], %f3;\n"
                  "\tslct.ftz.u32.f32 %r2, 10, 20, %f1;\n\tst.global.u32 [%rd2+48], %r2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Slots out = snippet.run({bits(1.0f), bits(2.0f), word(3)});
  EXPECT_EQ(out, (Slots{0xFFFFFFFFu, 0, 0, 0, 10, bits(1.0f), 10, 0}));
  out = snippet.run({bits(nan), bits(2.0f), word(-3)});  // -3 is above 5 unsigned; NaN picks b
  EXPECT_EQ(out, (Slots{0, bits(1.0f), 0xFFFFFFFFu, 0, 20, bits(2.0f), 20, 0}));
  out = snippet.run({bits(-1e-40f), bits(-2.0f), word(0)});  // flushed, -1e-40 is -0: equal to 0 and >= 0
  EXPECT_EQ(out, (Slots{0, bits(1.0f), 0xFFFFFFFFu, 0xFFFFFFFFu, 10, bits(-2.0f), 10, 0}));
}

// On 16-bit floats set writes 1.0 or all ones per lane (per half for packed operands), and
// setp's p|q take the low and high halves' outcomes.
TEST(PtxInstructions, SetAndSetpCompareHalvesLaneByLane) {
  Snippet snippet("\tld.global.b32 %r1, [%rd1];\n\tld.global.b32 %r2, [%rd1+8];\n"
                  "\tset.lt.u32.f16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\tset.ltu.f16x2.f16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tset.ge.bf16x2.bf16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+16], %r3;\n"
                  "\tmov.b32 {%rs1, %rs2}, %r1;\n\tmov.b32 {%rs3, %rs4}, %r2;\n"
                  "\tset.eq.f16.f16 %rs5, %rs2, %rs4;\n\tst.global.b16 [%rd2+24], %rs5;\n"
                  "\tset.ne.s16.f16 %rs5, %rs1, %rs3;\n\tst.global.b16 [%rd2+32], %rs5;\n"
                  "\tsetp.gt.f16x2 %p1|%p2, %r1, %r2;\n\tselp.u32 %r3, 1, 0, %p1;\n\tselp.u32 %r4, 2, 0, %p2;\n"
                  "\tor.b32 %r3, %r3, %r4;\n\tst.global.u32 [%rd2+40], %r3;\n"
                  "\tset.eq.and.u32.f16x2 %r3, %r1, %r1, %p2;\n\tst.global.u32 [%rd2+48], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  // f16 lanes (low, high): a = (1.0, NaN), b = (2.0, 0.5). As bf16 the same bits read
  // a = (2^-7, 2^125) and b = (2.0, 2^-15).
  Slots out = snippet.run({0x7E003C00u, 0x38004000u});
  EXPECT_EQ(out, (Slots{0x0000FFFFu, 0x3C003C00u, 0x3F800000u, 0x0000u, 0xFFFFu, 0u, 0u, 0}));
  // a = (-0.0, 3.0), b = (0.0, 2.0): the zeros are equal, 3 > 2 in the high lane only.
  out = snippet.run({0x42008000u, 0x40000000u});
  EXPECT_EQ(out, (Slots{0u, 0u, 0x3F803F80u, 0x0000u, 0x0000u, 2u, 0xFFFFFFFFu, 0}));
}

TEST(PtxInstructions, PermuteModesFollowTheirSelectorTables) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n\tld.global.u32 %r3, [%rd1+16];\n"
                  "\tprmt.b32.f4e %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2], %r4;\n"
                  "\tprmt.b32.b4e %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+8], %r4;\n"
                  "\tprmt.b32.rc8 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+16], %r4;\n"
                  "\tprmt.b32.ecl %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+24], %r4;\n"
                  "\tprmt.b32.ecr %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+32], %r4;\n"
                  "\tprmt.b32.rc16 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+40], %r4;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  // Bytes 0..7 of b:a are 0x10..0x17, so every result byte names the byte it came from.
  uint32_t a = 0x13121110u, b = 0x17161514u;
  auto byte = [](uint32_t index) { return 0x10u + index; };
  for (uint32_t selector = 0; selector < 4; ++selector) {
    Slots out = snippet.run({a, b, 0xFFFFFFF0u | selector});  // only the two low bits count
    uint32_t expected[6] = {};
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t shift = 8 * i;
      expected[0] |= byte(selector + i) << shift;
      expected[1] |= byte((selector - i) & 7) << shift;
      expected[2] |= byte(selector) << shift;
      expected[3] |= byte(std::max(i, selector)) << shift;
      expected[4] |= byte(std::min(i, selector)) << shift;
      expected[5] |= byte((selector & 1) * 2 + (i & 1)) << shift;
    }
    for (int mode = 0; mode < 6; ++mode) EXPECT_EQ(out[mode], expected[mode]) << "mode " << mode << " selector " << selector;
  }
}

TEST(PtxInstructions, DotProductsMasksAndExtensions) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n\tld.global.u32 %r3, [%rd1+16];\n"
                  "\tdp4a.s32.u32 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2], %r4;\n"
                  "\tdp4a.u32.u32 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+8], %r4;\n"
                  "\tdp2a.hi.s32.s32 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+16], %r4;\n"
                  "\tdp2a.lo.u32.s32 %r4, %r1, %r2, %r3;\n\tst.global.u32 [%rd2+24], %r4;\n"
                  "\tbmsk.clamp.b32 %r4, %r3, %r1;\n\tst.global.u32 [%rd2+32], %r4;\n"
                  "\tbmsk.wrap.b32 %r4, %r3, %r1;\n\tst.global.u32 [%rd2+40], %r4;\n"
                  "\tszext.clamp.s32 %r4, %r2, %r3;\n\tst.global.u32 [%rd2+48], %r4;\n"
                  "\tszext.wrap.u32 %r4, %r2, %r3;\n\tst.global.u32 [%rd2+56], %r4;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  std::mt19937 random(11);
  auto lane = [](uint32_t word, uint32_t index, uint32_t lane_bits, bool signed_lane) -> int64_t {
    uint32_t value = (word >> (index * lane_bits)) & ((1u << lane_bits) - 1);
    return signed_lane && (value >> (lane_bits - 1)) ? int64_t{value} - (int64_t{1} << lane_bits) : int64_t{value};
  };
  auto mask = [](uint32_t start, uint32_t width) {
    uint64_t all = ~uint64_t{0};
    return static_cast<uint32_t>((all << start) & ~(start + width >= 64 ? 0 : all << (start + width)));
  };
  auto extend = [](uint32_t value, uint32_t width, bool signed_extension) -> uint32_t {
    if (width == 0) return 0;
    if (width >= 32) return value;
    uint32_t low = value & ((1u << width) - 1);
    bool negative = signed_extension && ((low >> (width - 1)) & 1);
    return negative ? low | ~((1u << width) - 1) : low;
  };
  std::vector<Slots> inputs{{0x80FF7F01u, 0xFF80017Fu, 0}, {0, 0, 32}, {5, 0x8000u, 40}, {33, 0xFFFFFFFFu, 31}};
  for (int i = 0; i < 40; ++i) inputs.push_back({random(), random(), random() % 70});
  for (const Slots& input : inputs) {
    uint32_t a = static_cast<uint32_t>(input[0]), b = static_cast<uint32_t>(input[1]), c = static_cast<uint32_t>(input[2]);
    Slots out = snippet.run(input);
    int64_t signed_unsigned = c, unsigned_only = c, high_pairs = c, low_pairs = c;
    for (uint32_t k = 0; k < 4; ++k) {
      signed_unsigned += lane(a, k, 8, true) * lane(b, k, 8, false);
      unsigned_only += lane(a, k, 8, false) * lane(b, k, 8, false);
    }
    for (uint32_t k = 0; k < 2; ++k) {
      high_pairs += lane(a, k, 16, true) * lane(b, 2 + k, 8, true);
      low_pairs += lane(a, k, 16, false) * lane(b, k, 8, true);
    }
    EXPECT_EQ(out[0], static_cast<uint32_t>(signed_unsigned));
    EXPECT_EQ(out[1], static_cast<uint32_t>(unsigned_only));
    EXPECT_EQ(out[2], static_cast<uint32_t>(high_pairs));
    EXPECT_EQ(out[3], static_cast<uint32_t>(low_pairs));
    EXPECT_EQ(out[4], mask(std::min(c, 32u), std::min(a, 32u))) << c << " " << a;
    EXPECT_EQ(out[5], mask(c & 31, a & 31)) << c << " " << a;
    EXPECT_EQ(out[6], extend(b, std::min(c, 32u), true)) << b << " " << c;
    EXPECT_EQ(out[7], extend(b, c & 31, false)) << b << " " << c;
  }
}

TEST(PtxInstructions, ShiftsBeyondTheWidthClamp) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n"
                  "\tshl.b32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\tshr.u32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tshr.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+16], %r3;\n"
                  "\tcvt.u64.u32 %rd3, %r1;\n\tshl.b64 %rd4, %rd3, %r2;\n\tst.global.u64 [%rd2+24], %rd4;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({0x80000001u, 40});
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(static_cast<uint32_t>(out[2]), 0xFFFFFFFFu);
  EXPECT_EQ(out[3], 0x80000001ull << 40);
}

TEST(PtxInstructions, WideAndHighMultiplies) {
  Snippet snippet("\tld.global.s32 %r1, [%rd1];\n\tld.global.s32 %r2, [%rd1+8];\n\tld.global.u64 %rd3, [%rd1+16];\n"
                  "\tmul.wide.s32 %rd4, %r1, %r2;\n\tst.global.u64 [%rd2], %rd4;\n"
                  "\tmul.hi.u32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tmad.wide.u32 %rd4, %r1, %r2, %rd3;\n\tst.global.u64 [%rd2+16], %rd4;\n"
                  "\tmul.hi.u64 %rd4, %rd3, %rd3;\n\tst.global.u64 [%rd2+24], %rd4;\n"
                  "\tmad.hi.s32 %r3, %r1, %r2, 5;\n\tst.global.u32 [%rd2+32], %r3;\n"
                  "\tmul24.lo.s32 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+40], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  int32_t x = -123456789, y = 987654;
  uint64_t z = 0xF123456789ABCDEFull;
  Slots out = snippet.run({word(x), word(y), z});
  EXPECT_EQ(static_cast<int64_t>(out[0]), static_cast<int64_t>(x) * y);
  EXPECT_EQ(static_cast<uint32_t>(out[1]), static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(x)) * static_cast<uint32_t>(y)) >> 32));
  EXPECT_EQ(out[2], static_cast<uint64_t>(static_cast<uint32_t>(x)) * static_cast<uint32_t>(y) + z);
  EXPECT_EQ(out[3], static_cast<uint64_t>((static_cast<unsigned __int128>(z) * z) >> 64));
  EXPECT_EQ(static_cast<int32_t>(out[4]), static_cast<int32_t>((static_cast<int64_t>(x) * y) >> 32) + 5);
  int64_t x24 = (static_cast<int64_t>(x) << 40) >> 40, y24 = (static_cast<int64_t>(y) << 40) >> 40;
  EXPECT_EQ(static_cast<int32_t>(out[5]), static_cast<int32_t>(x24 * y24));
}

TEST(PtxInstructions, CarryChainsAdd128Bits) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+4];\n"
                  "\tld.global.u32 %r3, [%rd1+8];\n\tld.global.u32 %r4, [%rd1+12];\n"
                  "\tadd.cc.u32 %r5, %r1, %r3;\n\taddc.cc.u32 %r6, %r2, %r4;\n\taddc.u32 %r7, 0, 0;\n"
                  "\tst.global.u32 [%rd2], %r5;\n\tst.global.u32 [%rd2+4], %r6;\n\tst.global.u32 [%rd2+8], %r7;\n"
                  "\tsub.cc.u32 %r5, %r1, %r3;\n\tsubc.u32 %r6, %r2, %r4;\n"
                  "\tst.global.u32 [%rd2+16], %r5;\n\tst.global.u32 [%rd2+20], %r6;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  uint64_t a = 0xFFFFFFFF00000001ull, b = 0x00000001FFFFFFFFull;
  Slots out = snippet.run({a, b});
  EXPECT_EQ(out[0], a + b);
  EXPECT_EQ(out[1], 1u);
  EXPECT_EQ(out[2], a - b);
}

TEST(PtxInstructions, ClassificationCarriesAndOrderedAccesses) {
  Snippet snippet("\tld.global.f32 %f1, [%rd1];\n\tld.global.u32 %r1, [%rd1+8];\n\tld.global.u32 %r2, [%rd1+12];\n"
                  "\ttestp.subnormal.f32 %p1, %f1;\n\tselp.u32 %r3, 1, 0, %p1;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\ttestp.finite.f32 %p1, %f1;\n\tselp.u32 %r3, 1, 0, %p1;\n\tst.global.u32 [%rd2+4], %r3;\n"
                  "\tmad.lo.cc.u32 %r4, %r1, %r2, %r1;\n\tmadc.hi.u32 %r5, %r1, %r2, 0;\n"
                  "\tst.global.u32 [%rd2+8], %r4;\n\tst.global.u32 [%rd2+12], %r5;\n"
                  "\tst.release.gpu.global.u32 [%rd2+16], %r1;\n\tld.acquire.gpu.global.u32 %r6, [%rd2+16];\n"
                  "\tst.relaxed.sys.global.u32 [%rd2+20], %r6;\n"
                  "\ttanh.approx.f32 %f2, 0f3F000000;\n\tst.global.f32 [%rd2+24], %f2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  uint32_t a = 0xFFFFFFF0u, b = 0x12345u;
  Slots out = snippet.run({bits(1e-40f), a | (static_cast<uint64_t>(b) << 32)});
  EXPECT_EQ(out[0], 1ull | (1ull << 32));
  uint64_t low = static_cast<uint64_t>(a) * b;
  uint32_t low_sum = static_cast<uint32_t>(low) + a;
  uint32_t carry = low_sum < a ? 1 : 0;
  EXPECT_EQ(out[1], low_sum | (static_cast<uint64_t>(static_cast<uint32_t>(low >> 32) + carry) << 32));
  EXPECT_EQ(out[2], a | (static_cast<uint64_t>(a) << 32));
  EXPECT_NEAR(as_float(out[3]), std::tanh(0.5f), 1e-6f);
}

TEST(PtxInstructions, AtomicsReturnTheOldValue) {
  Snippet snippet("\tatom.global.cas.b32 %r1, [%rd1], 5, 9;\n\tst.global.u32 [%rd2], %r1;\n"
                  "\tatom.global.exch.b32 %r1, [%rd1+8], 3;\n\tst.global.u32 [%rd2+8], %r1;\n"
                  "\tatom.global.inc.u32 %r1, [%rd1+16], 4;\n\tst.global.u32 [%rd2+16], %r1;\n"
                  "\tatom.global.dec.u32 %r1, [%rd1+24], 4;\n\tst.global.u32 [%rd2+24], %r1;\n"
                  "\tatom.global.add.f32 %f1, [%rd1+32], 0f3FC00000;\n\tst.global.f32 [%rd2+32], %f1;\n"
                  "\tred.global.max.s32 [%rd1+40], -2;\n"
                  "\tld.global.u32 %r1, [%rd1];\n\tst.global.u32 [%rd2+40], %r1;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots in{5, 11, 4, 0, bits(1.0f), word(-7)};
  Slots out = snippet.run(in);
  EXPECT_EQ(out[0], 5u);
  EXPECT_EQ(out[1], 11u);
  EXPECT_EQ(out[2], 4u);
  EXPECT_EQ(out[3], 0u);
  EXPECT_EQ(as_float(out[4]), 1.0f);
  EXPECT_EQ(out[5], 9u);
}

// sm_100's st.bulk: zeroes `size` bytes of shared memory, at a shared or a generic address.
TEST(PtxInstructions, BulkStoresZeroSharedMemory) {
  LoadedModule module(".version 8.8\n.target sm_100a\n.address_size 64\n.shared .align 8 .b8 cells[64];\n"
                      ".visible .entry clear(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<8>;\n"
                      "\tld.param.u64 %rd1, [out];\n\tmov.u64 %rd2, cells;\n\tmov.u32 %r1, 0x01010101;\n"
                      "\tst.shared.v4.u32 [%rd2], {%r1, %r1, %r1, %r1};\n\tst.shared.v4.u32 [%rd2+16], {%r1, %r1, %r1, %r1};\n"
                      "\tst.shared.v4.u32 [%rd2+32], {%r1, %r1, %r1, %r1};\n\tst.shared.v4.u32 [%rd2+48], {%r1, %r1, %r1, %r1};\n"
                      "\tst.bulk.weak.shared::cta [%rd2+8], 16, 0;\n\tcvta.shared.u64 %rd3, %rd2;\n\tmov.u64 %rd4, 8;\n"
                      "\tst.bulk.weak [%rd3+40], %rd4, 0;\n"
                      "\tld.shared.v2.u64 {%rd5, %rd6}, [%rd2];\n\tst.global.v2.u64 [%rd1], {%rd5, %rd6};\n"
                      "\tld.shared.v2.u64 {%rd5, %rd6}, [%rd2+16];\n\tst.global.v2.u64 [%rd1+16], {%rd5, %rd6};\n"
                      "\tld.shared.v2.u64 {%rd5, %rd6}, [%rd2+32];\n\tst.global.v2.u64 [%rd1+32], {%rd5, %rd6};\n"
                      "\tld.shared.v2.u64 {%rd5, %rd6}, [%rd2+48];\n\tst.global.v2.u64 [%rd1+48], {%rd5, %rd6};\n\tret;\n}\n");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::array<uint64_t, 8> out{};
  run_one_thread(module, "clear", out);
  const uint64_t ones = 0x0101010101010101ull;
  EXPECT_EQ(out, (std::array<uint64_t, 8>{ones, 0, 0, ones, ones, 0, ones, ones}));
}

// sm_100's .f32x2: two f32 side by side in a .b64, each lane computed and rounded as the f32
// operation would be (PTX ISA).
TEST(PtxInstructions, PairsOfFloatsRoundLaneByLane) {
  for (const RoundingCase& rounding : directed_roundings) {
    std::string mode = rounding.modifier;
    Snippet snippet("\tld.global.u64 %rd3, [%rd1];\n\tld.global.u64 %rd4, [%rd1+8];\n\tld.global.u64 %rd5, [%rd1+16];\n"
                    "\tadd." + mode + ".f32x2 %rd6, %rd3, %rd4;\n\tst.global.u64 [%rd2], %rd6;\n"
                    "\tsub." + mode + ".f32x2 %rd6, %rd3, %rd4;\n\tst.global.u64 [%rd2+8], %rd6;\n"
                    "\tmul." + mode + ".f32x2 %rd6, %rd3, %rd4;\n\tst.global.u64 [%rd2+16], %rd6;\n"
                    "\tfma." + mode + ".f32x2 %rd6, %rd3, %rd4, %rd5;\n\tst.global.u64 [%rd2+24], %rd6;\n"
                    "\tadd." + mode + ".ftz.f32x2 %rd6, %rd5, %rd5;\n\tst.global.u64 [%rd2+32], %rd6;\n");
    ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
    const float a[2] = {1.0f, 1.0f / 3.0f}, b[2] = {3e-8f, -7.0f / 9.0f}, c[2] = {1e-40f, 5.5f};
    auto pair = [](const float (&lanes)[2]) { return bits(lanes[0]) | bits(lanes[1]) << 32; };
    Slots out = snippet.run({pair(a), pair(b), pair(c)});
    for (int lane = 0; lane < 2; ++lane) {
      auto got = [&](int slot) { return as_float(out[slot] >> (32 * lane)); };
      volatile float x = a[lane], y = b[lane], z = c[lane];
      float sum = with_host_rounding(rounding.host_mode, [&] { return x + y; });
      float difference = with_host_rounding(rounding.host_mode, [&] { return x - y; });
      float product = with_host_rounding(rounding.host_mode, [&] { return x * y; });
      float fused = with_host_rounding(rounding.host_mode, [&] { return std::fma(x, y, z); });
      EXPECT_TRUE(same_float(got(0), sum)) << mode << " lane " << lane;
      EXPECT_TRUE(same_float(got(1), difference)) << mode << " lane " << lane;
      EXPECT_TRUE(same_float(got(2), product)) << mode << " lane " << lane;
      EXPECT_TRUE(same_float(got(3), fused)) << mode << " lane " << lane;
    }
    // .ftz: the subnormal lane is read as +0, the other added to itself.
    EXPECT_EQ(out[4], 0u | bits(11.0f) << 32) << mode;
  }
}

// lop3.or/.and d|p, a, b, c, table, q: p = (d != 0) or/and q (PTX ISA); sm_100's min and max of
// three .f32 values keep the two-value rules: a NaN yields to numbers unless .NaN, -0 < +0.
TEST(PtxInstructions, LopWithAPredicateAndMinMaxOfThree) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n\tsetp.ne.u32 %p1, %r2, 0;\n"
                  "\tlop3.or.b32 %r3|%p2, %r1, %r1, %r1, 0x80, %p1;\n\tselp.u32 %r4, 1, 0, %p2;\n"
                  "\tlop3.and.b32 %r5|%p3, %r1, %r1, %r1, 0x80, !%p1;\n\tselp.u32 %r6, 1, 0, %p3;\n"
                  "\tst.global.v4.u32 [%rd2], {%r3, %r4, %r5, %r6};\n"
                  "\tld.global.f32 %f1, [%rd1+16];\n\tld.global.f32 %f2, [%rd1+24];\n\tld.global.f32 %f3, [%rd1+32];\n"
                  "\tmin.f32 %f4, %f1, %f2, %f3;\n\tmax.f32 %f5, %f1, %f2, %f3;\n"
                  "\tmin.NaN.f32 %f6, %f1, %f2, %f3;\n\tmax.f32 %f7, %f3, %f3, %f3;\n"
                  "\tst.global.v4.f32 [%rd2+16], {%f4, %f5, %f6, %f7};\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // a = 0x0F: the table 0x80 (a & b & c) gives 0x0F, nonzero; q false.
  Slots out = snippet.run({0x0F, 0, bits(-0.0f), bits(0.0f), bits(nan)});
  EXPECT_EQ(out[0], 0x0Fu | 1ull << 32);  // d, and p = true or false
  EXPECT_EQ(out[1], 0x0Fu | 1ull << 32);  // d, and p = true and !false
  EXPECT_EQ(out[2], bits(-0.0f) | bits(0.0f) << 32);
  EXPECT_EQ(static_cast<uint32_t>(out[3]), 0x7FFFFFFFu);  // .NaN: the canonical NaN
  EXPECT_EQ(out[3] >> 32, 0x7FFFFFFFu);                   // only NaNs: the canonical NaN
  out = snippet.run({0, 1, bits(3.0f), bits(nan), bits(-2.0f)});
  EXPECT_EQ(out[0], 0u | 1ull << 32);  // d = 0, p = false or true
  EXPECT_EQ(out[1], 0u);               // d = 0, p = false and false
  EXPECT_EQ(out[2], bits(-2.0f) | bits(3.0f) << 32);
}

// sm_90's packed 16-bit integers: each half its own lane, wrapping on add; .relu clamps a
// negative lane of a signed minimum or maximum to 0.
TEST(PtxInstructions, PackedSixteenBitIntegersWorkLaneByLane) {
  Snippet snippet("\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n"
                  "\tadd.s16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2], %r3;\n"
                  "\tadd.u16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+4], %r3;\n"
                  "\tmin.s16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tmin.u16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+12], %r3;\n"
                  "\tmax.s16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+16], %r3;\n"
                  "\tmax.u16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+20], %r3;\n"
                  "\tmin.relu.s16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+24], %r3;\n"
                  "\tmax.relu.s16x2 %r3, %r1, %r2;\n\tst.global.u32 [%rd2+28], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  auto pack = [](uint16_t low, uint16_t high) { return static_cast<uint64_t>(low) | static_cast<uint64_t>(high) << 16; };
  // Lanes (low, high): a = (0xFFFF, 5), b = (2, 0x8003): -1 and 5 against 2 and -32765.
  Slots out = snippet.run({pack(0xFFFF, 5), pack(2, 0x8003)});
  auto word = [&](int index) { return static_cast<uint32_t>(out[index / 2] >> (index % 2 * 32)); };
  EXPECT_EQ(word(0), pack(0x0001, 0x8008));  // the low lane wraps without carrying into the high
  EXPECT_EQ(word(1), pack(0x0001, 0x8008));
  EXPECT_EQ(word(2), pack(0xFFFF, 0x8003));
  EXPECT_EQ(word(3), pack(0x0002, 0x0005));
  EXPECT_EQ(word(4), pack(0x0002, 0x0005));
  EXPECT_EQ(word(5), pack(0xFFFF, 0x8003));
  EXPECT_EQ(word(6), pack(0x0000, 0x0000));
  EXPECT_EQ(word(7), pack(0x0002, 0x0005));
}

// sm_90's vector atomics, one atomic operation per element (PTX ISA), and the cache policy
// operand of .L2::cache_hint, which changes no value.
TEST(PtxInstructions, VectorAtomicsAndCacheHints) {
  Snippet snippet("\tcreatepolicy.fractional.L2::evict_last.b64 %rd3, 1.0;\n"
                  "\tmov.f32 %f1, 0f3FC00000;\n\tmov.f32 %f2, 0fC0000000;\n"
                  "\tatom.global.v2.f32.add {%f3, %f4}, [%rd1], {%f1, %f2};\n"
                  "\tst.global.v2.f32 [%rd2], {%f3, %f4};\n"
                  "\tred.global.v4.f32.add [%rd1+16], {%f1, %f2, %f1, %f2};\n"
                  "\tmov.b32 %r1, 0x3C003C00;\n"
                  "\tred.global.v2.f16x2.add.noftz [%rd1+32], {%r1, %r1};\n"
                  "\tatom.global.add.L2::cache_hint.u32 %r2, [%rd1+40], 5, %rd3;\n\tst.global.u32 [%rd2+8], %r2;\n"
                  "\tred.global.add.L2::cache_hint.u32 [%rd1+40], 5, %rd3;\n"
                  "\tatom.global.cas.b32.L2::cache_hint %r3, [%rd1+44], 0, 9, %rd3;\n\tst.global.u32 [%rd2+12], %r3;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  const Slots in{bits(1.0f) | bits(10.0f) << 32, 0, bits(0.5f) | bits(0.25f) << 32, bits(4.0f) | bits(8.0f) << 32,
                 0x40003C0040003C00ull, 7};
  Slots memory = in;
  Slots out = snippet.run_on(memory);
  EXPECT_EQ(out[0], in[0]);  // the old pair
  EXPECT_EQ(memory[0], bits(2.5f) | bits(8.0f) << 32);
  EXPECT_EQ(memory[2], bits(2.0f) | bits(-1.75f) << 32);
  EXPECT_EQ(memory[3], bits(5.5f) | bits(6.0f) << 32);
  EXPECT_EQ(memory[4], 0x4200400042004000ull);  // (1, 2) + (1, 1) = (2, 3) in both pairs of halves
  EXPECT_EQ(out[1], 7u);  // atom.add's old value, then cas found 0 and wrote 9
  EXPECT_EQ(memory[5], 17u | 9ull << 32);
}

// libcusparse adds floats held in .b32 registers, packed halves among them.
TEST(PtxInstructions, FloatAtomicsTakeIntegerRegisters) {
  Snippet snippet("\tld.global.u32 %r2, [%rd1+8];\n"
                  "\tatom.global.add.f32 %r1, [%rd1], %r2;\n\tst.global.u32 [%rd2], %r1;\n"
                  "\tred.global.add.f32 [%rd1], %r2;\n"
                  "\tld.global.u32 %r3, [%rd1];\n\tst.global.u32 [%rd2+8], %r3;\n"
                  "\tld.global.u32 %r4, [%rd1+24];\n"
                  "\tatom.global.add.noftz.f16x2 %r5, [%rd1+16], %r4;\n\tst.global.u32 [%rd2+16], %r5;\n"
                  "\tred.global.add.noftz.f16x2 [%rd1+16], %r4;\n"
                  "\tld.global.u32 %r6, [%rd1+16];\n\tst.global.u32 [%rd2+24], %r6;\n"
                  "\tld.global.u32 %r7, [%rd1+40];\n"
                  "\tatom.global.add.noftz.bf16x2 %r8, [%rd1+32], %r7;\n\tst.global.u32 [%rd2+32], %r8;\n"
                  "\tld.global.u32 %r9, [%rd1+32];\n\tst.global.u32 [%rd2+40], %r9;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  // Halves (low lane first): (1.5, -2) + (0.25, 3) twice; bfloat16s: (1, 2) + (1, 2).
  Slots out = snippet.run({bits(1.5f), bits(2.25f), 0xC0003E00u, 0x42003400u, 0x40003F80u, 0x40003F80u});
  EXPECT_EQ(as_float(out[0]), 1.5f);
  EXPECT_EQ(as_float(out[1]), 6.0f);
  EXPECT_EQ(out[2], 0xC0003E00u);
  EXPECT_EQ(out[3], 0x44004000u);
  EXPECT_EQ(out[4], 0x40003F80u);
  EXPECT_EQ(out[5], 0x40804000u);
}

TEST(PtxInstructions, PackingSharedAddressesAndGuards) {
  Snippet snippet("\t.shared .align 8 .b8 buffer[16];\n"
                  "\tld.global.u32 %r1, [%rd1];\n\tld.global.u32 %r2, [%rd1+8];\n"
                  "\tmov.b64 %rd3, {%r1, %r2};\n\tst.global.u64 [%rd2], %rd3;\n"
                  "\tmov.b64 {%r3, %r4}, %rd3;\n\tst.global.u32 [%rd2+8], %r4;\n"
                  "\tmov.u32 %r5, buffer;\n\tst.shared.u32 [%r5+4], %r2;\n"
                  "\tcvta.shared.u64 %rd4, %rd5;\n\tmov.u64 %rd5, buffer;\n\tcvta.shared.u64 %rd4, %rd5;\n"
                  "\tld.u32 %r6, [%rd4+4];\n\tst.global.u32 [%rd2+16], %r6;\n"
                  "\tcvta.to.shared.u64 %rd6, %rd4;\n\tst.global.u64 [%rd2+24], %rd6;\n"
                  "\tsetp.eq.u32 %p1, %r1, 1;\n\t@%p1 st.global.u32 [%rd2+32], 11;\n\t@!%p1 st.global.u32 [%rd2+32], 22;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({1, 0xABCD});
  EXPECT_EQ(out[0], 0x0000ABCD00000001ull);
  EXPECT_EQ(out[1], 0xABCDu);
  EXPECT_EQ(out[2], 0xABCDu);
  EXPECT_EQ(out[3], 0u);
  EXPECT_EQ(out[4], 11u);
  out = snippet.run({2, 0});
  EXPECT_EQ(out[4], 22u);
}

TEST(PtxInstructions, ModuleVariablesWithInitialisersAndAddresses) {
  LoadedModule module(".version 9.0\n.target sm_80\n.address_size 64\n"
                      ".global .align 1 .b8 message[4] = {65, 66, 67, 0};\n"
                      ".global .align 8 .u64 table[2] = {generic(message), message+2};\n"
                      ".const .align 4 .f32 values[3] = {1.5, 0f40000000, -2.5};\n"
                      ".global .align 8 .f64 wide = 0d4000000000000000;\n"
                      ".global .align 4 .s32 numbers[4] = {-1, 0x10, 7};\n"
                      ".visible .entry read(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n\t.reg .f32 %f<3>;\n"
                      "\tld.param.u64 %rd1, [out];\n\tld.global.u64 %rd2, [table+8];\n\tld.u8 %r1, [%rd2];\n"
                      "\tst.global.u32 [%rd1], %r1;\n\tld.const.f32 %f1, [values+8];\n\tst.global.f32 [%rd1+4], %f1;\n"
                      "\tld.global.f64 %rd3, [wide];\n\tst.global.u64 [%rd1+8], %rd3;\n"
                      "\tld.global.s32 %r2, [numbers+8];\n\tst.global.u32 [%rd1+16], %r2;\n\tret;\n}\n");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  auto* table = static_cast<const char* const*>(module.global("table"));
  auto* message = static_cast<const char*>(module.global("message"));
  EXPECT_EQ(table[0], message);
  EXPECT_EQ(table[1], message + 2);
  EXPECT_EQ(static_cast<const float*>(module.global("values"))[0], 1.5f);
  std::array<uint32_t, 6> out{};
  run_one_thread(module, "read", out);
  EXPECT_EQ(out[0], static_cast<uint32_t>('C'));
  EXPECT_EQ(std::bit_cast<float>(out[1]), -2.5f);
  EXPECT_EQ(out[2] | (static_cast<uint64_t>(out[3]) << 32), bits(2.0));
  EXPECT_EQ(out[4], 7u);
}

// Instructions that change no value (PTX ISA): prefetches and cache hints, nanosleep (a sleep
// of 0 to 2t ns), fences; ldu loads as ld does; multimem on a group of one device (xcuda's host)
// reads, writes and reduces the one copy.
TEST(PtxInstructions, HintsSleepsAndFencesLeaveValuesAlone) {
  Snippet snippet("\tprefetch.global.L1 [%rd1];\n\tprefetch.global.L2 [%rd1+8];\n\tprefetch.L1 [%rd1+16];\n"
                  "\tprefetch.global.L2::evict_last [%rd1];\n\tprefetchu.L1 [%rd1+24];\n"
                  "\tldu.global.u32 %r1, [%rd1];\n\tldu.global.v2.u32 {%r2, %r3}, [%rd1+8];\n"
                  "\tldu.global.f64 %fd1, [%rd1+16];\n\tldu.u64 %rd3, [%rd1+24];\n"
                  "\tmov.u32 %r4, 100;\n\tnanosleep.u32 %r4;\n\tnanosleep.u32 1000;\n"
                  "\tfence.sc.cta;\n\tfence.acq_rel.gpu;\n\tfence.acq_rel.sys;\n\tfence.proxy.alias;\n\tmembar.cta;\n"
                  "\tst.global.u32 [%rd2], %r1;\n\tst.global.v2.u32 [%rd2+8], {%r2, %r3};\n"
                  "\tst.global.f64 [%rd2+16], %fd1;\n\tst.global.u64 [%rd2+24], %rd3;\n"
                  "\tmultimem.st.global.u32 [%rd2+32], %r1;\n\tmultimem.red.global.add.u32 [%rd2+32], 5;\n"
                  "\tmultimem.ld_reduce.global.add.u32 %r5, [%rd2+32];\n\tst.global.u32 [%rd2+40], %r5;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({7, 0x0000000900000008ull, bits(2.5), 0x1122334455667788ull});
  EXPECT_EQ(out[0], 7u);
  EXPECT_EQ(out[1], 0x0000000900000008ull);
  EXPECT_EQ(as_double(out[2]), 2.5);
  EXPECT_EQ(out[3], 0x1122334455667788ull);
  EXPECT_EQ(out[4], 12u);
  EXPECT_EQ(out[5], 12u);
}

// isspacep on the generic address of one thing in each window, asked by a .func (which sees
// the kernel's parameter window as the kernel does). The expectations are what an H100 (driver
// 580) answered for this module, loaded as it stands: a kernel parameter's address lies in the
// .param window and in the .global one; a .const variable's only in the .const. Each thread asks
// after a barrier (its locals then kept across it) in a kernel run region by region, and in one
// run on fibers (a barrier with a thread count), whose locals lie on the fibers' stacks.
TEST(PtxInstructions, IsspacepTellsWhichWindowAnAddressLiesIn) {
  const std::string classify =
      ".func (.param .b32 spaces) classify(.param .b64 address)\n{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<8>;\n"
      "\t.reg .b64 a;\n\tld.param.b64 a, [address];\n"
      "\tisspacep.global %p1, a;\n\tisspacep.shared %p2, a;\n\tisspacep.local %p3, a;\n\tisspacep.const %p4, a;\n"
      "\tisspacep.param %p5, a;\n\tisspacep.shared::cta %p6, a;\n\tisspacep.shared::cluster %p7, a;\n"
      "\tselp.u32 %r1, 1, 0, %p1;\n\tselp.u32 %r2, 2, 0, %p2;\n\tor.b32 %r1, %r1, %r2;\n"
      "\tselp.u32 %r2, 4, 0, %p3;\n\tor.b32 %r1, %r1, %r2;\n\tselp.u32 %r2, 8, 0, %p4;\n\tor.b32 %r1, %r1, %r2;\n"
      "\tselp.u32 %r2, 16, 0, %p5;\n\tor.b32 %r1, %r1, %r2;\n\tselp.u32 %r2, 32, 0, %p6;\n\tor.b32 %r1, %r1, %r2;\n"
      "\tselp.u32 %r2, 64, 0, %p7;\n\tor.b32 %r1, %r1, %r2;\n\tst.param.b32 [spaces], %r1;\n\tret;\n}\n";
  auto kernel = [&](const std::string& name, const std::string& barrier) {
    std::string text = ".visible .entry " + name + "(.param .u64 out, .param .u64 buffer)\n{\n"
                       "\t.local .align 4 .b32 mine[4];\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<24>;\n"
                       "\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 64;\n"
                       "\tadd.s64 %rd1, %rd1, %rd2;\n\tmov.u64 %rd3, mine;\n\tcvta.local.u64 %rd3, %rd3;\n"
                       "\tst.u32 [%rd3], %r1;\n\t" + barrier + "\n"
                       "\tld.param.u64 %rd4, [buffer];\n\tcvta.to.global.u64 %rd4, %rd4;\n"
                       "\tmov.u64 %rd5, device_word;\n\tcvta.global.u64 %rd5, %rd5;\n"
                       "\tmov.u64 %rd6, constant_word;\n\tcvta.const.u64 %rd6, %rd6;\n"
                       "\tmov.u64 %rd7, shared_word;\n\tcvta.shared.u64 %rd7, %rd7;\n\tadd.s64 %rd8, %rd7, 28;\n"
                       "\tmov.u64 %rd9, dynamic;\n\tcvta.shared.u64 %rd9, %rd9;\n\tadd.s64 %rd10, %rd9, 63;\n"
                       "\tadd.s64 %rd11, %rd3, 12;\n\tmov.u64 %rd12, buffer;\n\tcvta.param.u64 %rd12, %rd12;\n";
    for (int i = 0; i < 10; ++i) {
      const char* address[] = {"%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd9", "%rd10", "%rd3", "%rd11", "%rd12"};
      text += "\t{\n\t.param .b64 a;\n\t.param .b32 r;\n\tst.param.b64 [a], " + std::string(address[i]) +
              ";\n\tcall.uni (r), classify, (a);\n\tld.param.b32 %r2, [r];\n\t}\n\tst.global.u32 [%rd1+" + std::to_string(4 * i) + "], %r2;\n";
    }
    return text + "\tld.u32 %r3, [%rd3];\n\tst.global.u32 [%rd1+40], %r3;\n\tret;\n}\n";
  };
  LoadedModule module(".version 8.0\n.target sm_90\n.address_size 64\n"
                      ".global .align 4 .b32 device_word[4];\n.const .align 4 .b32 constant_word[4] = {1, 2, 3, 4};\n"
                      ".shared .align 4 .b32 shared_word[8];\n.extern .shared .align 16 .b8 dynamic[];\n" +
                      classify + kernel("regions", "bar.sync 0;") + kernel("fibers", "bar.sync 1, 64;"));
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  constexpr uint32_t global = 1, shared = 2 | 32 | 64, local = 4, constant = 8, parameter = 16;
  // global buffer, .global variable, .const variable, shared at 0 and 28, dynamic shared at 0
  // and 63, the thread's local array at 0 and 12, the kernel's second parameter
  const uint32_t expected[] = {global, global, constant, shared, shared, shared, shared, local, local, global | parameter};
  std::vector<uint32_t> buffer(1024);
  for (const char* name : {"regions", "fibers"}) {
    std::vector<std::array<uint32_t, 16>> out(64);
    ParameterBuffer parameters(module.kernel(name));
    parameters.set(0, out.data()).set(1, buffer.data());
    module.launch(name, {1, 1, 1}, {64, 1, 1}, parameters, 64);
    for (uint32_t thread = 0; thread < 64; ++thread) {
      for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(out[thread][i], expected[i]) << name << " thread " << thread << " address " << i;
      }
      EXPECT_EQ(out[thread][10], thread) << name;
    }
  }
}

// brkpt stops the thread that reaches it as trap does: an H100 without a debugger answered
// cudaErrorLaunchFailure for a block whose threads all took it, and ran the kernel through when
// none did (the test loader's trap aborts the process).
TEST(PtxInstructions, BrkptFailsTheLaunchOnlyWhereItIsReached) {
  Snippet snippet("\tld.u64 %rd3, [%rd1];\n\tsetp.ne.u64 %p1, %rd3, 0;\n\tst.u64 [%rd2], 1;\n"
                  "\t@%p1 brkpt;\n\tst.u64 [%rd2+8], 2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({0});
  EXPECT_EQ(out[0], 1u);
  EXPECT_EQ(out[1], 2u);
  EXPECT_DEATH(snippet.run({1}), "");
}

// %clock_hi is the high half of %clock64; %aggr_smem_size counts the block's shared memory
// and the driver's reserved part (none on xcuda: %reserved_smem_offset_end is 0); %pm0-7 and
// %pm0_64-7_64 read (their behaviour the ISA leaves undefined); %current_graph_exec is 0 outside
// a device graph. Prefetches of tensor maps and membar.proxy.alias change nothing.
TEST(PtxInstructions, ClockHalvesSharedMemorySizesAndPerformanceCounters) {
  LoadedModule module(".version 8.1\n.target sm_90\n.address_size 64\n.shared .align 4 .b32 cells[10];\n"
                      ".visible .entry sizes(.param .u64 out)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<6>;\n"
                      "\tld.param.u64 %rd1, [out];\n\tprefetch.tensormap [%rd1];\n\tmembar.proxy.alias;\n"
                      "\tmov.u64 %rd2, %clock64;\n\tmov.u32 %r1, %clock_hi;\n\tmov.u64 %rd3, %clock64;\n"
                      "\tst.global.u64 [%rd1], %rd2;\n\tst.global.u32 [%rd1+8], %r1;\n\tst.global.u64 [%rd1+16], %rd3;\n"
                      "\tmov.u32 %r2, %aggr_smem_size;\n\tmov.u32 %r3, %total_smem_size;\n"
                      "\tst.global.v2.u32 [%rd1+24], {%r2, %r3};\n\tmov.u32 %r4, %pm3;\n\tmov.u64 %rd4, %pm5_64;\n"
                      "\tst.global.u32 [%rd1+32], %r4;\n\tst.global.u64 [%rd1+40], %rd4;\n"
                      "\tmov.u64 %rd5, %current_graph_exec;\n\tst.global.u64 [%rd1+48], %rd5;\n\tret;\n}\n");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::array<uint32_t, 14> out{};
  out[12] = out[13] = 0xDEADBEEF;
  run_one_thread(module, "sizes", out, 100);
  uint64_t before = out[0] | static_cast<uint64_t>(out[1]) << 32, after = out[4] | static_cast<uint64_t>(out[5]) << 32;
  EXPECT_GE(out[2], static_cast<uint32_t>(before >> 32));
  EXPECT_LE(out[2], static_cast<uint32_t>(after >> 32));
  EXPECT_EQ(out[7], 48u + 100u);  // 40 static bytes rounded up to 16, then the dynamic 100
  EXPECT_EQ(out[6], out[7]);
  EXPECT_EQ(out[12] | static_cast<uint64_t>(out[13]) << 32, 0u);  // no device graph runs the kernel
}

TEST(PtxInstructions, SpecialRegistersDescribeTheThread) {
  LoadedModule module(".version 9.0\n.target sm_80\n.address_size 64\n"
                      ".visible .entry ids(.param .u64 out)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n"
                      "\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %tid.y;\n\tmov.u32 %r3, %ntid.x;\n"
                      "\tmad.lo.s32 %r4, %r2, %r3, %r1;\n\tmul.wide.u32 %rd2, %r4, 16;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
                      "\tmov.u32 %r5, %laneid;\n\tmov.u32 %r6, %warpid;\n\tmov.u32 %r7, %lanemask_lt;\n"
                      "\tst.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};\n\tret;\n}\n");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::vector<std::array<uint32_t, 4>> out(8 * 10);
  ParameterBuffer parameters(module.kernel("ids"));
  parameters.set(0, out.data());
  module.launch("ids", {1, 1, 1}, {8, 10, 1}, parameters);
  for (uint32_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i][0], i);
    EXPECT_EQ(out[i][1], i % 32);
    EXPECT_EQ(out[i][2], i / 32);
    EXPECT_EQ(out[i][3], (1u << (i % 32)) - 1);
  }
}

// Barriers in a loop, inside a called function, with threads that exit early.
TEST(PtxInstructions, BarriersInLoopsAndFunctionsWithExitedThreads) {
  LoadedModule module(".version 9.0\n.target sm_80\n.address_size 64\n"
                      ".shared .align 4 .b8 cells[256];\n"
                      ".func sync_all()\n{\n\tbar.sync 0;\n\tret;\n}\n"
                      ".visible .entry rotate(.param .u64 out, .param .u32 rounds)\n{\n"
                      "\t.reg .pred %p<3>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n"
                      "\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [rounds];\n\tmov.u32 %r2, %tid.x;\n"
                      "\tmov.u32 %r3, %ntid.x;\n\tsetp.ge.u32 %p2, %r2, 60;\n\t@%p2 exit;\n"
                      "\tmov.u32 %r4, cells;\n\tshl.b32 %r5, %r2, 2;\n\tadd.s32 %r6, %r4, %r5;\n"
                      "\tst.shared.u32 [%r6], %r2;\n\tmov.u32 %r7, 0;\n"
                      "$loop:\n\tcall.uni sync_all, ();\n"
                      "\tadd.s32 %r8, %r2, 1;\n\trem.u32 %r8, %r8, 60;\n\tshl.b32 %r8, %r8, 2;\n\tadd.s32 %r8, %r4, %r8;\n"
                      "\tld.shared.u32 %r9, [%r8];\n\tbar.sync 0;\n\tst.shared.u32 [%r6], %r9;\n"
                      "\tadd.s32 %r7, %r7, 1;\n\tsetp.lt.u32 %p1, %r7, %r1;\n\t@%p1 bra $loop;\n"
                      "\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r9;\n\tret;\n}\n");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::vector<uint32_t> out(64, 999);
  ParameterBuffer parameters(module.kernel("rotate"));
  parameters.set(0, out.data()).set(1, 5u);
  module.launch("rotate", {1, 1, 1}, {64, 1, 1}, parameters);
  for (uint32_t i = 0; i < 60; ++i) EXPECT_EQ(out[i], (i + 5) % 60) << i;
  for (uint32_t i = 60; i < 64; ++i) EXPECT_EQ(out[i], 999u) << i;
}

// Threads that exit inside a .func no longer take part in barriers, including one inside a
// function called through a pointer: with bar.sync 0 (run region by region) and with a thread
// count (run on fibers).
TEST(PtxInstructions, ExitInFunctionsAndBarriersBehindIndirectCalls) {
  for (std::string barrier : {"bar.sync 0;", "bar.sync 1, 40;"}) {
    LoadedModule module(".version 9.0\n.target sm_80\n.address_size 64\n"
                        ".shared .align 4 .b8 arrivals[4];\n"
                        ".func leave_if(.param .b32 flag)\n{\n\t.reg .pred %p1;\n\t.reg .b32 %r1;\n"
                        "\tld.param.b32 %r1, [flag];\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 exit;\n\tret;\n}\n"
                        ".func (.param .b32 total) count_arrivals(.param .b32 unused)\n{\n\t.reg .b32 %r1;\n"
                        "\tatom.shared.add.u32 %r1, [arrivals], 1;\n\t" + barrier + "\n"
                        "\tld.shared.u32 %r1, [arrivals];\n\tst.param.b32 [total], %r1;\n\tret;\n}\n"
                        ".visible .entry survivors(.param .u64 out)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n"
                        "\t.reg .b64 %rd<4>;\n\t.param .b32 flag;\n\t.param .b32 unused;\n\t.param .b32 total;\n"
                        "\tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n"
                        "\t@%p1 st.shared.u32 [arrivals], 0;\n\tbar.sync 0;\n"
                        "\tsetp.ge.u32 %p1, %r1, 40;\n\tselp.u32 %r2, 1, 0, %p1;\n\tst.param.b32 [flag], %r2;\n"
                        "\tcall.uni leave_if, (flag);\n\tmov.u64 %rd2, count_arrivals;\n"
                        "prototype: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                        "\tcall (total), %rd2, (unused), prototype;\n\tld.param.b32 %r3, [total];\n"
                        "\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd3;\n\tst.global.u32 [%rd3], %r3;\n"
                        "\tret;\n}\n");
    ASSERT_TRUE(module.ok()) << module.diagnostics_text();
    std::vector<uint32_t> out(64, 999);
    ParameterBuffer parameters(module.kernel("survivors"));
    parameters.set(0, out.data());
    module.launch("survivors", {2, 1, 1}, {64, 1, 1}, parameters);
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], i < 40 ? 40u : 999u) << barrier << " thread " << i;
  }
}

// Each kernel counts only the .shared variables it reaches, directly or through the functions it
// calls, so a module may hold more than one block could have, as toolkit libraries do.
constexpr const char* two_large_arrays =
    ".version 9.0\n.target sm_80\n.address_size 64\n"
    ".shared .align 4 .b8 first[200000];\n.shared .align 4 .b8 second[200000];\n"
    ".shared .align 4 .b8 small_a[16];\n.shared .align 4 .b8 small_b[16];\n"
    ".func (.param .b32 result) round_trip_second(.param .b32 value)\n{\n\t.reg .b32 %r<3>;\n"
    "\tld.param.b32 %r1, [value];\n\tst.shared.u32 [second+199996], %r1;\n"
    "\tld.shared.u32 %r2, [second+199996];\n\tst.param.b32 [result], %r2;\n\tret;\n}\n"
    ".visible .entry uses_first(.param .u64 out)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
    "\tld.param.u64 %rd1, [out];\n\tst.shared.u32 [first+199996], 7;\n"
    "\tld.shared.u32 %r1, [first+199996];\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n"
    ".visible .entry uses_second(.param .u64 out)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
    "\t.param .b32 value;\n\t.param .b32 result;\n\tld.param.u64 %rd1, [out];\n\tst.param.b32 [value], 9;\n"
    "\tcall.uni (result), round_trip_second, (value);\n\tld.param.b32 %r1, [result];\n"
    "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n"
    ".visible .entry uses_both_small(.param .u64 out)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
    "\tld.param.u64 %rd1, [out];\n\tst.shared.u32 [small_a], 1;\n\tst.shared.u32 [small_b], 2;\n"
    "\tld.shared.u32 %r1, [small_a];\n\tld.shared.u32 %r2, [small_b];\n"
    "\tst.global.u32 [%rd1], %r1;\n\tst.global.u32 [%rd1+4], %r2;\n\tret;\n}\n";

TEST(PtxInstructions, KernelsCountOnlyTheSharedVariablesTheyReach) {
  LoadedModule module(two_large_arrays);
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  EXPECT_EQ(module.kernel("uses_first").static_shared_bytes, 200000u);
  EXPECT_EQ(module.kernel("uses_second").static_shared_bytes, 200000u);
  EXPECT_EQ(module.kernel("uses_both_small").static_shared_bytes, 32u);
  for (auto [kernel, expected] : {std::pair{"uses_first", 7u}, std::pair{"uses_second", 9u}}) {
    uint32_t out = 0;
    ParameterBuffer parameters(module.kernel(kernel));
    parameters.set(0, &out);
    module.launch(kernel, {1, 1, 1}, {1, 1, 1}, parameters);
    EXPECT_EQ(out, expected) << kernel;
  }
  std::array<uint32_t, 2> both{};
  ParameterBuffer parameters(module.kernel("uses_both_small"));
  parameters.set(0, both.data());
  module.launch("uses_both_small", {1, 1, 1}, {1, 1, 1}, parameters);
  EXPECT_EQ(both, (std::array<uint32_t, 2>{1, 2}));
}

// A .func may address dynamic shared memory with the same offset in every kernel, so it follows
// all of the module's static variables, and a kernel reaching it counts them all.
TEST(PtxInstructions, DynamicSharedMemoryFollowsEveryStaticVariable) {
  std::string ptx = std::string(two_large_arrays) + ".extern .shared .align 16 .b8 dynamic[];\n"
                    ".visible .entry uses_dynamic()\n{\n\tst.shared.u32 [dynamic], 1;\n\tret;\n}\n";
  CompileResult result = compile(ptx, CompileOptions{});
  ASSERT_TRUE(result.diagnostics.empty()) << result.diagnostics.front().to_string();
  ASSERT_EQ(result.module.kernels.size(), 4u);
  EXPECT_EQ(result.module.kernels[3].name, "uses_dynamic");
  EXPECT_EQ(result.module.kernels[3].static_shared_bytes, 200000u);
  EXPECT_EQ(result.module.kernels[2].static_shared_bytes, 32u);
}

TEST(PtxInstructions, OneKernelReachingTooMuchSharedMemoryIsReported) {
  std::string ptx = std::string(two_large_arrays) +
                    ".visible .entry uses_both_large()\n{\n\tst.shared.u32 [first], 1;\n"
                    "\tst.shared.u32 [second], 1;\n\tret;\n}\n";
  CompileResult result = compile(ptx, CompileOptions{});
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].message, "'second' takes the .shared variables of kernel 'uses_both_large' beyond 233472 bytes");
}

// `.alias name, body;`: a kernel calling name keeps body when CompileOptions::kernels drops the rest.
TEST(PtxInstructions, SelectedKernelsKeepTheFunctionsTheirAliasesName) {
  CompileOptions options;
  options.kernels = {"calls_alias"};
  CompileResult result = compile(".version 9.0\n.target sm_80\n.address_size 64\n"
                                 ".func (.param .b32 result) twice(.param .b32 value)\n{\n\t.reg .b32 %r<3>;\n"
                                 "\tld.param.b32 %r1, [value];\n\tadd.s32 %r2, %r1, %r1;\n\tst.param.b32 [result], %r2;\n\tret;\n}\n"
                                 ".func (.param .b32 result) twice_again(.param .b32 value);\n"
                                 ".alias twice_again, twice;\n"
                                 ".visible .entry calls_alias()\n{\n\t.param .b32 value;\n\t.param .b32 result;\n"
                                 "\tst.param.b32 [value], 3;\n\tcall.uni (result), twice_again, (value);\n\tret;\n}\n"
                                 ".visible .entry other()\n{\n\tret;\n}\n",
                                 options);
  EXPECT_TRUE(result.diagnostics.empty()) << result.diagnostics.front().to_string();
  ASSERT_EQ(result.module.kernels.size(), 1u);
  EXPECT_EQ(result.module.kernels[0].name, "calls_alias");
}

TEST(PtxInstructions, InvalidFormsAreReportedWhereTheyAre) {
  Snippet snippet("\tcvt.rn.s32.f32 %r1, %f1;\n"
                  "\tcvt.rni.f16.f32 %rs1, %f1;\n");
  ASSERT_FALSE(snippet.ok());
  EXPECT_EQ(snippet.diagnostics(), "test.ptx:14:2: cvt from float to integer needs .rni, .rzi, .rmi or .rpi\n"
                                   "test.ptx:15:2: this form of cvt into .f16 is not valid\n");
}

// %globaltimer counts nanoseconds of a monotonic clock: the kernel's two readings lie, in order,
// between the host's readings of CLOCK_MONOTONIC before and after the launch.
TEST(PtxInstructions, GlobalTimerCountsMonotonicNanoseconds) {
  Snippet snippet("\tmov.u64 %rd3, %globaltimer;\n"
                  "\tmov.u32 %r1, %globaltimer_lo;\n"
                  "\tmov.u32 %r2, %globaltimer_hi;\n"
                  "\tmov.u64 %rd4, %globaltimer;\n"
                  "\tst.global.u64 [%rd2], %rd3;\n\tst.global.u64 [%rd2+8], %rd4;\n"
                  "\tst.global.u32 [%rd2+16], %r1;\n\tst.global.u32 [%rd2+24], %r2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  auto now = [] {
    timespec time{};
    clock_gettime(CLOCK_MONOTONIC, &time);
    return static_cast<uint64_t>(time.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(time.tv_nsec);
  };
  uint64_t before = now();
  Slots out = snippet.run({});
  uint64_t after = now();
  EXPECT_LE(before, out[0]);
  EXPECT_LE(out[0], out[1]);
  EXPECT_LE(out[1], after);
  EXPECT_LE(out[0] >> 32, out[3]);
  EXPECT_LE(out[3], out[1] >> 32);
}

// The ISA's integer constant expressions (PTX ISA 9.0, section 4.6): C's operators and
// precedence over 64 bits, where a literal is .s64 unless written with U or too large for it,
// ~ and % treat their operands as unsigned, >> shifts by its left operand's signedness, and
// comparisons and logical operators give a signed 0 or 1. Expected values follow those rules;
// an H100 (ptxas, driver 580.159.04) gave the same for all of them.
TEST(PtxInstructions, ConstantExpressionsFoldAsTheIsaDefines) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"-7 / 2", static_cast<uint64_t>(-3)},
      {"-7 % 2", 1},  // (2^64 - 7) % 2
      {"7 % -3", 7},  // 7 % (2^64 - 3)
      {"-8 >> 1", static_cast<uint64_t>(-4)},
      {"-1 >> 60", static_cast<uint64_t>(-1)},
      {"0xFFFFFFFFFFFFFFFF >> 60", 15},
      {"(.u64) -1 >> 60", 15},
      {"(.s64) 0xFFFFFFFFFFFFFFFF >> 60", static_cast<uint64_t>(-1)},
      {"1U >> 0 - 1 + 1", 1},
      {"1 + 2 * 3 << 1", 14},
      {"-1 < 1U", 0},
      {"-1 < 1", 1},
      {"~0 == -1", 1},
      {"!5 + !0", 1},
      {"1 ? 2 : 3", 2},
      {"0 ? 2 : 0 ? 4 : 5", 5},
      {"6 & 3 | 8 ^ 1", 11},
      {"1 && 2 || 0", 1},
      {"5 > 3 == 1", 1},
      {"(1 << 31) * 2", 0x100000000},
      {"10 - 3 - 2", 5},
      {"100 / 10 / 5", 2},
      {"1 - -1", 2},
      {"WARP_SZ - 1", 31},
      {"3 >= 3 && 2 <= 1 || 4 != 4", 0},
      {"-(0x8000000000000000) / -1", 0},  // .u64: 2^63 / (2^64 - 1)
      {"~0x0F & 0xFF", 0xF0},
      {"017 + 0b11", 18},
  };
  for (size_t first = 0; first < cases.size(); first += 8) {
    std::string body;
    for (size_t index = first; index < std::min(first + 8, cases.size()); ++index)
      body += "\tmov.b64 %rd3, " + cases[index].first + ";\n\tst.global.u64 [%rd2+" + std::to_string(8 * (index - first)) + "], %rd3;\n";
    Snippet snippet(body);
    ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
    Slots out = snippet.run({});
    for (size_t index = first; index < std::min(first + 8, cases.size()); ++index)
      EXPECT_EQ(out[index - first], cases[index].second) << cases[index].first;
  }
  // In 32-bit operands and in addresses, as terms of a displacement.
  Snippet snippet("\tmov.b32 %r1, 40;\n\tadd.u32 %r2, %r1, (1 << 4) - 1;\n\tst.global.u32 [%rd2], %r2;\n"
                  "\tld.global.u64 %rd3, [%rd1+(2 * 4)];\n\tst.global.u64 [%rd2+8], %rd3;\n"
                  "\tld.global.u64 %rd3, [%rd1+2*8+-8];\n\tst.global.u64 [%rd2+4*4], %rd3;\n"
                  "\tand.b32 %r2, %r1, ~8;\n\tst.global.u32 [%rd2+24], %r2;\n");
  ASSERT_TRUE(snippet.ok()) << snippet.diagnostics();
  Slots out = snippet.run({100, 200, 300});
  EXPECT_EQ(out[0], 55u);
  EXPECT_EQ(out[1], 200u);
  EXPECT_EQ(out[2], 200u);
  EXPECT_EQ(out[3], 32u);
}

// Floating-point constant expressions, as ptxas takes them: + - * / and parentheses over .f64
// values (decimal or 0d literals) in operands and initialisers, rounded to the operand's type
// once; comparisons of them are integers. Expected values are the IEEE double results.
TEST(PtxInstructions, FloatingConstantExpressionsFoldInDoublePrecision) {
  LoadedModule module(R"(.version 9.0
.target sm_80
.address_size 64
.global .align 8 .f64 doubles[4] = {1.5 * 2.0, -(1.5), 1.0 / 3.0, 0d3FF0000000000000 + 2.0 * 3.0};
.global .align 4 .f32 singles[2] = {1.0 / 3.0, (2.5)};
.global .align 8 .s64 answers[2] = {1.5 < 2.5, 1.0 != 1.0};
.visible .entry copy(.param .u64 out)
{
  .reg .f32 %f<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.global.u64 %rd2, [doubles]; st.global.u64 [%rd1], %rd2;
  ld.global.u64 %rd2, [doubles+8]; st.global.u64 [%rd1+8], %rd2;
  ld.global.u64 %rd2, [doubles+16]; st.global.u64 [%rd1+16], %rd2;
  ld.global.u64 %rd2, [doubles+24]; st.global.u64 [%rd1+24], %rd2;
  ld.global.u64 %rd2, [singles]; st.global.u64 [%rd1+32], %rd2;
  ld.global.u64 %rd2, [answers]; st.global.u64 [%rd1+40], %rd2;
  ld.global.u64 %rd2, [answers+8]; st.global.u64 [%rd1+48], %rd2;
  mov.f32 %f1, 2.0 / 3.0; st.global.f32 [%rd1+56], %f1;
  ret;
}
)");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::array<uint64_t, 8> out{};
  out.fill(0xDEADBEEF);
  run_one_thread(module, "copy", out);
  EXPECT_EQ(out[0], std::bit_cast<uint64_t>(3.0));
  EXPECT_EQ(out[1], std::bit_cast<uint64_t>(-1.5));
  EXPECT_EQ(out[2], std::bit_cast<uint64_t>(1.0 / 3.0));
  EXPECT_EQ(out[3], std::bit_cast<uint64_t>(7.0));
  EXPECT_EQ(out[4], uint64_t{std::bit_cast<uint32_t>(2.5f)} << 32 | std::bit_cast<uint32_t>(static_cast<float>(1.0 / 3.0)));
  EXPECT_EQ(out[5], 1u);
  EXPECT_EQ(out[6], 0u);
  EXPECT_EQ(static_cast<uint32_t>(out[7]), std::bit_cast<uint32_t>(static_cast<float>(2.0 / 3.0)));
}

// A malformed or undefined expression is a diagnostic at its place; ptxas neither mixes integers
// with floating-point values nor takes % & | ^ ~ ! ?: or casts on the latter.
TEST(PtxInstructions, ReportsBadConstantExpressions) {
  for (std::string_view expression : {"1 / 0", "5 % (2 - 2)", "(1 + 2", "1 + ", "1 ? 2", "(.f32) 1", "1 + 2.5", "1.0 / 0.0",
                                      "1.5 % 2.0", "!1.5", "1 ? 2.0 : 3.0", "(.s64) 1.5", "2.0 & 1.0"}) {
    Snippet snippet("\tmov.b64 %rd3, " + std::string(expression) + ";\n");
    EXPECT_FALSE(snippet.ok()) << expression;
    EXPECT_NE(snippet.diagnostics().find("test.ptx:"), std::string::npos) << snippet.diagnostics();
  }
}

// Initialisers as an H100 holds them (ptxas, driver 580.159.04): braces group values without
// padding a short row (rows[0][1] is 3, not 0 as in C), an array whose first dimension is left
// out takes as many elements as the values fill, values may be constant expressions, and mov
// takes a variable's address with a displacement.
TEST(PtxInstructions, InitialisersFillMemoryInOrder) {
  LoadedModule module(R"(.version 9.0
.target sm_80
.address_size 64
.global .align 4 .u32 rows[3][2] = {{1}, {3, 4}, {5}};
.global .align 4 .u32 given[] = {7, 8, 9};
.global .align 4 .u32 pairs[][2] = {{1 << 4}, {-1, 2 * 3}};
.global .align 8 .v2 .u32 vectors[2] = {{1, 2}, {3, 4}};
.const .align 8 .u64 sizes[2] = {(1 << 40) | 5, WARP_SZ * 2};
.visible .entry copy(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [rows+4]; st.global.u32 [%rd1], %r1;
  ld.global.u32 %r1, [rows+8]; st.global.u32 [%rd1+4], %r1;
  ld.global.u32 %r1, [rows+16]; st.global.u32 [%rd1+8], %r1;
  ld.global.u32 %r1, [given+8]; st.global.u32 [%rd1+12], %r1;
  ld.global.u32 %r1, [pairs+4]; st.global.u32 [%rd1+16], %r1;
  ld.global.u32 %r1, [pairs+12]; st.global.u32 [%rd1+20], %r1;
  ld.global.u32 %r1, [vectors+4]; st.global.u32 [%rd1+24], %r1;
  ld.global.u32 %r1, [vectors+8]; st.global.u32 [%rd1+28], %r1;
  ld.const.u64 %rd2, [sizes]; st.global.u64 [%rd1+32], %rd2;
  ld.const.u64 %rd2, [sizes+8]; st.global.u64 [%rd1+40], %rd2;
  mov.u64 %rd3, given+2*4; ld.global.u32 %r1, [%rd3]; st.global.u32 [%rd1+48], %r1;
  mov.u64 %rd3, rows+12-4; ld.global.u32 %r1, [%rd3]; st.global.u32 [%rd1+52], %r1;
  ret;
}
)");
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  std::array<uint32_t, 14> out{};
  out.fill(0xDEADBEEF);
  run_one_thread(module, "copy", out);
  EXPECT_EQ(out[0], 3u);  // rows[0][1]
  EXPECT_EQ(out[1], 4u);  // rows[1][0]
  EXPECT_EQ(out[2], 0u);  // rows[2][0]
  EXPECT_EQ(out[3], 9u);  // given[2]
  EXPECT_EQ(out[4], 0xFFFFFFFFu);  // pairs[0][1]
  EXPECT_EQ(out[5], 0u);  // pairs[1][1]
  EXPECT_EQ(out[6], 2u);  // vectors[0].y
  EXPECT_EQ(out[7], 3u);  // vectors[1].x
  EXPECT_EQ(uint64_t{out[8]} | uint64_t{out[9]} << 32, (uint64_t{1} << 40) | 5);
  EXPECT_EQ(uint64_t{out[10]} | uint64_t{out[11]} << 32, 64u);
  // mov's address of a variable with a displacement.
  EXPECT_EQ(out[12], 9u);  // given[2]
  EXPECT_EQ(out[13], 4u);  // rows[1][0]
}

}  // namespace
}  // namespace xcuda::ptx::testing
