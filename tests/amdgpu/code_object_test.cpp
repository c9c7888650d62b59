// AMDGPU code objects checked without an AMD GPU: the project's PTX (the conformance cases and the
// PTX nvcc makes of the CUDA test programs) compiled for RDNA and CDNA processors, each code object
// read back through comgr as the HIP runtime reads it, and through llvm-readelf and llvm-objdump.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "code_object_metadata.h"
#include "ptx/compiler.h"
#include "ptx/target/amdgpu/amdgpu_abi.h"
#include "runtime/linker.h"

namespace xcuda::amdgpu_test {
namespace {

namespace fs = std::filesystem;

// One RDNA pair (wave32) and one CDNA pair (wave64), as the issue asks.
const std::vector<std::string> processors = {"gfx1100", "gfx1030", "gfx90a", "gfx942"};

// The LDS the target keeps ahead of .shared for counted barriers (ptx/target/amdgpu).
constexpr uint64_t barrier_records = 256;

uint32_t wavefront_size(const std::string& processor) { return processor.starts_with("gfx9") ? 64 : 32; }

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

ptx::CompileResult compile_for(const std::string& processor, const std::string& text, const std::string& name,
                               int code_object_version = 5) {
  ptx::CompileOptions options;
  options.target = ptx::Target::amdgpu;
  options.amdgpu_processor = processor;
  options.code_object_version = code_object_version;
  options.file_name = name;
  return ptx::compile(text, options);
}

std::string diagnostics_of(const ptx::CompileResult& result) {
  std::string text;
  for (const ptx::Diagnostic& diagnostic : result.diagnostics) text += diagnostic.to_string() + "\n";
  return text;
}

// The output of `tool arguments code_object`.
std::string run_tool(const std::string& tool, const std::string& arguments, const std::vector<uint8_t>& code_object) {
  fs::path path = fs::temp_directory_path() / ("xcuda-amdgpu-test-" + std::to_string(::getpid()) + ".hsaco");
  {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(code_object.data()), static_cast<std::streamsize>(code_object.size()));
  }
  std::string output;
  if (FILE* pipe = ::popen((tool + " " + arguments + " " + path.string() + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    while (size_t read = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, read);
    ::pclose(pipe);
  }
  fs::remove(path);
  return output;
}

const MetadataNode* find_kernel(const MetadataNode& metadata, const std::string& name) {
  for (const MetadataNode& kernel : metadata["amdhsa.kernels"].list)
    if (kernel[".name"].text == name) return &kernel;
  return nullptr;
}

// Everything the HIP runtime and a disassembler see must agree with what the compiler says about
// the module, compiled from `ptx_text`.
void check_code_object(const std::string& processor, const ptx::CompileResult& result, const std::string& name,
                       std::string_view ptx_text = {}) {
  bool reads_environment = ptx_text.find("%envreg") != std::string_view::npos;
  SCOPED_TRACE(name + " for " + processor);
  MetadataNode metadata;
  std::string problem = read_metadata(result.object, metadata);
  ASSERT_EQ(problem, "");
  EXPECT_EQ(metadata["amdhsa.target"].text, "amdgcn-amd-amdhsa--" + processor);
  EXPECT_EQ(metadata["amdhsa.kernels"].list.size(), result.module.kernels.size());
  for (const ptx::KernelInfo& info : result.module.kernels) {
    SCOPED_TRACE(info.name);
    const MetadataNode* kernel = find_kernel(metadata, info.name);
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ((*kernel)[".symbol"].text, info.name + ".kd");
    EXPECT_EQ((*kernel)[".wavefront_size"].number(), wavefront_size(processor));
    const std::vector<MetadataNode>& arguments = (*kernel)[".args"].list;
    // Hidden arguments (v5's block counts and the like) follow the explicit ones, and the
    // grid-workspace word in modules that read %envreg.
    ASSERT_GE(arguments.size(), info.parameters.size());
    for (size_t index = 0; index < info.parameters.size(); ++index) {
      EXPECT_EQ(arguments[index][".offset"].number(), info.parameters[index].offset) << "parameter " << index;
      EXPECT_EQ(arguments[index][".size"].number(), info.parameters[index].size) << "parameter " << index;
      EXPECT_FALSE(arguments[index][".value_kind"].text.starts_with("hidden_")) << "parameter " << index;
    }
    size_t explicit_arguments = info.parameters.size();
    if (explicit_arguments < arguments.size() && !arguments[explicit_arguments][".value_kind"].text.starts_with("hidden_")) {
      EXPECT_TRUE(reads_environment) << "an argument beyond the parameters in a module that reads no %envreg";
      EXPECT_EQ(arguments[explicit_arguments][".offset"].number(), ptx::amdgpu_abi::grid_workspace_offset(info.parameter_buffer_size));
      EXPECT_EQ(arguments[explicit_arguments][".size"].number(), ptx::amdgpu_abi::grid_workspace_bytes);
      ++explicit_arguments;
    } else {
      EXPECT_FALSE(reads_environment) << "no grid-workspace argument in a module that reads %envreg";
    }
    if (arguments.size() > explicit_arguments) {
      EXPECT_TRUE(arguments[explicit_arguments][".value_kind"].text.starts_with("hidden_"));
    }
    if (!info.parameters.empty()) {
      EXPECT_GE((*kernel)[".kernarg_segment_size"].number(), info.parameters.back().offset + info.parameters.back().size);
    }
    // Static shared memory is one LDS block of all the module's .shared bytes rounded up to 16
    // (after the records of counted barriers, where the module uses them), which a kernel
    // allocates only if it touches shared memory: as large as the kernel that reaches the most
    // (KernelInfo counts only the variables a kernel reaches, as the host target allocates).
    uint64_t group = (*kernel)[".group_segment_fixed_size"].number();
    uint64_t shared = 0;
    for (const ptx::KernelInfo& other : result.module.kernels) shared = std::max<uint64_t>(shared, (other.static_shared_bytes + 15) / 16 * 16);
    EXPECT_TRUE(group == 0 || group == shared || group == shared + barrier_records)
        << "group segment " << group << ", static shared " << shared;
    EXPECT_NE((*kernel)[".private_segment_fixed_size"].number(), UINT64_MAX);
    EXPECT_NE((*kernel)[".sgpr_count"].number(), UINT64_MAX);
  }
  std::string elf = run_tool(XCUDA_LLVM_READELF, "--notes --dyn-syms", result.object);
  EXPECT_NE(elf.find("amdgcn-amd-amdhsa--" + processor), std::string::npos) << elf;
  std::istringstream symbols(elf);
  for (std::string line; std::getline(symbols, line);) {
    bool undefined = line.find(" UND ") != std::string::npos && line.find(" UND ") + 5 < line.size();
    EXPECT_FALSE(undefined) << "unresolved symbol: " << line;
  }
  std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
  EXPECT_EQ(disassembly.find("<unknown>"), std::string::npos);
  for (const ptx::KernelInfo& info : result.module.kernels)
    EXPECT_NE(disassembly.find("<" + info.name + ">:"), std::string::npos) << info.name;
}

class CodeObjects : public ::testing::TestWithParam<std::string> {};

// XCUDA_AMDGPU_EVERYTHING=1 compiles every conformance case (not only those the host passes) and
// every -arch of the test programs' PTX for each processor: the whole set, which takes too long
// for each CI run on a loaded two-core machine.
bool everything() {
  const char* value = std::getenv("XCUDA_AMDGPU_EVERYTHING");
  return value != nullptr && std::string_view(value) == "1";
}

std::vector<std::string> conformance_cases() {
  fs::path directory = XCUDA_CONFORMANCE_DIR;
  std::vector<std::string> cases;
  if (everything()) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(directory / "cases"))
      if (entry.path().extension() == ".ptx")
        cases.push_back(fs::relative(entry.path(), directory / "cases").replace_extension().string());
    std::sort(cases.begin(), cases.end());
    return cases;
  }
  std::ifstream passing(directory / "passing.txt");
  for (std::string line; std::getline(passing, line);)
    if (!line.empty() && line[0] != '#') cases.push_back(line);
  return cases;
}

// Every case the host passes, each compiled for one processor in turn, so that the four share
// them and each test stays under a minute on a loaded two-core machine; everything() compiles
// every case for every processor.
TEST_P(CodeObjects, ConformanceCases) {
  fs::path directory = XCUDA_CONFORMANCE_DIR;
  size_t position = 0, checked = 0;
  size_t mine = static_cast<size_t>(std::find(processors.begin(), processors.end(), GetParam()) - processors.begin());
  for (const std::string& name : conformance_cases()) {
    if (!everything() && position++ % processors.size() != mine) continue;
    fs::path path = directory / "cases" / (name + ".ptx");
    std::string text = read_text(path);
    ptx::CompileResult result = compile_for(GetParam(), text, path.string());
    EXPECT_TRUE(result.ok()) << name << ":\n" << diagnostics_of(result);
    if (!result.ok()) continue;
    check_code_object(GetParam(), result, name, text);
    ++checked;
  }
  std::printf("%zu cases checked for %s\n", checked, GetParam().c_str());
  EXPECT_GT(checked, 25u);
}

// Programs that use what the AMDGPU target does not provide yet (README, "AMD GPUs"), and the
// words of the report each of their compiles must fail with, and nothing else.
struct AmdgpuGap {
  std::string_view program;
  std::string_view report;
};
constexpr AmdgpuGap amdgpu_gaps[] = {
    {"cuda_dynamic_stack", "target does not provide 'xcuda.stack."},
    {"cuda_surface_reduction", "target does not provide '__xcuda_surface_reduce'"},
};

bool fails_only_for_a_known_gap(const fs::path& path, const ptx::CompileResult& result) {
  for (const AmdgpuGap& gap : amdgpu_gaps) {
    if (path.stem().stem() != gap.program) continue;
    return !result.ok() && std::all_of(result.diagnostics.begin(), result.diagnostics.end(), [&](const ptx::Diagnostic& diagnostic) {
      return diagnostic.message.find(gap.report) != std::string::npos;
    });
  }
  return false;
}

// Every PTX file nvcc made of tests/cuda and the CUDA benchmarks, for every processor: the default
// -arch, and with everything() every -arch.
TEST_P(CodeObjects, CudaPrograms) {
  std::istringstream files(XCUDA_CUDA_PTX_FILES);
  size_t checked = 0;
  for (std::string file; std::getline(files, file, ':');) {
    fs::path path(file);
    if (!everything() && path.stem().extension() != ".default") continue;
    std::string text = read_text(file);
    ptx::CompileResult result = compile_for(GetParam(), text, file);
    if (fails_only_for_a_known_gap(path, result)) continue;
    EXPECT_TRUE(result.ok()) << file << ":\n" << diagnostics_of(result);
    if (!result.ok()) continue;
    check_code_object(GetParam(), result, path.filename().string(), text);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "nvcc was not found when this was configured";
  std::printf("%zu PTX files of the CUDA programs checked for %s\n", checked, GetParam().c_str());
}

// The PTX files the unit tests and the command-line tests compile for the host.
TEST_P(CodeObjects, UnitAndCommandLinePtx) {
  fs::path tests = XCUDA_TESTS_DIR;
  for (const fs::path& file : {tests / "unit/ptx_inputs/instructions.ptx", tests / "unit/ptx_inputs/kernels.ptx", tests / "cli/saxpy.ptx"}) {
    std::string text = read_text(file);
    ptx::CompileResult result = compile_for(GetParam(), text, file.string());
    EXPECT_TRUE(result.ok()) << file << ":\n" << diagnostics_of(result);
    if (result.ok()) check_code_object(GetParam(), result, file.filename().string(), text);
  }
}

// A byte of an address as an initial value is stored by a module initialiser, which nothing runs
// on an AMD GPU yet: the compile says so rather than leave the bytes zero.
TEST_P(CodeObjects, RefusesAddressBytesNothingWouldStore) {
  ptx::CompileResult result = compile_for(GetParam(), ".version 8.0\n.target sm_80\n.address_size 64\n"
                                                      ".global .u32 target;\n.global .u8 bytes[2] = {0xFF(target), 0xFF00(target)};\n",
                                          "bytes.ptx");
  ASSERT_EQ(result.diagnostics.size(), 1u) << diagnostics_of(result);
  EXPECT_EQ(result.diagnostics[0].message, "the " + GetParam() + " target does not provide 'initialisers that take a byte of an address, "
                                           "such as 0xFF(symbol)' yet");
}

// The translation units of the -rdc=true program, linked into one module as cuLink links them.
TEST_P(CodeObjects, SeparateCompilation) {
  std::istringstream files(XCUDA_RDC_PTX_FILES);
  std::vector<runtime::LinkInput> inputs;
  for (std::string file; std::getline(files, file, ':');) inputs.push_back({read_text(file), file});
  if (inputs.empty()) GTEST_SKIP() << "nvcc was not found when this was configured";
  ASSERT_EQ(inputs.size(), 2u);
  Expected<std::string> linked = runtime::link_ptx(inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  ptx::CompileResult result = compile_for(GetParam(), *linked, "separate_compilation");
  ASSERT_TRUE(result.ok()) << diagnostics_of(result);
  check_code_object(GetParam(), result, "separate_compilation", *linked);
}

INSTANTIATE_TEST_SUITE_P(Processors, CodeObjects, ::testing::ValuesIn(processors),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Parameters of mixed sizes and alignments land where the PTX ISA's .param rules put them
// (each at the next multiple of its alignment), which is where HIP will copy the arguments.
constexpr const char* mixed_parameters = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry mixed(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[20], .param .f32 d, .param .u16 e)
{
  ret;
}
)";

TEST(KernelArguments, FollowParameterAlignment) {
  for (const std::string& processor : {std::string("gfx1100"), std::string("gfx90a")}) {
    ptx::CompileResult result = compile_for(processor, mixed_parameters, "mixed.ptx");
    ASSERT_TRUE(result.ok()) << diagnostics_of(result);
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    const MetadataNode* kernel = find_kernel(metadata, "mixed");
    ASSERT_NE(kernel, nullptr);
    const uint64_t offsets[] = {0, 8, 16, 36, 40};
    const uint64_t sizes[] = {1, 8, 20, 4, 2};
    for (size_t index = 0; index < 5; ++index) {
      EXPECT_EQ((*kernel)[".args"].list.at(index)[".offset"].number(), offsets[index]) << processor << " parameter " << index;
      EXPECT_EQ((*kernel)[".args"].list.at(index)[".size"].number(), sizes[index]) << processor << " parameter " << index;
    }
  }
}

// .shared arrays become the kernel's LDS; a .reqntid sets the flat work-group size and the
// required work-group size the runtime checks launches against.
constexpr const char* shared_and_reqntid = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry staged(.param .u64 out) .reqntid 64, 2, 1
{
  .shared .align 4 .b8 tile[100];
  .reg .u32 %r<4>;
  .reg .u64 %rd<5>;
  mov.u32 %r1, %tid.x;
  and.b32 %r1, %r1, 15;
  mov.u64 %rd1, tile;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.shared.u32 [%rd3], %r1;
  bar.sync 0;
  xor.b32 %r2, %r1, 1;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.shared.u32 %r3, [%rd3];
  ld.param.u64 %rd4, [out];
  st.global.u32 [%rd4], %r3;
  ret;
}
)";

TEST(KernelResources, SharedMemoryAndRequiredBlockSize) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, shared_and_reqntid, "staged.ptx");
    ASSERT_TRUE(result.ok()) << diagnostics_of(result);
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    const MetadataNode* kernel = find_kernel(metadata, "staged");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ((*kernel)[".group_segment_fixed_size"].number(), 112u) << processor;
    EXPECT_EQ((*kernel)[".max_flat_workgroup_size"].number(), 128u) << processor;
    const std::vector<MetadataNode>& required = (*kernel)[".reqd_workgroup_size"].list;
    ASSERT_EQ(required.size(), 3u) << processor;
    EXPECT_EQ(required[0].number(), 64u);
    EXPECT_EQ(required[1].number(), 2u);
    EXPECT_EQ(required[2].number(), 1u);
    EXPECT_NE(run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object).find("s_barrier"), std::string::npos) << processor;
  }
}

