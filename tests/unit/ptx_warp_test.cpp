// Warp collectives, one small hand-written PTX kernel at a time, on blocks that end in a
// partial warp. Expected values follow CUDA's documented definitions (__shfl_sync with a width,
// __ballot_sync, __match_any_sync, __reduce_*_sync), computed here lane by lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "ptx_object_loader.h"

namespace xcuda::ptx::testing {
namespace {

using Words = std::vector<uint32_t>;

// One block of `threads` running `body`: %r1 is the thread's input word, %r2 its lane, %r3 its
// thread index; the body leaves its answer in %r10 (and a second one in %r11).
class WarpKernel {
 public:
  explicit WarpKernel(std::string_view body) : module_(wrap(body)) {}

  std::string diagnostics() const { return module_.diagnostics_text(); }
  bool ok() const { return module_.ok(); }

  // The first and second answers of every thread.
  std::pair<Words, Words> run(const Words& input) {
    Words first(input.size(), 0xDEADBEEF), second(input.size(), 0xDEADBEEF);
    ParameterBuffer parameters(module_.kernel("warp"));
    parameters.set(0, input.data()).set(1, first.data()).set(2, second.data());
    module_.launch("warp", {1, 1, 1}, {static_cast<uint32_t>(input.size()), 1, 1}, parameters);
    return {first, second};
  }

 private:
  static std::string wrap(std::string_view body) {
    return std::string(".version 8.0\n.target sm_80\n.address_size 64\n"
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

// Runs `body` on a block of `threads` and compares every thread's answer with `expected(thread)`.
void expect_per_thread(std::string_view body, size_t threads, const Words& input,
                       const std::function<uint32_t(size_t thread)>& expected,
                       const std::function<uint32_t(size_t thread)>& expected_second = nullptr) {
  WarpKernel kernel(body);
  ASSERT_TRUE(kernel.ok()) << kernel.diagnostics();
  auto [first, second] = kernel.run(input);
  for (size_t thread = 0; thread < threads; ++thread) {
    EXPECT_EQ(first[thread], expected(thread)) << "thread " << thread << "\n" << body;
    if (expected_second) {
      EXPECT_EQ(second[thread], expected_second(thread)) << "thread " << thread << " (second)\n" << body;
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

TEST(PtxWarp, BallotOfAPartialWarpHasNoBitsPastItsEnd) {
  Words input = sample_input(partial_block);
  auto ballot = [&](size_t thread) {
    uint32_t bits = 0;
    for (size_t lane = 0; lane < 32 && segment_start(thread, 32) + lane < partial_block; ++lane)
      if (input[segment_start(thread, 32) + lane] & 1) bits |= 1u << lane;
    return bits;
  };
  expect_per_thread("\tand.b32 %r5, %r1, 1;\n\tsetp.ne.u32 %p1, %r5, 0;\n\tvote.sync.ballot.b32 %r10, %p1, -1;\n"
                    "\tvote.sync.ballot.b32 %r11, !%p1, 0x0000ffff;",
                    partial_block, input, ballot, [&](size_t thread) {
                      uint32_t existing = thread < 32 ? ~0u : 0xFFFFu;
                      return ~ballot(thread) & existing & 0xFFFFu;
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

// Counting and partial barriers need threads to wait at different barriers in one block, which
// region splitting cannot express yet: they are refused where they are written.
TEST(PtxBarrier, ReductionsAndPartialBarriersAreReportedWhereTheyAre) {
  for (const char* barrier : {"bar.red.popc.u32 %r10, 0, %p1;", "bar.red.and.pred %p2, 0, %p1;", "bar.sync 0, 64;",
                              "bar.arrive 0, 64;", "barrier.cta.arrive 1, 32;"}) {
    WarpKernel kernel(std::string("\tsetp.ne.u32 %p1, %r1, 0;\n\t") + barrier);
    ASSERT_FALSE(kernel.ok()) << barrier;
    EXPECT_NE(kernel.diagnostics().find(":19:2: this form of '"), std::string::npos) << kernel.diagnostics();
    EXPECT_NE(kernel.diagnostics().find("is not supported yet"), std::string::npos) << kernel.diagnostics();
  }
}

}  // namespace
}  // namespace xcuda::ptx::testing
