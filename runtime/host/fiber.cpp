#include "runtime/host/fiber.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

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
using ptx::host_abi::MbarrierOperation;

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
  // Exchanges of words it has passed, and the words of the last: lane by lane, each lane's
  // fiber_exchanged_words.
  uint32_t word_exchanges = 0;
  const uint64_t* word_view = nullptr;
};

struct Barrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;  // 0: every thread that has not exited
  uint32_t votes = 0;     // arrivals with a non-zero value
  std::vector<Fiber*> waiting;
};

// The word of an mbarrier object, which programs treat as opaque: the arrivals the current
// phase still waits for, the arrivals each phase expects, the transactions (expect_tx minus
// complete_tx, 21-bit two's complement) the current phase waits for, and the phase's parity.
// A block's threads all run on one host thread, so plain reads and writes of it suffice.
class MbarrierWord {
 public:
  static constexpr uint32_t count_bits = 21;
  static constexpr uint64_t count_mask = (uint64_t{1} << count_bits) - 1;
  static constexpr uint32_t max_count = (1u << 20) - 1;  // PTX: counts are 1 to 2^20 - 1

  explicit MbarrierWord(uint64_t word) : word_(word) {}
  static MbarrierWord initial(uint32_t count) {
    return MbarrierWord(uint64_t{count} | uint64_t{count} << count_bits);
  }

  uint64_t word() const { return word_; }
  uint32_t pending() const { return static_cast<uint32_t>(word_ & count_mask); }
  uint32_t expected() const { return static_cast<uint32_t>(word_ >> count_bits & count_mask); }
  int32_t transactions() const {
    auto raw = static_cast<uint32_t>(word_ >> (2 * count_bits) & count_mask);
    return static_cast<int32_t>(raw << (32 - count_bits)) >> (32 - count_bits);
  }
  uint32_t parity() const { return static_cast<uint32_t>(word_ >> 63); }

  void set(uint32_t pending, uint32_t expected, int32_t transactions) {
    word_ = (word_ & (uint64_t{1} << 63)) | (pending & count_mask) |
            (uint64_t{expected} & count_mask) << count_bits |
            (static_cast<uint64_t>(static_cast<uint32_t>(transactions)) & count_mask)
                << (2 * count_bits);
  }
  // The phase ends once every arrival and every transaction came; the next expects as many.
  void complete_if_done() {
    if (pending() != 0 || transactions() != 0) return;
    word_ ^= uint64_t{1} << 63;
    set(expected(), expected(), 0);
  }

 private:
  uint64_t word_;
};

struct Warp {
  uint32_t live = 0;     // lanes that exist and have not exited
  uint32_t waiting = 0;  // lanes waiting at a collective
  std::array<uint32_t, warp_size> members{};
  std::array<uint64_t, warp_size> offers{};
  // The words of exchanges of words, by the parity of the exchange's number: a lane that read
  // its peers' words and went on to the next exchange of words writes the other array.
  std::array<std::vector<uint64_t>, 2> words;
};

// One per host thread that runs blocks; fibers and their stacks stay for the next block.
class BlockScheduler {
 public:
  void run(const uint8_t* parameters, const BlockFrame* frame, FiberThreadFunction thread);
  uint32_t barrier(uint32_t id, uint32_t thread_count, uint32_t operation, uint32_t value);
  uint32_t warp_exchange(uint64_t offer, uint32_t members);
  uint64_t warp_peer(uint32_t lane) const { return current_->view[lane % warp_size]; }
  void warp_exchange_words(const uint64_t* words, uint32_t count);
  uint64_t warp_peer_word(uint32_t lane, uint32_t word) const {
    constexpr uint32_t most = ptx::host_abi::fiber_exchanged_words;
    return current_->word_view[lane % warp_size * most + word % most];
  }
  uint64_t mbarrier(uint32_t operation, uint64_t* object, uint64_t value, uint32_t count);
  // Empty unless `here`, an address on the calling stack, lies on the running fiber's stack;
  // then whether `address` lies on the stack of any fiber of the block.
  std::optional<bool> fiber_stacks_contain(uint64_t here, uint64_t address) const;

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
  // When every live thread waits: see the definition.
  bool release_stalled_groups();
  uint32_t linear_index(const Fiber& fiber) const;
  // Lets the other ready threads run before the current one goes on; when every thread left
  // only polls and nothing changed for two rounds, nothing ever will: the block fails.
  void yield_to_others();
  [[noreturn]] void fail(const char* reason, const std::string& detail);

