// End-to-end: nvcc's PTX (ptx_inputs/kernels.ptx) compiled to a host object, linked with ORC
// and run block by block; every result is checked against a value computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>

#include "ptx_object_loader.h"

namespace xcuda::ptx::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The committed kernels.ptx, plus the variants nvcc built from kernels.cu with other flags
// (debug info, other targets) when it was available at build time.
std::vector<std::string> kernel_files() {
  std::vector<std::string> files{std::string(XCUDA_PTX_INPUTS) + "/kernels.ptx"};
  std::string generated = XCUDA_PTX_GENERATED;
  for (size_t start = 0; start < generated.size();) {
    size_t end = std::min(generated.find(',', start), generated.size());
    if (end > start) files.push_back(generated.substr(start, end - start));
    start = end + 1;
  }
  return files;
}

// A kernel of 4 000 additions, which makes a module large enough for the compiler to share its
// kernels out among threads (CompileOptions::threads), with the largest alone in the first share.
// It reads a module variable and calls a function that kernels.ptx's own kernels call too.
constexpr int padding_additions = 4000;

std::string padding_kernel() {
  std::string text = R"(
.visible .entry share_padding(.param .u64 share_padding_out)
{
  .reg .f32 %f<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [share_padding_out];
  cvta.to.global.u64 %rd2, %rd1;
  ld.const.f32 %f1, [coefficients+4];
  {
  .param .b32 param0;
  st.param.f32 [param0+0], %f1;
  .param .b32 retval0;
  call.uni (retval0), _Z4cubef, (param0);
  ld.param.f32 %f2, [retval0+0];
  }
)";
  for (int index = 0; index < padding_additions; ++index) text += "  add.f32 %f2, %f2, 0f3F800000;\n";
  return text + "  st.global.f32 [%rd2], %f2;\n  ret;\n}\n";
}

// Each PTX file, compiled without optimisation and with the full O3 pipeline, on one thread and
// on two (with the padding kernel).
using KernelsCase = std::tuple<std::string, int, unsigned>;

class KernelsTest : public ::testing::TestWithParam<KernelsCase> {
 protected:
  void SetUp() override {
    auto [file, optimization_level, threads] = GetParam();
    auto& loaded = modules()[GetParam()];
    if (!loaded) loaded = std::make_unique<LoadedModule>(read_file(file) + (threads > 1 ? padding_kernel() : ""), optimization_level, threads);
    module_ = loaded.get();
    ASSERT_TRUE(module_->ok()) << module_->diagnostics_text();
    if (threads > 1) {
      ASSERT_EQ(module_->pass_times().back().pass, "host: compile in shares on threads");
    }
  }

  static std::map<KernelsCase, std::unique_ptr<LoadedModule>>& modules() {
    static std::map<KernelsCase, std::unique_ptr<LoadedModule>> cache;
    return cache;
  }

  LoadedModule* module_ = nullptr;
};

// The module with the padding kernel, compiled in shares.
class ModuleInSharesTest : public KernelsTest {};

TEST_P(ModuleInSharesTest, TheLargestKernelSeesTheOtherSharesVariablesAndFunctions) {
  float result = 0;
  ParameterBuffer parameters(module_->kernel("share_padding"));
  parameters.set(0, &result);
  module_->launch("share_padding", {1, 1, 1}, {1, 1, 1}, parameters);
  // cube(coefficients[1]) = 2^3, then each addition of 1 is exact.
  EXPECT_EQ(result, 8.0f + padding_additions);
}

