#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "compiler.h"

namespace xcuda::ptx {
namespace {

// Compiles one kernel body (declarations included) and returns its diagnostics; the body
// starts on line 6.
std::vector<std::string> check_body(std::string_view body) {
  std::string text = ".version 9.0\n.target sm_100a\n.address_size 64\n"
                     ".func (.param .b32 result) twice(.param .b32 value)\n{\n\tret;\n}\n"
                     ".visible .entry k(.param .u64 p)\n{\n";
  text += body;
  text += "\n}\n";
  CompileOptions options;
  options.file_name = "k.ptx";
  std::vector<std::string> lines;
  for (const auto& diagnostic : compile(text, options).diagnostics) lines.push_back(diagnostic.to_string());
  return lines;
}

using Lines = std::vector<std::string>;

TEST(PtxChecker, AcceptsAWellFormedBody) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<3>;\n\t.reg .f32 %f<2>;\n\tmov.b32 %f1, %r1;\n\tadd.f32 %f1, %f1, 0f3F800000;\n\tret;"),
            Lines{});
}

// The forms of a list in ptx_inputs (one instruction a line), compiled for the host in the one
// kernel the list describes, the first form on line first_form_line, in a module for `target`.
// Returns the diagnostics; `forms` counts the instructions.
constexpr uint32_t first_form_line = 17;
Lines compile_forms(const std::string& list, size_t& forms, const std::string& target = "sm_100a") {
  std::ifstream file(std::string(XCUDA_PTX_INPUTS) + "/" + list);
  EXPECT_TRUE(file) << list;
  std::string body, line;
  forms = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line.starts_with("#")) continue;
    body += "\t" + line + "\n";
    ++forms;
  }
  std::string text = ".version 8.8\n.target " + target + "\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
                     "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<8>;\n\t.reg .b16 %h<8>;\n\t.reg .b8 %b<8>;\n\t.reg .b32 %r<8>;\n"
                     "\t.reg .b64 %rd<8>;\n\t.reg .b128 %q<8>;\n\t.reg .f32 %f<12>;\n\t.reg .f64 %fd<8>;\n"
                     "\tld.param.u64 %rd1, [p];\n\tld.param.u64 %rd2, [p];\n" + body + "\tret;\n}\n";
  CompileOptions options;
  options.file_name = "forms.ptx";
  options.optimization_level = 1;
  Lines diagnostics;
  for (const auto& diagnostic : compile(text, options).diagnostics) diagnostics.push_back(diagnostic.to_string());
  return diagnostics;
}

// Every form in ptx_inputs/ptxas_forms.txt, which NVIDIA's ptxas takes, compiles for the host:
// forms an ISA document lists but no compiler's output shows (isspacep without a type, packed
// 16-bit integers, vector atomics ...) were refused before that list.
// ptxas takes each form for sm_100a or, as wgmma, which only sm_90a has, for sm_90a: what one
// target refuses, the other takes.
TEST(PtxChecker, CompilesEveryFormPtxasTakes) {
  size_t forms = 0;
  const Lines newer = compile_forms("ptxas_forms.txt", forms, "sm_100a");
  const Lines older = compile_forms("ptxas_forms.txt", forms, "sm_90a");
  auto place = [](const std::string& diagnostic) { return diagnostic.substr(0, diagnostic.find(':', diagnostic.find(':') + 1)); };
  Lines refused_by_both;
  for (const std::string& diagnostic : newer)
    if (std::any_of(older.begin(), older.end(), [&](const std::string& other) { return place(other) == place(diagnostic); }))
      refused_by_both.push_back(diagnostic);
  EXPECT_EQ(refused_by_both, Lines{});
  EXPECT_FALSE(newer.empty());  // wgmma's forms, there
  EXPECT_GT(forms, 300u);
}

