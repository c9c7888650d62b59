// cvt into and out of the sm_100a/sm_120a formats that no H200 golden can cover: the FP4 and FP6
// pairs e2m1x2, e2m3x2, e3m2x2 and the ue8m0x2 scale factors. Every expectation comes from the
// small format models below, written from the PTX ISA: section 5.2.3 "Alternate Floating-Point
// Data Formats" for the encodings and section 9.7.9.21 "cvt" for packing, rounding, .relu and
// .satfinite.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ptx_object_loader.h"

namespace xcuda::ptx::testing {
namespace {

// A one-thread kernel that runs `body` once per element: %a and %b (.b32) hold the element's two
// input words, %fa and %fb the same bits as .f32; `body` leaves its result in %d (.b32).
class ElementKernel {
 public:
  explicit ElementKernel(const std::string& body) : module_(wrap(body)) {}

  bool ok() const { return module_.ok(); }
  std::string diagnostics() const { return module_.diagnostics_text(); }
  // The line of the kernel's text where `body` starts.
  static int body_line() { return static_cast<int>(std::ranges::count(prologue(), '\n')) + 1; }

  // One result word per pair of input words.
  std::vector<uint32_t> run(const std::vector<std::array<uint32_t, 2>>& inputs) {
    std::vector<uint32_t> results(inputs.size(), 0xdeadbeef);
    ParameterBuffer parameters(module_.kernel("convert"));
    parameters.set(0, inputs.data())
        .set(1, results.data())
        .set(2, static_cast<uint32_t>(inputs.size()));
    module_.launch("convert", {1, 1, 1}, {1, 1, 1}, parameters);
    return results;
  }

 private:
  static std::string prologue() {
    return ".version 8.7\n.target sm_100a\n.address_size 64\n"
           ".visible .entry convert(.param .u64 in, .param .u64 out, .param .u32 count)\n{\n"
           "\t.reg .pred %p1;\n\t.reg .b8 %c1;\n\t.reg .b16 %h1;\n\t.reg .b32 %a, %b, %d, %i, %n;\n"
           "\t.reg .f32 %fa, %fb;\n\t.reg .b64 %in, %out;\n"
           "\tld.param.u64 %in, [in];\n\tld.param.u64 %out, [out];\n\tld.param.u32 %n, [count];\n"
           "\tmov.u32 %i, 0;\n\tsetp.eq.u32 %p1, %n, 0;\n\t@%p1 bra done;\n"
           "next:\n\tld.global.b32 %a, [%in];\n\tld.global.b32 %b, [%in+4];\n"
           "\tmov.b32 %fa, %a;\n\tmov.b32 %fb, %b;\n";
  }
  static std::string wrap(const std::string& body) {
    return prologue() + body +
           "\n\tst.global.b32 [%out], %d;\n"
           "\tadd.u64 %in, %in, 8;\n\tadd.u64 %out, %out, 4;\n\tadd.u32 %i, %i, 1;\n"
           "\tsetp.lt.u32 %p1, %i, %n;\n\t@%p1 bra next;\n"
           "done:\n\tret;\n}\n";
  }

  LoadedModule module_;
};

uint32_t bits(float value) { return std::bit_cast<uint32_t>(value); }
float from_bits(uint32_t word) { return std::bit_cast<float>(word); }

// e2m1, e2m3, e3m2 (ISA 5.2.3): a sign bit, then exponent and fraction fields; bias
// 2^(exponent bits - 1) - 1; exponent field 0 holds the subnormals; no infinity, no NaN, so
// every code is a number. A 6-bit code sits in the low bits of its byte.
struct MiniFloat {
  const char* name;  // as cvt spells the pair: e2m1x2
  int exponent_bits;
  int fraction_bits;

  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  uint32_t sign_bit() const { return 1u << (exponent_bits + fraction_bits); }
  uint32_t largest_code() const { return sign_bit() - 1; }  // MAX_NORM
  uint32_t byte_mask() const { return 2 * sign_bit() - 1; }

