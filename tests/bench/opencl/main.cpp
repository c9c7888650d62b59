// The PoCL variant of the suite: the kernels of kernels.cl run through the OpenCL ICD loader on
// the first CPU device (tests/bench/run checks that it is PoCL). Usage: bench_opencl [--smoke] kernels.cl
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../common/bench.h"

namespace {

using bench::block_threads;

cl_context context;
cl_command_queue queue;
cl_program program;

[[noreturn]] void fail(const char* what, cl_int error) {
  std::fprintf(stderr, "opencl: %s failed with error %d\n", what, error);
  std::exit(1);
}

template <class Value>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    cl_int error = CL_SUCCESS;
    memory_ = clCreateBuffer(context, CL_MEM_READ_WRITE, count * sizeof(Value), nullptr, &error);
    if (error != CL_SUCCESS) fail("clCreateBuffer", error);
  }
  explicit DeviceBuffer(const std::vector<Value>& values) : DeviceBuffer(values.size()) {
    clEnqueueWriteBuffer(queue, memory_, CL_TRUE, 0, count_ * sizeof(Value), values.data(), 0, nullptr, nullptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { clReleaseMemObject(memory_); }
  cl_mem get() const { return memory_; }
  std::vector<Value> download() const {
    std::vector<Value> values(count_);
    clEnqueueReadBuffer(queue, memory_, CL_TRUE, 0, count_ * sizeof(Value), values.data(), 0, nullptr, nullptr);
    return values;
  }
  void zero() const {
    const Value zero_value{};
    clEnqueueFillBuffer(queue, memory_, &zero_value, sizeof(Value), 0, count_ * sizeof(Value), 0, nullptr, nullptr);
  }

 private:
  std::size_t count_;
  cl_mem memory_;
};

// A kernel of the program with a fixed launch shape; a null kernel means the build lacks it.
class Kernel {
 public:
  Kernel(const char* name, std::vector<std::size_t> global, std::vector<std::size_t> local)
      : global_(std::move(global)), local_(std::move(local)) {
    cl_int error = CL_SUCCESS;
    kernel_ = clCreateKernel(program, name, &error);
    if (error != CL_SUCCESS) {
      std::fprintf(stderr, "opencl: no kernel %s (error %d)\n", name, error);
      kernel_ = nullptr;
    }
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() {
    if (kernel_ != nullptr) clReleaseKernel(kernel_);
  }

  template <class... Arguments>
  void bind(const Arguments&... arguments) {
    if (kernel_ == nullptr) return;
    cl_uint index = 0;
    (set_argument(index++, arguments), ...);
  }
  bool enqueue() const {
    if (kernel_ == nullptr) return false;
    const cl_int error = clEnqueueNDRangeKernel(queue, kernel_, static_cast<cl_uint>(global_.size()), nullptr,
                                                global_.data(), local_.data(), 0, nullptr, nullptr);
    if (error != CL_SUCCESS) std::fprintf(stderr, "opencl: clEnqueueNDRangeKernel failed with error %d\n", error);
    return error == CL_SUCCESS;
  }
  // Runs the kernel once to completion.
  bool run() const { return enqueue() && clFinish(queue) == CL_SUCCESS; }

 private:
  template <class Value>
  void set_argument(cl_uint index, const DeviceBuffer<Value>& buffer) {
    const cl_mem memory = buffer.get();
    clSetKernelArg(kernel_, index, sizeof(cl_mem), &memory);
  }
  void set_argument(cl_uint index, unsigned value) { clSetKernelArg(kernel_, index, sizeof(value), &value); }

  cl_kernel kernel_;
  std::vector<std::size_t> global_, local_;
};

std::string build_options() {
  std::ostringstream options;
  options << std::fixed;  // float constants need a decimal point before their f suffix
  options << "-cl-std=CL3.0 -DBLOCK_THREADS=" << block_threads << " -DGEMM_TILE=" << bench::gemm_tile
          << " -DTRANSPOSE_TILE=" << bench::transpose_tile << " -DTRANSPOSE_ROWS=" << bench::transpose_rows
          << " -DHISTOGRAM_BINS=" << bench::histogram_bins
          << " -DHISTOGRAM_ITEMS_PER_THREAD=" << bench::histogram_items_per_thread
          << " -DMANDELBROT_ITERATIONS=" << bench::mandelbrot_iterations << " -DTRIAD_SCALE=" << bench::triad_scale
          << "f -DNBODY_SOFTENING=" << bench::nbody_softening << "f";
  return options.str();
}

void set_up(const char* kernels_path) {
  cl_platform_id platform;
  cl_device_id device;
  cl_int error = clGetPlatformIDs(1, &platform, nullptr);
  if (error != CL_SUCCESS) fail("clGetPlatformIDs", error);
  error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &device, nullptr);
  if (error != CL_SUCCESS) fail("clGetDeviceIDs", error);
  context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) fail("clCreateContext", error);
  queue = clCreateCommandQueueWithProperties(context, device, nullptr, &error);
  if (error != CL_SUCCESS) fail("clCreateCommandQueueWithProperties", error);

  std::ifstream file(kernels_path);
  if (!file) {
    std::fprintf(stderr, "opencl: cannot read %s\n", kernels_path);
    std::exit(1);
  }
  const std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const char* text = source.c_str();
  program = clCreateProgramWithSource(context, 1, &text, nullptr, &error);
  if (error != CL_SUCCESS) fail("clCreateProgramWithSource", error);
  const double start = bench::now_ms();
  error = clBuildProgram(program, 1, &device, build_options().c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    std::size_t length = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &length);
    std::string log(length, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, length, log.data(), nullptr);
    std::fprintf(stderr, "%s\n", log.c_str());
    fail("clBuildProgram", error);
  }
  // PoCL compiles the program here and specialises each kernel for its work-group size at the
  // first enqueue, so the first-launch column carries the rest of its compile time.
  std::printf("JIT build_program %.4f\n", bench::now_ms() - start);
}

