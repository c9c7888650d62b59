// Warp collectives, one small hand-written PTX kernel at a time, on blocks that end in a
// partial warp. Expected values follow CUDA's documented definitions (__shfl_sync with a width,
// __ballot_sync, __match_any_sync, __reduce_*_sync), computed here lane by lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <numeric>

#include "host_abi.h"
#include "ptx_object_loader.h"
#include "runtime/host/host_loader.h"
#include "target/host/builtin_library.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::testing {
namespace {

using Words = std::vector<uint32_t>;

// One block of `threads` running `body`: %r1 is the thread's input word, %r2 its lane, %r3 its
// thread index; the body leaves its answer in %r10 (and a second one in %r11).
class WarpKernel {
 public:
  // `whole_warp_blocks`: compiled, as the runtime compiles for such launches, to run only blocks
  // whose width is whole warps (CompileOptions::whole_warp_blocks). `optimization_level` 1: the
  // runtime's quick first tier.
  explicit WarpKernel(std::string_view body, bool whole_warp_blocks = false, int optimization_level = 3)
      : module_(wrap(body), options(whole_warp_blocks, optimization_level)) {}

  std::string diagnostics() const { return module_.diagnostics_text(); }
  bool ok() const { return module_.ok(); }
  size_t object_bytes() const { return module_.object_bytes(); }
  // The object's symbols, each with whether the object defines it.
  std::vector<std::pair<std::string, bool>> symbols() const { return module_.symbols(); }

  // Whether a block of whole warps runs warp by warp, its lanes as the elements of vectors
  // (target/host/warp_lanes.h): the kernel's switch is then defined, and on.
  bool runs_warp_by_warp() const {
    try {
      std::string name = std::string(host::warp_lanes_switch_prefix) + host_abi::block_symbol_prefix + "warp";
      return *static_cast<const uint8_t*>(module_.global(name)) != 0;
    } catch (const std::runtime_error&) {
      return false;
    }
  }

  // The first and second answers of every thread.
  std::pair<Words, Words> run(const Words& input) {
    Words first(input.size(), 0xDEADBEEF), second(input.size(), 0xDEADBEEF);
    ParameterBuffer parameters(module_.kernel("warp"));
    parameters.set(0, input.data()).set(1, first.data()).set(2, second.data());
    module_.launch("warp", {1, 1, 1}, {static_cast<uint32_t>(input.size()), 1, 1}, parameters);
    return {first, second};
  }

 private:
  static CompileOptions options(bool whole_warp_blocks, int optimization_level) {
    CompileOptions options;
    options.file_name = "warp.ptx";
    options.whole_warp_blocks = whole_warp_blocks;
    options.optimization_level = optimization_level;
    return options;
  }

  static std::string wrap(std::string_view body) {
    return std::string(".version 9.0\n.target sm_100a\n.address_size 64\n"
                       ".visible .entry warp(.param .u64 in, .param .u64 first, .param .u64 second)\n{\n"
                       "\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n"
                       "\t.shared .align 4 .b32 scratch[64];\n"
                       "\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r2, %laneid;\n"
                       "\tld.param.u64 %rd1, [in];\n\tmul.wide.u32 %rd2, %r3, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
                       "\tld.global.u32 %r1, [%rd3];\n\tmov.u32 %r10, 0;\n\tmov.u32 %r11, 0;\n") +
           std::string(body) +
           "\n\tld.param.u64 %rd4, [first];\n\tadd.s64 %rd5, %rd4, %rd2;\n\tst.global.u32 [%rd5], %r10;\n"
           "\tld.param.u64 %rd6, [second];\n\tadd.s64 %rd7, %rd6, %rd2;\n\tst.global.u32 [%rd7], %r11;\n"
           "\tret;\n}\n";
  }

  LoadedModule module_;
};

Words sample_input(size_t threads) {
  Words input(threads);
  for (size_t index = 0; index < threads; ++index) input[index] = static_cast<uint32_t>(index * 2654435761u >> 7);
  return input;
}

// Runs `body` on a block of `threads` and compares every thread's answer with `expected(thread)`,
// compiled optimised and as the first tier, whose exchanges share their code (warp_exchange.h).
void expect_per_thread(std::string_view body, size_t threads, const Words& input,
                       const std::function<uint32_t(size_t thread)>& expected,
                       const std::function<uint32_t(size_t thread)>& expected_second = nullptr) {
  for (int level : {3, 1}) {
    SCOPED_TRACE("-O" + std::to_string(level));
    WarpKernel kernel(body, /*whole_warp_blocks=*/false, level);
    ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
    auto [first, second] = kernel.run(input);
    for (size_t thread = 0; thread < threads; ++thread) {
      EXPECT_EQ(first[thread], expected(thread)) << "thread " << thread << "\n" << body;
      if (expected_second) {
        EXPECT_EQ(second[thread], expected_second(thread)) << "thread " << thread << " (second)\n" << body;
      }
    }
  }
}

constexpr size_t partial_block = 48;  // one whole warp and one of 16 lanes

// The segment of `width` lanes holding `thread`, as CUDA's __shfl_*_sync(…, width) sees it.
size_t segment_start(size_t thread, size_t width) { return thread / width * width; }

TEST(PtxWarp, ShuffleIndexWithinSegmentsOfEight) {
  Words input = sample_input(partial_block);
  // c = ((32 - width) << 8) | 31: the segment mask and the clamp CUDA uses for a width.
  expect_per_thread("\tshfl.sync.idx.b32 %r10|%p1, %r1, 5, 0x181f, -1;\n\tselp.u32 %r11, 1, 0, %p1;", partial_block, input,
                    [&](size_t thread) { return input[segment_start(thread, 8) + 5]; }, [](size_t) { return 1u; });
}

TEST(PtxWarp, ShuffleUpStaysInsideItsSegmentAndReportsTheClamp) {
  Words input = sample_input(partial_block);
  expect_per_thread("\tshfl.sync.up.b32 %r10|%p1, %r1, 3, 0x1000, -1;\n\tselp.u32 %r11, 1, 0, %p1;", partial_block, input,
                    [&](size_t thread) { return thread % 16 >= 3 ? input[thread - 3] : input[thread]; },
                    [](size_t thread) { return thread % 16 >= 3 ? 1u : 0u; });
}

TEST(PtxWarp, ShuffleDownWithWidthSixteen) {
  Words input = sample_input(partial_block);
  expect_per_thread("\tshfl.sync.down.b32 %r10|%p1, %r1, 4, 0x101f, -1;\n\tselp.u32 %r11, 1, 0, %p1;", partial_block, input,
                    [&](size_t thread) { return thread % 16 + 4 < 16 ? input[thread + 4] : input[thread]; },
                    [](size_t thread) { return thread % 16 + 4 < 16 ? 1u : 0u; });
}

TEST(PtxWarp, ShuffleButterflyReadsTheLaneWithTheOffsetBitsFlipped) {
  Words input = sample_input(partial_block);
  expect_per_thread("\tshfl.sync.bfly.b32 %r10, %r1, 6, 0x181f, -1;", partial_block, input,
                    [&](size_t thread) { return input[thread ^ 6]; });
}

TEST(PtxWarp, ShuffleIndexFromARegisterLane) {
  Words input = sample_input(64);
  expect_per_thread("\txor.b32 %r5, %r2, 31;\n\tshfl.sync.idx.b32 %r10, %r1, %r5, 31, -1;", 64, input,
                    [&](size_t thread) { return input[segment_start(thread, 32) + (31 - thread % 32)]; });
}

// A quarter of the lanes' numbers (`tid & 3`, as mma fragments are addressed) indexing memory
// still lets the block run warp by warp (target/host/narrow_lane_indices.h).
TEST(PtxWarp, QuarterLaneIndexingKeepsTheWarpPath) {
  WarpKernel kernel("\tand.b32 %r4, %r3, 3;\n\tmul.wide.u32 %rd8, %r4, 4;\n\tadd.s64 %rd9, %rd1, %rd8;\n"
                    "\tld.global.u32 %r5, [%rd9];\n\tshfl.sync.bfly.b32 %r10, %r5, 1, 31, -1;\n");
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  Words input = sample_input(64);
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < input.size(); ++thread) EXPECT_EQ(first[thread], input[(thread ^ 1) & 3]) << "thread " << thread;
  EXPECT_TRUE(kernel.runs_warp_by_warp());
}