  double value(uint32_t code) const {
    uint32_t exponent = (code & largest_code()) >> fraction_bits;
    uint32_t fraction = code & ((1u << fraction_bits) - 1);
    double magnitude = exponent == 0
                           ? std::ldexp(fraction, 1 - bias() - fraction_bits)
                           : std::ldexp((1u << fraction_bits) + fraction,
                                        static_cast<int>(exponent) - bias() - fraction_bits);
    return code & sign_bit() ? -magnitude : magnitude;
  }

  // cvt.rn.satfinite{.relu} (ISA 9.7.9.21): round to nearest, ties to the even code; a
  // magnitude beyond MAX_NORM gives MAX_NORM with the input's sign, NaN gives +MAX_NORM; .relu
  // turns a negative result into +0. Negative zero counts as negative, as it does for e4m3x2 on
  // an H200 (conformance case narrow/cvt_rn_satfinite_relu_e4m3x2_f32).
  uint32_t round(float input, bool relu) const {
    if (std::isnan(input)) return largest_code();
    double magnitude = std::fabs(static_cast<double>(input));
    uint32_t code = 0;
    while (code < largest_code()) {
      double midpoint = (value(code) + value(code + 1)) / 2;
      if (magnitude < midpoint || (magnitude == midpoint && code % 2 == 0)) break;
      ++code;
    }
    bool negative = std::signbit(input);
    if (relu && negative) return 0;
    return negative ? code | sign_bit() : code;
  }
};

constexpr MiniFloat e2m1{"e2m1x2", 2, 1};
constexpr MiniFloat e2m3{"e2m3x2", 2, 3};
constexpr MiniFloat e3m2{"e3m2x2", 3, 2};
constexpr MiniFloat mini_floats[] = {e2m1, e2m3, e3m2};

// The f16 bits of a value that f16 holds exactly as zero or a normal number (every e2m1, e2m3
// and e3m2 value does).
uint32_t half_bits(double value) {
  uint32_t sign = std::signbit(value) ? 0x8000 : 0;
  if (value == 0) return sign;
  int exponent;
  double fraction = std::frexp(std::fabs(value), &exponent);  // in [0.5, 1)
  return sign | static_cast<uint32_t>(exponent - 1 + 15) << 10 |
         static_cast<uint32_t>(std::ldexp(fraction * 2 - 1, 10));
}

// ue8m0 (ISA 5.2.3): an unsigned bare exponent, code c is 2^(c - 127), 0xff is NaN; no zero, no
// infinity. cvt.rz/.rp (9.7.9.21): the representable value nearest |x| in that direction; NaN
// stays NaN, and with .satfinite a magnitude beyond MAX_NORM (2^127) gives +MAX_NORM. Where the
// ISA is silent (the sign, magnitudes below 2^-127, infinity without .satfinite) this follows
// NVIDIA's software definition of the same conversion, __nv_cvt_float_to_e8m0 in cuda_fp8.hpp:
// the sign is dropped, what lies below 2^-127 becomes code 0, and overflow without .satfinite
// is NaN.
uint32_t ue8m0_round(float input, bool up, bool satfinite) {
  constexpr uint32_t nan = 0xff, largest = 0xfe;
  if (std::isnan(input)) return nan;
  double magnitude = std::fabs(static_cast<double>(input));
  if (up) {
    for (uint32_t code = 0; code <= largest; ++code)
      if (std::ldexp(1.0, static_cast<int>(code) - 127) >= magnitude) return code;
    return satfinite ? largest : nan;
  }
  if (std::isinf(magnitude)) return satfinite ? largest : nan;
  for (uint32_t code = largest; code > 0; --code)
    if (std::ldexp(1.0, static_cast<int>(code) - 127) <= magnitude) return code;
  return 0;
}

// cvt.rn.bf16x2.ue8m0x2: 2^(c - 127) exactly, which bf16 holds (2^-127 as a subnormal); NaN for
// 0xff.
bool ue8m0_widened_correctly(uint32_t code, uint32_t bf16) {
  if (code == 0xff) return (bf16 & 0x7f80) == 0x7f80 && (bf16 & 0x7f) != 0;
  return bf16 == bits(std::ldexp(1.0f, static_cast<int>(code) - 127)) >> 16;
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", value);
  return text;
}

// f32 inputs around a format's values: every value of both signs, every midpoint between
// neighbours (the ties) and the floats on either side of it, beyond MAX_NORM, the format's
// subnormals and half of the smallest, f32 subnormals, zeros, infinities, NaNs (quiet,
// signalling, negative), then every bf16 bit pattern as an f32 and random f32 bit patterns.
std::vector<float> f32_inputs(const MiniFloat& format) {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  std::vector<float> magnitudes{0.0f, 1e-40f, std::numeric_limits<float>::denorm_min(),
                                std::numeric_limits<float>::max(), infinity};
  for (uint32_t code = 0; code <= format.largest_code(); ++code) {
    float value = static_cast<float>(format.value(code));
    float next = static_cast<float>(code < format.largest_code() ? format.value(code + 1)
                                                                 : 2 * format.value(code));
    float midpoint = (value + next) / 2;
    for (float magnitude : {value, midpoint, std::nextafter(midpoint, 0.0f),
                            std::nextafter(midpoint, infinity), next})
      magnitudes.push_back(magnitude);
  }
  magnitudes.push_back(static_cast<float>(format.value(1) / 2));
  std::vector<float> inputs;
  for (float magnitude : magnitudes) {
    inputs.push_back(magnitude);
    inputs.push_back(-magnitude);
  }
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u})
    inputs.push_back(from_bits(nan));
  for (uint32_t pattern = 0; pattern <= 0xffff; ++pattern)
    inputs.push_back(from_bits(pattern << 16));
  std::mt19937 random(20261203);
  for (int i = 0; i < 4096; ++i) inputs.push_back(from_bits(static_cast<uint32_t>(random())));
  return inputs;
}

