// Kernels for ptx_execution_test. kernels.ptx is this file compiled by nvcc 13 (the tests also
// compile it with other flags at build time when nvcc is present):
//   nvcc -ptx -arch=sm_80 kernels.cu -o kernels.ptx
#include <cstdio>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void triangle_sums(unsigned* out, int n) {
  unsigned sum = 0;
  for (int k = 0; k < n + (int)threadIdx.x; ++k) sum += k * (k & 3);
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

struct Pair {
  float first;
  double second;
  int values[3];
};

__device__ __noinline__ float cube(float v) { return v * v * v; }
__device__ __noinline__ Pair make_pair(Pair p, int k) {
  p.values[k % 3] += k;
  p.second *= 2.0;
  p.first += cube((float)k);
  return p;
}

extern "C" __global__ void device_calls(Pair seed, Pair* out) {
  int i = threadIdx.x;
  out[i] = make_pair(seed, i);
}

extern "C" __global__ void grid_2d(float* m, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) m[y * width + x] = x * 1000 + y;
}

__constant__ float coefficients[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int counter = 5;

extern "C" __global__ void use_globals(float* out) {
  out[threadIdx.x] = coefficients[threadIdx.x & 3] * 10.0f;
  atomicAdd(&counter, 1);
}

extern "C" __global__ void block_reduce(const float* in, float* out) {
  __shared__ float partial[256];
  unsigned t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

extern "C" __global__ void reverse_dynamic(int* data) {
  extern __shared__ int scratch[];
  unsigned t = threadIdx.x;
  scratch[t] = data[t];
  __syncthreads();
  data[t] = scratch[blockDim.x - 1 - t];
}

extern "C" __global__ void say_hello(int value) {
  if (threadIdx.x == 0) printf("hello %d from block %d\n", value, blockIdx.x);
}

extern "C" __global__ void integer_ops(const int* a, const int* b, int* out) {
  int i = threadIdx.x;
  int x = a[i], y = b[i];
  unsigned ux = x, uy = y;
  out[8 * i + 0] = x / y;
  out[8 * i + 1] = x % y;
  out[8 * i + 2] = (int)(ux / uy);
  out[8 * i + 3] = __mulhi(x, y);
  out[8 * i + 4] = (int)(((long long)x * y) >> 17);
  out[8 * i + 5] = (x << (y & 31)) ^ (int)(ux >> (uy & 31)) ^ (x >> (y & 31));
  out[8 * i + 6] = __popc(ux) + __clz(x) + (int)__brev(ux);
  out[8 * i + 7] = min(x, y) * 3 + max(x, y) + abs(x);
}

extern "C" __global__ void float_ops(const float* a, const float* b, float* out, double* wide) {
  int i = threadIdx.x;
  float x = a[i], y = b[i];
  out[6 * i + 0] = x / y;
  out[6 * i + 1] = sqrtf(fabsf(x));
  out[6 * i + 2] = fmaf(x, y, 1.0f);
  out[6 * i + 3] = fminf(x, y) + fmaxf(x, y);
  out[6 * i + 4] = (float)(int)x + (float)(unsigned)fabsf(y);
  out[6 * i + 5] = __fmul_rz(x, y);
  wide[i] = (double)x * (double)y + sqrt((double)fabsf(y));
}

extern "C" __global__ void vectors_and_locals(float4* a, const float* __restrict__ table, float* out) {
  float4 q = a[threadIdx.x];
  float local[16];
  for (int k = 0; k < 16; ++k) local[k] = table[k] * k;
  q.x += local[threadIdx.x & 15];
  q.w *= 2.0f;
  a[threadIdx.x] = q;
  out[threadIdx.x] = local[(threadIdx.x * 7) & 15];
}

#define TILE 16
extern "C" __global__ void tiled_matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[TILE][TILE], b_tile[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, column = blockIdx.x * TILE + threadIdx.x;
  float sum = 0;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < n && ak < n) ? a[row * n + ak] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (column < n && bk < n) ? b[bk * n + column] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && column < n) c[row * n + column] = sum;
}

extern "C" __global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

extern "C" __global__ void inclusive_scan(int* data) {
  extern __shared__ int values[];
  int t = threadIdx.x;
  values[t] = data[t];
  for (int offset = 1; offset < blockDim.x; offset <<= 1) {
    __syncthreads();
    int addend = t >= offset ? values[t - offset] : 0;
    __syncthreads();
    values[t] += addend;
  }
  data[t] = values[t];
}
