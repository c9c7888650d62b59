// How the compiler shares a module's kernels out among threads (CompileOptions::threads), and
// what the shares' compile reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <llvm/Support/CommandLine.h>

#include "compiler.h"
#include "diagnostics.h"
#include "kernel_selection.h"
#include "parse/parser.h"

namespace xcuda::ptx {
namespace {

std::string header() { return ".version 8.0\n.target sm_80\n.address_size 64\n"; }

// A kernel of `statements` additions, calling `callee` first when one is named.
std::string kernel(const std::string& name, int statements, const std::string& callee = "") {
  std::string text = ".visible .entry " + name + "()\n{\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 0;\n";
  if (!callee.empty()) text += "  call.uni " + callee + ", ();\n";
  for (int index = 0; index < statements; ++index) text += "  add.u32 %r1, %r1, 1;\n";
  return text + "  ret;\n}\n";
}

std::string helper() { return ".func helper()\n{\n  ret;\n}\n"; }

Module parsed(const std::string& text) {
  DiagnosticSink diagnostics("test.ptx");
  Module module = parse_module(text, diagnostics);
  EXPECT_FALSE(diagnostics.has_errors());
  return module;
}

// Sizes are estimates of the CPU time a kernel takes to compile (kernel_selection.cpp): some 2 ms
// a kernel and 85 us a statement, so a kernel of 100 additions comes to 10.8 ms.
TEST(KernelShares, KernelsAreSharedOutLargestFirstIntoTheLightestShare) {
  Module module = parsed(header() + kernel("small", 50) + kernel("large", 150) + kernel("middle", 100) + kernel("other", 75));
  auto shares = share_out_kernels(module, 2);
  // 41 ms of work: two shares. large (15 ms) to the first; middle (10.8) and other (8.6) to the
  // second; small (6.5) to the first, then the lighter. Each share keeps the module's order, and
  // the heavier comes first.
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0], std::vector<std::string>({"small", "large"}));
  EXPECT_EQ(shares[1], std::vector<std::string>({"middle", "other"}));
}

// Two kernels of 6 ms: whole on two threads, where a share wants 20 ms of work, in two shares on
// eight, where it wants 5 and the threads would wait; two of 2.4 ms, whole even there.
TEST(KernelShares, ASmallModuleStaysWholeUnlessThreadsWouldWait) {
  Module module = parsed(header() + kernel("first", 50) + kernel("second", 50));
  EXPECT_EQ(share_out_kernels(module, 2).size(), 1u);
  EXPECT_EQ(share_out_kernels(module, 8).size(), 2u);
  EXPECT_EQ(share_out_kernels(parsed(header() + kernel("first", 5) + kernel("second", 5)), 8).size(), 1u);
}

// A warp shuffle costs as much to compile as some six additions: the host compiles it as an
// exchange among a warp's lanes.
TEST(KernelShares, WarpShufflesWeighMoreThanTheirCount) {
  auto shuffling = [](const std::string& name, const std::string& statement) {
    std::string text = ".visible .entry " + name + "()\n{\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 0;\n";
    for (int index = 0; index < 40; ++index) text += "  " + statement + ";\n";
    return text + "  ret;\n}\n";
  };
  const std::string shuffle = "shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1";
  EXPECT_EQ(share_out_kernels(parsed(header() + shuffling("first", shuffle) + shuffling("second", shuffle)), 2).size(), 2u);
  const std::string addition = "add.u32 %r1, %r1, 1";
  EXPECT_EQ(share_out_kernels(parsed(header() + shuffling("first", addition) + shuffling("second", addition)), 2).size(), 1u);
}

// Each block barrier starts a region the host runs in loops over the block's threads of its own,
// and a kernel with any costs a block function of regions: two kernels of twenty barriers weigh
// enough for two shares. A warp's barrier starts none.
TEST(KernelShares, BlockBarriersWeighMoreThanTheirCount) {
  auto synchronising = [](const std::string& name, const std::string& barrier) {
    std::string text = ".visible .entry " + name + "()\n{\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 0;\n";
    for (int index = 0; index < 20; ++index) text += "  " + barrier + ";\n  add.u32 %r1, %r1, 1;\n";
    return text + "  ret;\n}\n";
  };
  Module blocks = parsed(header() + synchronising("first", "bar.sync 0") + synchronising("second", "barrier.sync.aligned 0"));
  EXPECT_EQ(share_out_kernels(blocks, 2).size(), 2u);
  Module warps = parsed(header() + synchronising("first", "bar.warp.sync -1") + synchronising("second", "bar.warp.sync -1"));
  EXPECT_EQ(share_out_kernels(warps, 2).size(), 1u);
}

// A warp's shuffle inside a loop weighs ten times one outside: the warp path cuts the kernel at
// the loop's header. Four shuffles in a loop then outweigh thirty outside one, and the heavier
// share comes first.
TEST(KernelShares, LaneExchangesInsideLoopsWeighMore) {
  auto shuffling = [](const std::string& name, int shuffles, bool looped) {
    std::string text = ".visible .entry " + name + "()\n{\n  .reg .pred %p<2>;\n  .reg .b32 %r<3>;\n  mov.u32 %r1, 0;\n";
    if (looped) text += "$again:\n";
    for (int index = 0; index < shuffles; ++index) text += "  shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;\n";
    if (looped) text += "  add.u32 %r2, %r2, 1;\n  setp.lt.u32 %p1, %r2, 8;\n  @%p1 bra $again;\n";
    return text + "  ret;\n}\n";
  };
  Module module = parsed(header() + shuffling("straight", 30, false) + shuffling("looped", 4, true));
  std::vector<std::vector<std::string>> shares = share_out_kernels(module, 2);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0], (std::vector<std::string>{"looped"}));
}

