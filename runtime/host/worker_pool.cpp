#include "runtime/host/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csetjmp>
#include <cstdlib>
#include <string>

#include "runtime/host/fault_guard.h"
#include "runtime/log.h"

namespace xcuda::runtime::host {

using ptx::host_abi::BlockFrame;

namespace {

// Where a worker returns to when the block it runs is abandoned (assertion, trap, fault).
struct BlockExecution {
  const BlockFrame* frame = nullptr;
  // Where workers claim the grid's blocks; null where blocks must not be cancelled.
  std::atomic<uint64_t>* next_block = nullptr;
  uint64_t block_count = 0;
  sigjmp_buf resume;
  ErrorCode code = ErrorCode::unknown;
  const char* reason = nullptr;
};

thread_local BlockExecution* current_execution = nullptr;

struct Interruption {
  ErrorCode code;
  const char* reason;
};

// Runs the blocks numbered [first, end) of a grid `row` blocks wide and `height` high, in order,
// each with the frame's block index set to it, until `stopped`. Returns false when a block was
// abandoned, whose index the frame then holds. Kept apart from its callers so that the frame
// sigsetjmp saves holds no object with a destructor: leaving the block by siglongjmp skips the
// JIT code's frames, which own nothing. One sigsetjmp serves a claim of blocks, and the index
// steps instead of being divided out of the block number: both cost more than a small block.
[[gnu::noinline]] bool run_blocks(BlockFunction function, const uint8_t* parameters, BlockFrame& frame, uint64_t first,
                                  uint64_t end, uint64_t row, uint64_t height, const std::atomic<bool>& stopped,
                                  std::atomic<uint64_t>* cancellable, uint64_t block_count, Interruption& interruption) {
  BlockExecution execution;
  execution.frame = &frame;
  execution.next_block = cancellable;
  execution.block_count = block_count;
  current_execution = &execution;
  // No signal mask to save: the fault handlers run with SA_NODEFER, so leaving one by
  // siglongjmp leaves the mask as it was and each claim avoids a system call.
  if (sigsetjmp(execution.resume, 0) == 0) {
    uint32_t x = static_cast<uint32_t>(first % row);
    uint32_t y = static_cast<uint32_t>(first / row % height);
    uint32_t z = static_cast<uint32_t>(first / row / height);
    for (uint64_t block = first; block < end && !stopped.load(std::memory_order_relaxed); ++block) {
      frame.block_index[0] = x;
      frame.block_index[1] = y;
      frame.block_index[2] = z;
      function(parameters, &frame);
      if (++x == row) {
        x = 0;
        if (++y == height) {
          y = 0;
          ++z;
        }
      }
    }
    current_execution = nullptr;
    return true;
  }
  current_execution = nullptr;
  interruption = {execution.code, execution.reason};
  return false;
}

// Shared-window addresses are offsets from a block's shared memory. Aligned this far, their low
// ten bits are those of the generic addresses too, so that a swizzle pattern (which repeats
// every 1024 bytes) is the same whether a program computes it from one or the other.
constexpr size_t shared_memory_alignment = 1024;

// How long a claim of blocks should last. A claim costs a few hundred nanoseconds on a kernel
// that streams through memory, whatever its size: the locked add waits for the stores still in
// flight and moves next_block's cache line between cores; claims of 32 blocks of a reduction
// (about a microsecond and a half) lost a sixth of the time to it. Much longer claims would
// leave workers idle at the end of the grid, and make a block that waits for an earlier one
// that another worker runs wait longer.
constexpr std::chrono::microseconds claim_duration{20};

using Clock = std::chrono::steady_clock;

// The size of a worker's next claim: doubled while claims end sooner than claim_duration,
// halved when blocks turn heavier and a claim lasts several times longer.
uint64_t next_claim_size(uint64_t blocks, Clock::duration took, uint64_t limit) {
  if (took < claim_duration) return std::min(blocks * 2, limit);
  if (took > 4 * claim_duration) return std::max<uint64_t>(blocks / 2, 1);
  return blocks;
}

uint64_t round_up(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

const BlockFrame* current_block_frame() {
  return current_execution ? current_execution->frame : nullptr;
}

void try_cancel_block(uint32_t response[4]) {
  std::fill(response, response + 4, 0u);
  BlockExecution* execution = current_execution;
  if (!execution || !execution->next_block) return;
  const uint64_t block = execution->next_block->fetch_add(1, std::memory_order_relaxed);
  if (block >= execution->block_count) return;
  const uint32_t* grid = execution->frame->grid_dim;
  response[0] = 1;
  response[1] = static_cast<uint32_t>(block % grid[0]);
  response[2] = static_cast<uint32_t>(block / grid[0] % grid[1]);
  response[3] = static_cast<uint32_t>(block / grid[0] / grid[1]);
}

void abandon_current_block(ErrorCode code, const char* reason) {
  BlockExecution* execution = current_execution;
  if (!execution) std::abort();
  execution->code = code;
  execution->reason = reason;
  siglongjmp(execution->resume, 1);
}

// The words of a launch that is not cooperative: all 0, so cooperative_groups finds no grid
// workspace and this_grid().is_valid() is false (NVIDIA's driver gives ordinary launches a
// workspace too once the context has made a cooperative launch; nothing documents that).
constexpr uint32_t no_environment[ptx::host_abi::environment_register_count] = {};

struct WorkerPool::Grid {
  explicit Grid(const GridWork& work) : work(work) {}

  const GridWork& work;
  ptx::host_abi::GridWorkspace workspace{sizeof(ptx::host_abi::GridWorkspace), 0, {}};
  uint32_t environment[ptx::host_abi::environment_register_count] = {};
  uint64_t block_count = 0;
  uint64_t shared_bytes = 0;
  // Each worker's memory for a block: its shared memory, then its threads' stacks for run-time
  // allocations from dynamic_stack_offset on (see BlockFrame::dynamic_stack).
  uint64_t dynamic_stack_offset = 0;
  uint64_t block_memory_bytes = 0;
  uint64_t grid_id = 0;
  std::atomic<uint64_t> next_block{0};
  // The most blocks a worker claims at once: enough claims each that the workers end together
  // (a cooperative grid: one, each block held until all have started).
  uint64_t claim_limit = 1;
  std::atomic<bool> stopped{false};  // a block failed: blocks not yet started must not start
  unsigned helpers_wanted = 0;  // helpers still to join, guarded by the pool's state_mutex_
  unsigned helpers_active = 0;  // helpers running its blocks, guarded by the pool's state_mutex_

  std::mutex failure_mutex;
  bool failed = false;  // guarded by failure_mutex
  Error failure;
};

void WorkerPool::SharedMemory::Free::operator()(uint8_t* memory) const { std::free(memory); }

uint8_t* WorkerPool::SharedMemory::reserve(size_t bytes) {
  if (bytes <= capacity_ && memory_) return memory_.get();
  size_t capacity = round_up(std::max<size_t>(bytes, 1), shared_memory_alignment);
  auto* memory = static_cast<uint8_t*>(std::aligned_alloc(shared_memory_alignment, capacity));
  if (!memory) return nullptr;
  memory_.reset(memory);
  capacity_ = capacity;
  return memory;
}

WorkerPool::WorkerPool(unsigned worker_count)
    : shared_memory_(std::max(worker_count, 1u) - 1), worker_count_(std::max(worker_count, 1u)) {
  install_fault_handlers();
  threads_.reserve(shared_memory_.size());
  for (unsigned slot = 1; slot < worker_count_; ++slot)
    threads_.emplace_back([this, slot] { serve(slot); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

Status WorkerPool::run(const GridWork& work) {
  Grid grid(work);
  grid.block_count = uint64_t{work.shape.grid[0]} * work.shape.grid[1] * work.shape.grid[2];
  // The compiler places the dynamic part after the static variables at a 16-byte boundary.
  grid.shared_bytes = round_up(work.static_shared_bytes, 16) + work.shape.dynamic_shared_bytes;
  grid.dynamic_stack_offset = round_up(grid.shared_bytes, 16);
  const uint64_t threads = uint64_t{work.shape.block[0]} * work.shape.block[1] * work.shape.block[2];
  // Far beyond any memory, and small enough that the product below cannot wrap.
  if (work.dynamic_stack_bytes > (uint64_t{1} << 40))
    return make_error(ErrorCode::out_of_memory, "kernel " + std::string(work.kernel_name) + ": a stack of " +
                                                    std::to_string(work.dynamic_stack_bytes) + " bytes per thread");
  grid.block_memory_bytes = grid.dynamic_stack_offset + threads * work.dynamic_stack_bytes;
  grid.grid_id = grid_count_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (grid.block_count == 0) return {};
  if (!work.shape.cooperative)
    grid.claim_limit = std::max<uint64_t>(grid.block_count / (uint64_t{worker_count_} * 16), 1);

  // A cooperative grid's blocks spin in grid.sync() until all have arrived, so each needs a
  // thread of its own for the whole launch: the API admits no more blocks than there are
  // workers, helpers join it as they come free and none leaves it before its last block ends.
  // Two cooperative grids at once could each hold some of the helpers the other waits for.
  std::unique_lock<std::mutex> cooperative;
  if (work.shape.cooperative) {
    if (grid.block_count > worker_count_)
      return make_error(ErrorCode::launch_out_of_resources,
                        "kernel " + std::string(work.kernel_name) + ": cooperative launch of " +
                            std::to_string(grid.block_count) + " blocks on " +
                            std::to_string(worker_count_) + " workers");
    cooperative = std::unique_lock(cooperative_mutex_);
    auto address = reinterpret_cast<uintptr_t>(&grid.workspace);
    grid.environment[1] = static_cast<uint32_t>(address >> 32);
    grid.environment[2] = static_cast<uint32_t>(address);
  }

  const auto helpers =
      static_cast<unsigned>(std::min<uint64_t>(grid.block_count - 1, threads_.size()));
  if (helpers > 0) {
    {
      std::lock_guard lock(state_mutex_);
      grid.helpers_wanted = helpers;
      grids_.push_back(&grid);
    }
    if (helpers == threads_.size()) {
      work_ready_.notify_all();
    } else {
      for (unsigned i = 0; i < helpers; ++i) work_ready_.notify_one();
    }
  }

  // Each launching thread (a stream's) has shared memory of its own: grids run side by side.
  thread_local SharedMemory launcher_shared_memory;
  prepare_thread_for_faults();
  execute(grid, 0, launcher_shared_memory);

  if (helpers > 0) {
    // A helper that has not joined yet must not join now: `grid` is about to go away.
    std::unique_lock lock(state_mutex_);
    std::erase(grids_, &grid);
    grid.helpers_wanted = 0;
    // Helpers still running are finishing their last blocks: yield to them before sleeping.
    lock.unlock();
    yield_briefly_until([&] {
      std::lock_guard check(state_mutex_);
      return grid.helpers_active == 0;
    });
    lock.lock();
    work_done_.wait(lock, [&] { return grid.helpers_active == 0; });
  }

  std::lock_guard lock(grid.failure_mutex);
  if (grid.failed) return grid.failure;
  return {};
}

WorkerPool::Grid* WorkerPool::grid_needing_help() {
  for (Grid* grid : grids_)
    if (grid->helpers_wanted > 0 &&
        grid->next_block.load(std::memory_order_relaxed) < grid->block_count)
      return grid;
  return nullptr;
}

void WorkerPool::serve(unsigned slot) {
  prepare_thread_for_faults();
  std::unique_lock lock(state_mutex_);
  for (;;) {
    Grid* grid = nullptr;
    work_ready_.wait(lock, [&] { return stopping_ || (grid = grid_needing_help()) != nullptr; });
    if (stopping_) return;
    --grid->helpers_wanted;
    ++grid->helpers_active;
    lock.unlock();
    execute(*grid, slot, shared_memory_[slot - 1]);
    lock.lock();
    if (--grid->helpers_active == 0) work_done_.notify_all();
  }
}

void WorkerPool::execute(Grid& grid, unsigned slot, SharedMemory& shared_memory) {
  const LaunchShape& shape = grid.work.shape;
  BlockFrame frame{};
  for (int axis = 0; axis < 3; ++axis) {
    frame.block_dim[axis] = shape.block[axis];
    frame.grid_dim[axis] = shape.grid[axis];
  }
  frame.dynamic_shared_bytes = shape.dynamic_shared_bytes;
  frame.shared_memory = shared_memory.reserve(grid.block_memory_bytes);
  if (grid.work.dynamic_stack_bytes != 0 && frame.shared_memory) {
    frame.dynamic_stack = frame.shared_memory + grid.dynamic_stack_offset;
    frame.dynamic_stack_bytes = grid.work.dynamic_stack_bytes;
  }
  frame.sm_index = slot;
  frame.sm_count = worker_count();
  frame.grid_id = grid.grid_id;
  frame.environment = grid.work.shape.cooperative ? grid.environment : no_environment;
  frame.parameters = grid.work.parameters;
  frame.parameter_bytes = grid.work.parameter_bytes;

  auto fail = [&](Error error) {
    // Blocks not yet started must not start; those running finish.
    grid.stopped.store(true, std::memory_order_relaxed);
    grid.next_block.store(grid.block_count, std::memory_order_relaxed);
    std::lock_guard lock(grid.failure_mutex);
    if (grid.failed) return;
    grid.failed = true;
    grid.failure = std::move(error);
  };

  if (!frame.shared_memory) {
    fail(make_error(ErrorCode::out_of_memory,
                    "kernel " + std::string(grid.work.kernel_name) + ": cannot allocate " +
                        std::to_string(grid.block_memory_bytes) + " bytes of shared memory" +
                        (grid.work.dynamic_stack_bytes != 0 ? " and thread stacks" : "")));
    return;
  }

  // Claims start small, so that a grid of few or heavy blocks is spread over the workers, and
  // grow until each lasts about claim_duration. They start blocks in order all the same. A grid
  // too small for claims of more than a block is not timed: its blocks may take less time than
  // reading the clock.
  const bool timed = grid.claim_limit > 1;
  uint64_t blocks_per_claim = 1;
  for (;;) {
    uint64_t first = grid.next_block.fetch_add(blocks_per_claim, std::memory_order_relaxed);
    if (first >= grid.block_count) return;
    const uint64_t end = std::min(first + blocks_per_claim, grid.block_count);
    const Clock::time_point start = timed ? Clock::now() : Clock::time_point{};
    Interruption interruption{};
    if (run_blocks(grid.work.function->load(std::memory_order_acquire), grid.work.parameters, frame, first, end, shape.grid[0], shape.grid[1], grid.stopped,
                   shape.cooperative ? nullptr : &grid.next_block, grid.block_count, interruption)) {
      if (grid.stopped.load(std::memory_order_relaxed)) return;
      if (timed)
        blocks_per_claim =
            next_claim_size(blocks_per_claim, Clock::now() - start, grid.claim_limit);
      continue;
    }
    std::string message = "kernel " + std::string(grid.work.kernel_name) + ", block [" +
                          std::to_string(frame.block_index[0]) + "," +
                          std::to_string(frame.block_index[1]) + "," +
                          std::to_string(frame.block_index[2]) + "]: " + interruption.reason;
    logger().error("{}", message);
    fail(make_error(interruption.code, std::move(message)));
    return;
  }
}

}  // namespace xcuda::runtime::host