void run_suite(const bench::Options& options) {
  const bench::Sizes sizes = bench::sizes_for(options);
  const std::size_t elements = sizes.elements;
  {
    const DeviceBuffer<float> b(bench::random_floats(elements, 1)), c(bench::random_floats(elements, 2));
    DeviceBuffer<float> a(elements);
    const auto expected = bench::reference_triad(b.download(), c.download());
    Kernel triad("triad", {elements}, {block_threads});
    triad.bind(a, b, c, sizes.elements);
    bench::measure(
        options, "triad", [&] { return triad.run(); },
        [&] { return bench::equal_nearly(a.download().data(), expected, 1e-6f); });
  }
  {
    const auto values = bench::random_words(elements, 3);
    const auto expected = bench::reference_block_sums(values);
    const DeviceBuffer<std::uint32_t> input(values);
    DeviceBuffer<std::uint32_t> sums(expected.size());
    const auto check = [&] { return bench::equal_exactly(sums.download().data(), expected); };
    for (const char* name : {"reduce_shared", "reduce_shared_guarded", "reduce_shuffle"}) {
      sums.zero();
      Kernel reduce(name, {elements}, {block_threads});
      if (std::string_view(name) == "reduce_shared_guarded")
        reduce.bind(input, sums, static_cast<cl_uint>(elements));
      else
        reduce.bind(input, sums);
      bench::measure(options, name, [&] { return reduce.run(); }, check);
    }
  }
  {
    const std::size_t n = sizes.gemm_n;
    const auto a_values = bench::random_floats(n * n, 4), b_values = bench::random_floats(n * n, 5);
    const auto expected = bench::reference_gemm(a_values, b_values, sizes.gemm_n);
    const DeviceBuffer<float> a(a_values), b(b_values);
    DeviceBuffer<float> c(n * n);
    Kernel gemm("gemm", {n, n}, {bench::gemm_tile, bench::gemm_tile});
    gemm.bind(a, b, c, sizes.gemm_n);
    bench::measure(
        options, "sgemm", [&] { return gemm.run(); },
        [&] { return bench::equal_nearly(c.download().data(), expected, 1e-4f); });
  }
  {
    const std::size_t n = sizes.transpose_n;
    const auto values = bench::random_floats(n * n, 6);
    const auto expected = bench::reference_transpose(values, sizes.transpose_n);
    const DeviceBuffer<float> input(values);
    DeviceBuffer<float> output(values.size());
    Kernel transpose("transpose", {n, n * bench::transpose_rows / bench::transpose_tile},
                     {bench::transpose_tile, bench::transpose_rows});
    transpose.bind(input, output, sizes.transpose_n);
    bench::measure(
        options, "transpose", [&] { return transpose.run(); },
        [&] { return bench::equal_exactly(output.download().data(), expected); });
  }
  {
    const auto values = bench::random_words(elements, 8);
    const auto expected = bench::reference_block_scan(values);
    const DeviceBuffer<std::uint32_t> input(values);
    DeviceBuffer<std::uint32_t> output(values.size());
    Kernel scan("block_scan", {elements}, {block_threads});
    scan.bind(input, output);
    bench::measure(
        options, "block_scan", [&] { return scan.run(); },
        [&] { return bench::equal_exactly(output.download().data(), expected); });
  }
  {
    const auto values = bench::random_bytes(sizes.histogram_n, 9);
    const auto expected = bench::reference_histogram(values);
    const DeviceBuffer<std::uint8_t> input(values);
    DeviceBuffer<std::uint32_t> bins(bench::histogram_bins);
    Kernel histogram("histogram", {sizes.histogram_n / bench::histogram_items_per_thread}, {block_threads});
    histogram.bind(input, bins);
    bench::measure(
        options, "histogram",
        [&] {
          bins.zero();
          return histogram.run();
        },
        [&] { return bench::equal_exactly(bins.download().data(), expected); });
  }
  {
    const std::size_t n = sizes.mandelbrot_n;
    const auto expected = bench::reference_mandelbrot(sizes.mandelbrot_n);
    DeviceBuffer<std::uint32_t> image(expected.size());
    Kernel mandelbrot("mandelbrot", {n, n}, {bench::mandelbrot_tile, bench::mandelbrot_tile});
    mandelbrot.bind(image, sizes.mandelbrot_n);
    bench::measure(
        options, "mandelbrot", [&] { return mandelbrot.run(); },
        [&] { return bench::mandelbrot_matches(image.download().data(), expected); });
  }
  {
    const auto values = bench::random_bodies(sizes.bodies);
    const auto expected = bench::reference_nbody(values);
    const DeviceBuffer<float> bodies(values);
    DeviceBuffer<float> acceleration(values.size());
    Kernel nbody("nbody", {sizes.bodies}, {block_threads});
    nbody.bind(bodies, acceleration, sizes.bodies);
    bench::measure(
        options, "nbody", [&] { return nbody.run(); },
        [&] { return bench::equal_nearly(acceleration.download().data(), expected, 1e-3f); });
  }
  {
    const std::size_t n = sizes.stencil_n;
    const auto values = bench::random_floats(n * n, 10);
    const auto expected = bench::reference_stencil(values, sizes.stencil_n);
    const DeviceBuffer<float> input(values);
    DeviceBuffer<float> output(values.size());
    Kernel stencil("stencil", {n, n}, {bench::stencil_block_x, bench::stencil_block_y});
    stencil.bind(input, output, sizes.stencil_n);
    bench::measure(
        options, "stencil_2d", [&] { return stencil.run(); },
        [&] { return bench::equal_nearly(output.download().data(), expected, 1e-6f); });
  }
  {
    const auto values = bench::random_words(std::size_t(sizes.barrier_blocks) * block_threads, 11);
    const auto expected = bench::reference_barrier_loop(values);
    const DeviceBuffer<std::uint32_t> input(values), trips(bench::barrier_loop_trips(sizes.barrier_blocks));
    const auto n = static_cast<cl_uint>(values.size());
    for (const bool guarded : {false, true}) {
      DeviceBuffer<std::uint32_t> output(values.size());
      const char* name = guarded ? "barrier_loop_guarded" : "barrier_loop";
      Kernel barrier_loop(name, {values.size()}, {block_threads});
      if (guarded)
        barrier_loop.bind(input, trips, output, n);
      else
        barrier_loop.bind(input, trips, output);
      bench::measure(
          options, name, [&] { return barrier_loop.run(); },
          [&] { return bench::equal_exactly(output.download().data(), expected); });
    }
    DeviceBuffer<std::uint32_t> output(values.size());
    const auto decided = bench::reference_barrier_decisions(values);
    Kernel barrier_decisions("barrier_decisions", {values.size()}, {block_threads});
    barrier_decisions.bind(input, trips, output);
    bench::measure(
        options, "barrier_decisions", [&] { return barrier_decisions.run(); },
        [&] { return bench::equal_exactly(output.download().data(), decided); });
  }
  {
    Kernel empty("empty", {1}, {1});
    if (!empty.run()) return;  // the first launch compiles; keep it out of the latency
    double start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.latency_launches; ++launch) empty.run();
    bench::report_latency("empty_launch", bench::now_ms() - start, sizes.latency_launches);

    const unsigned n = sizes.stream_elements;
    const DeviceBuffer<float> b(bench::random_floats(n, 1)), c(bench::random_floats(n, 2));
    DeviceBuffer<float> a(n);
    Kernel triad("triad", {n}, {block_threads});
    triad.bind(a, b, c, n);
    triad.run();
    start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.stream_launches; ++launch) triad.enqueue();
    clFinish(queue);
    bench::report_latency("small_launch_stream", bench::now_ms() - start, sizes.stream_launches);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s [--smoke] kernels.cl\n", argv[0]);
    return 2;
  }
  set_up(argv[argc - 1]);
  run_suite(bench::parse_options(argc, argv));
  return 0;
}