// A loop with a shuffle and a block-uniform trip count is cut at its header for the warp path
// (target/host/barrier_regions.cpp, cut_around_loops): each round is a pass over the block's
// warps, their lanes as vectors.
TEST(PtxWarp, UniformLoopAroundAShuffleKeepsTheWarpPath) {
  constexpr uint32_t trips = 5;
  WarpKernel kernel("\tmov.u32 %r5, 0;\n\tmov.u32 %r6, %r1;\n\tadd.u32 %r7, %r2, 1;\n\tand.b32 %r7, %r7, 31;\n"
                    "LOOP:\n\tshfl.sync.idx.b32 %r8, %r6, %r7, 31, -1;\n\tadd.u32 %r6, %r8, %r5;\n"
                    "\tadd.u32 %r5, %r5, 1;\n\tsetp.lt.u32 %p1, %r5, " + std::to_string(trips) + ";\n\t@%p1 bra LOOP;\n"
                    "\tmov.u32 %r10, %r6;\n\tmov.u32 %r11, %r5;\n");
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  Words input = sample_input(64);
  auto [first, second] = kernel.run(input);
  for (size_t warp = 0; warp < input.size(); warp += 32) {
    Words values(input.begin() + warp, input.begin() + warp + 32);
    for (uint32_t trip = 0; trip < trips; ++trip) {
      Words next(32);
      for (size_t lane = 0; lane < 32; ++lane) next[lane] = values[(lane + 1) % 32] + trip;
      values = next;
    }
    for (size_t lane = 0; lane < 32; ++lane) {
      EXPECT_EQ(first[warp + lane], values[lane]) << "thread " << warp + lane;
      EXPECT_EQ(second[warp + lane], trips) << "thread " << warp + lane;
    }
  }
  EXPECT_TRUE(kernel.runs_warp_by_warp());
}

// Votes, matches and reductions in whole warps are computed from the vector of a warp's offers
// (target/host/warp_lanes.cpp, fold_offers), and keep the warp path.
TEST(PtxWarp, VotesMatchesAndReductionsKeepTheWarpPath) {
  WarpKernel kernel("\tand.b32 %r5, %r1, 1;\n\tsetp.ne.u32 %p1, %r5, 0;\n\tvote.sync.ballot.b32 %r6, %p1, -1;\n"
                    "\tand.b32 %r7, %r1, 3;\n\tmatch.any.sync.b32 %r8, %r7, -1;\n\tvote.sync.all.pred %p2, %p1, -1;\n"
                    "\tselp.u32 %r9, 1, 0, %p2;\n\tmad.lo.u32 %r10, %r8, 3, %r6;\n\tadd.u32 %r10, %r10, %r9;\n"
                    "\tshl.b32 %r9, %r1, 7;\n\tredux.sync.add.u32 %r12, %r1, -1;\n\tredux.sync.min.s32 %r13, %r9, -1;\n"
                    "\tredux.sync.max.u32 %r14, %r9, -1;\n\tredux.sync.and.b32 %r15, %r1, -1;\n"
                    "\tredux.sync.or.b32 %r16, %r1, -1;\n\tredux.sync.xor.b32 %r17, %r1, -1;\n"
                    "\tmad.lo.u32 %r11, %r12, 3, %r13;\n\tmad.lo.u32 %r11, %r11, 3, %r14;\n\tmad.lo.u32 %r11, %r11, 3, %r15;\n"
                    "\tmad.lo.u32 %r11, %r11, 3, %r16;\n\tmad.lo.u32 %r11, %r11, 3, %r17;\n");
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  Words input = sample_input(64);
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < input.size(); ++thread) {
    size_t warp = segment_start(thread, 32);
    uint32_t ballot = 0, same = 0, sum = 0, all_bits = ~0u, any_bits = 0, parity = 0, most = 0;
    int32_t least = INT32_MAX;
    for (size_t lane = 0; lane < 32; ++lane) {
      uint32_t value = input[warp + lane], shifted = value << 7;
      if (value & 1) ballot |= 1u << lane;
      if ((value & 3) == (input[thread] & 3)) same |= 1u << lane;
      sum += value;
      all_bits &= value;
      any_bits |= value;
      parity ^= value;
      least = std::min(least, static_cast<int32_t>(shifted));
      most = std::max(most, shifted);
    }
    EXPECT_EQ(first[thread], same * 3 + ballot + (ballot == ~0u ? 1 : 0)) << "thread " << thread;
    uint32_t reductions = ((((sum * 3 + static_cast<uint32_t>(least)) * 3 + most) * 3 + all_bits) * 3 + any_bits) * 3 + parity;
    EXPECT_EQ(second[thread], reductions) << "thread " << thread;
  }
  EXPECT_TRUE(kernel.runs_warp_by_warp());
}

// A loop of a different trip count in each lane keeps a warp's lanes from becoming vectors: the
// switch goes off, and whole warps run the fallback, which is then optimised fully after all
// (warp_lanes.h, warp_lanes_fallback_attribute), also where it would have been left out for
// blocks of whole warps (unused_fallbacks.h).
TEST(PtxWarp, LanesThatLoopApartRunTheFallbackInWholeWarps) {
  for (bool whole_warp_blocks : {false, true}) {
    WarpKernel kernel("\tand.b32 %r4, %r3, 7;\n\tmov.u32 %r5, 0;\n\tmov.u32 %r6, %r1;\n"
                      "LOOP:\n\tsetp.ge.u32 %p1, %r5, %r4;\n\t@%p1 bra DONE;\n\tmad.lo.u32 %r6, %r6, 3, %r5;\n"
                      "\tadd.u32 %r5, %r5, 1;\n\tbra LOOP;\nDONE:\n\tshfl.sync.bfly.b32 %r10, %r6, 1, 31, -1;\n"
                      "\tadd.u32 %r11, %r6, %r3;\n",
                      whole_warp_blocks);
    ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
    Words input = sample_input(64);
    auto looped = [&](size_t thread) {
      uint32_t value = input[thread];
      for (uint32_t trip = 0; trip < (thread & 7); ++trip) value = value * 3 + trip;
      return value;
    };
    auto [first, second] = kernel.run(input);
    for (size_t thread = 0; thread < input.size(); ++thread) {
      EXPECT_EQ(first[thread], looped(thread ^ 1)) << "thread " << thread << ", whole_warp_blocks " << whole_warp_blocks;
      EXPECT_EQ(second[thread], looped(thread) + static_cast<uint32_t>(thread)) << "thread " << thread << ", whole_warp_blocks " << whole_warp_blocks;
    }
    EXPECT_FALSE(kernel.runs_warp_by_warp());
  }
}

