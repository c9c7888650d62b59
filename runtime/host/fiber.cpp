#include "runtime/host/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <deque>
#include <memory>
#include <vector>

#include "runtime/host/worker_pool.h"
#include "runtime/log.h"

#if !defined(__x86_64__)
#error "the fiber context switch is written for x86-64"
#endif

// xcuda_fiber_switch(save, load): saves the callee-saved registers, the SSE and x87 control
// words and the stack pointer (into *save), then resumes the context whose stack pointer is
// `load`. Everything else is caller-saved in the System V ABI, so this is a whole switch.
// xcuda_fiber_start is where a new fiber's first switch lands: it calls r12(rbx).
extern "C" void xcuda_fiber_switch(void** save, void* load);
extern "C" void xcuda_fiber_start();
asm(R"(
  .text
  .p2align 4
  .hidden xcuda_fiber_switch
  .globl xcuda_fiber_switch
  .type xcuda_fiber_switch, @function
xcuda_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size xcuda_fiber_switch, .-xcuda_fiber_switch

  .p2align 4
  .hidden xcuda_fiber_start
  .globl xcuda_fiber_start
  .type xcuda_fiber_start, @function
xcuda_fiber_start:
  movq %rbx, %rdi
  callq *%r12
  ud2
  .size xcuda_fiber_start, .-xcuda_fiber_start
)");

namespace xcuda::runtime::host {
namespace {

using ptx::host_abi::BarrierOperation;
using ptx::host_abi::BlockFrame;

constexpr uint32_t warp_size = 32;
constexpr uint32_t barrier_count = 16;
// Room for a kernel's local arrays and for the C library's printf; touched pages only are
// backed by memory. Below each stack lies a page no one may touch, so that an overflow faults.
constexpr size_t fiber_stack_bytes = 256 * 1024;

class FiberStack {
 public:
  FiberStack() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* memory = mmap(nullptr, fiber_stack_bytes + page_, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED) return;
    memory_ = static_cast<uint8_t*>(memory);
    mprotect(memory_, page_, PROT_NONE);
  }
  ~FiberStack() {
    if (memory_) munmap(memory_, fiber_stack_bytes + page_);
  }
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  // 16-aligned, or nullptr when the stack could not be mapped.
  uint8_t* top() const { return memory_ ? memory_ + page_ + fiber_stack_bytes : nullptr; }

 private:
  uint8_t* memory_ = nullptr;
  size_t page_ = 0;
};

struct Fiber {
  FiberStack stack;
  void* stack_pointer = nullptr;
  uint32_t index[3] = {};
  // Set when what the fiber waits for happened while it was running itself (it completed the
  // barrier or warp group), so it need not suspend.
  bool released = false;
  BarrierOperation operation = BarrierOperation::sync;
  uint32_t result = 0;  // of its last barrier reduction, or its last warp group as a lane mask
  std::array<uint64_t, warp_size> view{};  // the offers of its last warp group, by lane
};

struct Barrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;  // 0: every thread that has not exited
  uint32_t votes = 0;     // arrivals with a non-zero value
  std::vector<Fiber*> waiting;
};

struct Warp {
  uint32_t live = 0;     // lanes that exist and have not exited
  uint32_t waiting = 0;  // lanes waiting at a collective
  std::array<uint32_t, warp_size> members{};
  std::array<uint64_t, warp_size> offers{};
};

// One per host thread that runs blocks; fibers and their stacks stay for the next block.
class BlockScheduler {
 public:
  void run(const uint8_t* parameters, const BlockFrame* frame, FiberThreadFunction thread);
  uint32_t barrier(uint32_t id, uint32_t thread_count, uint32_t operation, uint32_t value);
  uint32_t warp_exchange(uint64_t offer, uint32_t members);
  uint64_t warp_peer(uint32_t lane) const { return current_->view[lane % warp_size]; }

 private:
  [[noreturn]] static void fiber_main(void* fiber);
  void start(Fiber& fiber);
  void finish();
  void suspend();
  // Suspends the current fiber until something wakes it.
  void wait();
  void wake(Fiber& fiber);
  void complete_if_reached(Barrier& barrier);
  void release_complete_groups(uint32_t warp_index);
  uint32_t linear_index(const Fiber& fiber) const;

  std::vector<std::unique_ptr<Fiber>> fibers_;  // the first thread_count_ run this block
  uint32_t thread_count_ = 0;
  uint32_t live_threads_ = 0;
  std::deque<Fiber*> ready_;
  Fiber* current_ = nullptr;
  void* scheduler_stack_pointer_ = nullptr;
  std::array<Barrier, barrier_count> barriers_;
  std::vector<Warp> warps_;
  const uint8_t* parameters_ = nullptr;
  const BlockFrame* frame_ = nullptr;
  FiberThreadFunction thread_ = nullptr;
};

BlockScheduler& this_thread_scheduler() {
  thread_local BlockScheduler scheduler;
  return scheduler;
}

uint32_t lane_bit(uint32_t lane) { return 1u << lane; }

