// A CUDA stream on an AMD GPU: one non-blocking HIP stream. Ordering against the legacy stream is
// the runtime's business (it is built from wait_for), so HIP's own null-stream rules stay out.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "runtime/backend.h"
#include "runtime/hip/hip_library.h"

namespace xcuda::runtime::hip {

class HipQueue final : public Queue {
 public:
  // `device` is HIP's ordinal; `functions` must outlive the queue. Null when HIP refuses the
  // stream (the reason goes to the log).
  static std::unique_ptr<HipQueue> create(const HipFunctions& functions, int device);
  // Finishes the work already enqueued first.
  ~HipQueue() override;

  // Data movement and kernels are skipped once the queue has failed, as on a lost context.
  void copy(void* destination, const void* source, size_t bytes) override;
  void fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) override;
  void launch(LoadedKernel& kernel, const LaunchShape& shape,
              std::vector<uint8_t> parameters) override;
  // Runs even after the queue has failed, and at once if HIP refuses it: events and waits are
  // built from host functions, and dropping one would leave somebody waiting forever.
  void host_function(void (*function)(void*), void* user_data) override;
  void wait_for(Queue& other) override;
  Status synchronize() override;
  bool idle() override;

 private:
  HipQueue(const HipFunctions& functions, int device, HipStream stream);

  // Makes this queue's device current for the calling thread, as every HIP call needs.
  bool select_device();
  // Keeps the first failure; true when `error` is hip_success.
  bool succeeded(int error, std::string_view call);
  void fail(Error error);
  bool failed();

  const HipFunctions& functions_;
  int device_;
  HipStream stream_;
  std::mutex failure_mutex_;
  std::optional<Error> failure_;  // the first error, guarded by failure_mutex_
};

}  // namespace xcuda::runtime::hip
