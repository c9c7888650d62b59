// Probes how NVIDIA's tensor cores add FP8 products (mma.sync m16n8k32 .e4m3/.e5m2 into .f32 and
// .f16). Runs only on an NVIDIA GPU, so it is not part of the test suite. Each record gives one
// row of A, one column of B and C; every lane must agree on D. Build and run on the H200 with
//   nvcc -arch=sm_90 -o probe tests/device/fp8_mma_probe.cu && ./probe in.bin out.bin
// with records made by tests/device/fp8_mma_probe_inputs.py. On driver 580.159.04 (2026-12-03)
// about 550k results showed the two-pass model in ptx/lower/matrix.cpp (tensor_core_dot): the
// products with k mod 4 in {0,1} summed first, then with those in {2,3}, each pass aligned to its
// largest exponent and truncated to 25 bits.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cstring>
struct Rec { uint32_t kind, c; uint8_t a[32], b[32]; uint32_t pad[2]; };
__device__ uint32_t pack(const uint8_t* p){ return p[0] | (p[1]<<8) | (p[2]<<16) | ((uint32_t)p[3]<<24); }
#define MMA32(T1,T2) asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." T1 "." T2 ".f32 {%0,%1,%2,%3},{%4,%5,%6,%7},{%8,%9},{%10,%11,%12,%13};" \
  : "=r"(d[0]),"=r"(d[1]),"=r"(d[2]),"=r"(d[3]) : "r"(a0),"r"(a1),"r"(a2),"r"(a3),"r"(b0),"r"(b1),"r"(c),"r"(c),"r"(c),"r"(c))
#define MMA16(T1,T2) asm volatile("mma.sync.aligned.m16n8k32.row.col.f16." T1 "." T2 ".f16 {%0,%1},{%2,%3,%4,%5},{%6,%7},{%8,%9};" \
  : "=r"(d[0]),"=r"(d[1]) : "r"(a0),"r"(a1),"r"(a2),"r"(a3),"r"(b0),"r"(b1),"r"(ch),"r"(ch)); d[2]=d[0]; d[3]=d[1]
__global__ void k(const Rec* recs, int n, uint32_t* out, int* bad){
  int w = (blockIdx.x*blockDim.x+threadIdx.x)/32, l = threadIdx.x%32;
  if (w >= n) return;
  const Rec& r = recs[w];
  int t = l&3;
  uint32_t a0 = pack(r.a+t*4), a1 = a0, a2 = pack(r.a+16+t*4), a3 = a2;
  uint32_t b0 = pack(r.b+t*4), b1 = pack(r.b+16+t*4);
  uint32_t c = r.c, ch = (r.c&0xFFFF)|(r.c<<16);
  uint32_t d[4];
  switch (r.kind) {
    case 0: MMA32("e4m3","e4m3"); break;
    case 1: MMA32("e4m3","e5m2"); break;
    case 2: MMA32("e5m2","e4m3"); break;
    case 3: MMA32("e5m2","e5m2"); break;
    case 4: MMA16("e4m3","e4m3"); break;
    case 5: MMA16("e4m3","e5m2"); break;
    case 6: MMA16("e5m2","e4m3"); break;
    default: MMA16("e5m2","e5m2"); break;
  }
  uint32_t v = d[0];
  if (r.kind >= 4) { if ((d[0]&0xFFFF) != (d[0]>>16) || d[1] != d[0]) atomicAdd(bad,1); v = d[0]&0xFFFF; }
  else { if (d[1]!=d[0]||d[2]!=d[0]||d[3]!=d[0]) atomicAdd(bad,1); }
  uint32_t v0 = __shfl_sync(0xffffffff, v, 0);
  if (v != v0) atomicAdd(bad,1);
  if (l == 0) out[w] = v;
}
int main(int argc, char** argv){
  FILE* f = fopen(argv[1],"rb"); fseek(f,0,SEEK_END); long sz = ftell(f); fseek(f,0,SEEK_SET);
  int n = sz/sizeof(Rec); std::vector<Rec> h(n); fread(h.data(),sizeof(Rec),n,f); fclose(f);
  Rec* dr; uint32_t* dout; int* dbad; cudaMalloc(&dr, sz); cudaMalloc(&dout, 4*n); cudaMalloc(&dbad,4); cudaMemset(dbad,0,4);
  cudaMemcpy(dr,h.data(),sz,cudaMemcpyHostToDevice);
  k<<<(n*32+255)/256,256>>>(dr,n,dout,dbad);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<uint32_t> o(n); int bad; cudaMemcpy(o.data(),dout,4*n,cudaMemcpyDeviceToHost); cudaMemcpy(&bad,dbad,4,cudaMemcpyDeviceToHost);
  printf("n=%d err=%s bad=%d\n", n, cudaGetErrorString(e), bad);
  f = fopen(argv[2],"wb"); fwrite(o.data(),4,n,f); fclose(f);
}
