#include "runtime/tier_up.h"

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace xcuda::runtime {
namespace {

using Job = std::function<void(const std::atomic<bool>&)>;

// One thread, since a second tier's compile competes with kernels for the cores. The job queued
// last runs first: it is for the kernel launched last, most likely the one the program is busy
// with now.
class BackgroundCompiler {
 public:
  BackgroundCompiler() {
    // A child of fork() has no compile thread, and another thread of the parent may have held
    // the locks: it starts afresh, leaving the parent's state behind unused.
    pthread_atfork(nullptr, nullptr, [] { instance().state_ = new State; });
  }
  ~BackgroundCompiler() { stop(); }

  static BackgroundCompiler& instance() {
    static BackgroundCompiler compiler;
    return compiler;
  }

  void add(Job job) {
    State& state = *state_;
    std::lock_guard lock(state.mutex);
    state.jobs.push_back(std::move(job));
    // While a stop() is under way the job waits for it to end, which starts the thread again.
    if (!state.thread.joinable() && !state.stopping) start(state);
    state.job_added.notify_one();
  }

  // Cancels the running job, waits for the thread to end, and runs the queued jobs here with
  // `stopping` set, so that each knows it was stopped. Jobs queued meanwhile (by other threads)
  // then get a thread of their own.
  void stop() {
    State& state = *state_;
    std::lock_guard stopping(state.stop_mutex);
    std::deque<Job> dropped;
    // Taken out under the lock: add() must never see the thread object while it is joined.
    std::thread running;
    {
      std::lock_guard lock(state.mutex);
      if (!state.thread.joinable()) return;
      state.stopping = true;
      dropped.swap(state.jobs);
      state.stopping_flag.store(true, std::memory_order_relaxed);
      running = std::move(state.thread);
    }
    state.job_added.notify_all();
    running.join();
    // The jobs that never started learn that they were stopped.
    for (Job& job : dropped) job(state.stopping_flag);
    std::lock_guard lock(state.mutex);
    state.stopping = false;
    state.stopping_flag.store(false, std::memory_order_relaxed);
    if (!state.jobs.empty()) start(state);
  }

 private:
  struct State {
    std::mutex stop_mutex;  // one stop() at a time
    std::mutex mutex;
    std::condition_variable job_added;
    std::deque<Job> jobs;                    // guarded by mutex
    bool stopping = false;                   // guarded by mutex
    std::atomic<bool> stopping_flag{false};  // `stopping`, for the running job
    std::thread thread;                      // guarded by mutex; started by a job
  };

  static void start(State& state) { state.thread = std::thread([&state] { run(state); }); }

  static void run(State& state) {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(state.mutex);
        state.job_added.wait(lock, [&state] { return state.stopping || !state.jobs.empty(); });
        if (state.stopping) return;
        job = std::move(state.jobs.back());
        state.jobs.pop_back();
      }
      job(state.stopping_flag);
    }
  }

  // Never freed: a forked child replaces it without touching the parent's.
  State* state_ = new State;
};

// exit() destroys the calling thread's thread_local objects before any static one, and LLVM
// builds some of its statics during a compile: one built by the background compile after the
// compiler object would be gone before ~BackgroundCompiler stopped the compile using it. So the
// thread that queues a job stops the compiles when it ends, which for the thread that calls
// exit() is before any static is destroyed.
struct StopWhenThreadEnds {
  ~StopWhenThreadEnds() { BackgroundCompiler::instance().stop(); }
};

}  // namespace

void run_in_background(std::function<void(const std::atomic<bool>& stopping)> job) {
  thread_local StopWhenThreadEnds stop_when_thread_ends;
  (void)stop_when_thread_ends;
  BackgroundCompiler::instance().add(std::move(job));
}

}  // namespace xcuda::runtime
