// Device enumeration and queries: what the backend's DeviceProperties say, in the Driver API's
// shapes. Everything that has no DeviceProperties field is a constant chosen to describe a
// device that executes on the host CPU and shares its memory.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "runtime/backend.h"
#include "src/api.h"
#include "src/peer_access.h"

namespace {

using xcuda::runtime::DeviceProperties;

bool valid_device(CUdevice device) {
  return device >= 0 && device < xcuda::runtime::backend().device_count();
}

const DeviceProperties& properties(CUdevice device) {
  return xcuda::runtime::backend().properties(device);
}

// The answer to cuDeviceGetAttribute, or nothing for a value that is no attribute. The switch
// names every enumerator so that -Wswitch flags any the ABI header gains later.
std::optional<int> attribute_value(const DeviceProperties& device, CUdevice_attribute attribute) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return device.max_threads_per_block;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return device.max_block_dim[0];
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return device.max_block_dim[1];
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return device.max_block_dim[2];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return device.max_grid_dim[0];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return device.max_grid_dim[1];
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return device.max_grid_dim[2];
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return device.shared_memory_per_block;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return device.total_constant_memory;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return device.warp_size;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return device.registers_per_block;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return device.clock_rate_khz;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return device.multiprocessor_count;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return device.integrated;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return device.concurrent_kernels;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return device.pci_bus_id;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return device.pci_device_id;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return device.pci_domain_id;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return device.memory_clock_rate_khz;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return device.memory_bus_width;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return device.l2_cache_bytes;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return device.max_threads_per_multiprocessor;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return device.unified_addressing;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return device.compute_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return device.compute_minor;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      return device.shared_memory_per_multiprocessor;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      return device.registers_per_multiprocessor;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return device.managed_memory;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return device.cooperative_launch;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return device.shared_memory_per_block_optin;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      return device.max_blocks_per_multiprocessor;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return device.virtual_memory;

    // Texture and surface limits and alignments are those an sm_86 GPU reports: applications size
    // their arrays by them, and nothing on the host imposes tighter ones.
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE: return 8192;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE: return 8192;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER: return 1;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS: return 2046;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: return 268435456;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: return 65000;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: return 2097120;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: return 2046;

    // The device is the host: its memory, page tables and atomics are the CPU's own, so every
    // form of host access a GPU can offer holds trivially.
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;

    // Scheduling: copies and kernels run on worker threads the operating system time-slices,
    // with no watchdog and no exclusive modes.
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 1;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: return 0;

    // Caches and arithmetic: CPU caches hold globals and locals alike, and vector units do half
    // as many doubles as floats per instruction.
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: return 1;

    // One standalone device, not a NUMA node and not on any PCI bus of its own.
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 0;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: return CU_DEVICE_NUMA_CONFIG_NONE;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;

    // Features xcuda does not implement (yet): reporting them absent steers applications to the
    // paths that work.
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
      return CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE;
    case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return 0;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK: return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED: return 0;

    case CU_DEVICE_ATTRIBUTE_MAX: break;
  }
  return std::nullopt;
}

// An attribute that attribute_value always answers, for the entry points built on it.
int known_attribute(const DeviceProperties& device, CUdevice_attribute attribute) {
  return *attribute_value(device, attribute);
}

struct PciAddress {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
};

std::optional<unsigned> parse_hex(std::string_view text) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The forms cuDeviceGetByPCIBusId takes, all hexadecimal: domain:bus:device.function,
// domain:bus:device, bus:device.function and bus:device. nvidia-smi's eight-digit domain fits.
std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
  PciAddress address;
  if (std::size_t dot = text.rfind('.'); dot != std::string_view::npos) {
    std::optional<unsigned> function = parse_hex(text.substr(dot + 1));
    if (!function) return std::nullopt;
    address.function = *function;
    text = text.substr(0, dot);
  }
  std::size_t last_colon = text.rfind(':');
  if (last_colon == std::string_view::npos) return std::nullopt;
  std::optional<unsigned> device = parse_hex(text.substr(last_colon + 1));
  text = text.substr(0, last_colon);
  std::optional<unsigned> domain = 0;
  if (std::size_t domain_colon = text.rfind(':'); domain_colon != std::string_view::npos) {
    domain = parse_hex(text.substr(0, domain_colon));
    text = text.substr(domain_colon + 1);
  }
  std::optional<unsigned> bus = parse_hex(text);
  if (!domain || !bus || !device) return std::nullopt;
  address.domain = *domain;
  address.bus = *bus;
  address.device = *device;
  return address;
}