// A shuffle reads another lane's register with ds_bpermute; on wave64 the lane index is built
// from the wavefront lane (v_mbcnt_hi), so each half of the wavefront is its own warp.
constexpr const char* shuffle = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry rotate(.param .u64 out)
{
  .reg .u32 %r<4>;
  .reg .u64 %rd<4>;
  mov.u32 %r1, %tid.x;
  shfl.sync.idx.b32 %r2, %r1, 1, 31, -1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";

TEST(WarpExchange, UsesWavefrontPermutes) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, shuffle, "rotate.ptx");
    ASSERT_TRUE(result.ok()) << diagnostics_of(result);
    std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
    EXPECT_NE(disassembly.find("ds_bpermute_b32"), std::string::npos) << processor;
    EXPECT_EQ(disassembly.find("v_mbcnt_hi") != std::string::npos, wavefront_size(processor) == 64) << processor;
  }
}

TEST(CodeObjectVersion, FiveByDefaultFourWhenAsked) {
  for (int version : {4, 5}) {
    ptx::CompileResult result = compile_for("gfx90a", shuffle, "rotate.ptx", version);
    ASSERT_TRUE(result.ok()) << diagnostics_of(result);
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    // amdhsa.version is [1, 1] in code object v4 and [1, 2] in v5 (LLVM's AMDGPUUsage).
    ASSERT_EQ(metadata["amdhsa.version"].list.size(), 2u);
    EXPECT_EQ(metadata["amdhsa.version"].list[0].number(), 1u);
    EXPECT_EQ(metadata["amdhsa.version"].list[1].number(), version == 4 ? 1u : 2u);
  }
}