// Every tcgen05 form ptxas takes (ptx_inputs/tcgen05_forms.txt) parses and checks; the only
// problem each has is that no target lowers it yet, reported at its own line, all in one run.
TEST(PtxChecker, ChecksEveryTcgen05FormPtxasTakes) {
  size_t forms = 0;
  Lines diagnostics = compile_forms("tcgen05_forms.txt", forms);
  EXPECT_GT(forms, 55u);
  Lines expected;
  for (size_t index = 0; index < forms; ++index)
    expected.push_back("forms.ptx:" + std::to_string(first_form_line + index) + ":2: 'tcgen05' is not supported yet");
  EXPECT_EQ(diagnostics, expected);
}

// What ptxas refuses in tcgen05 forms, said where it is wrong.
TEST(PtxChecker, ReportsMalformedTcgen05Forms) {
  // Each form, and the one problem it is reported with.
  const std::pair<std::string, std::string> forms[] = {
      {"tcgen05.mma.cta_group::1.kind::bogus [%r1], %rd1, %rd2, %r2, %p1;",
       "k.ptx:13:2: tcgen05.mma needs a kind (.kind::f16, ::tf32, ::f8f6f4, ::i8, ::mxf8f6f4, ::mxf4, ::mxf4nvf4)"},
      {"tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1, %r2}, [%r2];",
       "k.ptx:13:40: .32x32b.x1 moves 1 registers a thread, found 2"},
      {"tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r2];",
       "k.ptx:13:2: tcgen05.ld takes 3 operands, found 2"},
      {"tcgen05.mma.ws.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;",
       "k.ptx:13:2: tcgen05.mma.ws runs on .cta_group::1 only"},
      {"tcgen05.mma.cta_group::1.kind::f16.ashift [%r1], %rd1, %rd2, %r2, %p1;",
       "k.ptx:13:51: .ashift takes matrix A from tensor memory [a]"},
      {"tcgen05.mma.cta_group::1.kind::f16.block_scale [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;",
       "k.ptx:13:2: .kind::f16 cannot be combined with .block_scale"},
      {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cluster.b32 [%rd1], 32;",
       "k.ptx:13:41: '.shared::cluster' is not a modifier of tcgen05.alloc"},
      {"tcgen05.cp.cta_group::1.64x128b [%r1], %rd1;",
       "k.ptx:13:2: .64x128b needs .warpx2::02_13 or .warpx2::01_23"},
      {"tcgen05.shuffle.cta_group::1 [%r1];",
       "k.ptx:13:9: unknown tcgen05 operation '.shuffle'"},
      {"tcgen05;",
       "k.ptx:13:2: tcgen05 needs an operation such as .alloc, .ld or .mma"},
  };
  for (const auto& [form, problem] : forms)
    EXPECT_EQ(check_body("\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\t" + form + "\n\tret;"), Lines{problem})
        << form;
}

