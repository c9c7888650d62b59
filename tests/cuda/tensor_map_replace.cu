// Tensor maps rewritten on the device (sm_90a): a map encoded on the host with
// cuTensorMapEncodeTiled is changed in place in global memory by tensormap.replace and handed
// to the tensor copies through fence.proxy.tensormap::generic's release and acquire; another is
// changed in shared memory and copied out by tensormap.cp_fenceproxy. Each then loads a box with
// cp.async.bulk.tensor. Expected values follow from the PTX ISA's definitions of the fields
// (the rank is given one less, elemtype 7 is .f32, fill_mode 1 the NaN fill, swizzle_mode 1 the
// 32-byte swizzle; strides in bytes, ord i of global_stride being dimension i + 1's), from the
// box layout tensor_memory_access.cu checks, and from what an H200 writes for a NaN fill (0x7ff7
// in every 16 bits). Built also for sm_90a, the only variant whose PTX has the replacements.
#include "check.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <vector>

// Tensor A: 32 rows of 64 words; tensor B: 40 rows of 48 words, rows 64 words apart.
constexpr int kColumnsA = 64, kRowsA = 32;
constexpr int kColumnsB = 48, kRowsB = 40, kPitchB = 64;
// After the replacements in global memory: B, 8-word x 8-row box taking every other row, from
// column 40, row 36 (rows 40 and 42 lie outside B and are filled).
constexpr int kBoxColumns = 8, kBoxRows = 8, kRowStep = 2, kStartColumn = 40, kStartRow = 36;
constexpr int kLoadedRows = kBoxRows / kRowStep;
static_assert(kStartColumn + kBoxColumns <= kColumnsB, "the box's columns lie inside B, its last rows outside");
// After the replacements in shared memory: A, 8-word x 16-row box under the 32-byte swizzle,
// from column 16, row 3.
constexpr int kSwizzledRows = 16, kSwizzledColumn = 16, kSwizzledRow = 3;

struct Results {
  unsigned sm90a;  // 1 where the replacements were compiled
  unsigned in_global[kLoadedRows * kBoxColumns];
  unsigned in_shared[kSwizzledRows * kBoxColumns];
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ void load_2d(const void* map, int column, int row, void* shared, uint64_t* barrier, unsigned bytes) {
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(barrier));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(destination), "l"(map), "r"(column), "r"(row), "r"(bar) : "memory");
  for (unsigned done = 0; !done;)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(bar) : "memory");
}
#endif

// The map in global memory, rewritten to describe B.
__global__ void replace_in_global(CUtensorMap* map, const unsigned* tensor_b, Results* results) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(1024) unsigned box[kLoadedRows * kBoxColumns];
  __shared__ alignas(8) uint64_t barrier;
  if (threadIdx.x == 0) {
    results->sm90a = 1;
    asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(map), "l"(tensor_b) : "memory");
    asm volatile("tensormap.replace.tile.rank.global.b1024.b32 [%0], %1;" ::"l"(map), "r"(1) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 0, %1;" ::"l"(map), "r"(kColumnsB) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;" ::"l"(map), "r"(kRowsB) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0, %1;"
                 ::"l"(map), "l"(static_cast<unsigned long long>(kPitchB * 4)) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.global.b1024.b32 [%0], 0, %1;" ::"l"(map), "r"(kBoxColumns) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.global.b1024.b32 [%0], 1, %1;" ::"l"(map), "r"(kBoxRows) : "memory");
    asm volatile("tensormap.replace.tile.element_stride.global.b1024.b32 [%0], 1, %1;" ::"l"(map), "r"(kRowStep) : "memory");
    asm volatile("tensormap.replace.tile.elemtype.global.b1024.b32 [%0], 7;" ::"l"(map) : "memory");
    asm volatile("tensormap.replace.tile.fill_mode.global.b1024.b32 [%0], 1;" ::"l"(map) : "memory");
    asm volatile("tensormap.replace.tile.interleave_layout.global.b1024.b32 [%0], 0;" ::"l"(map) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.global.b1024.b32 [%0], 0;" ::"l"(map) : "memory");
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
    load_2d(map, kStartColumn, kStartRow, box, &barrier, sizeof box);
    for (int k = 0; k < kLoadedRows * kBoxColumns; ++k) results->in_global[k] = box[k];
  }
#endif
}