// Twelve kernels of 27.7 ms: a share each on many threads, four a thread on two, and none on one.
TEST(KernelShares, NoMoreSharesThanKernelsOrFourAThread) {
  std::string text = header();
  for (int index = 0; index < 12; ++index) text += kernel("kernel" + std::to_string(index), 300);
  Module module = parsed(text);
  EXPECT_EQ(share_out_kernels(module, 16).size(), 12u);
  EXPECT_EQ(share_out_kernels(module, 2).size(), 8u);
  EXPECT_EQ(share_out_kernels(module, 1).size(), 1u);
}

// Seven kernels of 10.8 ms weigh three shares' worth; on two threads the third would run alone
// after the first two, so they come in two.
TEST(KernelShares, AFewSharesComeInAMultipleOfTheThreads) {
  std::string text = header();
  for (int index = 0; index < 7; ++index) text += kernel("kernel" + std::to_string(index), 100);
  EXPECT_EQ(share_out_kernels(parsed(text), 2).size(), 2u);
}

TEST(KernelShares, CallingAFunctionFromTwoSharesIsFine) {
  Module module = parsed(header() + helper() + kernel("first", 300, "helper") + kernel("second", 300, "helper"));
  EXPECT_EQ(share_out_kernels(module, 2).size(), 2u);
}

// Each share compiles its own copy of a function: two copies, two addresses.
TEST(KernelShares, TakingAFunctionsAddressKeepsTheModuleWhole) {
  std::string taker = ".visible .entry taker(.param .u64 out)\n{\n  .reg .b64 %rd<3>;\n  ld.param.u64 %rd1, [out];\n"
                      "  mov.u64 %rd2, helper;\n  st.global.u64 [%rd1], %rd2;\n  ret;\n}\n";
  Module module = parsed(header() + helper() + taker + kernel("first", 300, "helper") + kernel("second", 300));
  EXPECT_EQ(share_out_kernels(module, 2).size(), 1u);
}

// A table of function pointers holds the first share's copies, compiled for its kernels only.
TEST(KernelShares, ATableOfFunctionsKeepsTheModuleWhole) {
  std::string table = ".global .u64 table[1] = {helper};\n";
  Module module = parsed(header() + helper() + table + kernel("first", 300) + kernel("second", 300));
  EXPECT_EQ(share_out_kernels(module, 2).size(), 1u);
}

TEST(KernelShares, ReachableFunctionsFollowCallsAndVariables) {
  std::string table = ".global .u64 table[1] = {helper};\n";
  Module module = parsed(header() + ".func unused()\n{\n  ret;\n}\n" + helper() + table + kernel("first", 1));
  auto reached = reachable_functions(module, std::vector<std::string>{"first"});
  EXPECT_TRUE(reached.contains("first"));
  EXPECT_TRUE(reached.contains("helper"));
  EXPECT_FALSE(reached.contains("unused"));
}

// Each share lowers the module's variables; one that cannot be lowered is reported once.
TEST(KernelShares, AProblemEveryShareFindsIsReportedOnce) {
  CompileOptions options;
  options.file_name = "test.ptx";
  options.threads = 2;
  CompileResult result = compile(header() + ".local .b32 private_word;\n" + kernel("first", 300) + kernel("second", 300), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.pass_times.back().pass, "host: compile in shares on threads");
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_NE(result.diagnostics[0].message.find(".local variables are not supported"), std::string::npos) << result.diagnostics[0].to_string();
  EXPECT_EQ(result.diagnostics[0].line, 4u);
}

TEST(KernelShares, SharesGiveTheSameKernelsInTheModulesOrder) {
  CompileOptions options;
  options.threads = 3;
  std::string text = header() + kernel("first", 300) + kernel("second", 300) + kernel("third", 300);
  CompileResult shared = compile(text, options);
  ASSERT_TRUE(shared.ok()) << shared.diagnostics.front().to_string();
  EXPECT_EQ(shared.pass_times.back().pass, "host: compile in shares on threads");
  options.threads = 1;
  CompileResult whole = compile(text, options);
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(shared.module.kernels.size(), 3u);
  for (size_t index = 0; index < 3; ++index) EXPECT_EQ(shared.module.kernels[index].name, whole.module.kernels[index].name);
  EXPECT_FALSE(shared.object.empty());
}

// lld's driver resets every LLVM option before it reads its own, and linking a module's shares
// runs it in the process: the code generator's settings (target/object_file.h) must outlive it
// for the compiles that follow.
TEST(KernelShares, CodeGenerationSettingsOutliveLinkingTheShares) {
  CompileOptions options;
  options.threads = 2;
  CompileResult shared = compile(header() + kernel("first", 300) + kernel("second", 300), options);
  ASSERT_TRUE(shared.ok()) << shared.diagnostics.front().to_string();
  ASSERT_EQ(shared.pass_times.back().pass, "host: compile in shares on threads");
  auto& registered = llvm::cl::getRegisteredOptions();
  for (const char* setting : {"disable-lsr", "grow-region-complexity-budget", "dag-maps-huge-region"}) {
    ASSERT_TRUE(registered.contains(setting)) << setting;
    EXPECT_EQ(registered[setting]->getNumOccurrences(), 1) << setting;
  }
}

}  // namespace
}  // namespace xcuda::ptx
