// The occupancy calculator. The host backend runs one block per worker at a time, and reports
// each worker as a multiprocessor holding at most max_blocks_per_multiprocessor blocks, so
// these answers size grids the way the engine really runs them.
#include "src/occupancy.h"

#include <algorithm>

#include "src/api.h"

using namespace xcuda;
using runtime::Function;

namespace xcuda::api {

int max_active_blocks_per_multiprocessor(const Function& function,
                                         const runtime::DeviceProperties& device,
                                         uint64_t block_threads, uint64_t dynamic_shared_bytes) {
  const ptx::KernelInfo& kernel = function.info();
  uint64_t thread_limit = kernel.max_threads_per_block ? kernel.max_threads_per_block
                                                       : uint64_t(device.max_threads_per_block);
  if (block_threads == 0 || block_threads > thread_limit) return 0;
  if (dynamic_shared_bytes > function.max_dynamic_shared_bytes) return 0;
  uint64_t shared_bytes = kernel.static_shared_bytes + dynamic_shared_bytes;
  if (shared_bytes > uint64_t(device.shared_memory_per_block_optin)) return 0;
  uint64_t by_threads = uint64_t(device.max_threads_per_multiprocessor) / block_threads;
  uint64_t by_shared = shared_bytes ? uint64_t(device.shared_memory_per_multiprocessor) /
                                          shared_bytes
                                    : uint64_t(device.max_blocks_per_multiprocessor);
  return static_cast<int>(std::min({by_threads, by_shared,
                                    uint64_t(device.max_blocks_per_multiprocessor)}));
}

}  // namespace xcuda::api

namespace {

const runtime::DeviceProperties& device_of(const Function& function) {
  return runtime::backend().properties(function.module().context().device());
}

CUresult check_flags(const char* function, unsigned flags) {
  XCUDA_REQUIRE((flags & ~CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE) == 0, CUDA_ERROR_INVALID_VALUE,
                fmt::format("unknown occupancy flags {:#x}", flags));
  return CUDA_SUCCESS;
}

CUresult max_active_blocks(const char* name, int* blocks, CUfunction handle, int block_size,
                           size_t dynamic_shared_bytes, unsigned flags) {
  XCUDA_REQUIRE(blocks, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_REQUIRE(block_size > 0, CUDA_ERROR_INVALID_VALUE, "block size must be positive");
  if (CUresult status = check_flags(name, flags); status != CUDA_SUCCESS) return status;
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(name, handle, function); status != CUDA_SUCCESS)
    return status;
  *blocks = api::max_active_blocks_per_multiprocessor(*function, device_of(*function),
                                                      uint64_t(block_size), dynamic_shared_bytes);
  return CUDA_SUCCESS;
}

// The block size with the most resident threads per multiprocessor, largest first on ties
// (fewer, larger blocks cost the host backend less), and the grid that fills the device.
CUresult max_potential_block_size(const char* name, int* min_grid_size, int* block_size,
                                  CUfunction handle, CUoccupancyB2DSize shared_for_block_size,
                                  size_t dynamic_shared_bytes, int block_size_limit,
                                  unsigned flags) {
  XCUDA_REQUIRE(min_grid_size && block_size, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_REQUIRE(block_size_limit >= 0, CUDA_ERROR_INVALID_VALUE, "negative block size limit");
  if (CUresult status = check_flags(name, flags); status != CUDA_SUCCESS) return status;
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(name, handle, function); status != CUDA_SUCCESS)
    return status;
  const runtime::DeviceProperties& device = device_of(*function);
  const ptx::KernelInfo& kernel = function->info();
  int limit = kernel.max_threads_per_block ? int(kernel.max_threads_per_block)
                                           : device.max_threads_per_block;
  if (block_size_limit > 0) limit = std::min(limit, block_size_limit);
  int best_size = 0;
  int best_blocks = 0;
  uint64_t best_threads = 0;
  for (int size = limit; size > 0;
       size = size % device.warp_size ? size - size % device.warp_size : size - device.warp_size) {
    size_t shared = shared_for_block_size ? shared_for_block_size(size) : dynamic_shared_bytes;
    int blocks = api::max_active_blocks_per_multiprocessor(*function, device, uint64_t(size),
                                                           shared);
    if (uint64_t(blocks) * uint64_t(size) > best_threads) {
      best_threads = uint64_t(blocks) * uint64_t(size);
      best_size = size;
      best_blocks = blocks;
    }
  }
  *block_size = best_size;
  *min_grid_size = best_blocks * device.multiprocessor_count;
  return CUDA_SUCCESS;
}

// Thread-block clusters are not supported by the host backend: one-block clusters only.
CUresult cluster_size_of(const char* name, const CUlaunchConfig* config, unsigned& size) {
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config is null");
  XCUDA_REQUIRE(config->numAttrs == 0 || config->attrs, CUDA_ERROR_INVALID_VALUE,
                "attributes are null");
  size = 1;
  for (unsigned index = 0; index < config->numAttrs; ++index)
    if (config->attrs[index].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const auto& cluster = config->attrs[index].value.clusterDim;
      size = cluster.x * cluster.y * cluster.z;
    }
  XCUDA_REQUIRE(size == 1, CUDA_ERROR_NOT_SUPPORTED,
                fmt::format("clusters of {} blocks are not supported yet", size));
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction function,
                                                                   int block_size,
                                                                   size_t dynamic_shared_bytes) {
  return max_active_blocks(__func__, blocks, function, block_size, dynamic_shared_bytes, 0);
}

XCUDA_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* blocks, CUfunction function, int block_size, size_t dynamic_shared_bytes,
    unsigned int flags) {
  return max_active_blocks(__func__, blocks, function, block_size, dynamic_shared_bytes, flags);
}

