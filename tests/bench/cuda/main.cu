// The xcuda variant of the suite: each kernel in CUDA C++, built by nvcc with default flags and run
// unmodified on whichever libcuda.so.1 the loader finds (tests/bench/run points it at xcuda's).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "../common/bench.h"

cudaError_t load_reduce_shuffle();
void launch_reduce_shuffle(const std::uint32_t* input, std::uint32_t* block_sums, unsigned blocks);

namespace {

using bench::block_threads;

__global__ void empty() {}

__global__ void triad(float* a, const float* b, const float* c, unsigned n) {
  const unsigned index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index < n) a[index] = b[index] + bench::triad_scale * c[index];
}

template <bool guarded>
__global__ void reduce_shared(const std::uint32_t* input, std::uint32_t* block_sums, unsigned n) {
  __shared__ std::uint32_t partial[block_threads];
  const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
  if (guarded && global >= n) return;
  partial[threadIdx.x] = input[global];
  __syncthreads();
  for (unsigned stride = block_threads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}

__global__ void gemm(const float* a, const float* b, float* c, unsigned n) {
  constexpr unsigned tile = bench::gemm_tile;
  __shared__ float a_tile[tile][tile];
  __shared__ float b_tile[tile][tile];
  const unsigned row = blockIdx.y * tile + threadIdx.y;
  const unsigned column = blockIdx.x * tile + threadIdx.x;
  float sum = 0.0f;
  for (unsigned base = 0; base < n; base += tile) {
    a_tile[threadIdx.y][threadIdx.x] = a[row * n + base + threadIdx.x];
    b_tile[threadIdx.y][threadIdx.x] = b[(base + threadIdx.y) * n + column];
    __syncthreads();
    for (unsigned k = 0; k < tile; ++k) sum += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + column] = sum;
}

__global__ void transpose(const float* input, float* output, unsigned n) {
  constexpr unsigned tile = bench::transpose_tile;
  __shared__ float staging[tile][tile + 1];  // +1 keeps the column reads free of bank conflicts
  unsigned x = blockIdx.x * tile + threadIdx.x;
  unsigned y = blockIdx.y * tile + threadIdx.y;
  for (unsigned row = 0; row < tile; row += bench::transpose_rows)
    staging[threadIdx.y + row][threadIdx.x] = input[(y + row) * n + x];
  __syncthreads();
  x = blockIdx.y * tile + threadIdx.x;
  y = blockIdx.x * tile + threadIdx.y;
  for (unsigned row = 0; row < tile; row += bench::transpose_rows)
    output[(y + row) * n + x] = staging[threadIdx.x][threadIdx.y + row];
}

// Hillis-Steele inclusive scan of each block's elements, double-buffered in shared memory.
__global__ void block_scan(const std::uint32_t* input, std::uint32_t* output) {
  __shared__ std::uint32_t buffers[2][block_threads];
  const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned current = 0;
  buffers[current][threadIdx.x] = input[global];
  __syncthreads();
  for (unsigned offset = 1; offset < block_threads; offset *= 2) {
    const std::uint32_t value = buffers[current][threadIdx.x];
    buffers[1 - current][threadIdx.x] =
        threadIdx.x >= offset ? value + buffers[current][threadIdx.x - offset] : value;
    current = 1 - current;
    __syncthreads();
  }
  output[global] = buffers[current][threadIdx.x];
}

__global__ void histogram(const std::uint8_t* input, std::uint32_t* bins) {
  __shared__ std::uint32_t local[bench::histogram_bins];
  local[threadIdx.x] = 0;  // one bin per thread: histogram_bins == block_threads
  __syncthreads();
  const unsigned base = blockIdx.x * blockDim.x * bench::histogram_items_per_thread + threadIdx.x;
  for (unsigned item = 0; item < bench::histogram_items_per_thread; ++item)
    atomicAdd(&local[input[base + item * blockDim.x]], 1U);
  __syncthreads();
  atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

__global__ void mandelbrot(std::uint32_t* image, unsigned n) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  const float real = -2.0f + 2.5f * static_cast<float>(x) / static_cast<float>(n);
  const float imaginary = -1.25f + 2.5f * static_cast<float>(y) / static_cast<float>(n);
  float zr = 0.0f, zi = 0.0f;
  std::uint32_t iteration = 0;
  while (iteration < bench::mandelbrot_iterations && zr * zr + zi * zi <= 4.0f) {
    const float next = zr * zr - zi * zi + real;
    zi = 2.0f * zr * zi + imaginary;
    zr = next;
    ++iteration;
  }
  image[y * n + x] = iteration;
}

// All-pairs accelerations; each block stages a tile of source bodies in shared memory.
__global__ void nbody(const float4* bodies, float4* acceleration, unsigned count) {
  __shared__ float4 sources[block_threads];
  const unsigned target = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 self = bodies[target];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (unsigned base = 0; base < count; base += block_threads) {
    sources[threadIdx.x] = bodies[base + threadIdx.x];
    __syncthreads();
    for (unsigned source = 0; source < block_threads; ++source) {
      const float dx = sources[source].x - self.x;
      const float dy = sources[source].y - self.y;
      const float dz = sources[source].z - self.z;
      const float inverse = rsqrtf(dx * dx + dy * dy + dz * dz + bench::nbody_softening);
      const float weight = sources[source].w * inverse * inverse * inverse;
      ax += weight * dx;
      ay += weight * dy;
      az += weight * dz;
    }
    __syncthreads();
  }
  acceleration[target] = make_float4(ax, ay, az, 0.0f);
}

__global__ void stencil(const float* input, float* output, unsigned n) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  const unsigned at = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1)
    output[at] = input[at];
  else
    output[at] = 0.2f * (input[at] + input[at - 1] + input[at + 1] + input[at - n] + input[at + n]);
}

