// The host backend: the machine's own CPU cores as one CUDA device. Device memory is host
// memory (a device pointer is a host pointer), kernels are compiled for the CPU and run a block
// at a time on persistent worker threads.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/backend.h"

namespace xcuda::runtime {

namespace host {
class HostLoader;
class WorkerPool;
}  // namespace host

struct HostBackendOptions {
  int compute_major = 8;
  int compute_minor = 6;
  unsigned worker_count = 0;  // 0: one per core the process may run on
};

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const HostBackendOptions& options);
  ~HostBackend() override;

  std::string_view name() const override { return "host"; }
  int device_count() const override { return 1; }
  // There is one device; any index answers for it.
  const DeviceProperties& properties(int) const override { return properties_; }

  Expected<void*> allocate(int device, size_t bytes) override;
  Status release(int device, void* pointer) override;

  // nullptr for a device other than 0.
  std::unique_ptr<Queue> create_queue(int device) override;
  Expected<std::unique_ptr<LoadedModule>> load_module(int device,
                                                      ptx::CompileResult compiled) override;
  ptx::Target compile_target() const override { return ptx::Target::host; }

 private:
  DeviceProperties properties_;
  std::shared_ptr<host::WorkerPool> pool_;

  std::mutex allocations_mutex_;
  std::unordered_map<void*, size_t> allocations_;  // live allocations and their sizes

  std::mutex loader_mutex_;
  std::shared_ptr<host::HostLoader> loader_;  // started by the first module load
};

std::unique_ptr<Backend> make_host_backend(const HostBackendOptions& options);

}  // namespace xcuda::runtime