// Compiled for blocks of whole warps only (CompileOptions::whole_warp_blocks), a kernel without
// barriers loops over whole warps, one vector at a time with no threads left over: the same
// answers from an object no larger, marked as running only such blocks. Both objects keep the
// vectoriser's scalar loop for when its check of the index arithmetic fails, so only the
// remainder's bookkeeping is saved; taking two vectors a step, the loop made the larger object.
TEST(WholeWarpBlocks, AKernelWithoutBarriersLoopsOverWholeWarps) {
  std::string ptx = read_file(std::string(XCUDA_PTX_INPUTS) + "/kernels.ptx");
  auto compile = [&](bool whole_warp_blocks) {
    CompileOptions options;
    options.kernels = {"saxpy"};
    options.whole_warp_blocks = whole_warp_blocks;
    return std::make_unique<LoadedModule>(ptx, options);
  };
  std::unique_ptr<LoadedModule> any_width = compile(false), whole_warps = compile(true);
  ASSERT_TRUE(any_width->ok()) << any_width->diagnostics_text();
  ASSERT_TRUE(whole_warps->ok()) << whole_warps->diagnostics_text();
  EXPECT_FALSE(any_width->kernel("saxpy").whole_warps_only);
  EXPECT_TRUE(whole_warps->kernel("saxpy").whole_warps_only);
  EXPECT_LE(whole_warps->object_bytes(), any_width->object_bytes())
      << whole_warps->object_bytes() << " bytes for whole warps, " << any_width->object_bytes() << " for every block";
  const int n = 1000;
  const float a = 1.1f;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 1.0f / (i + 1);
  for (uint32_t width : {32u, 96u, 160u, 1024u}) {
    std::vector<float> y(n), expected(n);
    for (int i = 0; i < n; ++i) {
      y[i] = 0.3f * i;
      expected[i] = std::fma(a, x[i], y[i]);
    }
    ParameterBuffer parameters(whole_warps->kernel("saxpy"));
    parameters.set(0, n).set(1, a).set(2, x.data()).set(3, y.data());
    whole_warps->launch("saxpy", {(n + width - 1) / width, 1, 1}, {width, 1, 1}, parameters);
    for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], expected[i]) << "blocks " << width << " wide, element " << i;
  }
}

// A warp's butterfly sums take its warp path, where each shuffle is one permutation of the
// warp's values. With an atomic after them the thread loop starts where the block's warps take
// turns, a bound whose multiple of 32 only the warp path's branch tells: the shuffles then
// stayed 32 picks of one lane each, and the kernel's code grew from 0.2 to 11 KB.
TEST(WholeWarpBlocks, ButterflyShufflesBeforeAnAtomicAreOnePermutationEach) {
  auto kernel = [](const char* name, const char* after) {
    return std::string(".visible .entry ") + name + R"((.param .u64 in, .param .u64 out, .param .u64 total)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u64 %rd3, [total];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd4, %r4, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.u32 %r5, [%rd5];
  shfl.sync.bfly.b32 %r6|%p1, %r5, 16, 31, -1;
  add.s32 %r5, %r5, %r6;
  shfl.sync.bfly.b32 %r6|%p1, %r5, 8, 31, -1;
  add.s32 %r5, %r5, %r6;
  shfl.sync.bfly.b32 %r6|%p1, %r5, 4, 31, -1;
  add.s32 %r5, %r5, %r6;
  shfl.sync.bfly.b32 %r6|%p1, %r5, 2, 31, -1;
  add.s32 %r5, %r5, %r6;
  shfl.sync.bfly.b32 %r6|%p1, %r5, 1, 31, -1;
  add.s32 %r5, %r5, %r6;
  add.s64 %rd6, %rd2, %rd4;
  st.global.u32 [%rd6], %r5;
)" + after + "\n  ret;\n}\n";
  };
  std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n" + kernel("sums", "") +
                    kernel("sums_then_count", "atom.global.add.u32 %r7, [%rd3], 1;");
  auto compile = [&](const char* name) {
    CompileOptions options;
    options.kernels = {name};
    options.whole_warp_blocks = true;
    return std::make_unique<LoadedModule>(ptx, options);
  };
  std::unique_ptr<LoadedModule> plain = compile("sums"), counting = compile("sums_then_count");
  ASSERT_TRUE(plain->ok()) << plain->diagnostics_text();
  ASSERT_TRUE(counting->ok()) << counting->diagnostics_text();
  EXPECT_LT(counting->object_bytes(), plain->object_bytes() * 2)
      << counting->object_bytes() << " bytes with the atomic, " << plain->object_bytes() << " without";
  const uint32_t width = 128, blocks = 3, n = width * blocks;
  std::vector<uint32_t> in(n), out(n, 0);
  for (uint32_t i = 0; i < n; ++i) in[i] = (i + 7) * 2654435761u;
  uint32_t total = 0;
  ParameterBuffer parameters(counting->kernel("sums_then_count"));
  parameters.set(0, in.data()).set(1, out.data()).set(2, &total);
  counting->launch("sums_then_count", {blocks, 1, 1}, {width, 1, 1}, parameters);
  EXPECT_EQ(total, n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t sum = 0;
    for (uint32_t lane = 0; lane < 32; ++lane) sum += in[i / 32 * 32 + lane];
    ASSERT_EQ(out[i], sum) << "thread " << i;
  }
}