// Compiled for blocks of whole warps only, a kernel that keeps its warp path goes without the
// region-by-region code for other blocks: the same answers from a smaller object.
TEST(PtxWarp, WholeWarpBlocksLeaveOutTheFallback) {
  const std::string body = "\tshfl.sync.down.b32 %r5, %r1, 16, 31, -1;\n\tadd.u32 %r6, %r1, %r5;\n"
                           "\tshfl.sync.down.b32 %r5, %r6, 8, 31, -1;\n\tadd.u32 %r10, %r6, %r5;\n"
                           "\tand.b32 %r7, %r1, 1;\n\tsetp.ne.u32 %p1, %r7, 0;\n\tvote.sync.ballot.b32 %r11, %p1, -1;\n";
  WarpKernel complete(body), whole_warps(body, /*whole_warp_blocks=*/true);
  ASSERT_TRUE(complete.ok()) << complete.diagnostics();
  ASSERT_TRUE(whole_warps.ok()) << whole_warps.diagnostics();
  EXPECT_TRUE(whole_warps.runs_warp_by_warp());
  Words input = sample_input(96);
  EXPECT_EQ(whole_warps.run(input), complete.run(input));
  EXPECT_LT(whole_warps.object_bytes() * 3, complete.object_bytes() * 2)
      << whole_warps.object_bytes() << " bytes for whole warps, " << complete.object_bytes() << " for every block";
}

// Volatile loads and stores of shared memory between shuffles, as reductions written for older
// GPUs make them: the block's own memory, they keep the kernel's lanes vectors (LLVM vectorises
// no loop with a volatile access, which would switch the warp path off).
TEST(PtxWarp, VolatileSharedAccessesKeepTheWarpPath) {
  WarpKernel kernel("\tshfl.sync.bfly.b32 %r5, %r1, 1, 31, -1;\n\tadd.u32 %r6, %r1, %r5;\n"
                    "\tshl.b32 %r7, %r3, 2;\n\tmov.u32 %r8, scratch;\n\tadd.u32 %r8, %r8, %r7;\n"
                    "\tst.volatile.shared.u32 [%r8], %r6;\n\tld.volatile.shared.u32 %r10, [%r8];\n"
                    "\tadd.u32 %r10, %r10, 1;\n\tshfl.sync.bfly.b32 %r11, %r10, 2, 31, -1;\n",
                    /*whole_warp_blocks=*/true);
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  EXPECT_TRUE(kernel.runs_warp_by_warp());
  Words input = sample_input(64);
  auto pair_sum = [&](size_t thread) { return input[thread] + input[thread ^ 1] + 1; };
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < input.size(); ++thread) {
    EXPECT_EQ(first[thread], pair_sum(thread)) << "thread " << thread;
    EXPECT_EQ(second[thread], pair_sum(thread ^ 2)) << "thread " << thread;
  }
}

// A register set on both ways of a branch, before a shuffle, and kept across a block barrier:
// its two stores into the block's storage become one (instruction combining), which loses the
// thread loop's access tag; tagged again (thread_slot_accesses.h), the warp's lanes stay vectors.
TEST(PtxWarp, RegisterSetOnBothWaysKeepsTheWarpPath) {
  WarpKernel kernel("\tand.b32 %r4, %r1, 1;\n\tsetp.eq.u32 %p1, %r4, 0;\n\t@%p1 bra EVEN;\n"
                    "\tadd.u32 %r5, %r1, 7;\n\tbra JOIN;\nEVEN:\n\tmul.lo.u32 %r5, %r1, 3;\nJOIN:\n"
                    "\tshfl.sync.bfly.b32 %r10, %r5, 1, 31, -1;\n\tbar.sync 0;\n\tadd.u32 %r11, %r10, %r5;\n",
                    /*whole_warp_blocks=*/true);
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  EXPECT_TRUE(kernel.runs_warp_by_warp());
  Words input = sample_input(64);
  auto value = [&](size_t thread) { return input[thread] % 2 == 0 ? input[thread] * 3 : input[thread] + 7; };
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < input.size(); ++thread) {
    EXPECT_EQ(first[thread], value(thread ^ 1)) << "thread " << thread;
    EXPECT_EQ(second[thread], value(thread ^ 1) + value(thread)) << "thread " << thread;
  }
}

TEST(PtxWarp, BallotOfAPartialWarpHasNoBitsPastItsEnd) {
  Words input = sample_input(partial_block);
  auto ballot = [&](size_t thread) {
    uint32_t bits = 0;
    for (size_t lane = 0; lane < 32 && segment_start(thread, 32) + lane < partial_block; ++lane)
      if (input[segment_start(thread, 32) + lane] & 1) bits |= 1u << lane;
    return bits;
  };
  // Only the lanes of the member mask may execute the second vote (PTX ISA: undefined otherwise).
  expect_per_thread("\tand.b32 %r5, %r1, 1;\n\tsetp.ne.u32 %p1, %r5, 0;\n\tvote.sync.ballot.b32 %r10, %p1, -1;\n"
                    "\tsetp.ge.u32 %p2, %r2, 16;\n\t@%p2 bra SKIP;\n"
                    "\tvote.sync.ballot.b32 %r11, !%p1, 0x0000ffff;\nSKIP:",
                    partial_block, input, ballot, [&](size_t thread) {
                      uint32_t existing = thread < 32 ? ~0u : 0xFFFFu;
                      return thread % 32 < 16 ? ~ballot(thread) & existing & 0xFFFFu : 0u;
                    });
}

TEST(PtxWarp, AllAnyAndUniformVotes) {
  Words input(partial_block, 0);
  for (size_t thread = 0; thread < partial_block; ++thread) input[thread] = thread >= 32 || thread == 7 ? 1 : 0;
  // Warp 0 has one lane set, warp 1 (16 lanes) all set.
  std::string body = "\tsetp.ne.u32 %p1, %r1, 0;\n"
                     "\tvote.sync.all.pred %p2, %p1, -1;\n\tvote.sync.any.pred %p3, %p1, -1;\n"
                     "\tvote.sync.uni.pred %p4, %p1, -1;\n"
                     "\tselp.u32 %r5, 1, 0, %p2;\n\tselp.u32 %r6, 2, 0, %p3;\n\tselp.u32 %r7, 4, 0, %p4;\n"
                     "\tor.b32 %r10, %r5, %r6;\n\tor.b32 %r10, %r10, %r7;";
  expect_per_thread(body, partial_block, input, [](size_t thread) { return thread < 32 ? 2u : 7u; });
}