// A copy of the map (a kernel parameter) rewritten in shared memory, then copied out to `out`.
__global__ void replace_in_shared(const __grid_constant__ CUtensorMap map, CUtensorMap* out, Results* results) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(128) CUtensorMap staged;
  __shared__ alignas(1024) unsigned box[kSwizzledRows * kBoxColumns];
  __shared__ alignas(8) uint64_t barrier;
  const unsigned shared_map = static_cast<unsigned>(__cvta_generic_to_shared(&staged));
  if (threadIdx.x == 0) {
    staged = map;
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(shared_map), "r"(kBoxColumns) : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(shared_map), "r"(kSwizzledRows) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 1;" ::"r"(shared_map) : "memory");
  }
  __syncwarp();
  if (threadIdx.x < 32)
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                 ::"l"(out), "r"(shared_map) : "memory");
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(out) : "memory");
    load_2d(out, kSwizzledColumn, kSwizzledRow, box, &barrier, sizeof box);
    for (int k = 0; k < kSwizzledRows * kBoxColumns; ++k) results->in_shared[k] = box[k];
  }
#else
  (void)map;
#endif
}

int main() {
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !encode) FAIL("cuTensorMapEncodeTiled was not found (%d)", static_cast<int>(found));

  std::vector<unsigned> a(kColumnsA * kRowsA), b(kPitchB * kRowsB);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned>(i) * 2654435761u;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned>(i) ^ 0xb0000000u;
  unsigned *a_device, *b_device;
  CUtensorMap *map_device, *out_device;
  Results* results_device;
  CHECK(cudaMalloc(&a_device, a.size() * 4));
  CHECK(cudaMalloc(&b_device, b.size() * 4));
  CHECK(cudaMalloc(&map_device, sizeof(CUtensorMap)));
  CHECK(cudaMalloc(&out_device, sizeof(CUtensorMap)));
  CHECK(cudaMalloc(&results_device, sizeof(Results)));
  CHECK(cudaMemset(results_device, 0, sizeof(Results)));
  CHECK(cudaMemcpy(a_device, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b_device, b.data(), b.size() * 4, cudaMemcpyHostToDevice));

  // A as u32, a 16 x 4 box, no swizzle, zero fill: every field the kernels read is replaced.
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[2] = {kColumnsA, kRowsA}, strides[1] = {kColumnsA * 4};
  const cuuint32_t box[2] = {16, 4}, steps[2] = {1, 1};
  CUresult encoded = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, a_device, dims, strides, box, steps,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (encoded != CUDA_SUCCESS) FAIL("cuTensorMapEncodeTiled answered %d", static_cast<int>(encoded));
  CHECK(cudaMemcpy(map_device, &map, sizeof map, cudaMemcpyHostToDevice));

  replace_in_global<<<1, 32>>>(map_device, b_device, results_device);
  CHECK_LAUNCH();
  replace_in_shared<<<1, 64>>>(map, out_device, results_device);
  CHECK_LAUNCH();
  static Results results;
  CHECK(cudaMemcpy(&results, results_device, sizeof results, cudaMemcpyDeviceToHost));
  if (!results.sm90a) {
    std::printf("tensor_map_replace: not built for sm_90a, nothing to check\n");
    return 0;
  }

  for (int row = 0; row < kLoadedRows; ++row)
    for (int column = 0; column < kBoxColumns; ++column) {
      const int tensor_row = kStartRow + row * kRowStep, tensor_column = kStartColumn + column;
      const unsigned want = tensor_row < kRowsB ? b[tensor_row * kPitchB + tensor_column] : 0x7ff77ff7u;
      const unsigned got = results.in_global[row * kBoxColumns + column];
      if (got != want) FAIL("replaced in global memory, box row %d column %d: 0x%08x, expected 0x%08x", row, column, got, want);
    }
  // The 32-byte swizzle: in each 32-byte row, the two 16-byte chunks trade places where bit 7 of
  // the shared-memory offset is set (the box is 1024-byte aligned).
  for (int row = 0; row < kSwizzledRows; ++row)
    for (int column = 0; column < kBoxColumns; ++column) {
      const unsigned offset = (row * kBoxColumns + column) * 4;
      const unsigned swizzled = offset ^ (((offset >> 7) & 1) << 4);
      const unsigned want = a[(kSwizzledRow + row) * kColumnsA + kSwizzledColumn + column];
      const unsigned got = results.in_shared[swizzled / 4];
      if (got != want) FAIL("replaced in shared memory, box row %d column %d: 0x%08x, expected 0x%08x", row, column, got, want);
    }
  std::printf("tensor_map_replace: tensormap.replace in global and shared memory, tensormap.cp_fenceproxy ok\n");
  CHECK(cudaFree(a_device));
  CHECK(cudaFree(b_device));
  CHECK(cudaFree(map_device));
  CHECK(cudaFree(out_device));
  CHECK(cudaFree(results_device));
  return 0;
}
