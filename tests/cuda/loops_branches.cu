// Control flow and integer/float arithmetic per thread: loops with data-dependent trip counts
// (collatz, nested loops with break/continue, do-while), if/else chains, a switch with
// fallthrough, an early return, signed/unsigned/64-bit division and modulo including negative
// operands, shifts and bit operations. The host recomputes every value with a plain loop.
#include "check.h"

#include <climits>
#include <cmath>
#include <vector>

struct Result {
  long long collatz;   // collatz steps of i + 1
  float piece;         // piecewise function of x
  int q, r;            // signed 32-bit division / modulo with negative operands
  unsigned uq, ur;     // unsigned 32-bit division / modulo
  long long lq, lr;    // signed 64-bit division / modulo
  int sw;              // switch with fallthrough
  int nested;          // nested loops with break / continue
  int digits;          // do-while digit sum
  int bits;            // shifts, popcount loop, bit ops
  int early;           // 1 if the thread took the early return
};

__host__ __device__ long long collatz_steps(unsigned long long v) {
  long long steps = 0;
  while (v != 1) {
    if (v % 2 == 0)
      v /= 2;
    else
      v = 3 * v + 1;
    ++steps;
  }
  return steps;
}

__host__ __device__ float piecewise(float x) {
  if (x < -3.0f) {
    return x * x;
  } else if (x < -1.0f) {
    return -x;
  } else if (x < 0.0f) {
    return x * 0.5f + 1.0f;
  } else if (x < 2.0f) {
    return sqrtf(x);
  } else {
    return 1.0f / x + floorf(x);
  }
}

__host__ __device__ int switch_value(int i) {
  int v = 0;
  switch (i % 7) {
    case 0:
      v += 1;
      [[fallthrough]];
    case 1:
      v += 10;
      break;
    case 2:
      v = -i;
      break;
    case 3:
    case 4:
      v = i * 3;
      [[fallthrough]];
    case 5:
      v += 100;
      break;
    default:
      v = 7777;
  }
  return v;
}

__host__ __device__ int nested_loops(int i) {
  int s = 0;
  int outer = i % 17;
  for (int j = 0; j < outer; ++j) {
    for (int k = 0; k < j; ++k) {
      if ((j + k) & 1) continue;
      s += j * k;
      if (s > 500) break;
    }
    if (s > 700) break;
  }
  return s;
}

__host__ __device__ int digit_sum(int i) {
  int s = 0;
  int v = i;
  do {
    s += v % 10;
    v /= 10;
  } while (v != 0);
  return s;
}

__host__ __device__ int bit_mix(int i) {
  int neg = -i * 97 - 5;
  int sra = neg >> (i % 9);                         // arithmetic shift of a negative value
  unsigned srl = static_cast<unsigned>(neg) >> (i % 13);  // logical shift
  unsigned pop = 0;
  for (unsigned v = static_cast<unsigned>(i) * 2654435761u; v != 0; v &= v - 1) ++pop;
  int m = (i & 0xF0) | (i ^ 0x5A) ;
  int mn = sra < m ? sra : m;
  return static_cast<int>(srl ^ static_cast<unsigned>(sra)) + static_cast<int>(pop) * 1000 + mn +
         (i < 0 ? -i : i) % 5;
}

__host__ __device__ void compute(int i, int n, Result* r) {
  r->collatz = collatz_steps(static_cast<unsigned long long>(i) + 1);
  r->piece = piecewise(static_cast<float>(i - n / 2) * 0.01f);
  int a = (i - n / 2) * 37;
  int b = (i % 11) - 5;
  if (b == 0) {
    r->q = INT_MIN;
    r->r = INT_MAX;
  } else {
    r->q = a / b;
    r->r = a % b;
  }
  unsigned ua = static_cast<unsigned>(i) * 2246822519u;
  unsigned ub = static_cast<unsigned>(i % 29) + 1;
  r->uq = ua / ub;
  r->ur = ua % ub;
  long long la = (static_cast<long long>(i) - n / 3) * 1000003LL * 4099LL;
  long long lb = static_cast<long long>(i % 13) - 6;
  if (lb == 0) lb = -1000000007LL;
  r->lq = la / lb;
  r->lr = la % lb;
  r->sw = switch_value(i);
  r->nested = nested_loops(i);
  r->digits = digit_sum(i);
  r->bits = bit_mix(i);
  r->early = 0;
}

__global__ void loops_branches(Result* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 13 == 5) {  // early return with only part of the record written
    out[i].early = 1;
    out[i].collatz = -1;
    return;
  }
  Result r;
  compute(i, n, &r);
  out[i] = r;
}

int main() {
  const int n = 10000;
  const int threads = 128;
  std::vector<Result> got(n), want(n);
  // Host reference: a plain loop.
  for (int i = 0; i < n; ++i) {
    Result r{};
    if (i % 13 == 5) {
      r.early = 1;
      r.collatz = -1;
    } else {
      compute(i, n, &r);
    }
    want[i] = r;
  }
  // Sanity of the host reference itself (C semantics: truncation toward zero).
  if (-7 / 2 != -3 || -7 % 2 != -1 || 7 / -2 != -3 || 7 % -2 != 1) FAIL("host division semantics");

  Result* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(Result)));
  CHECK(cudaMemset(d, 0, n * sizeof(Result)));
  loops_branches<<<(n + threads - 1) / threads, threads>>>(d, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), d, n * sizeof(Result), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));

  for (int i = 0; i < n; ++i) {
    const Result& g = got[i];
    const Result& w = want[i];
#define FIELD(f, fmt)                                                                 \
  if (!(g.f == w.f))                                                                  \
    FAIL("index %d: field " #f ": expected " fmt ", got " fmt, i, w.f, g.f);
    FIELD(early, "%d")
    FIELD(collatz, "%lld")
    if (w.early) continue;
    FIELD(q, "%d")
    FIELD(r, "%d")
    FIELD(uq, "%u")
    FIELD(ur, "%u")
    FIELD(lq, "%lld")
    FIELD(lr, "%lld")
    FIELD(sw, "%d")
    FIELD(nested, "%d")
    FIELD(digits, "%d")
    FIELD(bits, "%d")
#undef FIELD
    double gp = g.piece, wp = w.piece;
    double err = std::fabs(gp - wp);
    if (!(err <= 1e-6 * (std::fabs(wp) > 1.0 ? std::fabs(wp) : 1.0)))
      FAIL("index %d: field piece: expected %.9g, got %.9g", i, wp, gp);
  }
  std::printf("loops_branches: %d threads, all fields ok\n", n);
  return 0;
}