// sm_100's redux.sync.min/.max over .f32 (PTX ISA): NaNs yield to numbers unless .NaN, which
// makes the result the canonical NaN; -0 is below +0; .abs compares magnitudes.
TEST(PtxWarp, FloatReductionsOrderZerosAndNaNs) {
  auto float_bits = [](float value) { return std::bit_cast<uint32_t>(value); };
  Words input(64);
  for (size_t thread = 0; thread < 64; ++thread) input[thread] = float_bits(static_cast<float>(thread % 7) - 2.5f);
  input[3] = float_bits(-0.0f);
  input[5] = float_bits(-1e30f);  // warp 0's least and largest magnitude
  input[40] = float_bits(std::numeric_limits<float>::quiet_NaN());  // only in warp 1
  input[41] = float_bits(0.0f);
  std::string body = "\tredux.sync.min.f32 %r10, %r1, 0xffffffff;\n\tredux.sync.max.abs.f32 %r11, %r1, 0xffffffff;\n"
                     "\tredux.sync.max.NaN.f32 %r12, %r1, 0xffffffff;\n\tredux.sync.min.abs.NaN.f32 %r13, %r1, 0xffffffff;\n"
                     "\tsetp.lt.u32 %p1, %r3, 32;\n\tselp.b32 %r11, %r11, %r12, %p1;\n\tselp.b32 %r10, %r10, %r13, %p1;";
  // Warp 0: min -1e30, max |.| 1e30. Warp 1: the NaN is ignored by min (least: -2.5), and makes
  // .NaN's results the canonical NaN.
  expect_per_thread(body, 64, input, [&](size_t thread) { return thread < 32 ? float_bits(-1e30f) : 0x7FFFFFFFu; },
                    [&](size_t thread) { return thread < 32 ? float_bits(1e30f) : 0x7FFFFFFFu; });
  body = "\tredux.sync.min.f32 %r10, %r1, 0xffffffff;\n\tredux.sync.max.f32 %r11, %r1, 0xffffffff;";
  for (size_t thread = 32; thread < 64; ++thread) input[thread] = float_bits(thread % 2 ? 0.0f : -0.0f);
  input[33] = float_bits(std::numeric_limits<float>::quiet_NaN());
  expect_per_thread(body, 64, input, [&](size_t thread) { return thread < 32 ? float_bits(-1e30f) : float_bits(-0.0f); },
                    [&](size_t thread) { return thread < 32 ? float_bits(3.5f) : float_bits(0.0f); });
}

// elect.sync's lane number may go to the sink: `_|p` (ptxas takes it).
TEST(PtxWarp, ElectWithoutItsLaneNumberStillElectsTheLowestLane) {
  Words input = sample_input(partial_block);
  std::string body = "\telect.sync _|%p1, 0xffffffff;\n\tselp.u32 %r10, 1, 0, %p1;\n"
                     "\telect.sync %r11|%p2, 0xffffffff;";
  expect_per_thread(body, partial_block, input, [](size_t thread) { return thread % 32 == 0 ? 1u : 0u; },
                    [](size_t) { return 0u; });
}

TEST(PtxWarp, ActiveMaskSeesPartialWarpsAndDivergence) {
  Words input = sample_input(partial_block);
  std::string body = "\tactivemask.b32 %r10;\n"
                     "\tsetp.lt.u32 %p1, %r2, 5;\n\t@!%p1 bra SKIP;\n\tactivemask.b32 %r11;\nSKIP:";
  expect_per_thread(body, partial_block, input, [](size_t thread) { return thread < 32 ? ~0u : 0xFFFFu; },
                    [](size_t thread) { return thread % 32 < 5 ? 0x1Fu : 0u; });
}

TEST(PtxWarp, ExitedLanesLeaveTheVote) {
  Words input(64, 1);
  std::string body = "\trem.u32 %r5, %r3, 3;\n\tsetp.eq.u32 %p1, %r5, 0;\n\t@%p1 exit;\n"
                     "\tvote.sync.ballot.b32 %r10, 1, -1;";
  WarpKernel kernel(body);
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < 64; ++thread) {
    if (thread % 3 == 0) continue;
    uint32_t expected = 0;
    for (size_t lane = 0; lane < 32; ++lane)
      if ((segment_start(thread, 32) + lane) % 3 != 0) expected |= 1u << lane;
    EXPECT_EQ(first[thread], expected) << "thread " << thread;
  }
}

TEST(PtxWarp, MatchAnyGroupsEqualValuesOfThirtyTwoAndSixtyFourBits) {
  Words input(partial_block);
  for (size_t thread = 0; thread < partial_block; ++thread) input[thread] = static_cast<uint32_t>(thread * 7 % 5);
  auto same = [&](size_t thread) {
    uint32_t mask = 0;
    for (size_t lane = 0; lane < 32 && segment_start(thread, 32) + lane < partial_block; ++lane)
      if (input[segment_start(thread, 32) + lane] == input[thread]) mask |= 1u << lane;
    return mask;
  };
  expect_per_thread("\tmatch.any.sync.b32 %r10, %r1, -1;\n"
                    "\tcvt.u64.u32 %rd8, %r1;\n\tshl.b64 %rd8, %rd8, 40;\n\tmatch.any.sync.b64 %r11, %rd8, -1;",
                    partial_block, input, same, same);
}

TEST(PtxWarp, MatchAllNeedsEveryMemberEqual) {
  Words input(64, 9);
  input[40] = 3;  // breaks warp 1 only
  std::string body = "\tmatch.all.sync.b32 %r10|%p1, %r1, -1;\n\tselp.u32 %r11, 1, 0, %p1;";
  expect_per_thread(body, 64, input, [](size_t thread) { return thread < 32 ? ~0u : 0u; },
                    [](size_t thread) { return thread < 32 ? 1u : 0u; });
}

// Reduces `input` over the existing lanes of each warp with `combine`.
uint32_t warp_fold(const Words& input, size_t thread, uint32_t initial, const std::function<uint32_t(uint32_t, uint32_t)>& combine) {
  uint32_t result = initial;
  for (size_t lane = 0; lane < 32 && segment_start(thread, 32) + lane < input.size(); ++lane)
    result = combine(result, input[segment_start(thread, 32) + lane]);
  return result;
}

TEST(PtxWarp, ReduxOverAPartialWarp) {
  Words input = sample_input(partial_block);
  input[33] = 0x80000001u;  // negative as .s32
  struct Case {
    const char* instruction;
    uint32_t initial;
    std::function<uint32_t(uint32_t, uint32_t)> combine;
  };
  const Case cases[] = {
      {"redux.sync.add.u32", 0, std::plus<uint32_t>()},
      {"redux.sync.min.s32", 0x7FFFFFFFu,
       [](uint32_t a, uint32_t b) { return static_cast<uint32_t>(std::min(static_cast<int32_t>(a), static_cast<int32_t>(b))); }},
      {"redux.sync.max.u32", 0, [](uint32_t a, uint32_t b) { return std::max(a, b); }},
      {"redux.sync.and.b32", ~0u, std::bit_and<uint32_t>()},
      {"redux.sync.or.b32", 0, std::bit_or<uint32_t>()},
      {"redux.sync.xor.b32", 0, std::bit_xor<uint32_t>()},
  };
  for (const Case& item : cases)
    expect_per_thread(std::string("\t") + item.instruction + " %r10, %r1, -1;", partial_block, input,
                      [&](size_t thread) { return warp_fold(input, thread, item.initial, item.combine); });
}

TEST(PtxWarp, ShuffleReductionInALoop) {
  Words input = sample_input(partial_block);
  for (uint32_t& word : input) word &= 0xFFFF;
  std::string body = "\tmov.u32 %r10, %r1;\n\tmov.u32 %r5, 16;\nLOOP:\n"
                     "\tshfl.sync.bfly.b32 %r6, %r10, %r5, 31, -1;\n\tadd.u32 %r10, %r10, %r6;\n"
                     "\tshr.u32 %r5, %r5, 1;\n\tsetp.ne.u32 %p1, %r5, 0;\n\t@%p1 bra LOOP;";
  WarpKernel kernel(body);
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  auto [first, second] = kernel.run(input);
  // A full warp: every lane holds the warp's sum.
  uint32_t sum = std::accumulate(input.begin(), input.begin() + 32, 0u);
  for (size_t thread = 0; thread < 32; ++thread) EXPECT_EQ(first[thread], sum) << "thread " << thread;
}

