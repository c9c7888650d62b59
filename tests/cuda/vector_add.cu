// The classic: c = a + b over 2^20 floats, 384 threads per block (so the last block is partial),
// plus guard elements past the end that the bounds check must leave untouched.
#include "check.h"

#include <cmath>
#include <cstring>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  const int threads = 384;  // 2^20 is not a multiple of 384
  const int blocks = (n + threads - 1) / threads;
  const int guard = threads;  // the partial last block would write here without the bounds check

  std::vector<float> a(n), b(n), want(n), c(n + guard);
  for (int i = 0; i < n; ++i) {
    a[i] = std::sin(static_cast<float>(i)) * 100.0f;
    b[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
    want[i] = a[i] + b[i];
  }

  float *da = nullptr, *db = nullptr, *dc = nullptr;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, (n + guard) * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dc, 0xA5, (n + guard) * sizeof(float)));

  vector_add<<<blocks, threads>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(c.data(), dc, (n + guard) * sizeof(float), cudaMemcpyDeviceToHost));

  double max_error = 0.0;
  for (int i = 0; i < n; ++i) {
    double err = std::fabs(static_cast<double>(c[i]) - static_cast<double>(want[i]));
    if (!(err <= max_error)) max_error = err;  // NaN propagates into max_error
  }
  if (max_error != 0.0) {
    for (int i = 0; i < n; ++i) {
      if (c[i] != want[i]) FAIL("c[%d]: expected %.9g, got %.9g", i, want[i], c[i]);
    }
  }
  for (int i = n; i < n + guard; ++i) {
    unsigned bits;
    std::memcpy(&bits, &c[i], sizeof bits);
    if (bits != 0xA5A5A5A5u) FAIL("guard element %d past the end was overwritten: 0x%08x", i, bits);
  }

  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  std::printf("vector_add: %d elements, max error %g\n", n, max_error);
  return 0;
}
