// Kernels without barriers launched with blocks whose width is whole warps and blocks whose width
// is not, in turns, so that each kind runs after the other's code is loaded: the host compiles
// such kernels for blocks of whole warps only, and blocks of other widths get code of their own
// (ptx::CompileOptions::whole_warp_blocks). One kernel is elementwise over a 2D index; one adds
// to global counters with atomics (the host may start its loop over threads part way along).
// Elements no thread owns must stay as they were. Expected values are computed here.
#include "check.h"

#include <vector>

constexpr int kWidth = 700, kHeight = 37, kBins = 61;
constexpr unsigned kUntouched = 0xDEADBEEFu;

__global__ void blend(const unsigned* in, unsigned* out, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int i = y * width + x;
  out[i] = in[i] * 2654435761u + static_cast<unsigned>(x) * 3u - static_cast<unsigned>(y);
}

__global__ void count(const unsigned* in, unsigned* bins, int elements) {
  const int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  if (i < elements) atomicAdd(&bins[in[i] % kBins], in[i] & 7u);
}

int main() {
  const int elements = kWidth * kHeight;
  std::vector<unsigned> in(elements);
  for (int i = 0; i < elements; ++i) in[i] = (static_cast<unsigned>(i) * 2246822519u) ^ (static_cast<unsigned>(i) >> 3);
  std::vector<unsigned> want_out(elements), want_bins(kBins, 0);
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x) {
      const int i = y * kWidth + x;
      want_out[i] = in[i] * 2654435761u + static_cast<unsigned>(x) * 3u - static_cast<unsigned>(y);
    }
  for (int i = 0; i < elements; ++i) want_bins[in[i] % kBins] += in[i] & 7u;

  unsigned *d_in = nullptr, *d_out = nullptr, *d_bins = nullptr;
  // One more element than any thread writes: a thread past the end would change it.
  CHECK(cudaMalloc(&d_in, elements * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_out, (elements + 1) * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_bins, kBins * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), elements * sizeof(unsigned), cudaMemcpyHostToDevice));

  // Whole warps wide first, then not, then whole warps again.
  const unsigned shapes[][2] = {{64, 2}, {48, 3}, {96, 1}, {16, 16}, {32, 4}, {1, 7}, {33, 2}, {128, 1}, {80, 1}, {256, 4}};
  for (const auto& shape : shapes) {
    const dim3 block(shape[0], shape[1]);
    std::vector<unsigned> out(elements + 1, kUntouched);
    CHECK(cudaMemcpy(d_out, out.data(), out.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
    const dim3 grid((kWidth + block.x - 1) / block.x, (kHeight + block.y - 1) / block.y);
    blend<<<grid, block>>>(d_in, d_out, kWidth, kHeight);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int i = 0; i < elements; ++i)
      if (out[i] != want_out[i])
        FAIL("blend, %ux%u blocks: element (%d, %d) is %#x, want %#x", shape[0], shape[1], i % kWidth, i / kWidth, out[i], want_out[i]);
    if (out[elements] != kUntouched) FAIL("blend, %ux%u blocks: the element past the end became %#x", shape[0], shape[1], out[elements]);

    CHECK(cudaMemset(d_bins, 0, kBins * sizeof(unsigned)));
    const unsigned threads = shape[0] * shape[1], blocks = (elements + threads - 1) / threads;
    count<<<dim3(blocks, 1), block>>>(d_in, d_bins, elements);
    CHECK_LAUNCH();
    std::vector<unsigned> bins(kBins);
    CHECK(cudaMemcpy(bins.data(), d_bins, kBins * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int bin = 0; bin < kBins; ++bin)
      if (bins[bin] != want_bins[bin]) FAIL("count, %ux%u blocks: bin %d is %u, want %u", shape[0], shape[1], bin, bins[bin], want_bins[bin]);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_bins));
  std::puts("block_widths: ok");
  return 0;
}
