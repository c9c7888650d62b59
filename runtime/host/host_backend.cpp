#include "runtime/host/host_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "runtime/environment.h"
#include "runtime/host/host_loader.h"
#include "runtime/host/host_properties.h"
#include "runtime/host/host_queue.h"
#include "runtime/host/worker_pool.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

// cudaMalloc guarantees 256 bytes; kernels and libraries rely on it for vector access.
constexpr size_t allocation_alignment = 256;

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

HostBackend::HostBackend(const HostBackendOptions& options) {
  const unsigned device_count =
      options.device_count ? options.device_count : environment().host_devices;
  const unsigned workers = options.worker_count ? options.worker_count : usable_core_count();
  devices_.resize(device_count);
  for (unsigned index = 0; index < device_count; ++index) {
    // The cores are shared out as evenly as they go, every device getting at least one worker.
    unsigned share =
        std::max(workers / device_count + (index < workers % device_count ? 1 : 0), 1u);
    Device& device = devices_[index];
    device.properties = host::describe_host_cpu(options.compute_major, options.compute_minor,
                                                share, index);
    device.pool = std::make_shared<host::WorkerPool>(share);
    logger().debug("host device {}: {}, {} workers", index, device.properties.name, share);
  }
}

const DeviceProperties& HostBackend::properties(int device) const {
  return check_device(device) ? devices_[static_cast<size_t>(device)].properties
                              : devices_.front().properties;
}

Status HostBackend::check_device(int device) const {
  if (device >= 0 && device < device_count()) return {};
  return make_error(ErrorCode::invalid_value,
                    fmt::format("the host backend has {} device(s); device {} does not exist",
                                device_count(), device));
}

HostBackend::~HostBackend() {
  std::lock_guard lock(allocations_mutex_);
  for (auto& [pointer, allocation] : allocations_) free_allocation(pointer, allocation);
}

void HostBackend::free_allocation(void* pointer, const Allocation& allocation) {
  if (allocation.shared_descriptor >= 0) close(allocation.shared_descriptor);
  if (allocation.mapped_bytes)
    munmap(pointer, allocation.mapped_bytes);
  else
    std::free(pointer);
}

Expected<void*> HostBackend::allocate(int device, size_t bytes) {
  if (Status status = check_device(device); !status) return status.error();
  if (bytes == 0) return make_error(ErrorCode::invalid_value, "allocation of 0 bytes");
  const size_t page = page_size();
  if (bytes > SIZE_MAX - page)
    return make_error(ErrorCode::out_of_memory,
                      std::to_string(bytes) + " bytes cannot be allocated");
  // A page or more gets pages of its own, which cuIpcGetMemHandle can share; smaller blocks
  // come from the C heap, packed together.
  Allocation allocation{device, 0, -1};
  void* pointer = nullptr;
  if (bytes >= page) {
    allocation.mapped_bytes = (bytes + page - 1) / page * page;
    pointer = mmap(nullptr, allocation.mapped_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pointer == MAP_FAILED) pointer = nullptr;
  } else {
    size_t rounded =
        (bytes + allocation_alignment - 1) / allocation_alignment * allocation_alignment;
    pointer = std::aligned_alloc(allocation_alignment, rounded);
  }
  if (!pointer)
    return make_error(ErrorCode::out_of_memory,
                      "out of host memory allocating " + std::to_string(bytes) + " bytes");
  std::lock_guard lock(allocations_mutex_);
  allocations_.emplace(pointer, allocation);
  return pointer;
}

Status HostBackend::release(int device, void* pointer) {
  if (Status status = check_device(device); !status) return status;
  Allocation allocation;
  {
    std::lock_guard lock(allocations_mutex_);
    auto found = allocations_.find(pointer);
    if (found == allocations_.end() || found->second.device != device)
      return make_error(ErrorCode::invalid_value,
                        fmt::format("{} is not an allocation of device {}", pointer, device));
    allocation = found->second;
    allocations_.erase(found);
  }
  free_allocation(pointer, allocation);
  return {};
}

Expected<Backend::SharedMemory> HostBackend::share(int device, void* pointer) {
  if (Status status = check_device(device); !status) return status.error();
  std::lock_guard lock(allocations_mutex_);
  auto found = allocations_.find(pointer);
  if (found == allocations_.end() || found->second.device != device)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("{} is not an allocation of device {}", pointer, device));
  Allocation& allocation = found->second;
  if (!allocation.mapped_bytes)
    return make_error(ErrorCode::not_supported,
                      fmt::format("allocations under {} bytes cannot be shared", page_size()));
  if (allocation.shared_descriptor < 0) {
    int descriptor = memfd_create("xcuda-ipc", MFD_CLOEXEC);
    if (descriptor < 0)
      return make_error(ErrorCode::out_of_memory,
                        fmt::format("memfd_create: {}", std::strerror(errno)));
    // The contents move into the file, whose mapping then takes the pages' place.
    bool copied = ftruncate(descriptor, static_cast<off_t>(allocation.mapped_bytes)) == 0;
    for (size_t done = 0; copied && done < allocation.mapped_bytes;) {
      ssize_t written = pwrite(descriptor, static_cast<char*>(pointer) + done,
                               allocation.mapped_bytes - done, static_cast<off_t>(done));
      copied = written > 0;
      done += copied ? static_cast<size_t>(written) : 0;
    }
    if (!copied || mmap(pointer, allocation.mapped_bytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_FIXED, descriptor, 0) == MAP_FAILED) {
      std::string reason = std::strerror(errno);
      close(descriptor);
      return make_error(ErrorCode::out_of_memory,
                        fmt::format("sharing {} bytes: {}", allocation.mapped_bytes, reason));
    }
    allocation.shared_descriptor = descriptor;
  }
  return SharedMemory{allocation.shared_descriptor, allocation.mapped_bytes};
}

std::unique_ptr<Queue> HostBackend::create_queue(int device) {
  if (!check_device(device)) return nullptr;
  const Device& chosen = devices_[static_cast<size_t>(device)];
  return std::make_unique<host::HostQueue>(
      chosen.pool, static_cast<uint32_t>(chosen.properties.shared_memory_per_block_optin));
}

Expected<std::unique_ptr<LoadedModule>> HostBackend::load_module(int device,
                                                                 ptx::CompileResult compiled) {
  if (Status status = check_device(device); !status) return status.error();
  if (!compiled.ok()) {
    const ptx::Diagnostic& first = compiled.diagnostics.front();
    return make_error(ErrorCode::invalid_ptx, fmt::format("{}:{}:{}: {}", first.file, first.line,
                                                          first.column, first.message));
  }
  std::shared_ptr<host::HostLoader> loader;
  {
    std::lock_guard lock(loader_mutex_);
    if (!loader_) {
      Expected<std::shared_ptr<host::HostLoader>> created = host::HostLoader::create();
      if (!created) return created.error();
      loader_ = std::move(*created);
    }
    loader = loader_;
  }
  return loader->load(compiled);
}

std::unique_ptr<Backend> make_host_backend(const HostBackendOptions& options) {
  return std::make_unique<HostBackend>(options);
}

}  // namespace xcuda::runtime