// Pairs every input with another, so that each value meets both halves of the packed result.
std::vector<std::array<uint32_t, 2>> paired(const std::vector<float>& inputs) {
  std::vector<std::array<uint32_t, 2>> pairs;
  for (size_t i = 0; i < inputs.size(); ++i)
    pairs.push_back({bits(inputs[i]), bits(inputs[(i * 7 + 3) % inputs.size()])});
  for (size_t i = 0; i < inputs.size(); ++i)
    pairs.push_back({bits(inputs[(i * 5 + 1) % inputs.size()]), bits(inputs[i])});
  return pairs;
}

TEST(PtxNarrowFloats, F32PairsRoundToNearestEvenIntoFp4AndFp6WithSatfinite) {
  for (const MiniFloat& format : mini_floats) {
    bool four_bits = format.exponent_bits + format.fraction_bits == 3;
    auto pairs = paired(f32_inputs(format));
    for (bool relu : {false, true}) {
      std::string instruction =
          std::string("cvt.rn.satfinite") + (relu ? ".relu." : ".") + format.name + ".f32";
      ElementKernel kernel(four_bits
                               ? "\t" + instruction + " %c1, %fa, %fb;\n\tcvt.u32.u8 %d, %c1;"
                               : "\t" + instruction + " %h1, %fa, %fb;\n\tcvt.u32.u16 %d, %h1;");
      ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
      auto results = kernel.run(pairs);
      int failures = 0;
      for (size_t i = 0; i < pairs.size() && failures < 20; ++i) {
        // a goes to the upper half, b to the lower; a 6-bit code leaves its byte's top bits 0.
        uint32_t high = format.round(from_bits(pairs[i][0]), relu),
                 low = format.round(from_bits(pairs[i][1]), relu);
        uint32_t expected = four_bits ? high << 4 | low : high << 8 | low;
        if (results[i] != expected) {
          ++failures;
          ADD_FAILURE() << instruction << " of " << from_bits(pairs[i][0]) << " ("
                        << hex(pairs[i][0]) << "), " << from_bits(pairs[i][1]) << " ("
                        << hex(pairs[i][1]) << "): " << hex(results[i]) << ", expected "
                        << hex(expected);
        }
      }
    }
  }
}

