// How wgmma (sm_90a) adds FP8 products: 240,480 m64n8k32 sums of every .e4m3/.e5m2 type pair into
// .f32 and .f16, from warpgroup_fp8_sums_inputs.py (a large product and a small one every gap
// below it at every other k, with and without a second that cancels the first; random products;
// whole random dot products; C against a product or two). Each record gives one row of A (copied
// to all 64 rows), one column of B (copied to all 8 columns) and C (every element of D), so
// every element of D must agree. The results are compared with an H200's (driver 580.159.04) as
// FNV-1a hashes of 16 slices of 15,030 records, which place a difference. On an NVIDIA GPU the
// program is the probe that recorded them: a second argument names a file for the results.
//   warpgroup_fp8_sums [RECORDS [RESULTS]]
// RECORDS is warpgroup_fp8_sums.records beside the program unless named (the build writes it).
#include "check.h"

#include <string>
#include <vector>

struct Record {
  uint32_t kind;  // 0-3: .f32 from (e4m3, e4m3), (e4m3, e5m2), (e5m2, e4m3), (e5m2, e5m2); 4-7: .f16
  uint32_t c;
  uint8_t a[32], b[32];
  uint32_t padding[2];
};

constexpr int kSlices = 16;
constexpr uint32_t kRecordedHashes[kSlices] = {
    0x3b94edb6, 0x85755e2b, 0x3d929903, 0xd4ace11b, 0x2a289256, 0x682119ea, 0xe3fa8a71, 0xd62d851f,
    0x88003d99, 0xecf8afe9, 0x895e0986, 0xefdfa498, 0xb249c1d9, 0x38ee0fac, 0xd0d0e056, 0x46f967e9,
};
constexpr size_t kRecordedCount = 240480;

#define SINGLE(a, b)                                                                                   \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\twgmma.fence.sync.aligned;\n\t"        \
               "wgmma.mma_async.sync.aligned.m64n8k32.f32." a "." b " {%0, %1, %2, %3}, %4, %5, p, 1, 1;\n\t" \
               "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\t}"            \
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "l"(a_descriptor), "l"(b_descriptor), "r"(1) : "memory")
#define HALF(a, b)                                                                                     \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\twgmma.fence.sync.aligned;\n\t"        \
               "wgmma.mma_async.sync.aligned.m64n8k32.f16." a "." b " {%0, %1}, %2, %3, p, 1, 1;\n\t" \
               "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\t}"            \
               : "+r"(d[0]), "+r"(d[1]) : "l"(a_descriptor), "l"(b_descriptor), "r"(1) : "memory")

__global__ void sums(const Record* records, uint32_t* results, unsigned* disagreements, unsigned* sm90a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(1024) uint8_t shared[2048 + 256];
  __shared__ uint32_t first;
  const Record& record = records[blockIdx.x];
  // K-major without swizzle: element (m, k) at (m / 8) * 256 + (k / 16) * 128 + (m % 8) * 16 + k % 16.
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) shared[i] = record.a[(i / 128) % 2 * 16 + i % 16];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) shared[2048 + i] = record.b[(i / 128) % 2 * 16 + i % 16];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const uint64_t fields = (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);
  const uint64_t a_descriptor = fields | ((base & 0x3FFFF) >> 4);
  const uint64_t b_descriptor = fields | (((base + 2048) & 0x3FFFF) >> 4);
  uint32_t d[4], result;
  bool agree;
  if (record.kind < 4) {
    for (uint32_t& word : d) word = record.c;
    switch (record.kind) {
      case 0: SINGLE("e4m3", "e4m3"); break;
      case 1: SINGLE("e4m3", "e5m2"); break;
      case 2: SINGLE("e5m2", "e4m3"); break;
      default: SINGLE("e5m2", "e5m2"); break;
    }
    result = d[0];
    agree = d[1] == result && d[2] == result && d[3] == result;
  } else {
    d[0] = d[1] = (record.c & 0xFFFF) | (record.c << 16);
    switch (record.kind) {
      case 4: HALF("e4m3", "e4m3"); break;
      case 5: HALF("e4m3", "e5m2"); break;
      case 6: HALF("e5m2", "e4m3"); break;
      default: HALF("e5m2", "e5m2"); break;
    }
    result = d[0] & 0xFFFF;
    agree = d[0] >> 16 == result && d[1] == d[0];
  }
  if (threadIdx.x == 0) first = result;
  __syncthreads();
  if (!agree || result != first) atomicAdd(disagreements, 1);
  if (threadIdx.x == 0) {
    results[blockIdx.x] = result;
    *sm90a = 1;
  }
#else
  (void)records, (void)results, (void)disagreements, (void)sm90a;
#endif
}

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "";
  if (path.empty()) {
    char executable[4096];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length <= 0) FAIL("cannot find the program's directory");
    path = std::string(executable, length);
    path = path.substr(0, path.rfind('/') + 1) + "warpgroup_fp8_sums.records";
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) FAIL("cannot open %s", path.c_str());
  std::vector<Record> records;
  Record record;
  while (std::fread(&record, sizeof record, 1, file) == 1) records.push_back(record);
  std::fclose(file);
  const size_t count = records.size();
  if (count != kRecordedCount) FAIL("%s holds %zu records; the recording has %zu", path.c_str(), count, kRecordedCount);

  Record* records_device;
  uint32_t* results_device;
  unsigned *disagreements_device, *sm90a_device;
  CHECK(cudaMalloc(&records_device, count * sizeof(Record)));
  CHECK(cudaMalloc(&results_device, count * 4));
  CHECK(cudaMalloc(&disagreements_device, 4));
  CHECK(cudaMalloc(&sm90a_device, 4));
  CHECK(cudaMemcpy(records_device, records.data(), count * sizeof(Record), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(disagreements_device, 0, 4));
  CHECK(cudaMemset(sm90a_device, 0, 4));
  sums<<<static_cast<unsigned>(count), 128>>>(records_device, results_device, disagreements_device, sm90a_device);
  CHECK_LAUNCH();
  std::vector<uint32_t> results(count);
  unsigned disagreements = 0, sm90a = 0;
  CHECK(cudaMemcpy(results.data(), results_device, count * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&disagreements, disagreements_device, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&sm90a, sm90a_device, 4, cudaMemcpyDeviceToHost));
  if (!sm90a) {
    std::printf("warpgroup_fp8_sums: not built for sm_90a, nothing to check\n");
    return 0;
  }
  if (argc > 2) {
    FILE* out = std::fopen(argv[2], "wb");
    if (!out || std::fwrite(results.data(), 4, count, out) != count) FAIL("cannot write %s", argv[2]);
    std::fclose(out);
  }
  if (disagreements) FAIL("warpgroup_fp8_sums: %u threads' D differed from their block's", disagreements);
  const size_t per_slice = count / kSlices;
  for (int slice = 0; slice < kSlices; ++slice) {
    uint32_t hash = kFnvStart;
    for (size_t index = slice * per_slice; index < (slice + 1) * per_slice; ++index) hash = fnv1a(hash, results[index]);
    if (hash != kRecordedHashes[slice]) {
      std::fprintf(stderr, "records %zu to %zu: results hash to 0x%08x, the H200's to 0x%08x\n", slice * per_slice,
                   (slice + 1) * per_slice - 1, hash, kRecordedHashes[slice]);
      ++failures;
    }
  }
  if (failures) FAIL("warpgroup_fp8_sums: %d of %d slices differ from the H200's", failures, kSlices);
  std::printf("warpgroup_fp8_sums: %zu wgmma FP8 sums as the H200's\n", count);
  return 0;
}