uint32_t BlockScheduler::linear_index(const Fiber& fiber) const {
  return fiber.index[0] +
         frame_->block_dim[0] * (fiber.index[1] + frame_->block_dim[1] * fiber.index[2]);
}

void BlockScheduler::fiber_main(void* argument) {
  BlockScheduler& scheduler = this_thread_scheduler();
  const Fiber& fiber = *static_cast<Fiber*>(argument);
  scheduler.thread_(scheduler.parameters_, scheduler.frame_, fiber.index[0], fiber.index[1],
                    fiber.index[2]);
  scheduler.finish();
  // finish() never comes back: nothing resumes a finished fiber.
  __builtin_unreachable();
}

// Lays out the fiber's stack as xcuda_fiber_switch leaves a suspended one, so that switching to
// it enters xcuda_fiber_start with rbx = the fiber and r12 = fiber_main.
void BlockScheduler::start(Fiber& fiber) {
  auto* slot = reinterpret_cast<uint64_t*>(fiber.stack.top());
  *--slot = 0;  // keeps rsp 16-aligned at fiber_main's call, as the ABI wants
  *--slot = 0;
  *--slot = reinterpret_cast<uint64_t>(&xcuda_fiber_start);
  *--slot = 0;                                        // rbp
  *--slot = reinterpret_cast<uint64_t>(&fiber);       // rbx
  *--slot = reinterpret_cast<uint64_t>(&fiber_main);  // r12
  *--slot = 0;                                        // r13
  *--slot = 0;                                        // r14
  *--slot = 0;                                        // r15
  *--slot = uint64_t{0x037F} << 32 | 0x1F80;          // x87 and SSE control words: defaults
  fiber.stack_pointer = slot;
  fiber.released = false;
  ready_.push_back(&fiber);
}

void BlockScheduler::run(const uint8_t* parameters, const BlockFrame* frame,
                         FiberThreadFunction thread) {
  parameters_ = parameters;
  frame_ = frame;
  thread_ = thread;
  thread_count_ = frame->block_dim[0] * frame->block_dim[1] * frame->block_dim[2];
  live_threads_ = thread_count_;
  // A block abandoned by a fault leaves this state half way; everything starts afresh.
  ready_.clear();
  current_ = nullptr;
  for (Barrier& barrier : barriers_) {
    barrier.arrived = barrier.expected = barrier.votes = 0;
    barrier.waiting.clear();
  }
  warps_.assign((thread_count_ + warp_size - 1) / warp_size, Warp{});
  for (uint32_t warp = 0; warp < warps_.size(); ++warp) {
    uint32_t lanes = std::min(warp_size, thread_count_ - warp * warp_size);
    warps_[warp].live = lanes == warp_size ? ~0u : lane_bit(lanes) - 1;
  }
  while (fibers_.size() < thread_count_) {
    fibers_.push_back(std::make_unique<Fiber>());
    if (fibers_.back()->stack.top() == nullptr) {
      fibers_.pop_back();
      abandon_current_block(ErrorCode::launch_out_of_resources,
                            "cannot map the stacks of the block's threads");
    }
  }
  uint32_t linear = 0;
  for (uint32_t z = 0; z < frame->block_dim[2]; ++z)
    for (uint32_t y = 0; y < frame->block_dim[1]; ++y)
      for (uint32_t x = 0; x < frame->block_dim[0]; ++x) {
        Fiber& fiber = *fibers_[linear++];
        fiber.index[0] = x;
        fiber.index[1] = y;
        fiber.index[2] = z;
        start(fiber);
      }
  while (!ready_.empty()) {
    current_ = ready_.front();
    ready_.pop_front();
    xcuda_fiber_switch(&scheduler_stack_pointer_, current_->stack_pointer);
  }
  current_ = nullptr;
  if (live_threads_ == 0) return;
  uint32_t at_barriers = 0;
  for (const Barrier& barrier : barriers_)
    at_barriers += static_cast<uint32_t>(barrier.waiting.size());
  logger().error(
      "block [{},{},{}]: {} of {} threads can never go on: {} wait at block barriers, {} at warp "
      "collectives whose lanes never all arrive",
      frame->block_index[0], frame->block_index[1], frame->block_index[2], live_threads_,
      thread_count_, at_barriers, live_threads_ - at_barriers);
  abandon_current_block(
      ErrorCode::launch_failed,
      "deadlock: threads wait at a barrier or warp collective that can never complete");
}

void BlockScheduler::suspend() {
  xcuda_fiber_switch(&current_->stack_pointer, scheduler_stack_pointer_);
}

void BlockScheduler::wait() {
  if (!current_->released) suspend();
  current_->released = false;
}

void BlockScheduler::wake(Fiber& fiber) {
  if (&fiber == current_)
    fiber.released = true;
  else
    ready_.push_back(&fiber);
}