// sm_100's 8-bit ldmatrix and stmatrix forms: each that ptxas takes checks and is then reported
// as not lowered yet (the ISA gives their register layouts only as figures, and no sm_100 GPU
// recorded them); each that ptxas refuses is reported with what is wrong with it.
TEST(PtxChecker, ChecksEightBitMatrixAccesses) {
  const std::pair<std::string, std::string> forms[] = {
      {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%r3];", "k.ptx:13:2: 'ldmatrix.m16n16' is not supported yet"},
      {"ldmatrix.sync.aligned.m16n16.x2.trans.shared::cta.b8x16.b6x16_p32 {%r1, %r2, %r3, %r4}, [%r5];",
       "k.ptx:13:2: 'ldmatrix.m16n16' is not supported yet"},
      {"ldmatrix.sync.aligned.m8n16.x4.shared.b8x16.b4x16_p64 {%r1, %r2, %r3, %r4}, [%r5];",
       "k.ptx:13:2: 'ldmatrix.m8n16' is not supported yet"},
      {"stmatrix.sync.aligned.m16n8.x2.trans.shared.b8 [%r3], {%r1, %r2};", "k.ptx:13:2: 'stmatrix.m16n8' is not supported yet"},
      {"ldmatrix.sync.aligned.m16n16.x1.shared.b8 {%r1, %r2}, [%r3];", "k.ptx:13:2: ldmatrix.m16n16 needs .trans"},
      {"ldmatrix.sync.aligned.m16n16.x4.trans.shared.b8 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r1}, [%r3];",
       "k.ptx:13:2: ldmatrix.m16n16 takes .x1 or .x2"},
      {"ldmatrix.sync.aligned.m16n16.x1.trans.shared.b16 {%r1, %r2}, [%r3];",
       "k.ptx:13:2: ldmatrix.m16n16 takes .b8, or .b8x16 with .b6x16_p32 or .b4x16_p64"},
      {"ldmatrix.sync.aligned.m8n16.x1.trans.shared.b8x16.b6x16_p32 {%r1}, [%r3];", "k.ptx:13:2: ldmatrix.m8n16 takes no .trans"},
      {"ldmatrix.sync.aligned.m8n16.x1.shared.b8 {%r1}, [%r3];",
       "k.ptx:13:2: ldmatrix.m8n16 takes .b8x16 with .b6x16_p32 or .b4x16_p64"},
      {"ldmatrix.sync.aligned.m8n8.x1.shared.b8 {%r1}, [%r3];", "k.ptx:13:2: ldmatrix.m8n8 takes .b16"},
      {"stmatrix.sync.aligned.m16n8.x1.shared.b8 [%r3], {%r1};", "k.ptx:13:2: stmatrix.m16n8 needs .trans"},
      {"stmatrix.sync.aligned.m16n8.x1.trans.shared.b16 [%r3], {%r1};", "k.ptx:13:2: stmatrix.m16n8 takes .b8"},
      {"stmatrix.sync.aligned.m16n16.x1.trans.shared.b8 [%r3], {%r1};", "k.ptx:13:23: '.m16n16' is not a valid modifier for 'stmatrix'"},
  };
  for (const auto& [form, problem] : forms)
    EXPECT_EQ(check_body("\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\t" + form + "\n\tret;"), Lines{problem})
        << form;
}

// mma.sp's sparsity selector is a constant naming lanes of a group that the shape has; a .b1
// mma without its operation is reported as ptxas reports it.
TEST(PtxChecker, ReportsMalformedMatrixForms) {
  const std::pair<std::string, std::string> forms[] = {
      {"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5, %r6}, "
       "{%f1, %f2, %f3, %f4}, %r2, 4;",
       "k.ptx:13:128: mma.sp.m16n8k16's sparsity selector is a constant from 0 to 3"},
      {"mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6, %r7, %r1}, {%r1, %r2, %r3, %r4}, %r2, %r3;",
       "k.ptx:13:164: mma.sp.m16n8k64's sparsity selector is a constant from 0 to 0"},
      {"mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6, %r7, %r1}, {%f1, %f2, %f3, %f4}, %r2, 2;",
       "k.ptx:13:150: mma.sp.m16n8k32's sparsity selector is a constant from 0 to 1"},
      {"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5, %r6}, {%f1, %f2, %f3, %f4};",
       "k.ptx:13:2: mma.sp needs d, a, b, c, e and f and the four types .dtype.atype.btype.ctype"},
      {"mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, {%r5, %r6}, "
       "{%f1, %f2, %f3, %f4}, %r2, 0;",
       "k.ptx:13:2: mma.sp.m16n8k8.row.col with these types is not supported yet"},
      {"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};",
       "k.ptx:13:2: mma with .b1 inputs needs .and.popc or .xor.popc"},
  };
  for (const auto& [form, problem] : forms)
    EXPECT_EQ(check_body("\t.reg .f32 %f<5>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\t" + form + "\n\tret;"), Lines{problem})
        << form;
}

// tex and tld4 may name a predicate after their vector of results ({d}|p, whether the texel was
// resident): it parses, and the lowering reports what it does not take yet at the statement.
TEST(PtxChecker, ParsesVectorResultsWithAPredicate) {
  EXPECT_EQ(check_body("\t.reg .pred %p<2>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<4>;\n"
                       "\ttex.2d.v4.f32.f32 {%f0, %f1, %f2, %f3}|%p1, [%rd1, {%f4, %f5}];\n\tret;"),
            Lines{"k.ptx:13:2: expected {d0, d1, d2, d3}, [object, {…}] (gradients and a predicate result are not supported yet)"});
}