// Warp 1 must not pass the block barrier while warp 0 is still between its shuffle and the
// barrier: it reads what warp 0 wrote after shuffling.
TEST(PtxWarp, BlockBarrierWaitsForAWarpStillExchanging) {
  Words input = sample_input(64);
  std::string body = "\tsetp.ge.u32 %p1, %r3, 32;\n\t@%p1 bra AFTER;\n"
                     "\tshfl.sync.bfly.b32 %r6, %r1, 1, 31, -1;\n"
                     "\tmov.u32 %r7, scratch;\n\tshl.b32 %r8, %r2, 2;\n\tadd.u32 %r7, %r7, %r8;\n"
                     "\tst.shared.u32 [%r7], %r6;\nAFTER:\n\tbar.sync 0;\n"
                     "\tmov.u32 %r7, scratch;\n\tshl.b32 %r8, %r2, 2;\n\tadd.u32 %r7, %r7, %r8;\n"
                     "\tld.shared.u32 %r10, [%r7];";
  expect_per_thread(body, 64, input, [&](size_t thread) { return input[(thread % 32) ^ 1]; });
}

TEST(PtxWarp, WarpBarrierOrdersSharedMemoryBetweenLanes) {
  Words input = sample_input(partial_block);
  std::string body = "\tmov.u32 %r7, scratch;\n\tshl.b32 %r8, %r3, 2;\n\tadd.u32 %r9, %r7, %r8;\n"
                     "\tst.shared.u32 [%r9], %r1;\n\tbar.warp.sync -1;\n"
                     "\txor.b32 %r8, %r3, 1;\n\tshl.b32 %r8, %r8, 2;\n\tadd.u32 %r9, %r7, %r8;\n"
                     "\tld.shared.u32 %r10, [%r9];";
  expect_per_thread(body, partial_block, input, [&](size_t thread) { return input[thread ^ 1]; });
}

TEST(PtxWarp, LaneMasks) {
  Words input = sample_input(partial_block);
  std::string body = "\tmov.u32 %r10, %lanemask_lt;\n\tmov.u32 %r11, %lanemask_ge;";
  expect_per_thread(body, partial_block, input, [](size_t thread) { return (1u << (thread % 32)) - 1; },
                    [](size_t thread) { return ~((1u << (thread % 32)) - 1); });
}

// wmma through shared memory, on values whose products and sums every rounding gives exactly,
// so that the expectation is the ISA's D = A·B + C whatever the fragments' layout: each tile
// (padding included) holds value(element index), the warp loads, multiplies and stores, and
// each thread reports the D elements at memory index 9·lane mod 256 and 255 - lane.
struct WmmaTile {
  std::string name, layout;  // layout: row or col
  uint32_t rows, columns, stride;
  uint32_t size() const { return (layout == "row" ? rows : columns) * stride; }
  uint32_t index(uint32_t row, uint32_t column) const { return layout == "row" ? row * stride + column : column * stride + row; }
};

// PTX filling `tile` (elements of `bytes` bytes, stored from a .s32 value) with
// (index * multiplier + addend) % modulus - offset, a lane at a time.
std::string fill_tile(const WmmaTile& tile, uint32_t bytes, std::string_view convert, uint32_t multiplier, uint32_t addend,
                      uint32_t modulus, uint32_t offset) {
  std::string loop = "$fill_" + tile.name;
  std::string store = bytes == 1 ? "st.shared.b8" : bytes == 2 ? "st.shared.b16" : "st.shared.b32";
  std::string value = convert.empty() ? "%r13" : bytes == 2 ? "%h" : "%r14";
  return "\tmov.u32 %r12, %r2;\n" + loop + ":\n" +
         "\tmad.lo.u32 %r13, %r12, " + std::to_string(multiplier) + ", " + std::to_string(addend) + ";\n" +
         "\trem.u32 %r13, %r13, " + std::to_string(modulus) + ";\n\tsub.s32 %r13, %r13, " + std::to_string(offset) + ";\n" +
         (convert.empty() ? "" : "\t" + std::string(convert) + " " + value + ", %r13;\n") +
         "\tmov.u32 %r15, " + tile.name + ";\n\tmad.lo.u32 %r15, %r12, " + std::to_string(bytes) + ", %r15;\n" +
         "\t" + store + " [%r15], " + value + ";\n\tadd.u32 %r12, %r12, 32;\n" +
         "\tsetp.lt.u32 %p1, %r12, " + std::to_string(tile.size()) + ";\n\t@%p1 bra " + loop + ";\n";
}

std::string fragment(std::string_view name, int count) {
  std::string text = "{";
  for (int index = 0; index < count; ++index) text += (index ? ", %" : "%") + std::string(name) + std::to_string(index);
  return text + "}";
}

int64_t tile_value(uint32_t index, uint32_t multiplier, uint32_t addend, uint32_t modulus, uint32_t offset) {
  return static_cast<int64_t>((index * multiplier + addend) % modulus) - offset;
}

// Memory indices each thread reports, and the (row, column) of D there.
uint32_t first_reported(size_t lane) { return static_cast<uint32_t>(9 * lane % 256); }
uint32_t second_reported(size_t lane) { return static_cast<uint32_t>(255 - lane); }

TEST(PtxWarp, WmmaHalvesThroughPaddedColumnAndRowTiles) {
  // m32n8k16: A 32×16 .row (stride 24), B 16×8 .col (stride 24), C 32×8 .col (stride 40), D .row.
  WmmaTile a{"wa", "row", 32, 16, 24}, b{"wb", "col", 16, 8, 24}, c{"wc", "col", 32, 8, 40}, d{"wd", "row", 32, 8, 8};
  std::string body = "\t.shared .align 128 .b16 wa[768];\n\t.shared .align 128 .b16 wb[192];\n"
                     "\t.shared .align 128 .b32 wc[320];\n\t.shared .align 128 .b32 wd[256];\n"
                     "\t.reg .b32 %fa<8>, %fb<8>, %fc<8>, %fd<8>;\n\t.reg .b16 %h;\n";
  body += fill_tile(a, 2, "cvt.rn.f16.s32", 5, 3, 7, 3) + fill_tile(b, 2, "cvt.rn.f16.s32", 3, 1, 9, 4) +
          fill_tile(c, 4, "cvt.rn.f32.s32", 7, 2, 23, 11);
  body += "\tbar.warp.sync -1;\n\tmov.u32 %r15, wa;\n"
          "\twmma.load.a.sync.aligned.row.m32n8k16.shared.f16 " + fragment("fa", 8) + ", [%r15], 24;\n"
          "\tmov.u32 %r15, wb;\n\tmov.u32 %r16, 24;\n"
          "\twmma.load.b.sync.aligned.col.m32n8k16.shared.f16 " + fragment("fb", 8) + ", [%r15], %r16;\n"
          "\tmov.u32 %r15, wc;\n\twmma.load.c.sync.aligned.col.m32n8k16.shared.f32 " + fragment("fc", 8) + ", [%r15], 40;\n"
          "\twmma.mma.sync.aligned.row.col.m32n8k16.f32.f32 " + fragment("fd", 8) + ", " + fragment("fa", 8) + ", " +
          fragment("fb", 8) + ", " + fragment("fc", 8) + ";\n"
          "\tmov.u32 %r15, wd;\n\twmma.store.d.sync.aligned.row.m32n8k16.shared.f32 [%r15], " + fragment("fd", 8) + ";\n"
          "\tbar.warp.sync -1;\n\tmul.lo.u32 %r16, %r2, 9;\n\tand.b32 %r16, %r16, 255;\n\tmad.lo.u32 %r16, %r16, 4, %r15;\n"
          "\tld.shared.b32 %r10, [%r16];\n\tsub.u32 %r16, 255, %r2;\n\tmad.lo.u32 %r16, %r16, 4, %r15;\n\tld.shared.b32 %r11, [%r16];";
  auto expected = [&](uint32_t index) {
    uint32_t row = index / 8, column = index % 8;
    int64_t sum = tile_value(c.index(row, column), 7, 2, 23, 11);
    for (uint32_t k = 0; k < 16; ++k)
      sum += tile_value(a.index(row, k), 5, 3, 7, 3) * tile_value(b.index(k, column), 3, 1, 9, 4);
    return std::bit_cast<uint32_t>(static_cast<float>(sum));
  };
  expect_per_thread(body, 32, sample_input(32), [&](size_t lane) { return expected(first_reported(lane)); },
                    [&](size_t lane) { return expected(second_reported(lane)); });
}

