// Benchmark input: one translation unit with many distinct kernels, so that loading its module
// means JIT-compiling a lot of PTX. Prints the first launch's latency (which, with CUDA's lazy
// module loading, includes loading the module and compiling the kernel) and the time until
// every kernel has run once, and checks every kernel's result.
// usage: many_kernels [COUNT]: launch the first COUNT kernels only (default: all 60).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Each kernel computes out[i] = polynomial_k(in[i]) with its own coefficients: different code,
// so nothing is shared between kernels, and a loop plus branches to give the optimiser work.
#define KERNEL(k)                                                                  \
  __global__ void kernel_##k(const float* in, float* out, int n) {                 \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                 \
    if (i >= n) return;                                                            \
    float x = in[i], sum = 0.0f;                                                   \
    for (int term = 0; term < (k % 5) + 2; ++term) sum = sum * x + float(k + term); \
    out[i] = (i & 1) ? sum : -sum;                                                 \
  }
#define KERNELS_10(d) KERNEL(d##0) KERNEL(d##1) KERNEL(d##2) KERNEL(d##3) KERNEL(d##4) \
                      KERNEL(d##5) KERNEL(d##6) KERNEL(d##7) KERNEL(d##8) KERNEL(d##9)
KERNELS_10(1) KERNELS_10(2) KERNELS_10(3) KERNELS_10(4) KERNELS_10(5) KERNELS_10(6)

using Kernel = void (*)(const float*, float*, int);
#define ENTRY(k) {kernel_##k, k},
#define ENTRIES_10(d) ENTRY(d##0) ENTRY(d##1) ENTRY(d##2) ENTRY(d##3) ENTRY(d##4) \
                      ENTRY(d##5) ENTRY(d##6) ENTRY(d##7) ENTRY(d##8) ENTRY(d##9)
struct Entry {
  Kernel kernel;
  int k;
};
const Entry entries[] = {ENTRIES_10(1) ENTRIES_10(2) ENTRIES_10(3) ENTRIES_10(4) ENTRIES_10(5)
                             ENTRIES_10(6)};

float expected(int k, float x, int i) {
  float sum = 0.0f;
  for (int term = 0; term < (k % 5) + 2; ++term) sum = sum * x + float(k + term);
  return (i & 1) ? sum : -sum;
}

int main(int argc, char** argv) {
  const int kernels = sizeof entries / sizeof entries[0];
  const int count = argc > 1 ? std::atoi(argv[1]) : kernels;
  if (count < 0 || count > kernels) {
    std::printf("usage: many_kernels [COUNT from 0 to %d]\n", kernels);
    return 2;
  }
  const int n = 1024;
  std::vector<float> input(n), output(n);
  for (int i = 0; i < n; ++i) input[i] = float(i % 7) * 0.25f;
  float *device_in, *device_out;
  if (cudaMalloc(&device_in, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&device_out, n * sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(device_in, input.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  int failures = 0;
  double first_launch_ms = 0;
  auto all_start = std::chrono::steady_clock::now();
  for (int index = 0; index < count; ++index) {
    const Entry& entry = entries[index];
    auto start = std::chrono::steady_clock::now();
    entry.kernel<<<n / 128, 128>>>(device_in, device_out, n);
    cudaError_t status = cudaDeviceSynchronize();
    if (index == 0)
      first_launch_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    cudaMemcpy(output.data(), device_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n && status == cudaSuccess; ++i)
      if (std::abs(output[i] - expected(entry.k, input[i], i)) > 1e-3f * (1 + std::abs(output[i]))) {
        ++failures;
        break;
      }
    if (status != cudaSuccess) ++failures;
  }
  double all_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - all_start).count();
  std::printf("many_kernels: %d of %d kernels, %d wrong, first launch %.1f ms, all launches %.1f ms\n",
              count, kernels, failures, first_launch_ms, all_ms);
  return failures ? 1 : 0;
}
