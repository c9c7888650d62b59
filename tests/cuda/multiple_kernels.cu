// Several kernels launched back to back on the default stream, each consuming the previous one's
// output, with no synchronization in between except the final blocking cudaMemcpy: the results
// are only right if the launches (and the copy) run in issue order. Then a template kernel
// instantiated for int, float and double.
#include "check.h"

#include <vector>

__global__ void fill(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i * 3 - 1000;
}

__global__ void square_plus(const int* a, long long* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = static_cast<long long>(a[i]) * a[i] + i;
}

__global__ void reverse_diff(const long long* b, const int* a, long long* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = b[n - 1 - i] - a[i];
}

// Not commutative across launches: the final value depends on the order of the k's.
__global__ void step(unsigned* x, unsigned k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (x[i] * 2654435761u + k) ^ static_cast<unsigned>(i);
}

template <typename T>
__global__ void axpb(const T* in, T* out, T a, T b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * a + b;
}

template <typename T>
static void run_axpb(const char* name, int n, T a, T b) {
  std::vector<T> in(n), got(n), want(n);
  for (int i = 0; i < n; ++i) {
    in[i] = static_cast<T>(i % 1000) / static_cast<T>(2) - static_cast<T>(100);
    want[i] = in[i] * a + b;
  }
  T *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(T)));
  CHECK(cudaMalloc(&dout, n * sizeof(T)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  axpb<T><<<(n + 127) / 128, 128>>>(din, dout, a, b, n);
  // Chain a second instantiation launch that reads the first one's output.
  axpb<T><<<(n + 127) / 128, 128>>>(dout, dout, static_cast<T>(1), static_cast<T>(1), n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) want[i] = want[i] * static_cast<T>(1) + static_cast<T>(1);
  expect_equal(name, got.data(), want.data(), n);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
}

int main() {
  const int n = 100003;
  const int threads = 256, blocks = (n + threads - 1) / threads;

  // --- Chain of three kernels.
  int* da;
  long long *db, *dc;
  CHECK(cudaMalloc(&da, n * sizeof(int)));
  CHECK(cudaMalloc(&db, n * sizeof(long long)));
  CHECK(cudaMalloc(&dc, n * sizeof(long long)));
  fill<<<blocks, threads>>>(da, n);
  square_plus<<<blocks, threads>>>(da, db, n);
  reverse_diff<<<blocks, threads>>>(db, da, dc, n);
  CHECK(cudaGetLastError());
  std::vector<long long> c(n), want_c(n);
  CHECK(cudaMemcpy(c.data(), dc, n * sizeof(long long), cudaMemcpyDeviceToHost));
  {
    std::vector<int> a(n);
    std::vector<long long> b(n);
    for (int i = 0; i < n; ++i) a[i] = i * 3 - 1000;
    for (int i = 0; i < n; ++i) b[i] = static_cast<long long>(a[i]) * a[i] + i;
    for (int i = 0; i < n; ++i) want_c[i] = b[n - 1 - i] - a[i];
  }
  expect_equal("fill -> square_plus -> reverse_diff", c.data(), want_c.data(), n);

  // --- 50 order-dependent launches of one kernel, after an async memset.
  const int launches = 50;
  unsigned* dx;
  CHECK(cudaMalloc(&dx, n * sizeof(unsigned)));
  CHECK(cudaMemsetAsync(dx, 0x01, n * sizeof(unsigned)));
  for (int k = 0; k < launches; ++k) step<<<blocks, threads>>>(dx, static_cast<unsigned>(k), n);
  CHECK(cudaGetLastError());
  std::vector<unsigned> x(n), want_x(n);
  CHECK(cudaMemcpy(x.data(), dx, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    unsigned v = 0x01010101u;
    for (int k = 0; k < launches; ++k) v = (v * 2654435761u + static_cast<unsigned>(k)) ^ static_cast<unsigned>(i);
    want_x[i] = v;
  }
  expect_equal("50 ordered step launches", x.data(), want_x.data(), n);

  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dx));

  // --- Template kernel instantiations.
  run_axpb<int>("axpb<int>", n, -7, 12345);
  run_axpb<float>("axpb<float>", n, 3.0f, -7.5f);
  run_axpb<double>("axpb<double>", n, 1.25, 1e10);

  CHECK(cudaDeviceSynchronize());
  std::printf("multiple_kernels: %d elements, 3-kernel chain, %d ordered launches, axpb<int|float|double> ok\n",
              n, launches);
  return 0;
}
