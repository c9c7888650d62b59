// y = a*x + y in single precision. The first run uses values whose products and sums are exact
// in float, so the result must match bit for bit whether or not the compiler fuses the
// multiply-add; the second uses arbitrary values and compares against fmaf with a tolerance.
#include "check.h"

#include <cmath>
#include <vector>

__global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

int main() {
  const int n = (1 << 20) + 7;
  std::vector<float> x(n), y(n), want(n), got(n);
  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));

  // Run 1: exact arithmetic, one thread per element.
  const float a1 = 2.5f;
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.25f;
    y[i] = static_cast<float>(i % 777) - 300.0f;
    want[i] = a1 * x[i] + y[i];
  }
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  saxpy<<<(n + 255) / 256, 256>>>(n, a1, dx, dy);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("saxpy exact", got.data(), want.data(), n);

  // Run 2: arbitrary values, a grid-stride loop with fewer threads than elements.
  const float a2 = -1.7f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::cos(static_cast<float>(i) * 0.01f) * 3.0f;
    y[i] = static_cast<float>(i % 97) * 0.1f;
    want[i] = std::fmaf(a2, x[i], y[i]);
  }
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  saxpy<<<64, 128>>>(n, a2, dx, dy);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  expect_near("saxpy general", got.data(), want.data(), n, 1e-5);

  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  std::printf("saxpy: %d elements, 2 runs ok\n", n);
  return 0;
}