  std::vector<std::unique_ptr<Fiber>> fibers_;  // the first thread_count_ run this block
  uint32_t thread_count_ = 0;
  uint32_t live_threads_ = 0;
  std::deque<Fiber*> ready_;
  Fiber* current_ = nullptr;
  void* scheduler_stack_pointer_ = nullptr;
  std::array<Barrier, barrier_count> barriers_;
  std::vector<Warp> warps_;
  uint64_t progress_ = 0;             // counts events that may let a polling thread go on
  uint64_t progress_at_last_poll_ = 0;
  uint32_t polls_without_progress_ = 0;
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
  fiber.word_exchanges = 0;
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
  polls_without_progress_ = 0;
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
  do {
    while (!ready_.empty()) {
      current_ = ready_.front();
      ready_.pop_front();
      xcuda_fiber_switch(&scheduler_stack_pointer_, current_->stack_pointer);
    }
    current_ = nullptr;
  } while (live_threads_ != 0 && release_stalled_groups());
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
  ++progress_;
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
  ++progress_;
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

// Every live thread waits, some at warp collectives and some elsewhere (a block barrier): those
// elsewhere cannot come before the others go on, so each warp's waiting lanes form their groups
// without them. This is how a diverged warp's __activemask() before a barrier sees the lanes of
// its own branch, and how collectives over that mask then complete.
bool BlockScheduler::release_stalled_groups() {
  bool released = false;
  for (uint32_t index = 0; index < warps_.size(); ++index) {
    Warp& warp = warps_[index];
    if (warp.waiting == 0 || (warp.live & ~warp.waiting) == 0) continue;
    const uint32_t live = warp.live, waiting = warp.waiting;
    warp.live &= waiting;
    release_complete_groups(index);
    warp.live = live;
    released |= warp.waiting != waiting;
  }
  return released;
}

uint32_t BlockScheduler::warp_exchange(uint64_t offer, uint32_t members) {
  uint32_t linear = linear_index(*current_);
  uint32_t lane = linear % warp_size;
  Warp& warp = warps_[linear / warp_size];
  ++progress_;
  warp.offers[lane] = offer;
  warp.members[lane] = members;
  warp.waiting |= lane_bit(lane);
  release_complete_groups(linear / warp_size);
  wait();
  return current_->result;
}

void BlockScheduler::warp_exchange_words(const uint64_t* words, uint32_t count) {
  constexpr uint32_t most = ptx::host_abi::fiber_exchanged_words;
  if (count > most)
    fail("a warp exchange of more words than the runtime holds",
         "an exchange of " + std::to_string(count) + " words, more than " + std::to_string(most));
  Fiber& fiber = *current_;
  uint32_t linear = linear_index(fiber);
  std::vector<uint64_t>& buffer = warps_[linear / warp_size].words[fiber.word_exchanges++ % 2];
  buffer.resize(warp_size * most);
  std::copy_n(words, count, buffer.begin() + linear % warp_size * most);
  warp_exchange(0, ~0u);
  fiber.word_view = buffer.data();
}

void BlockScheduler::fail(const char* reason, const std::string& detail) {
  logger().error("block [{},{},{}]: {}", frame_->block_index[0], frame_->block_index[1],
                 frame_->block_index[2], detail);
  abandon_current_block(ErrorCode::launch_failed, reason);
}

void BlockScheduler::yield_to_others() {
  if (progress_ != progress_at_last_poll_) {
    progress_at_last_poll_ = progress_;
    polls_without_progress_ = 0;
  } else if (++polls_without_progress_ > 2 * live_threads_ + 2) {
    fail("deadlock: threads poll mbarriers whose phases can never complete",
         std::to_string(live_threads_) +
             " threads poll mbarriers or wait at barriers, and no phase can complete");
  }
  ready_.push_back(current_);
  suspend();
}

uint64_t BlockScheduler::mbarrier(uint32_t operation, uint64_t* object, uint64_t value,
                                  uint32_t count) {
  auto kind = static_cast<MbarrierOperation>(operation & ptx::host_abi::mbarrier_operation_mask);
  if (kind == MbarrierOperation::pending_count) return MbarrierWord(value).pending();
  if (object == nullptr || reinterpret_cast<uintptr_t>(object) % alignof(uint64_t) != 0)
    fail("mbarrier object misaligned or null",
         fmt::format("mbarrier at {} is not 8-byte aligned", static_cast<void*>(object)));
  MbarrierWord word(*object);
  auto write = [&] {
    *object = word.word();
    ++progress_;
  };
  auto check_count = [&](uint32_t value_count, const char* what) {
    if (value_count == 0 || value_count > MbarrierWord::max_count)
      fail("mbarrier count out of range",
           fmt::format("mbarrier.{} with a count of {} (1 to 2^20-1 allowed)", what, value_count));
  };
  switch (kind) {
    case MbarrierOperation::init:
      check_count(count, "init");
      word = MbarrierWord::initial(count);
      write();
      return 0;
    case MbarrierOperation::invalidate:
      word = MbarrierWord(0);
      write();
      return 0;
    case MbarrierOperation::expect_tx:
    case MbarrierOperation::complete_tx: {
      auto transactions = static_cast<int32_t>(value);
      int32_t updated = word.transactions() +
                        (kind == MbarrierOperation::expect_tx ? transactions : -transactions);
      word.set(word.pending(), word.expected(), updated);
      word.complete_if_done();
      write();
      return 0;
    }
    case MbarrierOperation::arrive: {
      check_count(count, "arrive");
      if (count > word.pending())
        fail("mbarrier arrival beyond the expected count",
             fmt::format("mbarrier.arrive of {} when the phase waits for {} arrivals", count,
                         word.pending()));
      // PTX: the state captures the object as it was before the arrival (the H200's
      // pending_count of it counts this arrival as still pending).
      uint64_t state = word.word();
      uint32_t expected = word.expected();
      if ((operation & ptx::host_abi::mbarrier_drop) != 0) expected -= std::min(expected, count);
      word.set(word.pending() - count, expected,
               word.transactions() + static_cast<int32_t>(value));
      word.complete_if_done();
      write();
      return state;
    }
    case MbarrierOperation::test_wait:
    case MbarrierOperation::test_parity: {
      uint32_t waited_parity = kind == MbarrierOperation::test_wait
                                   ? MbarrierWord(value).parity()
                                   : static_cast<uint32_t>(value & 1);
      if (word.parity() != waited_parity) return 1;
      yield_to_others();
      return MbarrierWord(*object).parity() != waited_parity;
    }
    case MbarrierOperation::pending_count: break;
  }
  fail("unknown mbarrier operation", fmt::format("mbarrier operation {}", operation));
}

std::optional<bool> BlockScheduler::fiber_stacks_contain(uint64_t here, uint64_t address) const {
  auto on = [](const Fiber& fiber, uint64_t point) {
    return point - (reinterpret_cast<uint64_t>(fiber.stack.top()) - fiber_stack_bytes) < fiber_stack_bytes;
  };
  // A block a fault abandoned leaves current_ set: only the stack pointer tells a fiber runs.
  if (current_ == nullptr || !on(*current_, here)) return std::nullopt;
  for (uint32_t index = 0; index < thread_count_; ++index)
    if (on(*fibers_[index], address)) return true;
  return false;
}

// The stack of the calling host thread, asked for once per thread.
std::pair<uint64_t, uint64_t> host_thread_stack() {
  pthread_attr_t attributes;
  void* low = nullptr;
  size_t bytes = 0;
  if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
    pthread_attr_getstack(&attributes, &low, &bytes);
    pthread_attr_destroy(&attributes);
  }
  return {reinterpret_cast<uint64_t>(low), bytes};
}

}  // namespace

uint32_t thread_stack_contains(uint64_t address) {
  uint64_t here = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
  if (std::optional<bool> on_fibers = this_thread_scheduler().fiber_stacks_contain(here, address)) return *on_fibers;
  thread_local const std::pair<uint64_t, uint64_t> stack = host_thread_stack();
  return address - stack.first < stack.second;
}

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

void fiber_warp_exchange_words(const uint64_t* words, uint32_t count) {
  this_thread_scheduler().warp_exchange_words(words, count);
}

uint64_t fiber_warp_peer_word(uint32_t lane, uint32_t word) {
  return this_thread_scheduler().warp_peer_word(lane, word);
}

uint64_t fiber_mbarrier(uint32_t operation, uint64_t* mbarrier, uint64_t value, uint32_t count) {
  return this_thread_scheduler().mbarrier(operation, mbarrier, value, count);
}

}  // namespace xcuda::runtime::host