// Forty values, each loaded before a barrier and added up after it: each lives across one
// barrier, no two of them in the same stretch between barriers but neighbours, so a few slots of
// the block's storage hold them all in turn (see target/host/slot_sharing.h), and the sum, which
// lives throughout, one more.
TEST(BlockStorage, ValuesLivingInTurnShareSlots) {
  constexpr uint32_t stages = 40, width = 64;
  std::string ptx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry stages(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<64>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  mov.u32 %r2, 0;
)";
  for (uint32_t stage = 0; stage < stages; ++stage) {
    const std::string value = "%r" + std::to_string(10 + stage);
    ptx += "  ld.global.u32 " + value + ", [%rd4+" + std::to_string(4 * width * stage) + "];\n  bar.sync 0;\n  add.s32 %r2, %r2, " +
           value + ";\n";
  }
  ptx += "  add.s64 %rd5, %rd2, %rd3;\n  st.global.u32 [%rd5], %r2;\n  ret;\n}\n";
  LoadedModule module(ptx, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.diagnostics_text();
  // Without sharing, 41 slots of 4 bytes alone are more.
  EXPECT_LT(module.kernel("stages").host_stack_bytes_per_thread, 4 * stages) << "bytes per thread";
  std::vector<uint32_t> in(stages * width), out(width, 0);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = (i + 3) * 2654435761u;
  ParameterBuffer parameters(module.kernel("stages"));
  parameters.set(0, in.data()).set(1, out.data());
  module.launch("stages", {1, 1, 1}, {width, 1, 1}, parameters);
  for (uint32_t thread = 0; thread < width; ++thread) {
    uint32_t sum = 0;
    for (uint32_t stage = 0; stage < stages; ++stage) sum += in[stage * width + thread];
    ASSERT_EQ(out[thread], sum) << "thread " << thread;
  }
}

TEST_P(KernelsTest, VectorAddCoversEveryElementOfAPartialLastBlock) {
  const int n = 1000;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - i;
  }
  ParameterBuffer parameters(module_->kernel("vector_add"));
  parameters.set(0, a.data()).set(1, b.data()).set(2, c.data()).set(3, n);
  module_->launch("vector_add", {(n + 127) / 128, 1, 1}, {128, 1, 1}, parameters);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(KernelsTest, SaxpyIsFused) {
  const int n = 300;
  std::vector<float> x(n), y(n), expected(n);
  const float a = 1.1f;
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0f / (i + 1);
    y[i] = 0.3f * i;
    expected[i] = std::fma(a, x[i], y[i]);
  }
  ParameterBuffer parameters(module_->kernel("saxpy"));
  parameters.set(0, n).set(1, a).set(2, x.data()).set(3, y.data());
  module_->launch("saxpy", {3, 1, 1}, {128, 1, 1}, parameters);
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], expected[i]) << i;
}

TEST_P(KernelsTest, LoopsRunTheirTripCount) {
  const int n = 13;
  std::vector<uint32_t> out(2 * 40);
  ParameterBuffer parameters(module_->kernel("triangle_sums"));
  parameters.set(0, out.data()).set(1, n);
  module_->launch("triangle_sums", {2, 1, 1}, {40, 1, 1}, parameters);
  for (uint32_t block = 0; block < 2; ++block) {
    for (uint32_t thread = 0; thread < 40; ++thread) {
      uint32_t sum = 0;
      for (int k = 0; k < n + static_cast<int>(thread); ++k) sum += k * (k & 3);
      ASSERT_EQ(out[block * 40 + thread], sum) << thread;
    }
  }
}

struct Pair {
  float first;
  double second;
  int values[3];
};

TEST_P(KernelsTest, DeviceFunctionsTakeAndReturnAggregates) {
  Pair seed{1.5f, 0.25, {10, 20, 30}};
  std::vector<Pair> out(8);
  ParameterBuffer parameters(module_->kernel("device_calls"));
  parameters.set(0, seed).set(1, out.data());
  module_->launch("device_calls", {1, 1, 1}, {8, 1, 1}, parameters);
  for (int k = 0; k < 8; ++k) {
    Pair expected = seed;
    expected.values[k % 3] += k;
    expected.second *= 2.0;
    float v = static_cast<float>(k);
    expected.first += v * v * v;
    EXPECT_EQ(out[k].first, expected.first) << k;
    EXPECT_EQ(out[k].second, expected.second) << k;
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out[k].values[j], expected.values[j]) << k;
  }
}