TEST(Diagnostics, UnknownProcessorIsReported) {
  ptx::CompileResult result = compile_for("gfx1", shuffle, "rotate.ptx");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(diagnostics_of(result).find("unknown AMDGPU processor 'gfx1'"), std::string::npos) << diagnostics_of(result);
}

bool has_argument_kind(const MetadataNode& kernel, const std::string& kind) {
  const std::vector<MetadataNode>& arguments = kernel[".args"].list;
  return std::any_of(arguments.begin(), arguments.end(), [&](const MetadataNode& argument) { return argument[".value_kind"].text == kind; });
}

// Conversions from integers, divisions, reciprocals and square roots under .rz/.rm/.rp: the
// conversions become exact integer arithmetic, the others run with the MODE register set.
constexpr const char* directed_rounding = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry rounded(.param .u64 out, .param .u64 a, .param .f64 b)
{
  .reg .u64 %rd<3>;
  .reg .f32 %f<3>;
  .reg .f64 %fd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [a];
  ld.param.f64 %fd1, [b];
  cvt.rz.f32.s64 %f1, %rd2;
  cvt.rp.f64.u64 %fd2, %rd2;
  div.rm.f64 %fd3, %fd1, %fd2;
  rcp.rz.f64 %fd4, %fd3;
  sqrt.rp.f32 %f2, %f1;
  st.global.f32 [%rd1], %f2;
  st.global.f64 [%rd1+8], %fd4;
  ret;
}
)";