// cvt.rn.satfinite{.relu}.{e2m1x2,e2m3x2,e3m2x2}.{f16x2,bf16x2} d, a (PTX ISA 9.1): the upper
// half of a goes to the upper half of d. Every 16-bit pattern meets both halves.
TEST(PtxNarrowFloats, PackedHalvesRoundIntoFp4AndFp6) {
  std::vector<std::array<uint32_t, 2>> pairs;
  for (uint32_t pattern = 0; pattern <= 0xffff; ++pattern)
    pairs.push_back({pattern << 16 | (pattern * 40503u & 0xffff), 0});
  auto half_value = [](uint32_t half) {
    float magnitude =
        std::ldexp(static_cast<float>(half >> 10 & 0x1f ? (half & 0x3ff) | 0x400 : half & 0x3ff),
                   std::max(static_cast<int>(half >> 10 & 0x1f), 1) - 25);
    if ((half & 0x7c00) == 0x7c00)
      magnitude = half & 0x3ff ? std::numeric_limits<float>::quiet_NaN()
                               : std::numeric_limits<float>::infinity();
    return half & 0x8000 ? -magnitude : magnitude;
  };
  auto brain_value = [](uint32_t half) { return from_bits(half << 16); };
  for (const MiniFloat& format : mini_floats) {
    bool four_bits = format.exponent_bits + format.fraction_bits == 3;
    for (bool brain : {false, true}) {
      for (bool relu : {false, true}) {
        std::string instruction = std::string("cvt.rn.satfinite") + (relu ? ".relu." : ".") +
                                  format.name + (brain ? ".bf16x2" : ".f16x2");
        ElementKernel kernel(four_bits ? "\t" + instruction + " %c1, %a;\n\tcvt.u32.u8 %d, %c1;"
                                       : "\t" + instruction + " %h1, %a;\n\tcvt.u32.u16 %d, %h1;");
        ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
        auto results = kernel.run(pairs);
        int failures = 0;
        for (size_t i = 0; i < pairs.size() && failures < 20; ++i) {
          uint32_t upper = pairs[i][0] >> 16, lower = pairs[i][0] & 0xffff;
          uint32_t high = format.round(brain ? brain_value(upper) : half_value(upper), relu);
          uint32_t low = format.round(brain ? brain_value(lower) : half_value(lower), relu);
          uint32_t expected = four_bits ? high << 4 | low : high << 8 | low;
          if (results[i] != expected) {
            ++failures;
            ADD_FAILURE() << instruction << " of " << hex(pairs[i][0]) << ": " << hex(results[i])
                          << ", expected " << hex(expected);
          }
        }
      }
    }
  }
}

TEST(PtxNarrowFloats, Fp4AndFp6PairsWidenExactlyToF16x2) {
  for (const MiniFloat& format : mini_floats) {
    bool four_bits = format.exponent_bits + format.fraction_bits == 3;
    // Every pair of codes; a 6-bit code's top two bits are 0.
    std::vector<std::array<uint32_t, 2>> pairs;
    for (uint32_t high = 0; high <= format.byte_mask(); ++high)
      for (uint32_t low = 0; low <= format.byte_mask(); ++low)
        pairs.push_back({four_bits ? high << 4 | low : high << 8 | low, 0});
    for (bool relu : {false, true}) {
      std::string instruction =
          std::string("cvt.rn") + (relu ? ".relu" : "") + ".f16x2." + format.name;
      ElementKernel kernel(four_bits ? "\tcvt.u8.u32 %c1, %a;\n\t" + instruction + " %d, %c1;"
                                     : "\tcvt.u16.u32 %h1, %a;\n\t" + instruction + " %d, %h1;");
      ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
      auto results = kernel.run(pairs);
      for (size_t i = 0; i < pairs.size(); ++i) {
        uint32_t shift = four_bits ? 4 : 8;
        auto widen = [&](uint32_t code) {
          double value = format.value(code);
          return relu && (code & format.sign_bit()) ? 0u : half_bits(value);
        };
        uint32_t expected =
            widen(pairs[i][0] >> shift) << 16 | widen(pairs[i][0] & format.byte_mask());
        EXPECT_EQ(results[i], expected)
            << instruction << " of " << hex(pairs[i][0]) << ": " << hex(results[i]);
      }
    }
  }
}