TEST(PtxWarp, WmmaBytesSaturateWithDefaultStrides) {
  // m16n16k16 .s8 with .satfinite: A .col, B .row, C .row, D .col, strides from the shapes;
  // some C elements sit near the largest .s32, so that their sums clamp.
  WmmaTile a{"wa", "col", 16, 16, 16}, b{"wb", "row", 16, 16, 16}, c{"wc", "row", 16, 16, 16}, d{"wd", "col", 16, 16, 16};
  std::string body = "\t.shared .align 128 .b8 wa[256];\n\t.shared .align 128 .b8 wb[256];\n"
                     "\t.shared .align 128 .b32 wc[256];\n\t.shared .align 128 .b32 wd[256];\n"
                     "\t.reg .b32 %fa<2>, %fb<2>, %fc<8>, %fd<8>;\n";
  body += fill_tile(a, 1, "", 13, 5, 255, 127) + fill_tile(b, 1, "", 29, 11, 255, 127) +
          fill_tile(c, 4, "", 37, 0, 4096, 2048);
  // Every 17th C element becomes 2^31 - 64.
  body += "\tbar.warp.sync -1;\n\tmov.u32 %r15, wc;\n\tmad.lo.u32 %r15, %r2, 68, %r15;\n\tsetp.lt.u32 %p2, %r2, 16;\n"
          "\t@%p2 st.shared.b32 [%r15], 2147483584;\n";
  body += "\tbar.warp.sync -1;\n\tmov.u32 %r15, wa;\n"
          "\twmma.load.a.sync.aligned.col.m16n16k16.shared.s8 " + fragment("fa", 2) + ", [%r15];\n"
          "\tmov.u32 %r15, wb;\n\twmma.load.b.sync.aligned.row.m16n16k16.shared.s8 " + fragment("fb", 2) + ", [%r15];\n"
          "\tmov.u32 %r15, wc;\n\twmma.load.c.sync.aligned.row.m16n16k16.shared.s32 " + fragment("fc", 8) + ", [%r15];\n"
          "\twmma.mma.sync.aligned.col.row.m16n16k16.s32.s8.s8.s32.satfinite " + fragment("fd", 8) + ", " +
          fragment("fa", 2) + ", " + fragment("fb", 2) + ", " + fragment("fc", 8) + ";\n"
          "\tmov.u32 %r15, wd;\n\twmma.store.d.sync.aligned.col.m16n16k16.shared.s32 [%r15], " + fragment("fd", 8) + ";\n"
          "\tbar.warp.sync -1;\n\tmul.lo.u32 %r16, %r2, 9;\n\tand.b32 %r16, %r16, 255;\n\tmad.lo.u32 %r16, %r16, 4, %r15;\n"
          "\tld.shared.b32 %r10, [%r16];\n\tsub.u32 %r16, 255, %r2;\n\tmad.lo.u32 %r16, %r16, 4, %r15;\n\tld.shared.b32 %r11, [%r16];";
  auto expected = [&](uint32_t index) {
    uint32_t row = index % 16, column = index / 16;  // D is .col
    uint32_t c_index = c.index(row, column);
    int64_t sum = c_index % 17 == 0 ? 2147483584 : tile_value(c_index, 37, 0, 4096, 2048);
    for (uint32_t k = 0; k < 16; ++k)
      sum += tile_value(a.index(row, k), 13, 5, 255, 127) * tile_value(b.index(k, column), 29, 11, 255, 127);
    return static_cast<uint32_t>(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
  };
  expect_per_thread(body, 32, sample_input(32), [&](size_t lane) { return expected(first_reported(lane)); },
                    [&](size_t lane) { return expected(second_reported(lane)); });
}

// ldmatrix .x1 twice, from two 8×8 .b16 matrices in shared memory: lanes 0-7 give the rows'
// addresses, and lane l gets elements 2(l%4) and 2(l%4)+1 of row l/4 (the ISA's fragment of
// an m8n8 .b16 matrix). Both share the module's function for what follows the exchange.
TEST(PtxWarp, LoadMatrixTwiceFollowsTheRowLayout) {
  auto element = [](uint32_t index) { return static_cast<uint32_t>(index * 3 + 7) & 0xFFFF; };
  std::string body = "\t.shared .align 16 .b16 tiles[128];\n\t.reg .b32 %t<4>;\n\tmov.u32 %t0, tiles;\n";
  // Thread t writes elements 2t, 2t+1 and 64+2t, 65+2t.
  body += "\tshl.b32 %t1, %r3, 1;\n\tmad.lo.u32 %t2, %t1, 3, 7;\n\tadd.u32 %t3, %t2, 3;\n\tshl.b32 %t3, %t3, 16;\n"
          "\tor.b32 %t2, %t2, %t3;\n\tshl.b32 %t1, %r3, 2;\n\tadd.u32 %t1, %t0, %t1;\n\tst.shared.u32 [%t1], %t2;\n"
          "\tadd.u32 %t2, %t2, 0x00C000C0;\n\tst.shared.u32 [%t1+128], %t2;\n\tbar.warp.sync -1;\n";
  // Row r of each matrix starts at byte 16r; lanes past 7 give an address ldmatrix .x1 ignores.
  body += "\tand.b32 %t1, %r3, 7;\n\tshl.b32 %t1, %t1, 4;\n\tadd.u32 %t1, %t0, %t1;\n"
          "\tldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r10}, [%t1];\n"
          "\tadd.u32 %t1, %t1, 128;\n\tldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r11}, [%t1];";
  auto expected = [&](size_t lane, uint32_t base) {
    uint32_t first = base + static_cast<uint32_t>(lane / 4 * 8 + 2 * (lane % 4));
    return element(first) | element(first + 1) << 16;
  };
  expect_per_thread(body, 32, sample_input(32), [&](size_t lane) { return expected(lane, 0); },
                    [&](size_t lane) { return expected(lane, 64); });
}

// mma.sync with 8-bit float inputs whose exponents are kept within four binades (the masks
// below), so that every product and sum is exact in .f32 and the expectation is the ISA's
// D = A·B + C over its fragment layout for m16n8k32 (that of .s8), with e4m3 A and e5m2 B.
double eight_bit_float(uint32_t code, int exponent_bits) {
  int fraction_bits = 7 - exponent_bits, bias = (1 << (exponent_bits - 1)) - 1;
  int field = static_cast<int>(code >> fraction_bits) & ((1 << exponent_bits) - 1);
  double fraction = code & ((1u << fraction_bits) - 1);
  double magnitude = field == 0 ? std::ldexp(fraction, 1 - bias - fraction_bits)
                                : std::ldexp(fraction + (1 << fraction_bits), field - bias - fraction_bits);
  return code & 0x80 ? -magnitude : magnitude;
}

TEST(PtxWarp, MmaOfEightBitFloatsFollowsTheByteLayout) {
  constexpr uint32_t keys[6] = {0x00000000, 0x9E3779B9, 0x7F4A7C15, 0x94D049BB, 0xBF58476D, 0x2545F491};
  auto a_word = [&](uint32_t input, int index) { return ((input ^ keys[index]) & 0x9C9C9C9Cu) | 0x28282828u; };
  auto b_word = [&](uint32_t input, int index) { return ((input ^ keys[4 + index]) & 0x8C8C8C8Cu) | 0x30303030u; };
  std::string body = "\t.reg .b32 %fa<4>, %fb<2>, %fc<4>, %fd<4>, %fe<4>;\n";
  for (int index = 0; index < 4; ++index)
    body += "\txor.b32 %fa" + std::to_string(index) + ", %r1, " + std::to_string(keys[index]) + ";\n\tand.b32 %fa" +
            std::to_string(index) + ", %fa" + std::to_string(index) + ", 0x9C9C9C9C;\n\tor.b32 %fa" + std::to_string(index) +
            ", %fa" + std::to_string(index) + ", 0x28282828;\n";
  for (int index = 0; index < 2; ++index)
    body += "\txor.b32 %fb" + std::to_string(index) + ", %r1, " + std::to_string(keys[4 + index]) + ";\n\tand.b32 %fb" +
            std::to_string(index) + ", %fb" + std::to_string(index) + ", 0x8C8C8C8C;\n\tor.b32 %fb" + std::to_string(index) +
            ", %fb" + std::to_string(index) + ", 0x30303030;\n";
  for (int index = 0; index < 4; ++index)
    body += "\tadd.u32 %r12, %r2, " + std::to_string(index) + ";\n\trem.u32 %r12, %r12, 7;\n\tsub.s32 %r12, %r12, 3;\n"
            "\tcvt.rn.f32.s32 %fc" + std::to_string(index) + ", %r12;\n";
  auto multiply_into = [&](const char* d) {
    return "\tmma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 " + fragment(d, 4) + ", " + fragment("fa", 4) + ", " +
           fragment("fb", 2) + ", " + fragment("fc", 4) + ";\n";
  };
  const std::string answer = "\tmov.b32 %r10, %fd0;\n\tmov.b32 %r11, %fd3;";
  Words input = sample_input(32);
  double a[16][32], b[32][8];
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t group = lane >> 2, thread = lane & 3;
    for (uint32_t index = 0; index < 16; ++index) {
      uint32_t code = a_word(input[lane], static_cast<int>(index / 4)) >> (8 * (index % 4)) & 0xFF;
      a[group + 8 * ((index >> 2) & 1)][4 * thread + (index & 3) + 16 * (index >> 3)] = eight_bit_float(code, 4);
    }
    for (uint32_t index = 0; index < 8; ++index) {
      uint32_t code = b_word(input[lane], static_cast<int>(index / 4)) >> (8 * (index % 4)) & 0xFF;
      b[4 * thread + (index & 3) + 16 * (index >> 2)][group] = eight_bit_float(code, 5);
    }
  }
  auto expected = [&](size_t lane, uint32_t index) {
    uint32_t row = static_cast<uint32_t>(lane >> 2) + 8 * (index >> 1), column = 2 * static_cast<uint32_t>(lane & 3) + (index & 1);
    double sum = static_cast<double>((static_cast<int>(lane) + static_cast<int>(index)) % 7 - 3);
    for (uint32_t k = 0; k < 32; ++k) sum += a[row][k] * b[k][column];
    return std::bit_cast<uint32_t>(static_cast<float>(sum));
  };
  // Also on fibers, which a shuffle among half the warp asks for: there the runtime takes the
  // exchange of the fragments' words (host_abi.h). And twice in the kernel, where both share the
  // module's function for what follows the exchange (matrix.cpp), the first's answer unused.
  const std::string half_warp_shuffle = "\tsetp.lt.u32 %p1, %r2, 16;\n\t@%p1 shfl.sync.bfly.b32 %r20, %r1, 1, 31, 0xffff;\n";
  for (const std::string& before : {std::string(), half_warp_shuffle})
    for (const std::string& multiplies : {multiply_into("fd"), multiply_into("fe") + multiply_into("fd")})
      expect_per_thread(before + body + multiplies + answer, 32, input, [&](size_t lane) { return expected(lane, 0); },
                        [&](size_t lane) { return expected(lane, 3); });
}

