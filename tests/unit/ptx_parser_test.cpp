#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "compiler.h"
#include "parse/parser.h"

namespace xcuda::ptx {
namespace {

std::string read_input(const std::string& name) {
  std::ifstream file(std::string(XCUDA_PTX_INPUTS) + "/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

const Function* find_function(const Module& module, std::string_view name) {
  for (const auto& function : module.functions)
    if (function.name == name) return &function;
  return nullptr;
}

size_t count_instructions(const Function& function) {
  size_t count = 0;
  for (const auto& statement : function.body) count += std::holds_alternative<Instruction>(statement);
  return count;
}

std::vector<std::string> diagnostics_of(std::string_view source) {
  CompileOptions options;
  options.file_name = "bad.ptx";
  std::vector<std::string> lines;
  for (const auto& diagnostic : compile(source, options).diagnostics) lines.push_back(diagnostic.to_string());
  return lines;
}

constexpr std::string_view header = ".version 9.0\n.target sm_100a\n.address_size 64\n";

TEST(PtxParser, ReadsNvccOutput) {
  std::string text = read_input("kernels.ptx");
  DiagnosticSink diagnostics("kernels.ptx");
  Module module = parse_module(text, diagnostics);
  ASSERT_FALSE(diagnostics.has_errors());
  EXPECT_EQ(module.version, "9.0");
  EXPECT_EQ(module.target, "sm_80");
  EXPECT_EQ(module.address_size, 64u);

  const Function* vector_add = find_function(module, "vector_add");
  ASSERT_NE(vector_add, nullptr);
  EXPECT_TRUE(vector_add->is_entry);
  EXPECT_TRUE(vector_add->is_visible);
  ASSERT_EQ(vector_add->parameters.size(), 4u);
  EXPECT_EQ(vector_add->parameters[0].type, ScalarType::u64);
  EXPECT_EQ(vector_add->parameters[3].type, ScalarType::u32);
  EXPECT_EQ(vector_add->parameters[3].name, "vector_add_param_3");
  EXPECT_EQ(count_instructions(*vector_add), 22u);

  size_t entries = 0, functions = 0;
  for (const auto& function : module.functions) (function.is_entry ? entries : functions) += 1;
  EXPECT_EQ(entries, 15u);
  EXPECT_EQ(functions, 3u);  // cube, make_pair, and the vprintf prototype

  const Function* make_pair = find_function(module, "_Z9make_pair4Pairi");
  ASSERT_NE(make_pair, nullptr);
  ASSERT_EQ(make_pair->returns.size(), 1u);
  EXPECT_EQ(make_pair->returns[0].array_dimensions, std::vector<uint64_t>{32});
  EXPECT_EQ(make_pair->returns[0].alignment, 8u);

  bool found_coefficients = false;
  for (const auto& variable : module.variables) {
    if (variable.name != "coefficients") continue;
    found_coefficients = true;
    EXPECT_EQ(variable.space, StateSpace::constant);
    EXPECT_EQ(variable.initializer.size(), 16u);
  }
  EXPECT_TRUE(found_coefficients);
}

TEST(PtxParser, RegisterRangesAndOperands) {
  std::string text = std::string(header) +
                     ".visible .entry k(.param .u64 p)\n{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<100>;\n"
                     "\tsetp.lt.s32 %p1|%p2, %r1, -5;\n\t@!%p1 bra $done;\n\tmov.b32 %r2, 0f3F800000;\n"
                     "$done:\n\tret;\n}\n";
  DiagnosticSink diagnostics("test.ptx");
  Module module = parse_module(text, diagnostics);
  ASSERT_FALSE(diagnostics.has_errors());
  const Function& kernel = module.functions.at(0);
  const auto& registers = std::get<VariableDeclaration>(kernel.body[1]);
  EXPECT_EQ(registers.name, "%r");
  EXPECT_EQ(registers.register_count, 100u);
  const auto& setp = std::get<Instruction>(kernel.body[2]);
  EXPECT_EQ(setp.opcode, "setp");
  ASSERT_EQ(setp.modifiers.size(), 2u);
  EXPECT_EQ(setp.operands[0].kind, Operand::Kind::predicate_pair);
  EXPECT_EQ(setp.operands[2].kind, Operand::Kind::integer);
  EXPECT_EQ(static_cast<int64_t>(setp.operands[2].integer), -5);
  const auto& branch = std::get<Instruction>(kernel.body[3]);
  ASSERT_TRUE(branch.guard.has_value());
  EXPECT_TRUE(branch.guard->negated);
  const auto& move = std::get<Instruction>(kernel.body[4]);
  EXPECT_EQ(move.operands[1].float_bits, 32);
  EXPECT_EQ(move.operands[1].integer, 0x3F800000u);
}

TEST(PtxParser, ReportsAMissingSemicolonAtTheEndOfTheStatement) {
  std::string text = std::string(header) + ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tmov.u32 %r1, %tid.x\n\tret;\n}\n";
  EXPECT_EQ(diagnostics_of(text), std::vector<std::string>{"bad.ptx:7:21: expected ';' at end of statement"});
}

TEST(PtxParser, ReportsUnknownInstructionsAndRegisters) {
  std::string text = std::string(header) +
                     ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tfrobnicate.b32 %r1, %r2;\n\tadd.s32 %r1, %r2, %r7;\n\tret;\n}\n";
  EXPECT_EQ(diagnostics_of(text), (std::vector<std::string>{"bad.ptx:7:2: unknown instruction 'frobnicate'",
                                                            "bad.ptx:8:20: unknown name '%r7'"}));
}

TEST(PtxParser, ReportsAnUnterminatedBody) {
  std::string text = std::string(header) + ".visible .entry k()\n{\n\tret;\n";
  EXPECT_EQ(diagnostics_of(text),
            std::vector<std::string>{"bad.ptx:7:1: expected '}' to close the body of 'k' opened at 5:1"});
}

TEST(PtxParser, ReportsGarbageBytes) {
  std::string text = std::string(header) + ".visible .entry k()\n{\n\tret; \x01\x7f;\n}\n";
  auto diagnostics = diagnostics_of(text);
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_EQ(diagnostics[0], "bad.ptx:6:7: expected an instruction, found invalid character '\x01'");
}

TEST(PtxParser, ReportsEveryBrokenStatementOfOneRun) {
  std::string text = std::string(header) +
                     ".visible .entry first()\n{\n\t.reg .b32 %r<3>;\n"
                     "\tadd.s32 %r1, %r2 %r2;\n"       // line 7: missing comma
                     "\tmov.u32 %r1, #;\n"             // line 8: bad operand
                     "\tret;\n}\n"
                     ".visible .entry second()\n{\n"
                     "\tld.global.f32 %f1, [%rd1;\n"   // line 13: unclosed address
                     "\tret;\n}\n";
  auto diagnostics = diagnostics_of(text);
  EXPECT_EQ(diagnostics, (std::vector<std::string>{"bad.ptx:7:19: expected ';', found '%r2'",
                                                   "bad.ptx:8:15: expected an operand, found invalid character '#'",
                                                   "bad.ptx:13:26: expected ']', found ';'"}));
}

TEST(PtxParser, NeverDropsAFunctionSilently) {
  std::string text = std::string(header) + ".visible .entry k(.param .u64 p\n{\n\tret;\n}\n";
  auto diagnostics = diagnostics_of(text);
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_EQ(diagnostics[0], "bad.ptx:5:1: expected ')', found '{'");
}

// Every prefix of a real module either compiles or is reported; none may crash or hang.
TEST(PtxParser, TruncatedInputAtEveryLengthIsHandled) {
  std::string text = read_input("kernels.ptx");
  std::string small = text.substr(0, text.find("// .globl\ttriangle_sums"));
  ASSERT_GT(small.size(), 1000u);
  CompileOptions options;
  options.optimization_level = 0;
  size_t compiled = 0;
  for (size_t length = 0; length <= small.size(); ++length) {
    CompileResult result = compile(std::string_view(small).substr(0, length), options);
    if (result.ok()) {
      ++compiled;
      EXPECT_FALSE(result.object.empty());
    } else {
      for (const auto& diagnostic : result.diagnostics) ASSERT_FALSE(diagnostic.message.empty());
    }
  }
  EXPECT_GT(compiled, 0u);
}

TEST(PtxParser, RandomlyCorruptedInputIsHandled) {
  std::string text = read_input("kernels.ptx");
  std::mt19937 random(1234);
  CompileOptions options;
  options.optimization_level = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string corrupted = text;
    for (int edit = 0; edit < 4; ++edit) {
      size_t position = random() % corrupted.size();
      switch (random() % 3) {
        case 0: corrupted[position] = static_cast<char>(random() % 256); break;
        case 1: corrupted.erase(position, random() % 16); break;
        default: corrupted.insert(position, corrupted.substr(random() % corrupted.size(), random() % 24)); break;
      }
    }
    CompileResult result = compile(corrupted, options);
    for (const auto& diagnostic : result.diagnostics) ASSERT_FALSE(diagnostic.message.empty());
  }
}

// The runtime compiles modules on several threads at once; results must not depend on it.
TEST(PtxParser, CompilesConcurrentlyAndDeterministically) {
  std::string text = read_input("kernels.ptx");
  CompileOptions options;
  CompileResult reference = compile(text, options);
  ASSERT_TRUE(reference.ok());
  std::vector<CompileResult> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) threads.emplace_back([&] { result = compile(text, options); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result.object, reference.object);
}

TEST(PtxParser, CompilesOtherNvccOutput) {
  CompileOptions options;
  CompileResult result = compile(read_input("instructions.ptx"), options);
  std::string messages;
  for (const auto& diagnostic : result.diagnostics) messages += diagnostic.to_string() + "\n";
  EXPECT_TRUE(result.ok()) << messages;
  EXPECT_EQ(result.module.kernels.size(), 4u);
}

Module parse_clean(std::string_view text) {
  DiagnosticSink diagnostics("directives.ptx");
  Module module = parse_module(text, diagnostics);
  std::string messages;
  for (const auto& diagnostic : diagnostics.take()) messages += diagnostic.to_string() + "\n";
  EXPECT_EQ(messages, "");
  return module;
}

// Every module-level directive of PTX ISA 9.0, each initialiser form, and an alias.
TEST(PtxParser, ReadsEveryModuleDirective) {
  Module module = parse_clean(R"(
.version 8.0
.target sm_90a, debug
.address_size 32
.file 1 "seed.cu", 1700000000, 1234
.weak .global .align 4 .u32 weak_counter;
.common .global .align 8 .b64 common_slot;
.global .align 4 .u32 table[2][3] = {{1, 2, 3}, {4, 5, 6}};
.global .align 8 .u64 pointers[3] = {table, generic(table)+4, table+-4};
.global .align 1 .u8 bytes[2] = {0xFF(table), 0xFF00(generic(table))};
.const .align 8 .f64 offsets[2] = {0d3FF0000000000000, -1.5};
.global .align 16 .v4 .u32 quad = {1, 2, 3, 4};
.func (.param .b32 result) twice(.param .b32 value) { ret; }
.func (.param .b32 result) twice_again(.param .b32 value);
.alias twice_again, twice;
.section .debug_abbrev { .b8 1 .b8 17 }
)");
  EXPECT_EQ(module.version, "8.0");
  EXPECT_EQ(module.address_size, 32u);
  ASSERT_EQ(module.aliases.size(), 1u);
  EXPECT_EQ(module.aliases[0].alias, "twice_again");
  EXPECT_EQ(module.aliases[0].aliasee, "twice");
  ASSERT_EQ(module.variables.size(), 7u);
  EXPECT_TRUE(module.variables[0].is_weak);
  const auto& pointers = module.variables[3].initializer;
  ASSERT_EQ(pointers.size(), 3u);
  EXPECT_EQ(pointers[1].symbol, "table");
  EXPECT_EQ(pointers[1].offset, 4);
  EXPECT_EQ(pointers[2].offset, -4);
  const auto& bytes = module.variables[4].initializer;
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[1].kind, InitialValue::Kind::address);
  EXPECT_EQ(bytes[1].mask, 0xFF00u);
  EXPECT_EQ(bytes[1].symbol, "table");
  EXPECT_EQ(module.variables[6].vector_width, 4u);
}