TEST(PtxChecker, RejectsRegistersOfTheWrongType) {
  EXPECT_EQ(check_body("\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<2>;\n\t.reg .pred %p<2>;\n"
                       "\tadd.s32 %rd1, %rd1, 1;\n\tadd.f32 %f1, %rd1, %f1;\n\tadd.u64 %rd1, %f1, %rd2;\n\t@%rd1 ret;"),
            (Lines{"k.ptx:13:10: '%rd1' is a .b64 register, expected .s32",
                   "k.ptx:13:16: '%rd1' is a .b64 register, expected .s32",
                   "k.ptx:14:15: '%rd1' is a .b64 register, expected .f32",
                   "k.ptx:15:16: '%f1' is a .f32 register, expected .u64",
                   "k.ptx:16:3: '%rd1' is not a predicate register"}));
}

TEST(PtxChecker, AllowsWiderRegistersWhereLoadsAndStoresDo) {
  EXPECT_EQ(check_body("\t.reg .b64 %rd<3>;\n\tld.param.u32 %rd1, [p];\n\tst.global.u8 [%rd1], %rd1;\n\tret;"), Lines{});
}

TEST(PtxChecker, CountsOperands) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<3>;\n\tadd.s32 %r1, %r2;\n\tselp.b32 %r1, %r2, %r2;\n\tret %r1;"),
            (Lines{"k.ptx:11:2: 'add' takes 3 operands, found 2", "k.ptx:12:2: 'selp' takes 4 operands, found 3",
                   "k.ptx:13:2: 'ret' takes 0 operands, found 1"}));
}

TEST(PtxChecker, RejectsModifiersAnInstructionDoesNotTake) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<3>;\n\tadd.rn.wibble.s32 %r1, %r2, %r2;\n\tmov.ftz.b32 %r1, %r2;\n\tadd %r1, %r2, %r2;"),
            (Lines{"k.ptx:11:8: '.wibble' is not a valid modifier for 'add'", "k.ptx:12:5: '.ftz' is not a valid modifier for 'mov'",
                   "k.ptx:13:2: 'add' needs a type modifier such as .b32"}));
}

TEST(PtxChecker, ResolvesLabelsAndScopes) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<3>;\n\tbra $missing;\n\t{\n\t.reg .b32 inner;\n\t}\n\tmov.b32 inner, 1;\n$twice:\n$twice:\n\tret;"),
            (Lines{"k.ptx:11:6: expected a label, found '$missing'", "k.ptx:15:10: unknown name 'inner'",
                   "k.ptx:17:1: label '$twice' is defined twice"}));
}

TEST(PtxChecker, ChecksCallsAgainstThePrototype) {
  EXPECT_EQ(check_body("\t.param .b32 argument;\n\t.param .b32 answer;\n\t.param .b8 small;\n\t.reg .b32 %r1;\n"
                       "\tcall.uni (answer), twice, (argument);\n"
                       "\tcall.uni (answer), twice, (argument, argument);\n"
                       "\tcall.uni (answer), nothing, (argument);\n"
                       "\tcall.uni (answer), twice, (%r1);\n"
                       "\tcall.uni (answer), twice, (small);\n\tret;"),
            (Lines{"k.ptx:15:29: 'twice' takes 1 arguments, found 2", "k.ptx:16:21: unknown function 'nothing'",
                   "k.ptx:17:29: call arguments must be .param variables", "k.ptx:18:29: 'small' is smaller than the parameter 'value'"}));
}

