// A CUDA stream on the host device: an in-order list of work drained by a thread of its own, so
// that enqueueing returns at once, as it does on a GPU. A thread waiting for the queue runs
// pending work itself rather than wait for the queue's thread to wake.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/backend.h"
#include "runtime/host/worker_pool.h"

namespace xcuda::runtime::host {

class HostQueue final : public Queue {
 public:
  // `max_shared_bytes`: the most shared memory, static and dynamic, one block may have.
  HostQueue(std::shared_ptr<WorkerPool> pool, uint32_t max_shared_bytes);
  // Finishes the work already enqueued first.
  ~HostQueue() override;

  void copy(void* destination, const void* source, size_t bytes) override;
  void fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) override;
  // Also checks the shape, but only as a last line of defence: CUDA reports a bad shape from
  // cuLaunchKernel itself, so the API layer must check before it enqueues. Here a bad shape
  // becomes the queue's sticky error.
  void launch(LoadedKernel& kernel, const LaunchShape& shape,
              std::vector<uint8_t> parameters) override;
  // Runs even after the queue has failed: events and waits between queues are built from host
  // functions, and skipping one would leave somebody waiting forever.
  void host_function(void (*function)(void*), void* user_data) override;
  void wait_for(Queue& other) override;
  Status synchronize() override;
  bool idle() override;

 private:
  // What a command does once the queue has failed. Data movement and kernels are skipped, as on
  // a GPU whose context is lost; ordering and host functions still run.
  enum class AfterFailure { skip, run };

  struct Command {
    std::function<Status()> work;
    AfterFailure after_failure = AfterFailure::skip;
  };

  void enqueue(std::function<Status()> work, AfterFailure after_failure = AfterFailure::skip);
  void drain();
  // Runs the first pending command; `lock` holds mutex_ before and after.
  void run_next(std::unique_lock<std::mutex>& lock);
  // While another thread runs a command: whether it ended within a short while. `lock` holds
  // mutex_ before and after, not during.
  bool wait_briefly_for_command(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<WorkerPool> pool_;
  uint32_t max_shared_bytes_;

  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable emptied_;
  std::deque<Command> pending_;   // guarded by mutex_
  bool running_command_ = false;  // guarded by mutex_
  std::atomic<uint64_t> commands_run_{0};  // written under mutex_, read without it
  bool stopping_ = false;         // guarded by mutex_
  std::optional<Error> failure_;  // the first error, guarded by mutex_

  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace xcuda::runtime::host