// f32 inputs around ue8m0's values: every power of two from 2^-149 to 2^127 and the floats
// beside it, both signs, zeros, the largest float, infinities and NaNs, every bf16 bit pattern
// as an f32, and random bit patterns.
std::vector<float> ue8m0_inputs() {
  constexpr float infinity = std::numeric_limits<float>::infinity();
  std::vector<float> inputs;
  for (int exponent = -149; exponent <= 127; ++exponent) {
    float power = std::ldexp(1.0f, exponent);
    for (float value :
         {power, std::nextafter(power, 0.0f), std::nextafter(power, infinity), power * 1.5f}) {
      inputs.push_back(value);
      inputs.push_back(-value);
    }
  }
  for (float value : {0.0f, std::numeric_limits<float>::max(), infinity}) {
    inputs.push_back(value);
    inputs.push_back(-value);
  }
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u}) inputs.push_back(from_bits(nan));
  for (uint32_t pattern = 0; pattern <= 0xffff; ++pattern)
    inputs.push_back(from_bits(pattern << 16));
  std::mt19937 random(127);
  for (int i = 0; i < 4096; ++i) inputs.push_back(from_bits(static_cast<uint32_t>(random())));
  return inputs;
}

struct Ue8m0Rounding {
  const char* modifiers;
  bool up;
  bool satfinite;
};
constexpr Ue8m0Rounding ue8m0_roundings[] = {{"rz", false, false},
                                             {"rz.satfinite", false, true},
                                             {"rp", true, false},
                                             {"rp.satfinite", true, true}};

TEST(PtxNarrowFloats, F32PairsRoundToUe8m0ScaleFactors) {
  auto pairs = paired(ue8m0_inputs());
  for (const Ue8m0Rounding& rounding : ue8m0_roundings) {
    std::string instruction = std::string("cvt.") + rounding.modifiers + ".ue8m0x2.f32";
    ElementKernel kernel("\t" + instruction + " %h1, %fa, %fb;\n\tcvt.u32.u16 %d, %h1;");
    ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
    auto results = kernel.run(pairs);
    int failures = 0;
    for (size_t i = 0; i < pairs.size() && failures < 20; ++i) {
      uint32_t expected = ue8m0_round(from_bits(pairs[i][0]), rounding.up, rounding.satfinite)
                              << 8 |
                          ue8m0_round(from_bits(pairs[i][1]), rounding.up, rounding.satfinite);
      if (results[i] != expected) {
        ++failures;
        ADD_FAILURE() << instruction << " of " << from_bits(pairs[i][0]) << " (" << hex(pairs[i][0])
                      << "), " << from_bits(pairs[i][1]) << " (" << hex(pairs[i][1])
                      << "): " << hex(results[i]) << ", expected " << hex(expected);
      }
    }
  }
}

TEST(PtxNarrowFloats, Bf16x2PairsRoundToUe8m0ScaleFactors) {
  // Every bf16 value in each half: the upper one goes to the upper byte.
  std::vector<std::array<uint32_t, 2>> pairs;
  for (uint32_t pattern = 0; pattern <= 0xffff; ++pattern)
    pairs.push_back({pattern << 16 | (pattern * 40503u & 0xffff), 0});
  for (const Ue8m0Rounding& rounding : ue8m0_roundings) {
    std::string instruction = std::string("cvt.") + rounding.modifiers + ".ue8m0x2.bf16x2";
    ElementKernel kernel("\t" + instruction + " %h1, %a;\n\tcvt.u32.u16 %d, %h1;");
    ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
    auto results = kernel.run(pairs);
    int failures = 0;
    for (size_t i = 0; i < pairs.size() && failures < 20; ++i) {
      float high = from_bits(pairs[i][0] & 0xffff0000), low = from_bits(pairs[i][0] << 16);
      uint32_t expected = ue8m0_round(high, rounding.up, rounding.satfinite) << 8 |
                          ue8m0_round(low, rounding.up, rounding.satfinite);
      if (results[i] != expected) {
        ++failures;
        ADD_FAILURE() << instruction << " of " << hex(pairs[i][0]) << ": " << hex(results[i])
                      << ", expected " << hex(expected);
      }
    }
  }
}

