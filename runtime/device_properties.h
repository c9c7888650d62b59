// What a device reports about itself, in the terms cuDeviceGetAttribute and
// cudaGetDeviceProperties need. Backends fill it; the API layer maps attributes onto it.
#pragma once

#include <cstdint>
#include <string>

namespace xcuda::runtime {

struct DeviceProperties {
  std::string name;
  uint8_t uuid[16] = {};
  uint64_t total_memory = 0;
  int compute_major = 8;
  int compute_minor = 6;
  int multiprocessor_count = 1;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_block_dim[3] = {1024, 1024, 64};
  int max_grid_dim[3] = {2147483647, 65535, 65535};
  int shared_memory_per_block = 48 * 1024;
  int shared_memory_per_block_optin = 99 * 1024;
  int shared_memory_per_multiprocessor = 100 * 1024;
  int registers_per_block = 65536;
  int registers_per_multiprocessor = 65536;
  int max_threads_per_multiprocessor = 1536;
  int max_blocks_per_multiprocessor = 16;
  int clock_rate_khz = 1000000;
  int memory_clock_rate_khz = 1000000;
  int memory_bus_width = 64;
  int l2_cache_bytes = 0;
  int total_constant_memory = 64 * 1024;
  int pci_bus_id = 0;
  int pci_device_id = 0;
  int pci_domain_id = 0;
  bool integrated = false;        // shares memory with the host
  bool unified_addressing = true;
  bool managed_memory = true;
  bool concurrent_kernels = true;
  bool cooperative_launch = true;
  // cuMemCreate, cuMemMap and the rest, with POSIX file descriptor handles, and CUDA IPC of
  // memory and events.
  bool virtual_memory = false;
};

}  // namespace xcuda::runtime