// Guarded, it opens with the bounds test most kernels have: threads that may leave before the
// barriers, which the host backend must then follow one by one (none leaves here).
template <bool guarded>
__global__ void barrier_loop(const std::uint32_t* input, const std::uint32_t* trips_per_block, std::uint32_t* output, unsigned n) {
  __shared__ std::uint32_t exchange[block_threads];
  const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
  if (guarded && global >= n) return;
  std::uint32_t value = input[global];
  const unsigned trips = trips_per_block[blockIdx.x];  // read from memory, differs from block to block
  for (unsigned trip = 0; trip < trips; ++trip) {
    exchange[threadIdx.x] = value;
    __syncthreads();
    value = exchange[(threadIdx.x + 1) % block_threads] * 3 + threadIdx.x;
    __syncthreads();
  }
  output[global] = value;
}

// Each thread decides before the first barrier and acts on its decisions after it: predicates that
// live across the barriers, which the host backend keeps in the block's storage.
__global__ void barrier_decisions(const std::uint32_t* input, const std::uint32_t* trips_per_block, std::uint32_t* output) {
  __shared__ std::uint32_t exchange[block_threads];
  const unsigned global = blockIdx.x * blockDim.x + threadIdx.x;
  std::uint32_t value = input[global];
  const unsigned trips = trips_per_block[blockIdx.x];
  for (unsigned trip = 0; trip < trips; ++trip) {
    const bool odd = value & 1, high = value >> 31;
    exchange[threadIdx.x] = value;
    __syncthreads();
    const std::uint32_t next = exchange[(threadIdx.x + 1) % block_threads];
    value = odd ? value * 3 + next : (value >> 1) ^ next;
    if (high) value += trip;
    __syncthreads();
  }
  output[global] = value;
}

// A device allocation holding a copy of a host vector (or room for one).
template <class Value>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) { cudaMalloc(&data_, count * sizeof(Value)); }
  explicit DeviceBuffer(const std::vector<Value>& values) : DeviceBuffer(values.size()) {
    cudaMemcpy(data_, values.data(), count_ * sizeof(Value), cudaMemcpyHostToDevice);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  Value* get() const { return data_; }
  std::vector<Value> download() const {
    std::vector<Value> values(count_);
    cudaMemcpy(values.data(), data_, count_ * sizeof(Value), cudaMemcpyDeviceToHost);
    return values;
  }

 private:
  std::size_t count_;
  Value* data_ = nullptr;
};

// Runs `enqueue` and waits; an error (such as a kernel the implementation cannot compile) is
// printed and reported as a refusal.
template <class Enqueue>
bool run(Enqueue enqueue) {
  enqueue();
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  if (error != cudaSuccess) std::fprintf(stderr, "cuda: %s\n", cudaGetErrorString(error));
  return error == cudaSuccess;
}

// Asking for a kernel's attributes makes the runtime load its module, which is when a driver
// compiles the module's PTX; timing it reports compile time apart from the kernels' run times.
template <class Load>
void report_module_load(const char* module, Load load) {
  const double start = bench::now_ms();
  const cudaError_t error = load();
  if (error == cudaSuccess)
    std::printf("JIT %s %.4f\n", module, bench::now_ms() - start);
  else
    std::printf("JIT %s failed: %s\n", module, cudaGetErrorString(error));
  cudaGetLastError();  // the failure is this module's; it must not be reported by the next launch
}