TEST(PtxChecker, RejectsDuplicatesAndBadDestinations) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<3>;\n\t.reg .b32 %r<4>;\n\tmov.u32 5, %r1;\n\tmov.u32 %tid.x, %r1;\n\tret;"),
            (Lines{"k.ptx:11:12: '%r' is declared twice in the same scope", "k.ptx:12:10: the destination must be a register",
                   "k.ptx:13:10: '%tid' is read-only"}));
}

TEST(PtxChecker, NamesLaterInstructionsAsUnsupported) {
  EXPECT_EQ(check_body("\t.reg .b64 %rd<3>;\n\tcctl.u.global.all [%rd1];\n\tret;"),
            Lines{"k.ptx:11:2: 'cctl' is not supported yet"});
  // Known to the checker, not yet to the lowering: reported once the whole module checks.
  EXPECT_EQ(check_body("\t.reg .b64 %rd<3>;\n\tredux.sync.min.u64 %rd1, %rd2, -1;\n\tret;"),
            Lines{"k.ptx:11:2: redux.sync over this type is not supported yet"});
}

// WARP_SZ is the ISA's constant for the warp size; '-' negates only vmad's sources.
TEST(PtxChecker, ReadsWarpSizeAndNegatedVideoSources) {
  EXPECT_EQ(check_body("\t.reg .b32 %r<4>;\n\tmov.u32 %r1, WARP_SZ;\n\tadd.u32 %r1, %r1, WARP_SZ;\n"
                       "\tvmad.s32.s32.s32 %r1, -%r2, %r3.h1, %r1;\n\tvmad.u32.u32.u32.sat %r1, %r2, %r3, -%r1;\n\tret;"),
            Lines{});
  EXPECT_EQ(check_body("\t.reg .b32 %r<4>;\n\tadd.s32 %r1, -%r2, %r3;\n\tvmad.s32.s32.s32 -%r1, %r2, %r3, %r1;\n\tret;"),
            (Lines{"k.ptx:11:15: '-' before a register is only valid on vmad's sources",
                   "k.ptx:12:19: '-' before a register is only valid on vmad's sources"}));
  EXPECT_EQ(check_body("\t.reg .b32 %r<4>;\n\tvmad.s32.s32.s32 %r1, -%r2, %r3, -%r1;\n\tret;"),
            Lines{"k.ptx:11:2: 'vmad' negates a and b, or c, and nothing with .po"});
}

TEST(PtxChecker, ChecksIndirectCallsAgainstTheirPrototype) {
  std::string_view declarations = "\t.reg .b64 %rd<2>;\n\t.reg .b32 %r1;\n"
                                  "proto: .callprototype _ (.param .b32 _);\n"
                                  "targets: .calltargets twice;\n"
                                  "\t.param .b32 argument;\n\t.param .b32 answer;\n";
  EXPECT_EQ(check_body(std::string(declarations) + "\tmov.u64 %rd1, twice;\n\tcall %rd1, (argument), proto;\n"
                                                   "\tcall (answer), %rd1, (argument), targets;\n\tret;"),
            Lines{});
  EXPECT_EQ(check_body(std::string(declarations) + "\tcall %rd1, (argument, argument), proto;\n"
                                                   "\tcall (answer), %rd1, (argument);\n"
                                                   "\tcall %r1, (argument), proto;\n"
                                                   "\tcall %rd1, (argument), $nowhere;\n\tret;"),
            (Lines{"k.ptx:16:14: '%rd1' takes 1 arguments, found 2",
                   "k.ptx:17:17: an indirect call needs a .callprototype or .calltargets label after its arguments",
                   "k.ptx:18:7: '%r1' is neither a function nor a 64-bit register holding one",
                   "k.ptx:19:25: '$nowhere' is not a .callprototype or .calltargets label of this function"}));
}

TEST(PtxChecker, ChecksIndexedBranchTargets) {
  EXPECT_EQ(check_body("\t.reg .b32 %r1;\n"
                       "cases: .branchtargets one, two;\n"
                       "\tbrx.idx %r1, cases;\n\tbrx.idx %r1, one;\none:\ntwo:\n\tret;"),
            Lines{"k.ptx:13:15: 'one' is not a .branchtargets label of this function"});
}