TEST(DirectedRounding, CompilesWithTheModeRegister) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, directed_rounding, "rounded.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "rounded");
    EXPECT_NE(run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object).find("s_setreg"), std::string::npos) << processor;
  }
}

// Barriers with thread counts, bar.arrive and bar.red live in LDS ahead of the .shared variables:
// 16 records of 16 bytes, cleared at the kernel's start; waiting lanes sleep between polls.
constexpr const char* counted_barriers = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry producer_consumer(.param .u64 out)
{
  .shared .align 4 .b8 tile[100];
  .reg .u32 %r<4>;
  .reg .u64 %rd<3>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 64;
  bar.arrive 1, 128;
  bar.sync 2, 64;
  bar.red.popc.u32 %r2, 3, %p1;
  mov.u64 %rd1, tile;
  st.shared.u32 [%rd1], %r2;
  ld.param.u64 %rd2, [out];
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

TEST(CountedBarriers, KeepTheirRecordsInLds) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, counted_barriers, "producer_consumer.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "producer_consumer");
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    const MetadataNode* kernel = find_kernel(metadata, "producer_consumer");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ((*kernel)[".group_segment_fixed_size"].number(), barrier_records + 112) << processor;
    std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
    EXPECT_NE(disassembly.find("ds_add_rtn_u32"), std::string::npos) << processor;
    EXPECT_NE(disassembly.find("s_sleep"), std::string::npos) << processor;
  }
}