void run_suite(const bench::Options& options) {
  report_module_load("module_main", [] {
    cudaFuncAttributes attributes;
    return cudaFuncGetAttributes(&attributes, empty);
  });
  report_module_load("module_warp_shuffle", load_reduce_shuffle);
  const bench::Sizes sizes = bench::sizes_for(options);
  const unsigned element_blocks = sizes.elements / block_threads;
  {
    const DeviceBuffer<float> b(bench::random_floats(sizes.elements, 1)), c(bench::random_floats(sizes.elements, 2));
    DeviceBuffer<float> a(sizes.elements);
    const auto expected = bench::reference_triad(b.download(), c.download());
    bench::measure(
        options, "triad",
        [&] { return run([&] { triad<<<element_blocks, block_threads>>>(a.get(), b.get(), c.get(), sizes.elements); }); },
        [&] { return bench::equal_nearly(a.download().data(), expected, 1e-6f); });
  }
  {
    const auto values = bench::random_words(sizes.elements, 3);
    const auto expected = bench::reference_block_sums(values);
    const DeviceBuffer<std::uint32_t> input(values);
    DeviceBuffer<std::uint32_t> sums(element_blocks);
    const auto check = [&] { return bench::equal_exactly(sums.download().data(), expected); };
    for (const bool guarded : {false, true}) {
      bench::measure(
          options, guarded ? "reduce_shared_guarded" : "reduce_shared",
          [&] {
            return run([&] {
              (guarded ? reduce_shared<true> : reduce_shared<false>)<<<element_blocks, block_threads>>>(input.get(), sums.get(), sizes.elements);
            });
          },
          check);
      cudaMemset(sums.get(), 0, element_blocks * sizeof(std::uint32_t));
    }
    bench::measure(
        options, "reduce_shuffle",
        [&] { return run([&] { launch_reduce_shuffle(input.get(), sums.get(), element_blocks); }); }, check);
  }
  {
    const unsigned n = sizes.gemm_n;
    const auto a_values = bench::random_floats(std::size_t(n) * n, 4), b_values = bench::random_floats(std::size_t(n) * n, 5);
    const auto expected = bench::reference_gemm(a_values, b_values, n);
    const DeviceBuffer<float> a(a_values), b(b_values);
    DeviceBuffer<float> c(std::size_t(n) * n);
    const dim3 grid(n / bench::gemm_tile, n / bench::gemm_tile), block(bench::gemm_tile, bench::gemm_tile);
    bench::measure(
        options, "sgemm", [&] { return run([&] { gemm<<<grid, block>>>(a.get(), b.get(), c.get(), n); }); },
        [&] { return bench::equal_nearly(c.download().data(), expected, 1e-4f); });
  }
  {
    const unsigned n = sizes.transpose_n;
    const auto values = bench::random_floats(std::size_t(n) * n, 6);
    const auto expected = bench::reference_transpose(values, n);
    const DeviceBuffer<float> input(values);
    DeviceBuffer<float> output(values.size());
    const dim3 grid(n / bench::transpose_tile, n / bench::transpose_tile), block(bench::transpose_tile, bench::transpose_rows);
    bench::measure(
        options, "transpose", [&] { return run([&] { transpose<<<grid, block>>>(input.get(), output.get(), n); }); },
        [&] { return bench::equal_exactly(output.download().data(), expected); });
  }
  {
    const auto values = bench::random_words(sizes.elements, 8);
    const auto expected = bench::reference_block_scan(values);
    const DeviceBuffer<std::uint32_t> input(values);
    DeviceBuffer<std::uint32_t> output(values.size());
    bench::measure(
        options, "block_scan",
        [&] { return run([&] { block_scan<<<element_blocks, block_threads>>>(input.get(), output.get()); }); },
        [&] { return bench::equal_exactly(output.download().data(), expected); });
  }
  {
    const auto values = bench::random_bytes(sizes.histogram_n, 9);
    const auto expected = bench::reference_histogram(values);
    const DeviceBuffer<std::uint8_t> input(values);
    DeviceBuffer<std::uint32_t> bins(bench::histogram_bins);
    const unsigned blocks = sizes.histogram_n / (block_threads * bench::histogram_items_per_thread);
    bench::measure(
        options, "histogram",
        [&] {
          return run([&] {
            cudaMemsetAsync(bins.get(), 0, bench::histogram_bins * sizeof(std::uint32_t));
            histogram<<<blocks, block_threads>>>(input.get(), bins.get());
          });
        },
        [&] { return bench::equal_exactly(bins.download().data(), expected); });
  }
  {
    const unsigned n = sizes.mandelbrot_n;
    const auto expected = bench::reference_mandelbrot(n);
    DeviceBuffer<std::uint32_t> image(expected.size());
    const dim3 grid(n / bench::mandelbrot_tile, n / bench::mandelbrot_tile), block(bench::mandelbrot_tile, bench::mandelbrot_tile);
    bench::measure(
        options, "mandelbrot", [&] { return run([&] { mandelbrot<<<grid, block>>>(image.get(), n); }); },
        [&] { return bench::mandelbrot_matches(image.download().data(), expected); });
  }
  {
    const auto values = bench::random_bodies(sizes.bodies);
    const auto expected = bench::reference_nbody(values);
    const DeviceBuffer<float> bodies(values);
    DeviceBuffer<float> acceleration(values.size());
    bench::measure(
        options, "nbody",
        [&] {
          return run([&] {
            nbody<<<sizes.bodies / block_threads, block_threads>>>(reinterpret_cast<const float4*>(bodies.get()),
                                                                    reinterpret_cast<float4*>(acceleration.get()),
                                                                    sizes.bodies);
          });
        },
        [&] { return bench::equal_nearly(acceleration.download().data(), expected, 1e-3f); });
  }
  {
    const unsigned n = sizes.stencil_n;
    const auto values = bench::random_floats(std::size_t(n) * n, 10);
    const auto expected = bench::reference_stencil(values, n);
    const DeviceBuffer<float> input(values);
    DeviceBuffer<float> output(values.size());
    const dim3 grid(n / bench::stencil_block_x, n / bench::stencil_block_y), block(bench::stencil_block_x, bench::stencil_block_y);
    bench::measure(
        options, "stencil_2d", [&] { return run([&] { stencil<<<grid, block>>>(input.get(), output.get(), n); }); },
        [&] { return bench::equal_nearly(output.download().data(), expected, 1e-6f); });
  }
  {
    const auto values = bench::random_words(std::size_t(sizes.barrier_blocks) * block_threads, 11);
    const auto expected = bench::reference_barrier_loop(values);
    const DeviceBuffer<std::uint32_t> input(values), trips(bench::barrier_loop_trips(sizes.barrier_blocks));
    const auto n = static_cast<unsigned>(values.size());
    for (const bool guarded : {false, true}) {
      DeviceBuffer<std::uint32_t> output(values.size());
      bench::measure(
          options, guarded ? "barrier_loop_guarded" : "barrier_loop",
          [&] {
            return run([&] {
              (guarded ? barrier_loop<true> : barrier_loop<false>)<<<sizes.barrier_blocks, block_threads>>>(input.get(), trips.get(),
                                                                                                          output.get(), n);
            });
          },
          [&] { return bench::equal_exactly(output.download().data(), expected); });
    }
    DeviceBuffer<std::uint32_t> output(values.size());
    const auto decided = bench::reference_barrier_decisions(values);
    bench::measure(
        options, "barrier_decisions",
        [&] { return run([&] { barrier_decisions<<<sizes.barrier_blocks, block_threads>>>(input.get(), trips.get(), output.get()); }); },
        [&] { return bench::equal_exactly(output.download().data(), decided); });
  }
  {
    if (!run([] { empty<<<1, 1>>>(); })) return;  // the first launch compiles; keep it out of the latency
    double start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.latency_launches; ++launch) run([] { empty<<<1, 1>>>(); });
    bench::report_latency("empty_launch", bench::now_ms() - start, sizes.latency_launches);

    const unsigned n = sizes.stream_elements;
    const DeviceBuffer<float> b(bench::random_floats(n, 1)), c(bench::random_floats(n, 2));
    DeviceBuffer<float> a(n);
    start = bench::now_ms();
    for (unsigned launch = 0; launch < sizes.stream_launches; ++launch)
      triad<<<n / block_threads, block_threads>>>(a.get(), b.get(), c.get(), n);
    cudaDeviceSynchronize();
    bench::report_latency("small_launch_stream", bench::now_ms() - start, sizes.stream_launches);
  }
}

}  // namespace

int main(int argc, char** argv) {
  run_suite(bench::parse_options(argc, argv));
  return 0;
}