XCUDA_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size,
                                                       CUfunction function,
                                                       CUoccupancyB2DSize shared_for_block_size,
                                                       size_t dynamic_shared_bytes,
                                                       int block_size_limit) {
  return max_potential_block_size(__func__, min_grid_size, block_size, function,
                                  shared_for_block_size, dynamic_shared_bytes, block_size_limit, 0);
}

XCUDA_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
    int* min_grid_size, int* block_size, CUfunction function,
    CUoccupancyB2DSize shared_for_block_size, size_t dynamic_shared_bytes, int block_size_limit,
    unsigned int flags) {
  return max_potential_block_size(__func__, min_grid_size, block_size, function,
                                  shared_for_block_size, dynamic_shared_bytes, block_size_limit,
                                  flags);
}

XCUDA_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamic_shared_bytes,
                                                              CUfunction handle, int blocks,
                                                              int block_size) {
  XCUDA_REQUIRE(dynamic_shared_bytes, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_REQUIRE(blocks > 0 && block_size > 0, CUDA_ERROR_INVALID_VALUE,
                "block count and block size must be positive");
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  const runtime::DeviceProperties& device = device_of(*function);
  *dynamic_shared_bytes = 0;
  if (api::max_active_blocks_per_multiprocessor(*function, device, uint64_t(block_size), 0) <
      blocks)
    return CUDA_SUCCESS;
  // The most each of `blocks` resident blocks may add to the kernel's static shared memory.
  uint64_t per_block = std::min<uint64_t>(device.shared_memory_per_block_optin,
                                          uint64_t(device.shared_memory_per_multiprocessor) /
                                              uint64_t(blocks));
  uint64_t fixed = function->info().static_shared_bytes;
  *dynamic_shared_bytes = per_block > fixed ? per_block - fixed : 0;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int* cluster_size, CUfunction handle,
                                                         const CUlaunchConfig* config) {
  XCUDA_REQUIRE(cluster_size, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  XCUDA_REQUIRE(config, CUDA_ERROR_INVALID_VALUE, "config is null");
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  *cluster_size = 1;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuOccupancyMaxActiveClusters(int* clusters, CUfunction handle,
                                                   const CUlaunchConfig* config) {
  XCUDA_REQUIRE(clusters, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  unsigned cluster_size = 0;
  if (CUresult status = cluster_size_of(__func__, config, cluster_size); status != CUDA_SUCCESS)
    return status;
  Function* function = nullptr;
  if (CUresult status = api::resolve_function(__func__, handle, function); status != CUDA_SUCCESS)
    return status;
  const runtime::DeviceProperties& device = device_of(*function);
  uint64_t threads = uint64_t{config->blockDimX} * config->blockDimY * config->blockDimZ;
  *clusters = api::max_active_blocks_per_multiprocessor(*function, device, threads,
                                                        config->sharedMemBytes) *
              device.multiprocessor_count;
  return CUDA_SUCCESS;
}