TEST_P(KernelsTest, TwoDimensionalGridsSeeTheirCoordinates) {
  const int width = 37, height = 21;
  std::vector<float> m(width * height, -1.0f);
  ParameterBuffer parameters(module_->kernel("grid_2d"));
  parameters.set(0, m.data()).set(1, width).set(2, height);
  module_->launch("grid_2d", {5, 3, 1}, {8, 8, 1}, parameters);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) ASSERT_EQ(m[y * width + x], static_cast<float>(x * 1000 + y)) << x << "," << y;
}

TEST_P(KernelsTest, ModuleVariablesAreInitialisedAndWritable) {
  auto* counter = static_cast<int*>(module_->global("counter"));
  auto* coefficients = static_cast<float*>(module_->global("coefficients"));
  EXPECT_EQ(coefficients[2], 3.0f);
  coefficients[3] = 7.0f;  // what cuMemcpyHtoD to a __constant__ does
  int before = *counter;
  std::vector<float> out(8);
  ParameterBuffer parameters(module_->kernel("use_globals"));
  parameters.set(0, out.data());
  module_->launch("use_globals", {1, 1, 1}, {8, 1, 1}, parameters);
  EXPECT_EQ(*counter, before + 8);
  EXPECT_EQ(out[0], 10.0f);
  EXPECT_EQ(out[3], 70.0f);
  EXPECT_EQ(out[6], 30.0f);
  const auto& globals = module_->info().globals;
  EXPECT_TRUE(std::any_of(globals.begin(), globals.end(), [](const GlobalInfo& global) {
    return global.name == "coefficients" && global.size == 16 && global.is_constant;
  }));
}

TEST_P(KernelsTest, BarriersSeparateTheStepsOfAReduction) {
  const int blocks = 3, threads = 256;
  std::vector<float> in(blocks * threads), out(blocks);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 17);
  ParameterBuffer parameters(module_->kernel("block_reduce"));
  parameters.set(0, in.data()).set(1, out.data());
  module_->launch("block_reduce", {blocks, 1, 1}, {threads, 1, 1}, parameters);
  for (int block = 0; block < blocks; ++block) {
    float expected = std::accumulate(in.begin() + block * threads, in.begin() + (block + 1) * threads, 0.0f);
    EXPECT_EQ(out[block], expected) << block;
  }
  EXPECT_GE(module_->kernel("block_reduce").static_shared_bytes, 256u * 4);
}

TEST_P(KernelsTest, DynamicSharedMemoryFollowsTheStaticPart) {
  std::vector<int> data(64);
  std::iota(data.begin(), data.end(), 100);
  ParameterBuffer parameters(module_->kernel("reverse_dynamic"));
  parameters.set(0, data.data());
  module_->launch("reverse_dynamic", {1, 1, 1}, {64, 1, 1}, parameters, 64 * sizeof(int));
  for (int i = 0; i < 64; ++i) ASSERT_EQ(data[i], 163 - i);
}

TEST_P(KernelsTest, PrintfReachesTheRuntime) {
  LoadedModule::printed().clear();
  ParameterBuffer parameters(module_->kernel("say_hello"));
  parameters.set(0, 42);
  module_->launch("say_hello", {2, 1, 1}, {4, 1, 1}, parameters);
  ASSERT_EQ(LoadedModule::printed().size(), 2u);
  const PrintfCall& second = LoadedModule::printed()[1];
  EXPECT_EQ(second.format, "hello %d from block %d\n");
  int value = 0, block = 0;
  std::memcpy(&value, second.arguments.data(), 4);
  std::memcpy(&block, second.arguments.data() + 4, 4);
  EXPECT_EQ(value, 42);
  EXPECT_EQ(block, 1);
}

uint32_t bit_reverse(uint32_t value) {
  uint32_t result = 0;
  for (int i = 0; i < 32; ++i) result |= ((value >> i) & 1u) << (31 - i);
  return result;
}