// .ptr's .align is the pointee's: the parameter keeps its own natural alignment.
TEST(PtxParser, ReadsKernelDirectivesAndPointerHints) {
  Module module = parse_clean(R"(
.version 9.0
.target sm_90
.address_size 64
.visible .entry kernel(.param .u32 count, .param .u64 .ptr .global .align 16 output)
  .maxntid 128, 1, 1 .reqntid 128 .minnctapersm 2 .maxnreg 64 .maxclusterrank 4
  .reqnctapercluster 2, 1, 1
{
  .reg .b32 %r<100>;
  { .reg .b32 inner; { .reg .pred inner; } }
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 1u);
  const Function& kernel = module.functions[0];
  EXPECT_EQ(kernel.parameters[1].alignment, 0u);
  EXPECT_EQ(kernel.max_threads, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(kernel.required_threads, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(kernel.min_blocks_per_multiprocessor, 2u);
}

TEST(PtxParser, ReadsPrototypesAndTargetLists) {
  Module module = parse_clean(R"(
.version 7.8
.target sm_80
.address_size 64
.func (.param .b32 out) first(.param .b32 in) { ret; }
.visible .entry pick(.param .u32 which)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd;
  targets: .branchtargets $L0, $L1;
  brx.idx %r1, targets;
$L0:
$L1:
  prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .align 8 .b8 _[16]);
  callees: .calltargets first;
  ret;
}
)");
  ASSERT_EQ(module.functions.size(), 2u);
  const Function& pick = module.functions[1];
  ASSERT_EQ(pick.call_prototypes.size(), 1u);
  EXPECT_EQ(pick.call_prototypes[0].name, "prototype_0");
  EXPECT_EQ(pick.call_prototypes[0].returns.size(), 1u);
  ASSERT_EQ(pick.call_prototypes[0].parameters.size(), 2u);
  EXPECT_EQ(pick.call_prototypes[0].parameters[1].array_dimensions, std::vector<uint64_t>{16});
  ASSERT_EQ(pick.target_lists.size(), 2u);
  EXPECT_FALSE(pick.target_lists[0].functions);
  EXPECT_EQ(pick.target_lists[0].targets.size(), 2u);
  EXPECT_TRUE(pick.target_lists[1].functions);
}

// What the parser accepts but the host cannot run yet is a located diagnostic, not a crash or a
// silently wrong object.
TEST(PtxParser, ReportsWhatTheHostCannotRunYet) {
  EXPECT_EQ(diagnostics_of(".version 9.0\n.target sm_80\n.address_size 32\n"),
            std::vector<std::string>{"bad.ptx:3:15: .address_size 32 is not supported yet: host addresses have 64 bits"});
  EXPECT_EQ(diagnostics_of(std::string(header) + ".func f() { ret; }\n.alias g, f;\n"),
            std::vector<std::string>{"bad.ptx:5:1: unknown function 'g'"});
}

// Hints for the register allocator and the profiler compile to nothing; a wrong form is reported.
TEST(PtxParser, CompilesRegisterAndProfilerHints) {
  std::string kernel = std::string(header) + ".visible .entry hints()\n{\n";
  EXPECT_EQ(diagnostics_of(kernel + "  setmaxnreg.inc.sync.aligned.u32 232;\n  setmaxnreg.dec.sync.aligned.u32 40;\n"
                                    "  pmevent 3;\n  pmevent.mask 0x8;\n  ret;\n}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  setmaxnreg.up.sync.aligned.u32 232;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:6:13: '.up' is not a valid modifier for 'setmaxnreg'"});
}

// Every pair of operation and type the PTX ISA lists for sured.b and sured.p compiles, in each
// geometry and out-of-range mode, and so do the three istypep forms; a pair ptxas refuses, a
// layered geometry and an istypep without its kind are reported where they stand.
TEST(PtxParser, CompilesSurfaceReductionsAndTypeQueries) {
  std::string kernel = std::string(header) + R"(.visible .entry reduce(.param .u64 surface)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [surface];
)";
  std::string body = R"(  sured.b.add.1d.trap.u32 [%rd1, {%r1}], %r2;
  sured.b.add.1d.clamp.s32 [%rd1, %r1], %r2;
  sured.b.add.2d.zero.u64 [%rd1, {%r1, %r2}], %rd2;
  sured.b.min.3d.trap.u32 [%rd1, {%r1, %r2, %r1, %r2}], %r2;
  sured.b.max.1d.trap.s32 [%rd1, {%r1}], %r2;
  sured.b.min.2d.clamp.u64 [%rd1, {%r1, %r2}], %rd2;
  sured.b.max.2d.zero.s64 [%rd1, {%r1, %r2}], %rd2;
  sured.b.and.1d.trap.b32 [%rd1, {%r1}], %r2;
  sured.b.or.3d.clamp.b32 [%rd1, {%r1, %r2, %r1, %r2}], %r2;
  sured.p.add.1d.trap.b32 [%rd1, {%r1}], %r2;
  sured.p.or.2d.zero.b32 [%rd1, {%r1, %r2}], %r2;
  sured.p.min.1d.clamp.b64 [%rd1, {%r1}], %rd2;
  sured.p.max.3d.trap.b64 [%rd1, {%r1, %r2, %r1, %r2}], %rd2;
  istypep.texref %p1, %rd1;
  istypep.samplerref %p2, %rd1;
  istypep.surfref %p3, %rd2;
  ret;
}
)";
  EXPECT_EQ(diagnostics_of(kernel + body), std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  sured.b.and.1d.trap.u32 [%rd1, {%r1}], %r2;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: '.u32' is not a type of sured.b.and"});
  EXPECT_EQ(diagnostics_of(kernel + "  sured.b.add.a1d.trap.u32 [%rd1, {%r1, %r2}], %r2;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:14: '.a1d' is not a valid modifier for 'sured'"});
  EXPECT_EQ(diagnostics_of(kernel + "  istypep %p1, %rd1;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: expected istypep.texref, .samplerref or .surfref p, a"});
}

