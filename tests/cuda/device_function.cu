// Out-of-line __device__ functions taking int/float/double/pointer/struct-by-value arguments and
// returning a struct, a recursive one, and module-scope __device__ / __constant__ variables set
// with cudaMemcpyToSymbol (also at an offset) and read back with cudaMemcpyFromSymbol.
#include "check.h"

#include <cmath>
#include <vector>

struct Mixed {
  int i;
  char c;
  double d;
  float f;
  short s;
};

struct Pair {
  long long sum;
  double weighted;
};

struct Params {
  int bias;
  float scale;
  double offset;
  int table_len;
};

__constant__ int c_table[64];
__constant__ Params c_params;
__device__ int g_hits[256];
__device__ float g_scale = 1.5f;  // statically initialized, overwritten by the host later
__device__ unsigned long long g_magic = 0x0123456789ABCDEFull;

__device__ __noinline__ int add_mul(int a, int b, int c) { return (a + b) * c; }

__device__ __noinline__ float fpoly(float x, float y) { return x * 0.5f - y * 2.0f; }

__device__ __noinline__ double dmix(double x, int k) { return x * static_cast<double>(k) - 0.25; }

__device__ __noinline__ int load_sum(const int* p, int count) {
  int s = 0;
  for (int k = 0; k < count; ++k) s += p[k];
  return s;
}