TEST_P(KernelsTest, IntegerArithmeticIsBitExact) {
  std::vector<int> a{7, -7, 123456789, INT32_MIN + 1, 0x7FFFFFFF, -1, 1 << 30, 99};
  std::vector<int> b{2, 2, -3, 7, 31, 33, 3, -100000};
  std::vector<int> out(8 * a.size());
  ParameterBuffer parameters(module_->kernel("integer_ops"));
  parameters.set(0, a.data()).set(1, b.data()).set(2, out.data());
  module_->launch("integer_ops", {1, 1, 1}, {static_cast<uint32_t>(a.size()), 1, 1}, parameters);
  for (size_t i = 0; i < a.size(); ++i) {
    int x = a[i], y = b[i];
    uint32_t ux = x, uy = y;
    int count = y & 31;
    int expected[8] = {
        x / y,
        x % y,
        static_cast<int>(ux / uy),
        static_cast<int>((static_cast<int64_t>(x) * y) >> 32),
        static_cast<int>((static_cast<int64_t>(x) * y) >> 17),
        static_cast<int>((ux << count) ^ (ux >> (uy & 31)) ^ static_cast<uint32_t>(x >> count)),
        __builtin_popcount(ux) + (x == 0 ? 32 : __builtin_clz(ux)) + static_cast<int>(bit_reverse(ux)),
        std::min(x, y) * 3 + std::max(x, y) + std::abs(x),
    };
    for (int k = 0; k < 8; ++k) EXPECT_EQ(out[8 * i + k], expected[k]) << "input " << i << " result " << k;
  }
}

// PTX float-to-integer conversions saturate where C++ leaves the result undefined.
int saturating_int(float value) {
  if (std::isnan(value)) return 0;
  if (value >= 2147483648.0f) return INT32_MAX;
  if (value < -2147483648.0f) return INT32_MIN;
  return static_cast<int>(value);
}

float multiply_toward_zero(float x, float y) {
  double exact = static_cast<double>(x) * y;  // exact: 24 + 24 bits fit in 53
  float nearest = static_cast<float>(exact);
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(exact)) nearest = std::nextafter(nearest, 0.0f);
  return nearest;
}

TEST_P(KernelsTest, FloatArithmeticIsCorrectlyRounded) {
  std::vector<float> a{1.0f, -3.5f, 1e30f, 0.1f, -0.0f, 7.0f, 1.0f / 3.0f, 2.5e-3f};
  std::vector<float> b{3.0f, 0.7f, 3e-20f, 0.2f, 5.0f, -2.0f, 3.0f, 1e8f};
  std::vector<float> out(6 * a.size());
  std::vector<double> wide(a.size());
  ParameterBuffer parameters(module_->kernel("float_ops"));
  parameters.set(0, a.data()).set(1, b.data()).set(2, out.data()).set(3, wide.data());
  module_->launch("float_ops", {1, 1, 1}, {static_cast<uint32_t>(a.size()), 1, 1}, parameters);
  for (size_t i = 0; i < a.size(); ++i) {
    float x = a[i], y = b[i];
    float expected[6] = {x / y,
                         std::sqrt(std::fabs(x)),
                         std::fma(x, y, 1.0f),
                         std::fmin(x, y) + std::fmax(x, y),
                         static_cast<float>(saturating_int(x)) + static_cast<float>(static_cast<unsigned>(std::fabs(y))),
                         multiply_toward_zero(x, y)};
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[6 * i + k], expected[k]) << "input " << i << " result " << k;
    EXPECT_EQ(wide[i], static_cast<double>(x) * y + std::sqrt(static_cast<double>(std::fabs(y)))) << i;
  }
}

struct Float4 {
  float x, y, z, w;
};

TEST_P(KernelsTest, VectorAccessesAndLocalArrays) {
  std::vector<Float4> a(32);
  std::vector<float> table(16), out(32);
  for (int i = 0; i < 32; ++i) a[i] = {1.0f * i, 2.0f, 3.0f, 0.5f * i};
  for (int k = 0; k < 16; ++k) table[k] = 0.25f * k + 1.0f;
  ParameterBuffer parameters(module_->kernel("vectors_and_locals"));
  parameters.set(0, a.data()).set(1, table.data()).set(2, out.data());
  module_->launch("vectors_and_locals", {1, 1, 1}, {32, 1, 1}, parameters);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(a[i].x, 1.0f * i + table[i & 15] * static_cast<float>(i & 15)) << i;
    EXPECT_EQ(a[i].y, 2.0f);
    EXPECT_EQ(a[i].w, i * 0.5f * 2.0f);
    int k = (i * 7) & 15;
    EXPECT_EQ(out[i], table[k] * static_cast<float>(k)) << i;
  }
}