// printf as nvcc writes it: the format in .global memory, the arguments in a .local buffer.
constexpr const char* device_printf = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf
(
  .param .b64 vprintf_param_0,
  .param .b64 vprintf_param_1
)
;
.global .align 1 .b8 $str[8] = {116, 105, 100, 32, 37, 100, 10, 0};

.visible .entry hello()
{
  .local .align 8 .b8 __local_depot0[8];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  add.u64 %rd1, %SP, 0;
  add.u64 %rd2, %SPL, 0;
  mov.u32 %r1, %tid.x;
  st.local.u32 [%rd2], %r1;
  mov.u64 %rd3, $str;
  cvta.global.u64 %rd4, %rd3;
  {
  .param .b64 param0;
  st.param.b64 [param0+0], %rd4;
  .param .b64 param1;
  st.param.b64 [param1+0], %rd1;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r2, [retval0+0];
  }
  ret;
}
)";

// The HIP runtime gives a kernel its hostcall buffer, through which ockl sends the message, when
// the metadata lists the hidden argument for it.
TEST(DevicePrintf, UsesTheHostcallBuffer) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, device_printf, "hello.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "hello");
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    const MetadataNode* kernel = find_kernel(metadata, "hello");
    ASSERT_NE(kernel, nullptr);
    EXPECT_TRUE(has_argument_kind(*kernel, "hidden_hostcall_buffer")) << processor;
  }
}