__device__ __noinline__ Pair combine(Mixed m, int k) {
  Pair p;
  p.sum = static_cast<long long>(m.i) * k + m.c + m.s;
  p.weighted = m.d * k + static_cast<double>(m.f);
  return p;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ void bump(int* counter, int by) { atomicAdd(counter, by); }

struct Out {
  int am;
  float fp;
  double dm;
  int ls;
  long long psum;
  double pw;
  int fib;
  int table;
  double param;
};

__global__ void kernel(const int* data, Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Out o;
  o.am = add_mul(i, -3, i % 5 - 2);
  o.fp = fpoly(static_cast<float>(i), 0.125f * static_cast<float>(i % 8));
  o.dm = dmix(static_cast<double>(i) * 0.5, i % 3 - 1);
  o.ls = load_sum(data + i, 4);
  Mixed m;
  m.i = i;
  m.c = static_cast<char>(i % 100);
  m.d = 0.5 * i;
  m.f = 0.25f * static_cast<float>(i % 16);
  m.s = static_cast<short>(-i);
  Pair p = combine(m, 3);
  o.psum = p.sum;
  o.pw = p.weighted;
  o.fib = fib(i % 16);
  o.table = c_table[i % c_params.table_len] * c_params.bias + static_cast<int>(g_scale * 4.0f);
  o.param = c_params.offset + static_cast<double>(c_params.scale) * i;
  out[i] = o;
  bump(&g_hits[i % 256], 1);
  if (i == 0) g_magic = ~g_magic;
}

int main() {
  const int n = 1000;
  std::vector<int> data(n + 4);
  for (int i = 0; i < n + 4; ++i) data[i] = (i * 37) % 101 - 50;

  // Constant memory: the table in two pieces (the second at a byte offset), params in one go.
  int table[64];
  for (int k = 0; k < 64; ++k) table[k] = k * k - 100;
  CHECK(cudaMemcpyToSymbol(c_table, table, 32 * sizeof(int)));
  CHECK(cudaMemcpyToSymbol(c_table, table + 32, 32 * sizeof(int), 32 * sizeof(int)));
  Params params{7, 0.75f, -12.5, 50};
  CHECK(cudaMemcpyToSymbol(c_params, &params, sizeof params));
  float scale = 2.25f;
  CHECK(cudaMemcpyToSymbol(g_scale, &scale, sizeof scale));
  std::vector<int> hits0(256);
  for (int k = 0; k < 256; ++k) hits0[k] = k * 1000;
  CHECK(cudaMemcpyToSymbol(g_hits, hits0.data(), 256 * sizeof(int)));

  // The static initializer of a __device__ variable must be visible before any write.
  unsigned long long magic = 0;
  CHECK(cudaMemcpyFromSymbol(&magic, g_magic, sizeof magic));
  if (magic != 0x0123456789ABCDEFull) FAIL("g_magic initializer: expected 0x0123456789abcdef, got 0x%llx", magic);

  // Round trip of constant memory.
  int table_back[64];
  CHECK(cudaMemcpyFromSymbol(table_back, c_table, sizeof table_back));
  expect_equal("c_table round trip", table_back, table, 64);

  int* ddata;
  Out* dout;
  CHECK(cudaMalloc(&ddata, data.size() * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(Out)));
  CHECK(cudaMemcpy(ddata, data.data(), data.size() * sizeof(int), cudaMemcpyHostToDevice));
  kernel<<<(n + 127) / 128, 128>>>(ddata, dout, n);
  CHECK_LAUNCH();
  std::vector<Out> got(n);
  CHECK(cudaMemcpy(got.data(), dout, n * sizeof(Out), cudaMemcpyDeviceToHost));

  std::vector<int> fibs(16);
  fibs[0] = 0;
  fibs[1] = 1;
  for (int k = 2; k < 16; ++k) fibs[k] = fibs[k - 1] + fibs[k - 2];
  for (int i = 0; i < n; ++i) {
    Out w;
    w.am = (i + -3) * (i % 5 - 2);
    w.fp = static_cast<float>(i) * 0.5f - 0.125f * static_cast<float>(i % 8) * 2.0f;
    w.dm = static_cast<double>(i) * 0.5 * static_cast<double>(i % 3 - 1) - 0.25;
    w.ls = data[i] + data[i + 1] + data[i + 2] + data[i + 3];
    w.psum = static_cast<long long>(i) * 3 + static_cast<char>(i % 100) + static_cast<short>(-i);
    w.pw = 0.5 * i * 3 + static_cast<double>(0.25f * static_cast<float>(i % 16));
    w.fib = fibs[i % 16];
    w.table = table[i % params.table_len] * params.bias + static_cast<int>(scale * 4.0f);
    w.param = params.offset + static_cast<double>(params.scale) * i;
    const Out& g = got[i];
#define FIELD(f, fmt) \
  if (!(g.f == w.f)) FAIL("index %d: " #f ": expected " fmt ", got " fmt, i, w.f, g.f);
    FIELD(am, "%d")
    FIELD(fp, "%.9g")
    FIELD(dm, "%.17g")
    FIELD(ls, "%d")
    FIELD(psum, "%lld")
    FIELD(pw, "%.17g")
    FIELD(fib, "%d")
    FIELD(table, "%d")
    FIELD(param, "%.17g")
#undef FIELD
  }

  // __device__ variables written by the kernel, read back through the symbol.
  std::vector<int> hits(256);
  CHECK(cudaMemcpyFromSymbol(hits.data(), g_hits, 256 * sizeof(int)));
  std::vector<int> want_hits(256);
  for (int k = 0; k < 256; ++k) want_hits[k] = hits0[k];
  for (int i = 0; i < n; ++i) want_hits[i % 256] += 1;
  expect_equal("g_hits", hits.data(), want_hits.data(), 256);
  CHECK(cudaMemcpyFromSymbol(&magic, g_magic, sizeof magic));
  if (magic != ~0x0123456789ABCDEFull) FAIL("g_magic after kernel: expected 0x%llx, got 0x%llx", ~0x0123456789ABCDEFull, magic);
  // Read part of a symbol at an offset.
  int tail[4];
  CHECK(cudaMemcpyFromSymbol(tail, g_hits, sizeof tail, 252 * sizeof(int)));
  expect_equal("g_hits tail at offset", tail, want_hits.data() + 252, 4);
  // The symbol's device address works like any device pointer.
  int* hits_ptr = nullptr;
  CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&hits_ptr), g_hits));
  int h7 = 0;
  CHECK(cudaMemcpy(&h7, hits_ptr + 7, sizeof h7, cudaMemcpyDeviceToHost));
  if (h7 != want_hits[7]) FAIL("g_hits[7] via cudaGetSymbolAddress: expected %d, got %d", want_hits[7], h7);

  CHECK(cudaFree(ddata));
  CHECK(cudaFree(dout));
  std::printf("device_function: %d threads, noinline/recursive calls and symbols ok\n", n);
  return 0;
}