TEST(PtxParser, CompilesAsyncCopiesAndReportsBulkCopies) {
  std::string kernel = std::string(header) + R"(.visible .entry copy(.param .u64 source, .param .u32 size)
{
  .reg .b32 %r1;
  .reg .b64 %rd1;
  .reg .pred %p;
  .shared .align 16 .b8 staging[64];
  ld.param.u64 %rd1, [source];
  ld.param.u32 %r1, [size];
  setp.eq.u32 %p, %r1, 0;
)";
  EXPECT_EQ(diagnostics_of(kernel + R"(  cp.async.ca.shared.global [staging], [%rd1], 4;
  cp.async.cg.shared.global.L2::128B [staging+16], [%rd1], 16, %r1;
  cp.async.ca.shared.global [staging+32], [%rd1], 8, %p;
  cp.async.commit_group;
  cp.async.wait_group 1;
  cp.async.wait_all;
  ret;
}
)"),
            std::vector<std::string>{});
  // The bulk copies, reductions and tensor copies compile (lower/async_copy.cpp,
  // lower/tensor_copy.cpp); the im2col tensor forms and malformed ones are reported at the statement.
  EXPECT_EQ(diagnostics_of(kernel + "  cp.async.bulk.prefetch.L2.global [%rd1], 64;\n"
                                    "  cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [staging], [%rd1], 32, [staging+48];\n"
                                    "  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [staging], 32;\n"
                                    "  cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.min.s64 [%rd1], [staging], 32, %rd1;\n"
                                    "  cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.xor.b32 "
                                    "[staging+32], [staging], 16, [staging+48];\n"
                                    "  cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                                    "[staging], [%rd1, {%r1}], [staging+48];\n"
                                    "  cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r1}], [staging];\n"
                                    "  cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1, %r1, %r1}], [staging];\n"
                                    "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r1, %r1}];\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
                                    "[staging], [%rd1, {%r1, %r1, %r1}], [staging+48], {%r1};\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:13:3: 'cp.async.bulk.tensor.3d.shared::cluster.global.im2col."
                                     "mbarrier::complete_tx::bytes' is not supported yet"});
  EXPECT_EQ(diagnostics_of(kernel + "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                                    "[staging], [%rd1, {%r1}], [staging+48];\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:13:95: expected [tensorMap, {coordinates}] with 2 coordinates"});
  EXPECT_EQ(diagnostics_of(kernel + "  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u8 [%rd1], [staging], 32;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:13:3: cp.reduce.async.bulk takes .redOp.type and [dstMem], [srcMem], size, "
                                     "[mbar] into shared::cluster, or [dstMem], [srcMem], size{, cache-policy} into global memory"});
}

TEST(PtxParser, CompilesAsyncStoresReductionsAndTensorMapReplacements) {
  std::string kernel = std::string(header) + R"(.visible .entry store(.param .u64 map)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .reg .f32 %f1;
  .shared .align 128 .b8 staging[256];
  ld.param.u64 %rd1, [map];
  mov.u32 %r1, staging;
)";
  // st.async and red.async complete on an mbarrier (lower/memory.cpp, lower/atomics.cpp);
  // tensormap.replace and tensormap.cp_fenceproxy rewrite and copy maps (lower/tensor_copy.cpp).
  EXPECT_EQ(diagnostics_of(kernel + "  st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r1], {%r1, %r2, %r1, %r2}, [%r1+128];\n"
                                    "  st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%r1+16], {%rd1, %rd2}, [%r1+128];\n"
                                    "  st.async.mbarrier::complete_tx::bytes.s64 [%rd1], %rd2, [%rd2];\n"
                                    "  st.async.release.gpu.global.u32 [%rd1], %r1;\n"
                                    "  red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.u32 [%r1], %r2, [%r1+128];\n"
                                    "  red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64 [%r1+8], %rd1, [%r1+128];\n"
                                    "  red.async.release.sys.global.add.s64 [%rd1], %rd2;\n"
                                    "  tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;\n"
                                    "  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r1], %r2;\n"
                                    "  tensormap.replace.tile.global_stride.global.b1024.b64 [%rd1], 3, %rd2;\n"
                                    "  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r1], 4, %r2;\n"
                                    "  tensormap.replace.tile.elemtype.global.b1024.b32 [%rd1], 13;\n"
                                    "  tensormap.replace.tile.swizzle_atomicity.global.b1024.b32 [%rd1], 0;\n"
                                    "  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b64 [%r1], {%rd1, %rd2, %rd1, %rd2}, [%r1+128];\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:3: st.async takes {.shared::cluster}.mbarrier::complete_tx::bytes{.v2,.v4} and "
                                     ".b32/.u32/.s32/.f32 (.v4 at most), .b64/.u64/.s64/.f64 (.v2 at most) or .b128 with [a], b, "
                                     "[mbar]; or .release{.global} with [a], b"});
  EXPECT_EQ(diagnostics_of(kernel + "  red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.inc.s32 [%r1], %r2, [%r1+128];\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:3: red.async takes .relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes "
                                     "with .inc/.dec.u32, .min/.max.u32/.s32, .and/.or/.xor.b32 or .add.u32/.s32/.u64 and [a], b, "
                                     "[mbar]; or .release{.global}.add.u32/.s32/.u64/.s64 with [a], b"});
  EXPECT_EQ(diagnostics_of(kernel + "  tensormap.replace.tile.global_stride.global.b1024.b64 [%rd1], 4, %rd2;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:65: tensormap.replace.global_stride takes ord 0-3, not 4"});
  EXPECT_EQ(diagnostics_of(kernel + "  tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%rd1], %r1;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:3: tensormap.replace.tile.field{.global,.shared::cta}.b1024.type takes [addr], "
                                     "new_val (an immediate for the enumerated fields), or [addr], ord, new_val with an immediate ord"});
}

