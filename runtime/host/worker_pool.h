// The host device's multiprocessors: persistent worker threads that run the blocks of the grids
// launched on the device. The thread that launches a grid always works on it, so a one-block
// launch wakes nobody, and every grid makes progress even while other grids (from other streams)
// keep all helpers busy: a kernel spinning on a flag that a kernel of another stream sets does
// not deadlock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "ptx/host_abi.h"
#include "runtime/backend.h"
#include "runtime/status.h"

namespace xcuda::runtime::host {

using BlockFunction = void (*)(const uint8_t* parameters, const ptx::host_abi::BlockFrame* frame);

// What a launch needs to know about the code it runs.
struct GridWork {
  std::string_view kernel_name;  // for error messages
  const std::atomic<BlockFunction>* function = nullptr;  // read again for each claim of blocks
  const uint8_t* parameters = nullptr;
  uint64_t parameter_bytes = 0;
  LaunchShape shape;
  uint32_t static_shared_bytes = 0;
  // Bytes of each thread's stack for run-time allocations, header included (BlockFrame::
  // dynamic_stack); 0 for a kernel that allocates none.
  uint64_t dynamic_stack_bytes = 0;
};

class WorkerPool {
 public:
  // `worker_count` includes the launching thread: count - 1 threads are started.
  explicit WorkerPool(unsigned worker_count);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned worker_count() const { return worker_count_; }

  // Runs every block of the grid and returns when all are done. Workers claim blocks a few at
  // a time in increasing linear order (x fastest) and run each claim in order, so a block may
  // wait for any block numbered before it. The first block to
  // fail stops blocks not yet started and its error is returned. Grids launched from several
  // threads run at the same time; idle helpers join the oldest grid that has blocks left.
  Status run(const GridWork& work);

 private:
  struct Grid;

  // Shared memory of one worker, kept between launches and grown when a launch needs more.
  class SharedMemory {
   public:
    uint8_t* reserve(size_t bytes);

   private:
    struct Free {
      void operator()(uint8_t* memory) const;
    };
    std::unique_ptr<uint8_t, Free> memory_;
    size_t capacity_ = 0;
  };

  void serve(unsigned slot);
  // A grid with blocks left that still wants helpers, oldest first; nullptr if none.
  Grid* grid_needing_help();
  void execute(Grid& grid, unsigned slot, SharedMemory& shared_memory);

  // One per helper, at slot - 1; launching threads keep theirs in thread-local storage.
  std::vector<SharedMemory> shared_memory_;
  unsigned worker_count_;

  std::atomic<uint64_t> grid_count_{0};
  std::mutex cooperative_mutex_;  // held by the one cooperative grid running

  std::mutex state_mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<Grid*> grids_;  // grids still accepting helpers, in launch order; state_mutex_
  bool stopping_ = false;    // guarded by state_mutex_

  std::vector<std::thread> threads_;
};

// Yields the calling thread's core until `done()` or some tens of microseconds have passed;
// returns whether done. Work that ends within microseconds (a small kernel, the last blocks of
// a grid) ends sooner than a thread put to sleep is woken again on a busy machine.
template <class Done>
bool yield_briefly_until(const Done& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

// The block the calling thread is running, or nullptr outside a kernel: device callbacks use it
// to say where they were called from.
const ptx::host_abi::BlockFrame* current_block_frame();

// Leaves the block the calling thread runs at once, failing its launch with `code`; blocks of
// the grid not yet started do not start. `reason` must be a string literal: this also runs in a
// signal handler. Outside a block there is nothing to leave and the process aborts.
[[noreturn]] void abandon_current_block(ErrorCode code, const char* reason);

// __xcuda_try_cancel (clusterlaunchcontrol.try_cancel): takes the grid's next block that no
// worker has claimed, which then never starts, and writes {1, x, y, z} of it to `response`; or
// {0, 0, 0, 0} when every block has been claimed, or in a cooperative grid, whose blocks wait
// for each other at grid.sync().
void try_cancel_block(uint32_t response[4]);

}  // namespace xcuda::runtime::host