TEST(PtxNarrowFloats, Ue8m0PairsWidenExactlyToBf16x2) {
  std::vector<std::array<uint32_t, 2>> pairs;
  for (uint32_t codes = 0; codes <= 0xffff; ++codes) pairs.push_back({codes, 0});
  ElementKernel kernel("\tcvt.u16.u32 %h1, %a;\n\tcvt.rn.bf16x2.ue8m0x2 %d, %h1;");
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  auto results = kernel.run(pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_TRUE(ue8m0_widened_correctly(pairs[i][0] >> 8, results[i] >> 16))
        << hex(pairs[i][0]) << ": " << hex(results[i]);
    EXPECT_TRUE(ue8m0_widened_correctly(pairs[i][0] & 0xff, results[i] & 0xffff))
        << hex(pairs[i][0]) << ": " << hex(results[i]);
  }
}

// cvt.rs (ISA 9.7.9.21, "rounding modifiers"): "rounded in the direction toward zero or away
// from zero based on the carry out of the integer addition of the supplied random bits (rbits)
// to the truncated off (discarded) bits of mantissa from the input". With rbits 0 nothing
// carries: every .rs form is .rz, whose .f16x2 and .bf16x2 forms the H200 goldens cover.
TEST(PtxNarrowFloats, StochasticRoundingWithoutRandomBitsIsTowardZero) {
  auto pairs = paired(f32_inputs(e2m3));
  for (const char* format : {"f16x2", "bf16x2"}) {
    for (const char* modifiers : {"", ".relu", ".satfinite", ".relu.satfinite"}) {
      std::string suffix = std::string(modifiers) + "." + format + ".f32";
      ElementKernel stochastic("\tcvt.rs" + suffix + " %d, %fa, %fb, 0;");
      ElementKernel toward_zero("\tcvt.rz" + suffix + " %d, %fa, %fb;");
      ASSERT_TRUE(stochastic.ok()) << stochastic.diagnostics();
      ASSERT_TRUE(toward_zero.ok()) << toward_zero.diagnostics();
      auto got = stochastic.run(pairs), expected = toward_zero.run(pairs);
      int failures = 0;
      for (size_t i = 0; i < pairs.size() && failures < 20; ++i)
        if (got[i] != expected[i]) {
          ++failures;
          ADD_FAILURE() << "cvt.rs" << suffix << " of " << hex(pairs[i][0]) << ", " << hex(pairs[i][1])
                        << " with rbits 0: " << hex(got[i]) << ", cvt.rz gives " << hex(expected[i]);
        }
    }
  }
}

