// 2D grids of 2D blocks: an elementwise op over a W x H matrix whose sizes are not multiples of
// the block shape, a naive matrix multiply without shared memory, and a 3D grid of 3D blocks in
// which every thread records its blockIdx/threadIdx/blockDim/gridDim.
#include "check.h"

#include <vector>

__global__ void elementwise(const float* a, const int* b, float* c, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int i = y * w + x;
  c[i] = a[i] * 2.0f + static_cast<float>(b[i] - x + 3 * y);
}

// C[M x N] = A[M x K] * B[K x N], all row-major.
__global__ void matmul(const float* a, const float* b, float* c, int m, int k, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n) {
    float acc = 0.0f;
    for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
    c[row * n + col] = acc;
  }
}

// Packs six values below 16 into one word, 4 bits each.
__device__ __host__ unsigned encode(unsigned bx, unsigned by, unsigned bz, unsigned tx, unsigned ty,
                                    unsigned tz) {
  return bx | (by << 4) | (bz << 8) | (tx << 12) | (ty << 16) | (tz << 20);
}

__global__ void index3d(unsigned* ids, unsigned* dims) {
  unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  ids[g] = encode(blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
  dims[g] = encode(gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y, blockDim.z);
}

int main() {
  // --- Elementwise over a 1000 x 517 matrix with 16 x 16 blocks.
  {
    const int w = 1000, h = 517;
    std::vector<float> a(w * h), c(w * h), want(w * h);
    std::vector<int> b(w * h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int i = y * w + x;
        a[i] = static_cast<float>((x * 7 + y * 13) % 101) * 0.5f;
        b[i] = (x ^ y) - 300;
        want[i] = a[i] * 2.0f + static_cast<float>(b[i] - x + 3 * y);
      }
    float *da, *dc;
    int* db;
    CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
    CHECK(cudaMalloc(&db, b.size() * sizeof(int)));
    CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xFF, c.size() * sizeof(float)));  // NaN everywhere: every cell must be written
    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    elementwise<<<grid, block>>>(da, db, dc, w, h);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    expect_equal("elementwise 1000x517", c.data(), want.data(), c.size());
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
  }

  // --- Naive matmul 67x45 * 45x83 with 8 x 8 blocks; small integer values so float sums are exact.
  {
    const int m = 67, k = 45, n = 83;
    std::vector<float> a(m * k), b(k * n), c(m * n), want(m * n);
    for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 31) % 17 - 8);
    for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 7) % 13 - 6);
    for (int r = 0; r < m; ++r)
      for (int col = 0; col < n; ++col) {
        float acc = 0.0f;
        for (int p = 0; p < k; ++p) acc += a[r * k + p] * b[p * n + col];
        want[r * n + col] = acc;
      }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
    CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
    CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dc, 0xFF, c.size() * sizeof(float)));
    dim3 block(8, 8);
    dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
    matmul<<<grid, block>>>(da, db, dc, m, k, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    expect_equal("matmul 67x45x83", c.data(), want.data(), c.size());
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
  }

  // --- 3D grid (3,4,5) of 3D blocks (4,3,2).
  {
    const dim3 grid(3, 4, 5), block(4, 3, 2);
    const unsigned total = grid.x * grid.y * grid.z * block.x * block.y * block.z;
    std::vector<unsigned> ids(total), dims(total), want_ids(total), want_dims(total);
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx)
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                unsigned bid = bx + grid.x * (by + grid.y * bz);
                unsigned tid = tx + block.x * (ty + block.y * tz);
                unsigned g = bid * (block.x * block.y * block.z) + tid;
                want_ids[g] = encode(bx, by, bz, tx, ty, tz);
                want_dims[g] = encode(grid.x, grid.y, grid.z, block.x, block.y, block.z);
              }
    unsigned *dids, *ddims;
    CHECK(cudaMalloc(&dids, total * sizeof(unsigned)));
    CHECK(cudaMalloc(&ddims, total * sizeof(unsigned)));
    CHECK(cudaMemset(dids, 0xFF, total * sizeof(unsigned)));
    CHECK(cudaMemset(ddims, 0xFF, total * sizeof(unsigned)));
    index3d<<<grid, block>>>(dids, ddims);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(ids.data(), dids, total * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(dims.data(), ddims, total * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned g = 0; g < total; ++g) {
      if (ids[g] != want_ids[g])
        FAIL("3d index: thread %u: expected ids 0x%06x, got 0x%06x", g, want_ids[g], ids[g]);
      if (dims[g] != want_dims[g])
        FAIL("3d dims: thread %u: expected 0x%06x, got 0x%06x", g, want_dims[g], dims[g]);
    }
    CHECK(cudaFree(dids));
    CHECK(cudaFree(ddims));
  }

  std::printf("grid_2d: elementwise 1000x517, matmul 67x45x83, 3d index 3x4x5 * 4x3x2 ok\n");
  return 0;
}