bool at_address(const DeviceProperties& device, const PciAddress& address) {
  // A GPU answers at function 0; other functions of its slot (audio, USB) are no CUDA devices.
  return address.function == 0 && static_cast<unsigned>(device.pci_domain_id) == address.domain &&
         static_cast<unsigned>(device.pci_bus_id) == address.bus &&
         static_cast<unsigned>(device.pci_device_id) == address.device;
}

}  // namespace

#define XCUDA_REQUIRE_INITIALIZED()                                      \
  XCUDA_REQUIRE(::xcuda::api::initialized(), CUDA_ERROR_NOT_INITIALIZED, \
                "cuInit has not been called")

// Before cuInit every query answers NOT_INITIALIZED, whatever else is wrong with it, as the real
// driver does; only then is the ordinal checked.
#define XCUDA_REQUIRE_DEVICE(device)                                              \
  do {                                                                            \
    XCUDA_REQUIRE_INITIALIZED();                                                  \
    XCUDA_REQUIRE(valid_device(device), CUDA_ERROR_INVALID_DEVICE,                \
                  fmt::format("no device {} (there are {})", device,              \
                              ::xcuda::runtime::backend().device_count()));       \
  } while (0)

#define XCUDA_REQUIRE_OUTPUT(pointer) \
  XCUDA_REQUIRE((pointer) != nullptr, CUDA_ERROR_INVALID_VALUE, #pointer " is null")

XCUDA_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  XCUDA_REQUIRE_DEVICE(ordinal);
  XCUDA_REQUIRE_OUTPUT(device);
  *device = ordinal;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  XCUDA_REQUIRE_INITIALIZED();
  XCUDA_REQUIRE_OUTPUT(count);
  *count = xcuda::runtime::backend().device_count();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(name);
  XCUDA_REQUIRE(len > 0, CUDA_ERROR_INVALID_VALUE, fmt::format("len is {}", len));
  // Like the real driver, a short buffer gets the name truncated rather than an error.
  const std::string& full = properties(dev).name;
  std::size_t copied = std::min(full.size(), static_cast<std::size_t>(len) - 1);
  std::memcpy(name, full.data(), copied);
  name[copied] = '\0';
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(uuid);
  static_assert(sizeof(uuid->bytes) == sizeof(DeviceProperties::uuid));
  std::memcpy(uuid->bytes, properties(dev).uuid, sizeof(uuid->bytes));
  return CUDA_SUCCESS;
}

// The original entry point differs from _v2 only for MIG instances, which xcuda has none of.
XCUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return cuDeviceGetUuid_v2(uuid, dev);
}

XCUDA_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(bytes);
  *bytes = properties(dev).total_memory;
  return CUDA_SUCCESS;
}