TEST(PtxParser, CompilesDynamicStackAndClusterLaunchControl) {
  std::string kernel = std::string(header) + R"(.visible .entry persistent()
{
  .reg .pred %p1;
  .reg .b32 %r<5>;
  .reg .b64 %rd<3>;
  .reg .b128 %q1;
  .shared .align 16 .b8 response[16];
  .shared .align 8 .b64 barrier;
)";
  // Run by tests/cuda/dynamic_stack.cu and tests/cuda/cluster_launch_control.cu.
  EXPECT_EQ(diagnostics_of(kernel + "  alloca.u64 %rd1, 64, 32;\n"
                                    "  stacksave.u64 %rd2;\n"
                                    "  alloca.u64 %rd1, %rd2;\n"
                                    "  stackrestore.u64 %rd2;\n"
                                    "  mov.u32 %r1, response;\n"
                                    "  clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [barrier];\n"
                                    "  mov.b128 %q1, {%rd1, %rd2};\n"
                                    "  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q1;\n"
                                    "  clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r2, %q1;\n"
                                    "  clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r1, %r2, %r3, %r4}, %q1;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  alloca.u64 %rd1, 64, 24;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:24: alloca's alignment must be a constant power of two up to 2^23"});
  EXPECT_EQ(diagnostics_of(kernel + "  alloca.u32 %r1, 64;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:3: 'alloca.u32' is not supported: local addresses have 64 bits on this target"});
  EXPECT_EQ(diagnostics_of(kernel + "  clusterlaunchcontrol.query_cancel.get_first_ctaid.b32.b128 %r1, %q1;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:12:3: clusterlaunchcontrol.query_cancel takes .is_canceled.pred.b128 p, response, "
                                     ".get_first_ctaid::{x,y,z}.b32.b128 d, response or .get_first_ctaid.v4.b32.b128 "
                                     "{x, y, z, w}, response"});
}