// An exited thread no longer counts towards barriers of the whole block nor warp groups, which
// may now be complete (PTX: exit releases the thread from later barriers).
void BlockScheduler::finish() {
  --live_threads_;
  for (Barrier& barrier : barriers_)
    if (barrier.arrived > 0 && barrier.expected == 0) complete_if_reached(barrier);
  uint32_t linear = linear_index(*current_);
  warps_[linear / warp_size].live &= ~lane_bit(linear % warp_size);
  release_complete_groups(linear / warp_size);
  suspend();
}

void BlockScheduler::complete_if_reached(Barrier& barrier) {
  uint32_t needed = barrier.expected != 0 ? barrier.expected : live_threads_;
  if (barrier.arrived < needed) return;
  for (Fiber* fiber : barrier.waiting) {
    switch (fiber->operation) {
      case BarrierOperation::count_true: fiber->result = barrier.votes; break;
      case BarrierOperation::all_true: fiber->result = barrier.votes == barrier.arrived; break;
      case BarrierOperation::any_true: fiber->result = barrier.votes != 0; break;
      default: fiber->result = 0; break;
    }
    wake(*fiber);
  }
  barrier.arrived = barrier.expected = barrier.votes = 0;
  barrier.waiting.clear();
}

uint32_t BlockScheduler::barrier(uint32_t id, uint32_t thread_count, uint32_t operation,
                                 uint32_t value) {
  if (id >= barrier_count) {
    logger().error("block [{},{},{}]: barrier {} does not exist (0-15)", frame_->block_index[0],
                   frame_->block_index[1], frame_->block_index[2], id);
    abandon_current_block(ErrorCode::launch_failed, "barrier number out of range");
  }
  if (thread_count > thread_count_ ||
      (thread_count == 0 && operation == static_cast<uint32_t>(BarrierOperation::arrive))) {
    logger().error("block [{},{},{}]: barrier {} expects {} threads of a block of {}",
                   frame_->block_index[0], frame_->block_index[1], frame_->block_index[2], id,
                   thread_count, thread_count_);
    abandon_current_block(ErrorCode::launch_failed, "barrier thread count out of range");
  }
  Barrier& target = barriers_[id];
  ++target.arrived;
  target.expected = thread_count;
  target.votes += value != 0;
  auto kind = static_cast<BarrierOperation>(operation);
  if (kind == BarrierOperation::arrive) {
    complete_if_reached(target);
    return 0;
  }
  current_->operation = kind;
  target.waiting.push_back(current_);
  complete_if_reached(target);
  wait();
  return current_->result;
}

// A lane's group is the live lanes of its member mask, and itself. A group completes when all
// its lanes wait and every one of them names the same group: lanes of one warp waiting at
// different collectives with different masks (after a divergent branch) never mix.
void BlockScheduler::release_complete_groups(uint32_t warp_index) {
  Warp& warp = warps_[warp_index];
  auto group_of = [&](uint32_t lane) { return (warp.members[lane] & warp.live) | lane_bit(lane); };
  bool released = true;
  while (released) {
    released = false;
    for (uint32_t waiting = warp.waiting; waiting != 0; waiting &= waiting - 1) {
      uint32_t lane = static_cast<uint32_t>(std::countr_zero(waiting));
      uint32_t group = group_of(lane);
      if ((group & ~warp.waiting) != 0) continue;
      bool agreed = true;
      for (uint32_t rest = group; rest != 0 && agreed; rest &= rest - 1)
        agreed = group_of(static_cast<uint32_t>(std::countr_zero(rest))) == group;
      if (!agreed) continue;
      for (uint32_t rest = group; rest != 0; rest &= rest - 1) {
        uint32_t member = static_cast<uint32_t>(std::countr_zero(rest));
        Fiber& fiber = *fibers_[warp_index * warp_size + member];
        fiber.view = warp.offers;
        fiber.result = group;
        wake(fiber);
      }
      warp.waiting &= ~group;
      released = true;
      break;
    }
  }
}

uint32_t BlockScheduler::warp_exchange(uint64_t offer, uint32_t members) {
  uint32_t linear = linear_index(*current_);
  uint32_t lane = linear % warp_size;
  Warp& warp = warps_[linear / warp_size];
  warp.offers[lane] = offer;
  warp.members[lane] = members;
  warp.waiting |= lane_bit(lane);
  release_complete_groups(linear / warp_size);
  wait();
  return current_->result;
}

}  // namespace

void fiber_run_block(const uint8_t* parameters, const BlockFrame* frame,
                     FiberThreadFunction thread) {
  this_thread_scheduler().run(parameters, frame, thread);
}

uint32_t fiber_barrier(uint32_t barrier, uint32_t thread_count, uint32_t operation,
                       uint32_t value) {
  return this_thread_scheduler().barrier(barrier, thread_count, operation, value);
}

uint32_t fiber_warp_exchange(uint64_t offer, uint32_t members) {
  return this_thread_scheduler().warp_exchange(offer, members);
}

uint64_t fiber_warp_peer(uint32_t lane) { return this_thread_scheduler().warp_peer(lane); }

}  // namespace xcuda::runtime::host