// The tensor cores' dot products come from the host's builtin library (target/host/
// builtin_library.h), compiled with xcuda, not from each module, which only calls them; the
// loader gives objects the copy for the host's processor (the tests above ran it). The compiler
// drops its own body of a function exactly where the library holds one of that name.
TEST(PtxWarp, DotProductsComeFromTheBuiltinLibrary) {
  std::set<std::string> library;
  for (const host_abi::Builtin& builtin : runtime::host::builtin_library()) {
    EXPECT_NE(builtin.address, nullptr) << builtin.name;
    EXPECT_TRUE(host::is_builtin(builtin.name)) << builtin.name;
    library.insert(builtin.name);
  }
  const std::string half = "xcuda.tensor_core.dot.f16.f16.f32.stride8.p0.p0";
  const std::string bytes = "xcuda.tensor_core.dot.s8.s8.s32.k32.by32.stride8.p0.p0";
  for (const std::string& name : {half, bytes, std::string("xcuda.tensor_core.dot.e5m2.e4m3.f16.stride32.p0.p0")})
    EXPECT_TRUE(library.contains(name)) << name;
  EXPECT_FALSE(host::is_builtin("xcuda.tensor_core.dot.f16.f16.f32.stride8.p5.p5"));  // AMDGPU's private memory
  auto symbols = [](std::string_view body) {
    WarpKernel kernel(body);
    EXPECT_TRUE(kernel.ok()) << kernel.diagnostics();
    std::map<std::string, bool> defined;
    for (const auto& [name, is_defined] : kernel.symbols())
      if (name.starts_with("xcuda.tensor_core.dot.")) defined[name] = is_defined;
    return defined;
  };
  auto multiply = [](std::string_view shape_and_types) {
    std::string body = "\t.reg .b32 %fa<4>, %fb<2>, %fc<4>, %fd<4>;\n";
    for (const char* name : {"fa0", "fa1", "fa2", "fa3", "fb0", "fb1", "fc0", "fc1", "fc2", "fc3"})
      body += "\tmov.b32 %" + std::string(name) + ", %r1;\n";
    return body + "\tmma.sync.aligned." + std::string(shape_and_types) + " " + fragment("fd", 4) + ", " + fragment("fa", 4) + ", " +
           fragment("fb", 2) + ", " + fragment("fc", 4) + ";\n\tmov.b32 %r10, %fd0;";
  };
  EXPECT_EQ(symbols(multiply("m16n8k16.row.col.f32.f16.f16.f32")), (std::map<std::string, bool>{{half, false}}));
  EXPECT_EQ(symbols(multiply("m16n8k32.row.col.s32.s8.s8.s32")), (std::map<std::string, bool>{{bytes, false}}));
}

// The spellings of a whole-block barrier: each must hold every thread until all have written.
TEST(PtxBarrier, EverySpellingOfAWholeBlockBarrierSynchronises) {
  Words input = sample_input(partial_block);
  for (const char* barrier : {"bar.sync 0;", "bar.sync 1;", "barrier.sync 0;", "barrier.sync.aligned 0;", "barrier.cta.sync 0;",
                              "barrier.cta.sync.aligned 0;", "bar.cta.sync 0;"}) {
    std::string body = std::string("\tmov.u32 %r7, scratch;\n\tshl.b32 %r8, %r3, 2;\n\tadd.u32 %r9, %r7, %r8;\n"
                                   "\tst.shared.u32 [%r9], %r1;\n\t") + barrier +
                       "\n\tsub.u32 %r8, 47, %r3;\n\tshl.b32 %r8, %r8, 2;\n\tadd.u32 %r9, %r7, %r8;\n"
                       "\tld.shared.u32 %r10, [%r9];";
    expect_per_thread(body, partial_block, input, [&](size_t thread) { return input[partial_block - 1 - thread]; });
  }
}