TEST(PtxParser, CompilesWarpgroupMatrixMultiplies) {
  // wgmma is sm_90a's alone.
  std::string kernel = R"(.version 9.0
.target sm_90a
.address_size 64
.visible .entry warpgroup()
{
  .reg .pred %p1;
  .reg .b32 %r<5>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<3>;
)";
  // Layouts and numerics: tests/cuda/warpgroup_mma.cu (lower/warpgroup_matrix.cpp).
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.fence.sync.aligned;\n"
                                    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, -1, 0, 1;\n"
                                    "  wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r1, %r2}, {%r1, %r2, %r3, %r4}, %rd2, 1, 1, 1, 0;\n"
                                    "  wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1;\n"
                                    "  wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.u8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %p1;\n"
                                    "  wgmma.commit_group.sync.aligned;\n"
                                    "  wgmma.wait_group.sync.aligned 0;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %r1, 0, %p1, 1, 1, 0, 0;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: 'wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16' is not supported yet"});
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r1, %r2, %r3, %r4}, %rd1, %rd2, %p1;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: 'wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc' is not supported yet"});
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %p1;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: wgmma.mma_async.m64n40k32 with these types is not a form the ISA defines"});
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:3: this wgmma.mma_async takes d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b"});
  EXPECT_EQ(diagnostics_of(kernel + "  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;\n"
                                    "  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:10:54: this wgmma.mma_async needs 8 D registers"});
}

