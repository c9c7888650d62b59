#include "runtime/tier_up.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace xcuda::runtime {
namespace {

// One thread: a second tier's compile competes with kernels for the cores, and one at a time
// keeps the first kernels launched first in line.
class BackgroundCompiler {
 public:
  ~BackgroundCompiler() { stop(); }

  void add(std::function<void(const std::atomic<bool>&)> job) {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    job_added_.notify_one();
  }

  // Cancels the running job, drops the queued ones and waits for the thread to end. A later
  // job starts it again.
  void stop() {
    std::lock_guard stopping(stop_mutex_);
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
      jobs_.clear();
      stopping_flag_.store(true, std::memory_order_relaxed);
    }
    job_added_.notify_all();
    thread_.join();
    std::lock_guard lock(mutex_);
    thread_ = std::thread();
    stopping_ = false;
    stopping_flag_.store(false, std::memory_order_relaxed);
  }

 private:
  void run() {
    for (;;) {
      std::function<void(const std::atomic<bool>&)> job;
      {
        std::unique_lock lock(mutex_);
        job_added_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job(stopping_flag_);
    }
  }

  std::mutex stop_mutex_;  // one stop() at a time
  std::mutex mutex_;
  std::condition_variable job_added_;
  std::deque<std::function<void(const std::atomic<bool>&)>> jobs_;  // guarded by mutex_
  bool stopping_ = false;                                          // guarded by mutex_
  std::atomic<bool> stopping_flag_{false};  // stopping_, for the running job
  std::thread thread_;                      // guarded by mutex_; started by a job
};

BackgroundCompiler& compiler() {
  static BackgroundCompiler instance;
  return instance;
}

// exit() destroys the calling thread's thread_local objects before any static one, and LLVM
// builds some of its statics during a compile: one built by the background compile after
// `instance` above would be gone before ~BackgroundCompiler stopped the compile using it. So the
// thread that queues a job stops the compiles when it ends, which for the thread that calls
// exit() is before any static is destroyed.
struct StopWhenThreadEnds {
  ~StopWhenThreadEnds() { compiler().stop(); }
};

}  // namespace

void run_in_background(std::function<void(const std::atomic<bool>& stopping)> job) {
  thread_local StopWhenThreadEnds stop_when_thread_ends;
  (void)stop_when_thread_ends;
  compiler().add(std::move(job));
}

}  // namespace xcuda::runtime