// A failed assert prints HIP's message through the hostcall buffer, then traps.
TEST(DeviceAssert, PrintsThenTraps) {
  std::istringstream files(XCUDA_CUDA_PTX_FILES);
  size_t checked = 0;
  for (std::string file; std::getline(files, file, ':');) {
    if (fs::path(file).filename() != "cuda_kernel_faults.default.ptx") continue;
    for (const std::string& processor : processors) {
      ptx::CompileResult result = compile_for(processor, read_text(file), file);
      ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
      MetadataNode metadata;
      ASSERT_EQ(read_metadata(result.object, metadata), "");
      const MetadataNode* kernel = find_kernel(metadata, "_Z14failing_assertPKii");
      ASSERT_NE(kernel, nullptr);
      EXPECT_TRUE(has_argument_kind(*kernel, "hidden_hostcall_buffer")) << processor;
      EXPECT_NE(run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object).find("s_trap"), std::string::npos) << processor;
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "nvcc was not found when this was configured";
}

// %smid reads the hardware identity registers; %gridid is the dispatch id.
constexpr const char* where = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry where(.param .u64 out)
{
  .reg .u32 %r<3>;
  .reg .u64 %rd<3>;
  mov.u32 %r1, %smid;
  mov.u32 %r2, %nsmid;
  mov.u64 %rd1, %gridid;
  ld.param.u64 %rd2, [out];
  st.global.u32 [%rd2], %r1;
  st.global.u32 [%rd2+4], %r2;
  st.global.u64 [%rd2+8], %rd1;
  ret;
}
)";

