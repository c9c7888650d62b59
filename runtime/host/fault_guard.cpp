#include "runtime/host/fault_guard.h"

#include <signal.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>

#include "runtime/host/worker_pool.h"

namespace xcuda::runtime::host {
namespace {

constexpr int guarded_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr size_t guarded_signal_count = std::size(guarded_signals);

struct sigaction previous_actions[guarded_signal_count];

size_t index_of(int signal_number) {
  return static_cast<size_t>(
      std::find(guarded_signals, guarded_signals + guarded_signal_count, signal_number) -
      guarded_signals);
}

// Hands a fault that is not a kernel's to the handler the process had before ours.
void forward(int signal_number, siginfo_t* info, void* context) {
  const struct sigaction& previous = previous_actions[index_of(signal_number)];
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal_number, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal_number);
    return;
  }
  // Ignoring a fault would only run the faulting instruction again: take the default action.
  // Returning re-executes a real fault, which now kills the process with the usual core dump;
  // a signal sent by kill() or raise() has no instruction to repeat, so it is sent again.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  if (info->si_code <= 0) raise(signal_number);
}

void handle_fault(int signal_number, siginfo_t* info, void* context) {
  if (current_block_frame() && info->si_code > 0) {
    switch (signal_number) {
      case SIGSEGV: abandon_current_block(ErrorCode::illegal_address, "illegal memory access");
      case SIGBUS:
        abandon_current_block(ErrorCode::illegal_address, "misaligned or unmapped memory access");
      case SIGFPE:
        abandon_current_block(ErrorCode::launch_failed,
                              "arithmetic fault (integer division by zero or overflow)");
      default: abandon_current_block(ErrorCode::launch_failed, "illegal instruction");
    }
  }
  forward(signal_number, info, context);
}

// Frees a thread's alternate signal stack at thread exit, after telling the kernel to stop
// using it.
struct AlternateStack {
  std::unique_ptr<std::byte[]> memory;

  ~AlternateStack() {
    if (!memory) return;
    stack_t disabled{};
    disabled.ss_flags = SS_DISABLE;
    sigaltstack(&disabled, nullptr);
  }
};

}  // namespace

void install_fault_handlers() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = handle_fault;
    // SA_NODEFER: a block left by siglongjmp must not leave the signal blocked, and the jump
    // does not restore the mask (saving it per block would cost a system call).
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < guarded_signal_count; ++i)
      sigaction(guarded_signals[i], &action, &previous_actions[i]);
  });
}

void prepare_thread_for_faults() {
  thread_local AlternateStack alternate_stack;
  thread_local bool prepared = false;
  if (prepared) return;
  prepared = true;
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
  size_t size = std::max<size_t>(64 * 1024, static_cast<size_t>(SIGSTKSZ));
  alternate_stack.memory = std::make_unique<std::byte[]>(size);
  stack_t stack{};
  stack.ss_sp = alternate_stack.memory.get();
  stack.ss_size = size;
  if (sigaltstack(&stack, nullptr) != 0) alternate_stack.memory.reset();
}

}  // namespace xcuda::runtime::host
