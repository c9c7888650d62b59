#include "runtime/host/host_queue.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "runtime/host/device_printf.h"
#include "runtime/host/host_kernel.h"

namespace xcuda::runtime::host {
namespace {

// Reached once by the queue that is waited for; awaited by the one that waits.
struct Signal {
  std::mutex mutex;
  std::condition_variable reached_changed;
  bool reached = false;
};

template <class T>
void fill_with(void* destination, T value, size_t count) {
  auto* bytes = static_cast<uint8_t*>(destination);
  for (size_t i = 0; i < count; ++i) std::memcpy(bytes + i * sizeof(T), &value, sizeof(T));
}

constexpr uint32_t max_block_depth = 64;

// A kernel with barriers keeps each thread's live values on the stack of the worker running the
// block (KernelInfo::host_stack_bytes_per_thread); a block that would take more than
// host_abi::block_stack_budget is refused rather than overflowing the worker.
using ptx::host_abi::block_stack_budget;

// What a GPU would refuse about a launch, if anything.
Status check_launch(const HostKernel& kernel, const LaunchShape& shape, size_t parameter_bytes,
                    uint32_t max_shared_bytes) {
  const ptx::KernelInfo& info = kernel.info();
  auto refuse = [&](ErrorCode code, const std::string& problem) {
    return make_error(code, "kernel " + info.name + ": " + problem);
  };
  uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  if (threads == 0 || blocks == 0)
    return refuse(ErrorCode::invalid_value, "a grid or block dimension is 0");
  uint32_t thread_limit =
      info.max_threads_per_block ? info.max_threads_per_block : ptx::host_abi::max_block_threads;
  if (threads > thread_limit)
    return refuse(ErrorCode::invalid_value,
                  std::to_string(threads) + " threads per block, more than the " +
                      std::to_string(thread_limit) + " allowed");
  // The block function counts on these limits (see ptx/target/host/host_target.h).
  if (shape.block[2] > max_block_depth)
    return refuse(ErrorCode::invalid_value,
                  "a block " + std::to_string(shape.block[2]) + " threads deep, more than the " +
                      std::to_string(max_block_depth) + " allowed");
  if (info.required_block[0] != 0 && !std::equal(shape.block, shape.block + 3, info.required_block))
    return refuse(ErrorCode::invalid_value,
                  "a block of " + std::to_string(shape.block[0]) + "x" +
                      std::to_string(shape.block[1]) + "x" + std::to_string(shape.block[2]) +
                      " threads, but .reqntid asks for " + std::to_string(info.required_block[0]) +
                      "x" + std::to_string(info.required_block[1]) + "x" +
                      std::to_string(info.required_block[2]));
  uint64_t shared = uint64_t{info.static_shared_bytes} + shape.dynamic_shared_bytes;
  if (shared > max_shared_bytes)
    return refuse(ErrorCode::invalid_value,
                  std::to_string(shared) + " bytes of shared memory, more than the " +
                      std::to_string(max_shared_bytes) + " a block may have");
  if (parameter_bytes < info.parameter_buffer_size)
    return refuse(ErrorCode::invalid_value,
                  std::to_string(parameter_bytes) + " bytes of parameters, fewer than the " +
                      std::to_string(info.parameter_buffer_size) + " the kernel reads");
  if (info.host_stack_bytes_per_thread != 0) {
    uint64_t stack = (uint64_t{info.host_stack_bytes_per_thread} + 4) * threads;
    if (stack > block_stack_budget)
      return refuse(ErrorCode::launch_out_of_resources,
                    std::to_string(stack) + " bytes of per-thread state across barriers, more "
                    "than the " + std::to_string(block_stack_budget) + " a host block may keep");
  }
  return {};
}

}  // namespace

HostQueue::HostQueue(std::shared_ptr<WorkerPool> pool, uint32_t max_shared_bytes)
    : pool_(std::move(pool)), max_shared_bytes_(max_shared_bytes), thread_([this] { drain(); }) {}

HostQueue::~HostQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_one();
  thread_.join();
}

void HostQueue::copy(void* destination, const void* source, size_t bytes) {
  enqueue([=]() -> Status {
    std::memmove(destination, source, bytes);
    return {};
  });
}

void HostQueue::fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) {
  enqueue([=]() -> Status {
    switch (pattern_bytes) {
      case 1: std::memset(destination, static_cast<int>(pattern & 0xff), count); return {};
      case 2: fill_with(destination, static_cast<uint16_t>(pattern), count); return {};
      case 4: fill_with(destination, pattern, count); return {};
      default:
        return make_error(
            ErrorCode::invalid_value,
            "fill pattern of " + std::to_string(pattern_bytes) + " bytes; 1, 2 or 4 expected");
    }
  });
}