// The entry point of binaries built before sizes became size_t. A device over 4 GiB reports the
// largest size the type holds rather than one wrapped around to something small.
XCUDA_EXPORT CUresult cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(bytes);
  *bytes = static_cast<unsigned int>(std::min<uint64_t>(
      properties(dev).total_memory, std::numeric_limits<unsigned int>::max()));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(pi);
  std::optional<int> value = attribute_value(properties(dev), attrib);
  XCUDA_REQUIRE(value.has_value(), CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} is not a device attribute", static_cast<int>(attrib)));
  *pi = *value;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(major);
  XCUDA_REQUIRE_OUTPUT(minor);
  const DeviceProperties& device = properties(dev);
  *major = device.compute_major;
  *minor = device.compute_minor;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(prop);
  const DeviceProperties& device = properties(dev);
  auto read = [&](CUdevice_attribute attribute) { return known_attribute(device, attribute); };
  *prop = CUdevprop{
      .maxThreadsPerBlock = read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
      .maxThreadsDim = {read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                        read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                        read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)},
      .maxGridSize = {read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                      read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                      read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)},
      .sharedMemPerBlock = read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
      .totalConstantMemory = read(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY),
      .SIMDWidth = read(CU_DEVICE_ATTRIBUTE_WARP_SIZE),
      .memPitch = read(CU_DEVICE_ATTRIBUTE_MAX_PITCH),
      .regsPerBlock = read(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
      .clockRate = read(CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
      .textureAlign = read(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT),
  };
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(pciBusId);
  XCUDA_REQUIRE(len > 0, CUDA_ERROR_INVALID_VALUE, fmt::format("len is {}", len));
  const DeviceProperties& device = properties(dev);
  // snprintf truncates to len as the real driver does for a short buffer.
  std::snprintf(pciBusId, static_cast<std::size_t>(len), "%04x:%02x:%02x.0",
                static_cast<unsigned>(device.pci_domain_id),
                static_cast<unsigned>(device.pci_bus_id),
                static_cast<unsigned>(device.pci_device_id));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  XCUDA_REQUIRE_INITIALIZED();
  XCUDA_REQUIRE_OUTPUT(dev);
  XCUDA_REQUIRE_OUTPUT(pciBusId);
  std::optional<PciAddress> address = parse_pci_bus_id(pciBusId);
  XCUDA_REQUIRE(address.has_value(), CUDA_ERROR_INVALID_VALUE,
                fmt::format("'{}' is not a PCI bus id", pciBusId));
  const xcuda::runtime::Backend& backend = xcuda::runtime::backend();
  for (int ordinal = 0; ordinal < backend.device_count(); ++ordinal) {
    if (at_address(backend.properties(ordinal), *address)) {
      *dev = ordinal;
      return CUDA_SUCCESS;
    }
  }
  return xcuda::api::fail(__func__, CUDA_ERROR_INVALID_DEVICE,
                          fmt::format("no device at PCI bus id '{}'", pciBusId));
}

// Host devices are shares of one CPU and its memory: each reaches all the others' memory, with
// the CPU's own atomics. The HIP backend does not offer peer access yet. A device is never its
// own peer.
bool xcuda::api::can_access_peer(int device, int peer) {
  return device != peer && xcuda::runtime::backend().name() == "host";
}

XCUDA_EXPORT CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_DEVICE(peerDev);
  XCUDA_REQUIRE_OUTPUT(canAccessPeer);
  *canAccessPeer = xcuda::api::can_access_peer(dev, peerDev) ? 1 : 0;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib,
                                              CUdevice srcDevice, CUdevice dstDevice) {
  XCUDA_REQUIRE_DEVICE(srcDevice);
  XCUDA_REQUIRE_DEVICE(dstDevice);
  XCUDA_REQUIRE(srcDevice != dstDevice, CUDA_ERROR_INVALID_DEVICE,
                "a device has no peer link to itself");
  XCUDA_REQUIRE_OUTPUT(value);
  const bool linked = xcuda::api::can_access_peer(srcDevice, dstDevice);
  switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:  // one link, so it ranks first
    case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED:
      *value = 0;
      return CUDA_SUCCESS;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
      *value = linked ? 1 : 0;
      return CUDA_SUCCESS;
  }
  return xcuda::api::fail(__func__, CUDA_ERROR_INVALID_VALUE,
                          fmt::format("{} is not a peer attribute", static_cast<int>(attrib)));
}

// The host puts no per-format bound on a linear texture, so every format gets the width the
// device reports for 1D linear textures.
XCUDA_EXPORT CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                         CUarray_format /*format*/,
                                                         unsigned numChannels, CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(maxWidthInElements);
  XCUDA_REQUIRE(numChannels == 1 || numChannels == 2 || numChannels == 4, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} channels (1, 2 or 4 allowed)", numChannels));
  *maxWidthInElements = static_cast<size_t>(
      known_attribute(properties(dev), CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuDeviceGetExecAffinitySupport(int* pi, CUexecAffinityType type,
                                                     CUdevice dev) {
  XCUDA_REQUIRE_DEVICE(dev);
  XCUDA_REQUIRE_OUTPUT(pi);
  int type_value = static_cast<int>(type);
  XCUDA_REQUIRE(type_value >= 0 && type_value < CU_EXEC_AFFINITY_TYPE_MAX, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} is not an execution affinity type", type_value));
  // Contexts cannot be limited to a share of the workers.
  *pi = 0;
  return CUDA_SUCCESS;
}
