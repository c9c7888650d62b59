// The host backend: the machine's own CPU cores as CUDA devices, one by default or several
// splitting the cores between them (so multi-GPU code paths can run on one machine). Device
// memory is host memory (a device pointer is a host pointer, which every device can reach),
// kernels are compiled for the CPU and run a block at a time on each device's worker threads.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"

namespace xcuda::runtime {

namespace host {
class HostLoader;
class WorkerPool;
}  // namespace host

struct HostBackendOptions {
  int compute_major = 8;
  int compute_minor = 6;
  unsigned worker_count = 0;  // 0: one per core the process may run on; split among devices
  unsigned device_count = 0;  // 0: as many as XCUDA_HOST_DEVICES asks for
};

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const HostBackendOptions& options);
  ~HostBackend() override;

  std::string_view name() const override { return "host"; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  // An index out of range answers for device 0: callers check indices against device_count().
  const DeviceProperties& properties(int device) const override;

  Expected<void*> allocate(int device, size_t bytes) override;
  Status release(int device, void* pointer) override;
  // Only allocations of whole pages can be shared: their pages hold nothing else, so the
  // memfd that replaces them in place takes no other memory with it.
  Expected<SharedMemory> share(int device, void* pointer) override;

  // nullptr for a device that does not exist.
  std::unique_ptr<Queue> create_queue(int device) override;
  Expected<std::unique_ptr<LoadedModule>> load_module(int device,
                                                      ptx::CompileResult compiled) override;
  ptx::Target compile_target() const override { return ptx::Target::host; }

 private:
  struct Device {
    DeviceProperties properties;
    std::shared_ptr<host::WorkerPool> pool;
  };

  Status check_device(int device) const;

  std::vector<Device> devices_;

  struct Allocation {
    int device = 0;
    size_t mapped_bytes = 0;  // of a page-granular mapping; 0 for an aligned_alloc block
    int shared_descriptor = -1;  // the memfd behind it once shared
  };
  // Frees the memory and closes the file that `allocation` holds.
  static void free_allocation(void* pointer, const Allocation& allocation);

  std::mutex allocations_mutex_;
  std::unordered_map<void*, Allocation> allocations_;  // live allocations

  std::mutex loader_mutex_;
  std::shared_ptr<host::HostLoader> loader_;  // started by the first module load
};

std::unique_ptr<Backend> make_host_backend(const HostBackendOptions& options);

}  // namespace xcuda::runtime