// Module-scope texture references, which CUDA 12 removed from the driver, and predicates outside
// registers (ptxas refuses those too) are reported where they are declared.
TEST(PtxParser, ReportsTextureReferencesAndPredicateVariables) {
  EXPECT_EQ(diagnostics_of(std::string(header) + ".global .texref tex;\n.global .surfref surface;\n.global .pred flag;\n"
                           ".visible .entry k()\n{\n  .local .pred p;\n  ret;\n}\n"),
            (std::vector<std::string>{"bad.ptx:4:9: .texref variables (texture references) are not supported yet",
                                      "bad.ptx:5:9: .surfref variables (texture references) are not supported yet"}));
  EXPECT_EQ(diagnostics_of(std::string(header) + ".global .pred flag;\n.visible .entry k()\n{\n  .local .pred p;\n  ret;\n}\n"),
            (std::vector<std::string>{"bad.ptx:4:15: a predicate can only be a register", "bad.ptx:7:16: a predicate can only be a register"}));
}

// .blocksareclusters (PTX 9.0) makes each block of the grid a cluster: the same launch while a
// cluster is one block, all that xcuda's clusters hold. A register takes no displacement.
TEST(PtxParser, BlocksAreClustersOfOneBlockAndDisplacementsOnlyOnVariables) {
  std::string kernel = ".visible .entry k() .blocksareclusters .reqntid 32 .reqnctapercluster CLUSTER\n{\n  ret;\n}\n";
  EXPECT_TRUE(diagnostics_of(std::string(header) + std::regex_replace(kernel, std::regex("CLUSTER"), "1")).empty());
  EXPECT_EQ(diagnostics_of(std::string(header) + std::regex_replace(kernel, std::regex("CLUSTER"), "2, 1, 1")),
            std::vector<std::string>{"bad.ptx:4:21: .blocksareclusters with clusters of more than one block is not supported yet"});
  EXPECT_EQ(diagnostics_of(std::string(header) + ".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  mov.b32 %r1, %r0+4;\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:7:16: only a variable's or function's address takes a displacement"});
}

