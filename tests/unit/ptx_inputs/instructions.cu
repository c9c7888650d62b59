// A spread of instructions nvcc emits for ordinary code, compiled but not run by
// ptx_parser_test. instructions.ptx is this file compiled by nvcc 13:
//   nvcc -ptx -arch=sm_90 instructions.cu -o instructions.ptx
#include <cassert>
#include <cstdio>

__global__ void bits(unsigned* u, unsigned long long* l, int n) {
  int t = threadIdx.x;
  u[t] = __popc(u[t]) + __clz(u[t + 1]) + __brev(u[t + 2]) + ((u[t] & u[t + 1]) ^ (~u[t + 2] | u[t + 3]));
  l[t] = (l[t] << (n & 63)) | (l[t + 1] >> 3);
  l[t + 1] = l[t] / l[t + 2] + l[t] % 7 + (l[t] * l[t + 3]) + __umul64hi(l[t], l[t + 1]);
  u[t + 4] = __byte_perm(u[t], u[t + 1], 0x5140) + (u[t] >> 5 & 0x1f) + __funnelshift_l(u[t], u[t + 1], n);
  short s = (short)u[t];
  char c = (char)u[t + 1];
  u[t + 5] = s * c + (unsigned char)u[t + 2];
}

__global__ void fast_math(float* f, float h) {
  f[threadIdx.x] = __expf(h) + __sinf(h) + __cosf(h) + __logf(h) + rsqrtf(h) + exp2f(h) + __fdividef(h, f[1]);
}

__global__ void checks(int* data, int n) {
  assert(n > 0);
  if (threadIdx.x == 0) printf("n = %d, first = %d\n", n, data[0]);
  atomicCAS(data + 1, 0, n);
  atomicExch(data + 2, n);
  atomicInc(reinterpret_cast<unsigned*>(data + 3), 10u);
  atomicMax(data + 4, n);
}

__global__ void doubles(double* d, long long* l) {
  int t = threadIdx.x;
  d[t] = d[t] / d[t + 1] + sqrt(d[t + 2]) + fma(d[t], d[t + 1], d[t + 2]) + (double)l[t] + floor(d[t + 3]);
  l[t] = (long long)d[t] + llrint(d[t + 1]) + (l[t] >> 2) * l[t + 1];
}