TEST_P(KernelsTest, ParameterLayoutFollowsAlignment) {
  const KernelInfo& saxpy = module_->kernel("saxpy");
  ASSERT_EQ(saxpy.parameters.size(), 4u);
  EXPECT_EQ(saxpy.parameters[0].offset, 0u);
  EXPECT_EQ(saxpy.parameters[1].offset, 4u);
  EXPECT_EQ(saxpy.parameters[2].offset, 8u);
  EXPECT_EQ(saxpy.parameters[3].offset, 16u);
  EXPECT_EQ(saxpy.parameter_buffer_size, 24u);
  const KernelInfo& calls = module_->kernel("device_calls");
  EXPECT_EQ(calls.parameters[0].size, sizeof(Pair));
  EXPECT_EQ(calls.parameters[0].alignment, 8u);
  EXPECT_EQ(calls.parameters[1].offset, 32u);
}

TEST_P(KernelsTest, TiledMatrixMultiplyUsesTwoDimensionalSharedTiles) {
  const int n = 40;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7) - 3.0f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  ParameterBuffer parameters(module_->kernel("tiled_matmul"));
  parameters.set(0, a.data()).set(1, b.data()).set(2, c.data()).set(3, n);
  module_->launch("tiled_matmul", {3, 3, 1}, {16, 16, 1}, parameters);
  for (int row = 0; row < n; ++row) {
    for (int column = 0; column < n; ++column) {
      float sum = 0;
      for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + column];  // small integers: exact in any order
      ASSERT_EQ(c[row * n + column], sum) << row << "," << column;
    }
  }
}

TEST_P(KernelsTest, HistogramCountsWithSharedAndGlobalAtomics) {
  std::vector<unsigned char> data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>((i * 37) ^ (i >> 3));
  std::vector<unsigned> bins(256), expected(256);
  for (unsigned char value : data) ++expected[value];
  ParameterBuffer parameters(module_->kernel("histogram"));
  parameters.set(0, data.data()).set(1, static_cast<int>(data.size())).set(2, bins.data());
  module_->launch("histogram", {4, 1, 1}, {96, 1, 1}, parameters);
  EXPECT_EQ(bins, expected);
}

TEST_P(KernelsTest, ScanWithBarriersInsideALoop) {
  std::vector<int> data(128);
  for (int i = 0; i < 128; ++i) data[i] = (i * 7) % 11 - 5;
  std::vector<int> expected(128);
  std::partial_sum(data.begin(), data.end(), expected.begin());
  ParameterBuffer parameters(module_->kernel("inclusive_scan"));
  parameters.set(0, data.data());
  module_->launch("inclusive_scan", {1, 1, 1}, {128, 1, 1}, parameters, 128 * sizeof(int));
  EXPECT_EQ(data, expected);
}

// Every file without optimisation and with it, on one thread; and the committed one in shares on
// two threads too.
std::vector<KernelsCase> kernel_cases(unsigned threads) {
  std::vector<KernelsCase> cases;
  for (const std::string& file : threads == 1 ? kernel_files() : std::vector<std::string>{kernel_files().front()})
    for (int optimization_level : {0, 3}) cases.emplace_back(file, optimization_level, threads);
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<KernelsCase>& info) {
  const std::string& path = std::get<0>(info.param);
  std::string name = path.substr(path.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name + "_O" + std::to_string(std::get<1>(info.param)) + "_threads" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(NvccOutput, KernelsTest, ::testing::ValuesIn(kernel_cases(1)), case_name);
INSTANTIATE_TEST_SUITE_P(InShares, KernelsTest, ::testing::ValuesIn(kernel_cases(2)), case_name);
INSTANTIATE_TEST_SUITE_P(InShares, ModuleInSharesTest, ::testing::ValuesIn(kernel_cases(2)), case_name);

}  // namespace
}  // namespace xcuda::ptx::testing