// What ptxas refuses in a module's text (its own messages: "Initial value type mismatch",
// "Greater number of elements in array initializer", "Incorrect number of elements in vector
// initializer", "Parsing error near '-'", "Parsing error near '.maxnreg'"): initialisers whose
// braces do not follow the type, a displacement that starts with '-', and a kernel's directives on
// a .func or a .func's on a kernel, a .target the .version lacks. What it takes of each stays
// clean.
TEST(PtxParser, ReportsWhatPtxasRefusesInInitialisersDisplacementsAndDirectives) {
  const std::pair<std::string, std::string> refused[] = {
      {".global .u32 a[2][2] = {1, 2, 3, 4};", "bad.ptx:4:25: expected '{' around the initial values of an array dimension of 'a'"},
      {".global .u32 a[2][2] = {{1, 2, 3}, {4}};", "bad.ptx:4:25: too many initial values for 'a'"},
      {".global .u32 a[4] = {{1, 2}, {3, 4}};", "bad.ptx:4:22: 'a' takes a scalar here, not braces"},
      {".global .u32 a = {1};", "bad.ptx:4:18: 'a' takes a scalar here, not braces"},
      {".global .u32 a[1] = 1;", "bad.ptx:4:21: expected '{' around the initial values of an array dimension of 'a'"},
      {".global .v4 .u32 v = {1, 2};", "bad.ptx:4:22: 'v' is a .v4 variable: each of its vectors takes 4 initial values"},
      {".global .v2 .u32 v = 1;", "bad.ptx:4:22: expected '{' around the initial values of a vector of 'v'"},
      {".global .v2 .u32 a[2][2] = {{{1}}, {{5, 6}, {7, 8}}};", "bad.ptx:4:30: 'a' is a .v2 variable: each of its vectors takes 2 initial values"},
      {".global .u32 g[2];\n.global .u64 p = g-4;", "bad.ptx:5:19: expected ';', found '-'"},
      {".func f() .maxnreg 32\n{\n  ret;\n}", "bad.ptx:4:11: '.maxnreg' applies to a kernel (.entry), not a .func"},
      {".visible .entry k() .noreturn\n{\n  ret;\n}", "bad.ptx:4:21: '.noreturn' applies to a .func, not a kernel"},
      {".func (.param .b32 r) f() .noreturn\n{\n  ret;\n}", "bad.ptx:4:27: 'f' returns values and cannot be .noreturn"},
  };
  for (const auto& [text, problem] : refused)
    EXPECT_EQ(diagnostics_of(std::string(header) + text + "\n"), std::vector<std::string>{problem}) << text;
  // .target against .version, as ptxas 13 answered version by version.
  const std::pair<std::string, std::string> targets[] = {
      {".version 7.8\n.target sm_90a", "bad.ptx:2:9: PTX .version 7.8 does not support .target sm_90a, which needs .version 8.0"},
      {".version 7.4\n.target sm_89", "bad.ptx:2:9: PTX .version 7.4 does not support .target sm_89, which needs .version 7.8"},
      {".version 8.7\n.target sm_100f", "bad.ptx:2:9: PTX .version 8.7 does not support .target sm_100f, which needs .version 8.8"},
      {".version 9.0\n.target sm_90f", "bad.ptx:2:9: unknown .target 'sm_90f'"},
      {".version 9.0\n.target sm_999", "bad.ptx:2:9: unknown .target 'sm_999'"},
      // Its options, as ptxas 13 answered: "Unsupported .target 'foo'", "Directive map_f64_to_f32
      // is not supported with SM 1.3 or higher", "Conflicting .target option 'texmode_independent'".
      {".version 8.0\n.target sm_80, foo", "bad.ptx:2:16: unsupported .target option 'foo'"},
      {".version 8.0\n.target sm_80, TEXMODE_UNIFIED", "bad.ptx:2:16: unsupported .target option 'TEXMODE_UNIFIED'"},
      {".version 8.0\n.target sm_80, map_f64_to_f32", "bad.ptx:2:16: .target option map_f64_to_f32 is not supported with sm_13 or higher"},
      {".version 8.0\n.target sm_80, texmode_unified, texmode_independent",
       "bad.ptx:2:33: conflicting .target option 'texmode_independent' after 'texmode_unified'"},
      // The highest architecture counts, and its .version with it.
      {".version 7.0\n.target sm_80, sm_90", "bad.ptx:2:16: PTX .version 7.0 does not support .target sm_90, which needs .version 7.8"},
  };
  for (const auto& [text, problem] : targets)
    EXPECT_EQ(diagnostics_of(text + "\n.address_size 64\n"), std::vector<std::string>{problem}) << text;
  for (std::string_view text : {".version 8.0\n.target sm_90a", ".version 8.8\n.target sm_100f", ".version 9.0\n.target compute_120",
                                ".version 6.0\n.target sm_52", ".version 9.1\n.target sm_90", ".version 8.0\n.target sm_80, texmode_independent",
                                ".version 8.0\n.target sm_80,texmode_unified, texmode_unified, debug", ".version 8.0\n.target sm_90, sm_80"})
    EXPECT_TRUE(diagnostics_of(std::string(text) + "\n.address_size 64\n").empty()) << text;
  EXPECT_EQ(diagnostics_of(std::string(header) + ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
                                                 "  ld.param.u64 %rd1, [p];\n  ld.global.u32 %r1, [%rd1-4];\n  ret;\n}\n"),
            std::vector<std::string>{"bad.ptx:9:27: expected ']', found '-'"});
  const std::string taken[] = {
      ".global .u32 a[2][2] = {{1}, {3, 4}};",
      ".global .u32 a[][2] = {{1, 2}, {3}};",
      ".global .v2 .u32 a[2][2] = {{{1, 2}}, {{5, 6}, {7, 8}}};",
      ".global .u32 g[4];\n.global .u64 p[3] = {g+-4, g+4-2, g+(1 ? 8 : 4) | 1};",
      ".func f() .noreturn .abi_preserve 8 .abi_preserve_control 4\n{\n  ret;\n}",
  };
  for (const std::string& text : taken) EXPECT_TRUE(diagnostics_of(std::string(header) + text + "\n").empty()) << text;
  EXPECT_TRUE(diagnostics_of(std::string(header) + ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
                                                   "  ld.param.u64 %rd1, [p];\n  ld.global.u32 %r1, [%rd1+-4];\n"
                                                   "  ld.global.u32 %r1, [%rd1+4*2-1];\n  ret;\n}\n")
                  .empty());
}

}  // namespace
}  // namespace xcuda::ptx