// A normal .f16 result discards 13 fraction bits of the .f32 input and a .bf16 result 16, just
// as many random bits as the ISA hands each value: a in the upper half of rbits, b in the lower,
// for .f16x2 the 13 low bits of each half. The carry adds one unit to the truncated magnitude,
// which may carry into the exponent, or to infinity (the largest finite value with .satfinite).
TEST(PtxNarrowFloats, StochasticRoundingCarriesIntoTheLastPlaceOfNormalHalves) {
  std::mt19937 random(20261204);
  std::vector<std::array<uint32_t, 2>> pairs;
  auto normal_input = [&](bool brain) {
    uint32_t word = static_cast<uint32_t>(random());
    // f16's normal exponents are -14..15; bf16 shares f32's (1..254 as fields).
    uint32_t exponent = brain ? 1 + word % 254 : 127 - 14 + word % 30;
    if (word % 16 == 0) return (word & 0x80000000u) | (brain ? 254u : 127u + 15) << 23 | 0x7fffffu;  // overflows
    return (word & 0x80000000u) | exponent << 23 | (static_cast<uint32_t>(random()) & 0x7fffffu);
  };
  for (bool brain : {false, true}) {
    pairs.clear();
    for (int i = 0; i < 20000; ++i) pairs.push_back({normal_input(brain), normal_input(brain)});
    for (bool satfinite : {false, true}) {
      std::string instruction = std::string("cvt.rs") + (satfinite ? ".satfinite" : "") + (brain ? ".bf16x2" : ".f16x2") + ".f32";
      // rbits mixes both inputs, so that every pair meets other random bits.
      ElementKernel kernel("\t{\n\t.reg .b32 %random;\n\tmul.lo.u32 %random, %a, 0x9e3779b1;\n\txor.b32 %random, %random, %b;\n\t" +
                           instruction + " %d, %fa, %fb, %random;\n\t}");
      ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
      auto results = kernel.run(pairs);
      auto round = [&](uint32_t input, uint32_t random_bits) {
        const int discarded_bits = brain ? 16 : 13;
        const uint32_t infinity = brain ? 0x7f80 : 0x7c00;
        uint32_t sign = input >> 31, magnitude = input & 0x7fffffff;
        uint32_t code = brain ? magnitude >> 16
                              : ((magnitude >> 23) - 127 + 15) << 10 | (magnitude & 0x7fffff) >> 13;
        uint32_t discarded = magnitude & ((1u << discarded_bits) - 1);
        if (discarded + (random_bits & ((1u << discarded_bits) - 1)) >= 1u << discarded_bits) ++code;
        if (code >= infinity) code = satfinite ? infinity - 1 : infinity;
        return sign << 15 | code;
      };
      int failures = 0;
      for (size_t i = 0; i < pairs.size() && failures < 20; ++i) {
        uint32_t random_bits = pairs[i][0] * 0x9e3779b1u ^ pairs[i][1];
        uint32_t expected = round(pairs[i][0], random_bits >> 16) << 16 | round(pairs[i][1], random_bits & 0xffff);
        if (results[i] != expected) {
          ++failures;
          ADD_FAILURE() << instruction << " of " << hex(pairs[i][0]) << ", " << hex(pairs[i][1]) << " with rbits "
                        << hex(random_bits) << ": " << hex(results[i]) << ", expected " << hex(expected);
        }
      }
    }
  }
}

