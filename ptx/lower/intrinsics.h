// The target-neutral IR talks about GPU concepts only through these functions, which the
// lowering declares and each target defines: the host target as reads of its thread context,
// an AMDGPU target as its work-item intrinsics. Every lowered function receives the opaque
// thread-context pointer as its first argument and passes it on.
#pragma once

#include <string>
#include <string_view>

#include "host_abi.h"

namespace xcuda::ptx::intrinsics {

// i32|i64 (ptr context): the special register %<name>, e.g. "xcuda.sreg.tid.x".
inline std::string special_register(std::string_view name, std::string_view component) {
  std::string result = "xcuda.sreg." + std::string(name);
  if (!component.empty()) result += "." + std::string(component);
  return result;
}
inline constexpr std::string_view special_register_prefix = "xcuda.sreg.";

// The inverse of special_register(), for the targets that define them: {"tid", "x"} from
// "xcuda.sreg.tid.x", {"laneid", ""} from "xcuda.sreg.laneid".
struct SpecialRegisterName {
  std::string_view name;
  std::string_view component;
};
inline SpecialRegisterName parse_special_register(std::string_view intrinsic) {
  std::string_view rest = intrinsic.substr(special_register_prefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return {rest, {}};
  return {rest.substr(0, dot), rest.substr(dot + 1)};
}

inline constexpr const char* shared_base = "xcuda.shared_base";  // ptr (ptr context)
inline constexpr const char* barrier = "xcuda.barrier";          // void (ptr context, i32 id)
// Every other barrier form (a thread count, bar.arrive, bar.red): i32 (ptr context, i32 id,
// i32 thread_count, i32 operation, i32 value), thread_count 0 meaning the whole block and
// operation a BarrierOperation; returns the reduction's result (0 for sync and arrive).
inline constexpr const char* barrier_operation = "xcuda.barrier.operation";
using BarrierOperation = host_abi::BarrierOperation;
// i64 (ptr context, i32 operation, ptr mbarrier, i64 value, i32 count): an mbarrier
// instruction, as host_abi::MbarrierOperation describes; threads wait for each other at its
// test_wait and try_wait (the host target runs such kernels as fibers).
inline constexpr const char* mbarrier = "xcuda.mbarrier";
using MbarrierOperation = host_abi::MbarrierOperation;
// void (): defined, not declared, by the lowering where an object format cannot hold what a
// variable starts as (a byte of an address: 0xFF00(table)). A target runs it once the module is
// loaded and before any kernel.
inline constexpr const char* module_initialiser = "xcuda.module.initialise";
inline constexpr const char* trap = "xcuda.trap";                // void (ptr context), noreturn
// void (ptr context), noreturn: what a GPU does at an instruction ptxas takes but the hardware
// refuses as written; the launch fails with an illegal instruction rather than as a trap.
inline constexpr const char* illegal_instruction = "xcuda.illegal_instruction";
// i1 (ptr context, i64 address): whether a generic address lies in the block's shared memory,
// in the thread's local memory (its .local variables and run-time allocations), or among the
// kernel's parameters (isspacep; lower/memory.cpp makes .global and .const of these and of the
// module's variables). Where each window lies is known only as the block runs.
inline constexpr const char* in_shared_window = "xcuda.isspacep.shared";
inline constexpr const char* in_local_window = "xcuda.isspacep.local";
inline constexpr const char* in_parameter_window = "xcuda.isspacep.param";

// A thread's stack of run-time allocations (PTX alloca, stacksave, stackrestore), separate from
// the storage of .local variables, which the target places itself. A kernel that may allocate
// empties its threads' stacks when it starts; a function that allocates restores the position
// it started at when it returns.
inline constexpr const char* stack_reset = "xcuda.stack.reset";  // void (ptr context)
// ptr (ptr context, i64 bytes, i64 alignment): a power of two of at least 8. Fails the launch
// when the stack has no room left.
inline constexpr const char* stack_allocate = "xcuda.stack.allocate";
inline constexpr const char* stack_save = "xcuda.stack.save";        // ptr (ptr context)
inline constexpr const char* stack_restore = "xcuda.stack.restore";  // void (ptr context, ptr position)

// Operations under .rz/.rm/.rp run in internal helpers named with this prefix
// (lower/floating_point.cpp), which a target may rewrite.
inline constexpr std::string_view rounded_helper_prefix = "xcuda.rounded.";

// Warp collectives meet at an exchange: every lane of the warp that reaches it offers a value
// and, once all have arrived, may read any arriving lane's offer. The target decides how the
// lanes meet (the host target cuts the kernel there, as at a block barrier).
// i32 (ptr context, i64 offer, i32 members): the lanes of the warp that arrived together, as a
// lane mask. `members` is the instruction's member mask (all ones for the forms without one):
// the lanes that must all arrive. A target may let the lanes meet whoever arrives with them only
// where `members` is the constant all-ones (the host target runs the other kernels as fibers).
inline constexpr const char* warp_exchange = "xcuda.warp.exchange";
// i64 (ptr context, i32 lane): what `lane` offered at the thread's last exchange. A lane
// outside 0..31 (from -31 to 62) gives an answer the caller must not use.
inline constexpr const char* warp_peer = "xcuda.warp.peer";
// Votes, matches and reductions fold all the offers of one exchange at once: see warp_folds.h.

// An exchange of several words at once, for the matrix instructions, which every lane of the
// warp runs together (.aligned): void (ptr context, i64 word, ...) offers the words that follow
// the context. One exchange in place of one per word spares the host target a cut of the kernel
// per word. A target may expand it into single exchanges instead (lower/warp_words.h).
inline constexpr const char* warp_exchange_words = "xcuda.warp.exchange.words";
// i64 (ptr context, i32 lane, i32 word): word `word` of what `lane` (0 to 31) offered at the
// thread's last exchange of words.
inline constexpr const char* warp_peer_word = "xcuda.warp.peer.word";

// Function attribute marking a PTX .extern .func (vprintf, __assertfail, malloc …): the target
// provides it or reports it missing. Other declarations are C library functions the lowering
// calls on purpose (tanhf).
inline constexpr const char* external_function_attribute = "xcuda-ptx-external";

// Named metadata listing the kernels (.entry functions) as {function, PTX name}: each is
// `void (ptr context, ptr parameters)` and reads its parameters at the offsets of
// lay_out_parameters().
inline constexpr const char* kernels_metadata = "xcuda.kernels";

}  // namespace xcuda::ptx::intrinsics