// bar.red and barrier.cta.red: every thread gets the block's population count, conjunction or
// disjunction of the predicate (PTX ISA, "bar, barrier").
TEST(PtxBarrier, ReductionsGiveEveryThreadTheBlocksAnswer) {
  Words input = sample_input(partial_block);
  uint32_t odd = 0;
  for (uint32_t word : input) odd += word & 1;
  const std::string predicate = "\tand.b32 %r4, %r1, 1;\n\tsetp.ne.u32 %p1, %r4, 0;\n\tsetp.lt.u32 %p3, %r3, 47;\n";
  expect_per_thread(predicate + "\tbar.red.popc.u32 %r10, 0, %p1;\n\tbarrier.cta.red.popc.u32 %r11, 2, !%p1;",
                    partial_block, input, [&](size_t) { return odd; }, [&](size_t) { return uint32_t(partial_block) - odd; });
  expect_per_thread(predicate + "\tbar.red.and.pred %p2, 0, %p3;\n\tselp.u32 %r10, 1, 0, %p2;\n"
                                "\tbar.red.or.pred %p4, 1, %p3;\n\tselp.u32 %r11, 1, 0, %p4;",
                    partial_block, input, [](size_t) { return 0u; }, [](size_t) { return 1u; });
}

// Warp 0 fills the scratch area and arrives at barrier 1 without waiting; warp 1 waits there
// (64 threads in all) and reads what warp 0 wrote. Warp 0 then goes on to barrier 2, which
// only its own 32 threads use.
TEST(PtxBarrier, ArriveAndCountedSyncHandOverBetweenWarps) {
  Words input = sample_input(64);
  std::string body = "\tmov.u32 %r7, scratch;\n\tshl.b32 %r8, %r2, 2;\n\tadd.u32 %r9, %r7, %r8;\n"
                     "\tsetp.ge.u32 %p1, %r3, 32;\n\t@%p1 bra CONSUMER;\n"
                     "\tst.shared.u32 [%r9], %r1;\n\tbar.arrive 1, 64;\n\tbarrier.cta.sync.aligned 2, 32;\n"
                     "\tmov.u32 %r10, 7;\n\tbra.uni DONE;\n"
                     "CONSUMER:\n\tbar.sync 1, 64;\n\tld.shared.u32 %r10, [%r9];\nDONE:";
  expect_per_thread(body, 64, input, [&](size_t thread) { return thread < 32 ? 7u : input[thread - 32]; });
}

// After a divergent branch the even lanes shuffle among themselves (member mask 0x55555555)
// while the odd lanes already wait at a shuffle of the whole warp: the two must not mix, and
// the even lanes join the second shuffle afterwards.
TEST(PtxWarp, PartialMaskShuffleWaitsForItsOwnLanesOnly) {
  Words input = sample_input(64);
  std::string body = "\tand.b32 %r4, %r3, 1;\n\tsetp.ne.u32 %p1, %r4, 0;\n\t@%p1 bra ODD;\n"
                     "\tshfl.sync.bfly.b32 %r11, %r1, 2, 31, 0x55555555;\n"
                     "ODD:\n\tshfl.sync.bfly.b32 %r10, %r1, 1, 31, -1;";
  expect_per_thread(body, 64, input, [&](size_t thread) { return input[thread ^ 1]; },
                    [&](size_t thread) { return thread % 2 == 0 ? input[thread ^ 2] : 0u; });
}

// Member masks that are only known at run time (here the ballot of the lanes below 20) keep
// exact semantics: the vote and the reduction see exactly those lanes.
TEST(PtxWarp, RuntimeMemberMasksSelectTheirLanes) {
  Words input = sample_input(partial_block);
  std::string body = "\tsetp.lt.u32 %p1, %r2, 20;\n\tvote.sync.ballot.b32 %r5, %p1, -1;\n\t@!%p1 bra DONE;\n"
                     "\tredux.sync.add.u32 %r10, %r2, %r5;\n\tactivemask.b32 %r11;\nDONE:";
  expect_per_thread(body, partial_block, input,
                    [](size_t thread) {
                      size_t lanes = thread < 32 ? 20 : 16;
                      return thread % 32 < 20 ? uint32_t(lanes * (lanes - 1) / 2) : 0u;
                    },
                    [](size_t thread) { return thread % 32 < 20 ? (thread < 32 ? 0xFFFFFu : 0xFFFFu) : 0u; });
}

// A function with block barriers called from a kernel run region by region and from one run
// on fibers (it also shuffles over half a warp): each kernel gets the barrier it needs.
TEST(PtxBarrier, FunctionSharedByRegionAndFiberKernels) {
  const std::string call_mirror =
      "\t{\n\t.param .b32 v;\n\t.param .b32 r;\n\tst.param.b32 [v], %r1;\n"
      "\tcall.uni (r), mirror, (v);\n\tld.param.b32 %r2, [r];\n\t}\n"
      "\tld.param.u64 %rd1, [out];\n\tmul.wide.u32 %rd2, %r3, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
      "\tst.global.u32 [%rd3], %r2;\n\tret;\n}\n";
  const std::string ptx =
      ".version 8.0\n.target sm_80\n.address_size 64\n.shared .align 4 .b32 scratch[64];\n"
      ".visible .func (.param .b32 result) mirror(.param .b32 value)\n{\n\t.reg .b32 %r<8>;\n"
      "\tld.param.b32 %r1, [value];\n\tmov.u32 %r2, %tid.x;\n\tmov.u32 %r3, scratch;\n"
      "\tshl.b32 %r4, %r2, 2;\n\tadd.u32 %r5, %r3, %r4;\n\tst.shared.u32 [%r5], %r1;\n\tbar.sync 0;\n"
      "\tsub.u32 %r4, 63, %r2;\n\tshl.b32 %r4, %r4, 2;\n\tadd.u32 %r5, %r3, %r4;\n"
      "\tld.shared.u32 %r6, [%r5];\n\tbar.sync 0;\n\tst.param.b32 [result], %r6;\n\tret;\n}\n"
      ".visible .entry plain(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
      "\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r1, %r3;\n" +
      call_mirror +
      ".visible .entry fibered(.param .u64 out)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n"
      "\t.reg .b64 %rd<4>;\n\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r1, %r3;\n\tsetp.lt.u32 %p1, %r3, 16;\n"
      "\t@%p1 shfl.sync.bfly.b32 %r1, %r3, 1, 31, 0xffff;\n" +
      call_mirror;
  LoadedModule module(ptx);
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  for (const char* kernel : {"plain", "fibered"}) {
    Words out(64, 0xDEADBEEF);
    ParameterBuffer parameters(module.kernel(kernel));
    parameters.set(0, out.data());
    module.launch(kernel, {1, 1, 1}, {64, 1, 1}, parameters);
    bool shuffled = std::string_view(kernel) == "fibered";
    for (uint32_t thread = 0; thread < 64; ++thread) {
      uint32_t source = 63 - thread;
      uint32_t want = shuffled && source < 16 ? source ^ 1 : source;
      EXPECT_EQ(out[thread], want) << kernel << " thread " << thread;
    }
  }
}

}  // namespace
}  // namespace xcuda::ptx::testing