TEST(PtxChecker, ReportsWhatTheHostTargetCannotProvide) {
  CompileOptions options;
  // exit inside a .func is fine; malloc is what the host target lacks.
  auto result = compile(".version 9.0\n.target sm_80\n.address_size 64\n"
                        ".extern .func (.param .b64 result) malloc(.param .b64 size);\n"
                        ".func stop()\n{\n\texit;\n}\n"
                        ".visible .entry k()\n{\n\t.param .b64 size;\n\t.param .b64 result;\n"
                        "\tcall.uni (result), malloc, (size);\n\tcall.uni stop, ();\n\tret;\n}\n",
                        options);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].to_string(), "<ptx>:4:1: the host target does not provide 'malloc'");
}

TEST(PtxChecker, ReportsMemoryNoBlockCouldHave) {
  EXPECT_EQ(check_body("\t.shared .b8 tile[300000];\n\t.local .b8 scratch[4294967295][4294967295][16];\n\tret;"),
            Lines{"k.ptx:10:14: 'tile' takes the module's .shared variables beyond 233472 bytes"});
  EXPECT_EQ(check_body("\t.local .b8 scratch[4294967295][4294967295][16];\n\tret;"),
            Lines{"k.ptx:10:13: 'scratch' is larger than 524288 bytes"});
}

TEST(PtxChecker, ReportsUnknownSymbolsInInitialisers) {
  CompileOptions options;
  auto result = compile(".version 9.0\n.target sm_80\n.address_size 64\n.global .u64 table[2] = {generic(missing), 0};\n", options);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].to_string(), "<ptx>:4:34: unknown name 'missing'");
}

// What ptxas refuses in 0xFF00(symbol): a mask of other than one whole byte, and elements other
// than .u8, .u32 and .u64.
TEST(PtxChecker, ReportsAddressMasksPtxasRefuses) {
  auto diagnostics = [](const std::string& declaration) {
    CompileOptions options;
    auto result = compile(".version 9.0\n.target sm_80\n.address_size 64\n.global .u32 target;\n" + declaration + "\n", options);
    Lines lines;
    for (const auto& diagnostic : result.diagnostics) lines.push_back(diagnostic.to_string());
    return lines;
  };
  EXPECT_EQ(diagnostics(".global .u8 bytes[2] = {0xFFFF(target), 0xF0(target)};"),
            (Lines{"<ptx>:5:32: an address mask picks one byte: 0xFF, 0xFF00, ... or 0xFF00000000000000",
                   "<ptx>:5:46: an address mask picks one byte: 0xFF, 0xFF00, ... or 0xFF00000000000000"}));
  EXPECT_EQ(diagnostics(".global .u16 halves[1] = {0xFF(target)};"),
            Lines{"<ptx>:5:32: a byte of an address needs a .u8, .u32 or .u64 element, not .u16"});
  EXPECT_EQ(diagnostics(".global .b8 bytes[1] = {0xFF(target)};"),
            Lines{"<ptx>:5:30: a byte of an address needs a .u8, .u32 or .u64 element, not .b8"});
  EXPECT_EQ(diagnostics(".global .u64 words[2] = {0xFF00000000000000(target), 0xFF(target+8)};"), Lines{});
}

