// Probes how NVIDIA's Hopper tensor cores add FP8 products under wgmma (m64n8k32 .e4m3/.e5m2 into
// .f32 and .f16). Runs only on an NVIDIA GPU, so it is not part of the test suite. Each record
// gives one row of A (copied to all 64 rows), one column of B (copied to all 8 columns) and C
// (every element of D); every element of D must agree. Build and run with
//   nvcc -gencode arch=compute_90a,code=sm_90a -o probe tests/device/wgmma_fp8_probe.cu
//   python3 tests/device/wgmma_fp8_probe_inputs.py in.bin && ./probe in.bin out.bin
// and run the same program under xcuda (built with code=compute_90a, XCUDA_CC=9.0) to compare.
// On an H200 (driver 580.159.04, 2026-12-06) all 240,480 results equalled xcuda's, whose model
// (ptx/lower/tensor_core.cpp, Adder::warpgroup) was fitted to tests/cuda/warpgroup_mma.cu's
// recordings before this ran.
#include <cstdio>
#include <cstdint>
#include <vector>
struct Rec { uint32_t kind, c; uint8_t a[32], b[32]; uint32_t pad[2]; };
#define D4 "{%0, %1, %2, %3}"
#define D2 "{%0, %1}"
#define F32(T1, T2) asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.fence.sync.aligned;\n" \
  "wgmma.mma_async.sync.aligned.m64n8k32.f32." T1 "." T2 " " D4 ", %4, %5, p, 1, 1;\n" \
  "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}" \
  : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "l"(ad), "l"(bd), "r"(1) : "memory")
#define F16(T1, T2) asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.fence.sync.aligned;\n" \
  "wgmma.mma_async.sync.aligned.m64n8k32.f16." T1 "." T2 " " D2 ", %2, %3, p, 1, 1;\n" \
  "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}" \
  : "+r"(d[0]), "+r"(d[1]) : "l"(ad), "l"(bd), "r"(1) : "memory")
__global__ void k(const Rec* recs, uint32_t* out, int* bad) {
  __shared__ alignas(1024) uint8_t sh[4096];
  const Rec& r = recs[blockIdx.x];
  // K-major, no swizzle: (m, k) at (m/8)*256 + (k/16)*128 + (m%8)*16 + k%16; B at 2048 the same.
  for (int i = threadIdx.x; i < 2048; i += 128) sh[i] = r.a[((i / 128) % 2) * 16 + i % 16];
  for (int i = threadIdx.x; i < 256; i += 128) sh[2048 + i] = r.b[((i / 128) % 2) * 16 + i % 16];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  unsigned base = (unsigned)__cvta_generic_to_shared(sh);
  uint64_t fields = (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
  uint64_t ad = fields | ((base & 0x3FFFF) >> 4), bd = fields | (((base + 2048) & 0x3FFFF) >> 4);
  uint32_t d[4];
  uint32_t v;
  if (r.kind < 4) {
    for (int i = 0; i < 4; ++i) d[i] = r.c;
    switch (r.kind) {
      case 0: F32("e4m3", "e4m3"); break;
      case 1: F32("e4m3", "e5m2"); break;
      case 2: F32("e5m2", "e4m3"); break;
      default: F32("e5m2", "e5m2"); break;
    }
    v = d[0];
    if (d[1] != v || d[2] != v || d[3] != v) atomicAdd(bad, 1);
  } else {
    uint32_t ch = (r.c & 0xFFFF) | (r.c << 16);
    d[0] = d[1] = ch;
    switch (r.kind) {
      case 4: F16("e4m3", "e4m3"); break;
      case 5: F16("e4m3", "e5m2"); break;
      case 6: F16("e5m2", "e4m3"); break;
      default: F16("e5m2", "e5m2"); break;
    }
    v = d[0] & 0xFFFF;
    if ((d[0] >> 16) != v || d[1] != d[0]) atomicAdd(bad, 1);
  }
  __shared__ uint32_t first;
  if (threadIdx.x == 0) first = v;
  __syncthreads();
  if (v != first) atomicAdd(bad, 1);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
  int n = sz / sizeof(Rec); std::vector<Rec> h(n); if (fread(h.data(), sizeof(Rec), n, f) != (size_t)n) return 2; fclose(f);
  Rec* dr; uint32_t* dout; int* dbad;
  cudaMalloc(&dr, sz); cudaMalloc(&dout, 4 * n); cudaMalloc(&dbad, 4); cudaMemset(dbad, 0, 4);
  cudaMemcpy(dr, h.data(), sz, cudaMemcpyHostToDevice);
  k<<<n, 128>>>(dr, dout, dbad);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<uint32_t> o(n); int bad;
  cudaMemcpy(o.data(), dout, 4 * n, cudaMemcpyDeviceToHost); cudaMemcpy(&bad, dbad, 4, cudaMemcpyDeviceToHost);
  printf("n=%d err=%s bad=%d\n", n, cudaGetErrorString(e), bad);
  f = fopen(argv[2], "wb"); fwrite(o.data(), 4, n, f); fclose(f);
  return e != cudaSuccess;
}