void HostQueue::launch(LoadedKernel& kernel, const LaunchShape& shape,
                       std::vector<uint8_t> parameters) {
  auto* host_kernel = dynamic_cast<HostKernel*>(&kernel);
  if (!host_kernel) {
    enqueue([]() -> Status {
      return make_error(ErrorCode::invalid_handle, "kernel was not loaded by the host backend");
    });
    return;
  }
  Status allowed = check_launch(*host_kernel, shape, parameters.size(), max_shared_bytes_);
  if (!allowed) {
    enqueue([refusal = allowed.error()]() -> Status { return refusal; });
    return;
  }
  enqueue([this, host_kernel, shape, parameters = std::move(parameters)]() -> Status {
    GridWork work;
    work.kernel_name = host_kernel->info().name;
    work.function = &host_kernel->function();
    work.parameters = parameters.data();
    work.parameter_bytes = parameters.size();
    work.shape = shape;
    work.static_shared_bytes = host_kernel->info().static_shared_bytes;
    if (host_kernel->info().uses_dynamic_stack)
      work.dynamic_stack_bytes = ptx::host_abi::dynamic_stack_header_bytes + (shape.stack_bytes + 15) / 16 * 16;
    Status status = pool_->run(work);
    flush_device_output();
    return status;
  });
}

void HostQueue::host_function(void (*function)(void*), void* user_data) {
  enqueue(
      [=]() -> Status {
        function(user_data);
        return {};
      },
      AfterFailure::run);
}

void HostQueue::wait_for(Queue& other) {
  if (&other == this) return;
  auto* other_host = dynamic_cast<HostQueue*>(&other);
  if (!other_host) {
    enqueue([]() -> Status {
      return make_error(ErrorCode::invalid_handle, "cannot wait for a queue of another backend");
    });
    return;
  }
  // Everything enqueued there so far is done: nothing to wait for. The legacy default stream
  // orders every launch after each blocking stream, so this is the common case.
  if (other_host->idle()) return;
  auto signal = std::make_shared<Signal>();
  other_host->enqueue(
      [signal]() -> Status {
        {
          std::lock_guard lock(signal->mutex);
          signal->reached = true;
        }
        signal->reached_changed.notify_all();
        return {};
      },
      AfterFailure::run);
  enqueue(
      [signal]() -> Status {
        std::unique_lock lock(signal->mutex);
        signal->reached_changed.wait(lock, [&] { return signal->reached; });
        return {};
      },
      AfterFailure::run);
}

Status HostQueue::synchronize() {
  std::unique_lock lock(mutex_);
  // Waking the queue's thread costs more than an empty kernel: the waiting thread runs what is
  // pending itself, in order, whenever the queue's thread is not running a command.
  while (!pending_.empty() || running_command_) {
    if (!running_command_) run_next(lock);
    else if (!wait_briefly_for_command(lock)) emptied_.wait(lock);
  }
  if (failure_) return *failure_;
  return {};
}

bool HostQueue::wait_briefly_for_command(std::unique_lock<std::mutex>& lock) {
  uint64_t running = commands_run_.load(std::memory_order_relaxed);
  lock.unlock();
  bool ended = yield_briefly_until(
      [&] { return commands_run_.load(std::memory_order_acquire) != running; });
  lock.lock();
  // The command may have ended after the yielding gave up and before the lock was taken again:
  // its notification is gone, so a wait now would be for a command that never comes.
  return ended || commands_run_.load(std::memory_order_relaxed) != running;
}

bool HostQueue::idle() {
  std::lock_guard lock(mutex_);
  return pending_.empty() && !running_command_;
}

void HostQueue::enqueue(std::function<Status()> work, AfterFailure after_failure) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back({std::move(work), after_failure});
  }
  work_available_.notify_one();
}

void HostQueue::drain() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [this] { return !running_command_ && (stopping_ || !pending_.empty()); });
    if (pending_.empty()) return;
    run_next(lock);
  }
}

void HostQueue::run_next(std::unique_lock<std::mutex>& lock) {
  Command command = std::move(pending_.front());
  pending_.pop_front();
  bool skip = failure_.has_value() && command.after_failure == AfterFailure::skip;
  running_command_ = true;
  lock.unlock();
  Status status;
  if (!skip) {
    try {
      status = command.work();
    } catch (const std::exception& exception) {
      status = make_error(ErrorCode::unknown, std::string("host queue: ") + exception.what());
    }
  }
  command = {};  // what the work captured goes now, not after the next command arrives
  lock.lock();
  running_command_ = false;
  commands_run_.fetch_add(1, std::memory_order_release);
  if (!status.ok() && !failure_) failure_ = status.error();
  // Either thread may run the next command: whichever is waiting.
  emptied_.notify_all();
  if (!pending_.empty() || stopping_) work_available_.notify_one();
}

}  // namespace xcuda::runtime::host