// The fours: with rbits 0, toward zero (the largest code at or below the magnitude; beyond the
// largest finite value that value, as .satfinite, required here, says; NaN as the .rn forms give
// it). Then which random bits serve which value, as the ISA lays them out: for the 8- and 6-bit
// fours the upper half of rbits serves a and b, the lower e and f; for e2m1x4 the upper byte of
// each half a and b, the lower bytes e and f. Each value lies halfway between two codes, so it
// goes away from zero exactly when its random bits' top bit is set: that places the random bits
// at the top of the discarded ones, which the ISA leaves open (see lower/conversion.cpp).
TEST(PtxNarrowFloats, StochasticRoundingIntoFours) {
  struct Four {
    MiniFloat format;
    const char* name;
    uint32_t largest;  // the largest finite code
    uint32_t nan;      // what NaN becomes
  };
  const Four fours[] = {{{"e4m3x4", 4, 3}, "e4m3x4", 0x7e, 0x7f}, {{"e5m2x4", 5, 2}, "e5m2x4", 0x7b, 0x7f},
                        {e3m2, "e3m2x4", 0x1f, 0x1f},            {e2m3, "e2m3x4", 0x1f, 0x1f},
                        {e2m1, "e2m1x4", 0x7, 0x7}};
  for (const Four& four : fours) {
    const MiniFloat& format = four.format;
    const bool nibbles = std::string(four.name) == "e2m1x4";
    const uint32_t sign_bit = format.sign_bit();
    auto toward_zero = [&](float input, bool relu) -> uint32_t {
      if (std::isnan(input)) return four.nan;
      double magnitude = std::fabs(static_cast<double>(input));
      uint32_t code = 0;
      while (code < four.largest && format.value(code + 1) <= magnitude) ++code;
      if (relu && std::signbit(input)) return 0;
      return std::signbit(input) ? code | sign_bit : code;
    };
    auto pack = [&](const std::array<uint32_t, 4>& codes) {  // a, b, e, f from the top
      uint32_t word = 0;
      for (uint32_t code : codes) word = nibbles ? word << 4 | code : word << 8 | code;
      return word;
    };
    const std::string destination = nibbles ? "%h1" : "%d";
    const std::string widen = nibbles ? "\n\tcvt.u32.u16 %d, %h1;" : "";
    auto inputs = paired(f32_inputs(format));
    for (bool relu : {false, true}) {
      std::string instruction = std::string("cvt.rs") + (relu ? ".relu" : "") + ".satfinite." + four.name + ".f32";
      ElementKernel kernel("\t" + instruction + " " + destination + ", {%fa, %fb, %fb, %fa}, 0;" + widen);
      ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
      auto results = kernel.run(inputs);
      int failures = 0;
      for (size_t i = 0; i < inputs.size() && failures < 20; ++i) {
        uint32_t a = toward_zero(from_bits(inputs[i][0]), relu), b = toward_zero(from_bits(inputs[i][1]), relu);
        uint32_t expected = pack({a, b, b, a});
        if (results[i] != expected) {
          ++failures;
          ADD_FAILURE() << instruction << " of " << hex(inputs[i][0]) << ", " << hex(inputs[i][1])
                        << " with rbits 0: " << hex(results[i]) << ", expected " << hex(expected);
        }
      }
    }
    // Halfway between codes 2 and 3 (normal or not, always representable in f32).
    const float halfway = static_cast<float>((format.value(2) + format.value(3)) / 2);
    const uint32_t down = 2, up = 3;
    struct Case {
      uint32_t random_bits;
      std::array<uint32_t, 4> codes;  // a, b, e, f
    };
    const std::vector<Case> cases =
        nibbles ? std::vector<Case>{{0x80008000, {up, up, down, down}}, {0x00800080, {down, down, up, up}},
                                    {0x80000000, {up, down, down, down}}, {0x00000080, {down, down, down, up}},
                                    {0x7f7f7f7f, {down, down, down, down}}, {0x80808080, {up, up, up, up}}}
                : std::vector<Case>{{0x80000000, {up, up, down, down}}, {0x00008000, {down, down, up, up}},
                                    {0x7fff7fff, {down, down, down, down}}, {0x80008000, {up, up, up, up}}};
    for (const Case& test : cases) {
      char rbits[16];
      std::snprintf(rbits, sizeof rbits, "0x%08x", test.random_bits);
      std::string instruction = std::string("cvt.rs.satfinite.") + four.name + ".f32";
      ElementKernel kernel("\t" + instruction + " " + destination + ", {%fa, %fa, %fa, %fa}, " + rbits + ";" + widen);
      ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
      auto results = kernel.run({{bits(halfway), 0}, {bits(-halfway), 0}});
      EXPECT_EQ(results[0], pack(test.codes)) << instruction << " of " << halfway << " with rbits " << rbits;
      std::array<uint32_t, 4> negative = test.codes;
      for (uint32_t& code : negative) code |= sign_bit;
      EXPECT_EQ(results[1], pack(negative)) << instruction << " of " << -halfway << " with rbits " << rbits;
    }
  }
}

// Forms that the host does not run yet, or that the ISA does not have, are refused with a
// diagnostic at the instruction, never miscompiled or crashed on.
TEST(PtxNarrowFloats, UnsupportedFormsAreReportedAtTheInstruction) {
  for (const char* body : {"\tcvt.rs.e2m1x4.f32 %h1, {%fa, %fb, %fa, %fb}, %a;",
                           "\tcvt.rs.satfinite.e2m1x4.f32 %h1, {%fa, %fb}, %a;",
                           "\tcvt.rs.f16.f32 %h1, %fa, %a;",
                           "\tcvt.rn.f16x2.e4m3x4 %a, %h1;",
                           "\tcvt.rz.relu.satfinite.ue8m0x2.bf16x2 %h1, %a;",
                           "\tcvt.rn.satfinite.ue8m0x2.f32 %h1, %fa, %fb;"}) {
    ElementKernel kernel(std::string(body) + "\n\tcvt.u32.u16 %d, %h1;");
    EXPECT_FALSE(kernel.ok()) << body;
    std::string location = "test.ptx:" + std::to_string(ElementKernel::body_line()) + ":";
    EXPECT_NE(kernel.diagnostics().find(location), std::string::npos) << body << "\n"
                                                                      << kernel.diagnostics();
  }
}

}  // namespace
}  // namespace xcuda::ptx::testing