TEST(SpecialRegisters, SmidFromHardwareIdentity) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, where, "where.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "where");
    std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
    EXPECT_NE(disassembly.find(wavefront_size(processor) == 64 ? "hwreg(HW_REG_HW_ID," : "hwreg(HW_REG_HW_ID1,"), std::string::npos)
        << processor << "\n" << disassembly;
    EXPECT_EQ(disassembly.find("HW_REG_XCC_ID") != std::string::npos, processor == "gfx942") << processor;
  }
}

// %globaltimer counts the constant real-time clock (s_memrealtime; on gfx11 a message to the
// firmware), %envreg1/2 the grid-workspace word the kernel takes after its parameters: here at
// 48, past 36 bytes of parameters that the 16-byte-aligned array rounds to 48. Every kernel of
// the module takes the word.
constexpr const char* timer_and_environment = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry timed(.param .u64 out, .param .align 16 .b8 padding[20])
{
  .reg .u32 %r<5>;
  .reg .u64 %rd<3>;
  mov.u64 %rd1, %globaltimer;
  mov.u32 %r1, %globaltimer_hi;
  mov.u32 %r2, %envreg1;
  mov.u32 %r3, %envreg2;
  mov.u32 %r4, %envreg5;
  ld.param.u64 %rd2, [out];
  st.global.u64 [%rd2], %rd1;
  st.global.u32 [%rd2+8], %r1;
  st.global.u32 [%rd2+12], %r2;
  st.global.u32 [%rd2+16], %r3;
  st.global.u32 [%rd2+20], %r4;
  ret;
}
.visible .entry plain(.param .u32 value)
{
  ret;
}
)";

TEST(SpecialRegisters, GlobalTimerAndEnvironment) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, timer_and_environment, "timed.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "timed", timer_and_environment);
    MetadataNode metadata;
    ASSERT_EQ(read_metadata(result.object, metadata), "");
    const MetadataNode* timed = find_kernel(metadata, "timed");
    const MetadataNode* plain = find_kernel(metadata, "plain");
    ASSERT_TRUE(timed != nullptr && plain != nullptr);
    EXPECT_EQ((*timed)[".args"].list.at(2)[".offset"].number(), 48u) << processor;
    EXPECT_EQ((*plain)[".args"].list.at(1)[".offset"].number(), 8u) << processor;
    std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
    bool has_message = processor.starts_with("gfx11");
    EXPECT_NE(disassembly.find(has_message ? "sendmsg(MSG_RTN_GET_REALTIME)" : "s_memrealtime"), std::string::npos) << processor;
  }
}

// mbarrier objects are a word updated by compare-and-swap (in LDS here); waiting lanes sleep.
constexpr const char* staged_mbarrier = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry staged(.param .u64 out)
{
  .shared .align 8 .b64 barrier;
  .reg .u32 %r<3>;
  .reg .u64 %rd<3>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra ARRIVE;
  mbarrier.init.shared.b64 [barrier], 64;
ARRIVE:
  bar.sync 0;
  mbarrier.arrive.shared.b64 %rd1, [barrier];
WAIT:
  mbarrier.try_wait.shared.b64 %p1, [barrier], %rd1;
  @!%p1 bra WAIT;
  mbarrier.pending_count.b64 %r2, %rd1;
  ld.param.u64 %rd2, [out];
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

TEST(Mbarriers, CompareAndSwapInLds) {
  for (const std::string& processor : processors) {
    ptx::CompileResult result = compile_for(processor, staged_mbarrier, "staged.ptx");
    ASSERT_TRUE(result.ok()) << processor << ":\n" << diagnostics_of(result);
    check_code_object(processor, result, "staged");
    std::string disassembly = run_tool(XCUDA_LLVM_OBJDUMP, "-d", result.object);
    EXPECT_NE(disassembly.find(processor.starts_with("gfx11") ? "ds_cmpstore_rtn_b64" : "ds_cmpst_rtn_b64"), std::string::npos)
        << processor;
    EXPECT_NE(disassembly.find("s_sleep"), std::string::npos) << processor;
  }
}

}  // namespace
}  // namespace xcuda::amdgpu_test
