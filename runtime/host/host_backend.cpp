#include "runtime/host/host_backend.h"

#include <cstdlib>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "runtime/host/host_loader.h"
#include "runtime/host/host_properties.h"
#include "runtime/host/host_queue.h"
#include "runtime/host/worker_pool.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

// cudaMalloc guarantees 256 bytes; kernels and libraries rely on it for vector access.
constexpr size_t allocation_alignment = 256;

Status check_device(int device) {
  if (device == 0) return {};
  return make_error(ErrorCode::invalid_value, "the host backend has one device; device " +
                                                  std::to_string(device) + " does not exist");
}

}  // namespace

HostBackend::HostBackend(const HostBackendOptions& options) {
  unsigned workers = options.worker_count ? options.worker_count : host::usable_core_count();
  properties_ = host::describe_host_cpu(options.compute_major, options.compute_minor, workers);
  pool_ = std::make_shared<host::WorkerPool>(workers);
  logger().debug("host device: {}, {} workers", properties_.name, workers);
}

HostBackend::~HostBackend() {
  std::lock_guard lock(allocations_mutex_);
  for (auto& [pointer, bytes] : allocations_) std::free(pointer);
}

Expected<void*> HostBackend::allocate(int device, size_t bytes) {
  if (Status status = check_device(device); !status) return status.error();
  if (bytes == 0) return make_error(ErrorCode::invalid_value, "allocation of 0 bytes");
  if (bytes > SIZE_MAX - allocation_alignment)
    return make_error(ErrorCode::out_of_memory,
                      std::to_string(bytes) + " bytes cannot be allocated");
  size_t rounded = (bytes + allocation_alignment - 1) / allocation_alignment * allocation_alignment;
  void* pointer = std::aligned_alloc(allocation_alignment, rounded);
  if (!pointer)
    return make_error(ErrorCode::out_of_memory,
                      "out of host memory allocating " + std::to_string(bytes) + " bytes");
  std::lock_guard lock(allocations_mutex_);
  allocations_.emplace(pointer, bytes);
  return pointer;
}

Status HostBackend::release(int device, void* pointer) {
  if (Status status = check_device(device); !status) return status;
  {
    std::lock_guard lock(allocations_mutex_);
    if (allocations_.erase(pointer) == 0)
      return make_error(ErrorCode::invalid_value,
                        fmt::format("{} is not an allocation of this device", pointer));
  }
  std::free(pointer);
  return {};
}

std::unique_ptr<Queue> HostBackend::create_queue(int device) {
  if (!check_device(device)) return nullptr;
  return std::make_unique<host::HostQueue>(
      pool_, static_cast<uint32_t>(properties_.shared_memory_per_block_optin));
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