// What an instruction, a modifier, a type or a special register needs of the module's .version
// and .target, refused where they lack it as ptxas 13 refuses it (each expectation below is
// ptxas's own answer for the same module; tests/unit/ptx_inputs/ptxas_requirements.py compares
// the two compilers over every form and conformance case).
TEST(PtxChecker, ReportsWhatTheModulesVersionAndTargetLack) {
  auto diagnostics = [](std::string_view header, std::string_view body) {
    CompileOptions options;
    std::string text = std::string(header) + "\n.address_size 64\n.visible .entry k()\n{\n" + std::string(body) + "\n}\n";
    Lines lines;
    for (const auto& diagnostic : compile(text, options).diagnostics) lines.push_back(diagnostic.to_string());
    return lines;
  };
  const std::string_view registers = ".reg .b32 %r<4>; .reg .b16 %h<4>; .reg .f32 %f<4>; .reg .pred %p<2>; ";
  EXPECT_EQ(diagnostics(".version 7.0\n.target sm_75", std::string(registers) + "redux.sync.add.u32 %r1, %r2, 0xffffffff;"),
            Lines{"<ptx>:6:70: 'redux' requires .target sm_80 or higher"});
  EXPECT_EQ(diagnostics(".version 6.5\n.target sm_80", std::string(registers) + "redux.sync.add.u32 %r1, %r2, 0xffffffff;"),
            (Lines{"<ptx>:2:9: PTX .version 6.5 does not support .target sm_80, which needs .version 7.0",
                   "<ptx>:6:70: 'redux' requires PTX ISA .version 7.0 or later"}));
  EXPECT_EQ(diagnostics(".version 7.0\n.target sm_80", std::string(registers) + "cvt.f32.bf16 %f1, %h1;"),
            Lines{"<ptx>:6:70: 'cvt with .f32.bf16' requires PTX ISA .version 7.1 or later"});
  EXPECT_EQ(diagnostics(".version 7.8\n.target sm_80", std::string(registers) + "add.rn.bf16 %h1, %h2, %h3;"),
            Lines{"<ptx>:6:70: 'add.bf16' requires .target sm_90 or higher"});
  EXPECT_EQ(diagnostics(".version 8.0\n.target sm_89", std::string(registers) + "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;"),
            Lines{"<ptx>:6:70: 'cvt with .e4m3x2/.e5m2x2 on sm_89' requires PTX ISA .version 8.1 or later"});
  EXPECT_EQ(diagnostics(".version 8.6\n.target sm_90", std::string(registers) + "min.f32 %f1, %f2, %f3, %f1;"),
            (Lines{"<ptx>:6:70: 'min.f32 with 3 input operands' requires .target sm_100 or higher",
                   "<ptx>:6:70: 'min.f32 with 3 input operands' requires PTX ISA .version 8.8 or later"}));
  EXPECT_EQ(diagnostics(".version 7.8\n.target sm_80", std::string(registers) + "mov.u32 %r1, %cluster_ctarank;"),
            Lines{"<ptx>:6:70: '%cluster_ctarank' requires .target sm_90 or higher"});
  EXPECT_EQ(diagnostics(".version 8.2\n.target sm_90", ".reg .b128 %q;"), Lines{"<ptx>:6:12: 'Type .b128' requires PTX ISA .version 8.3 or later"});
  // Features only architecture-specific targets have.
  EXPECT_EQ(diagnostics(".version 8.8\n.target sm_100a", "wgmma.fence.sync.aligned;"),
            Lines{"<ptx>:6:1: 'WGMMA' is not supported on .target sm_100a"});
  EXPECT_EQ(diagnostics(".version 8.0\n.target sm_90", "setmaxnreg.inc.sync.aligned.u32 232;"),
            Lines{"<ptx>:6:1: 'setmaxnreg' is not supported on .target sm_90"});
  EXPECT_EQ(diagnostics(".version 8.8\n.target sm_120a", "setmaxnreg.inc.sync.aligned.u32 232;"), Lines{});
  // The same, where the module has what they need.
  for (auto [header, instruction] : {std::pair{".version 7.0\n.target sm_80", "redux.sync.add.u32 %r1, %r2, 0xffffffff;"},
                                     std::pair{".version 8.1\n.target sm_89", "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;"},
                                     std::pair{".version 7.8\n.target sm_90", "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;"},
                                     std::pair{".version 7.1\n.target sm_80", "cvt.f32.bf16 %f1, %h1;"},
                                     std::pair{".version 6.0\n.target sm_52", "add.u32 %r1, %r2, %r3;"}})
    EXPECT_EQ(diagnostics(header, std::string(registers) + instruction), Lines{}) << instruction;
}

}  // namespace
}  // namespace xcuda::ptx
