// The host (x86-64 CPU) target: takes the target-neutral module from lower/ and makes it a
// relocatable object the host backend links with ORC. Each function is one pass of the
// compiler's pipeline (see compiler.cpp).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "diagnostics.h"

#include <llvm/IR/IRBuilder.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace xcuda::ptx::host {

// Gives the target-neutral intrinsics their host meaning (special registers from the
// ThreadContext and BlockFrame, shared memory, trap) and adapts the external functions the
// runtime provides (vprintf, __assertfail). Returns the names of external functions called
// but not provided, for the caller to report where they are declared.
std::vector<std::string> define_runtime_services(llvm::Module& module, uint32_t static_shared_bytes);

// Loads the block's extent along `axis` (0 to 2) from the BlockFrame at `frame`, telling LLVM
// the range a launch allows (1 to 1024 threads along x and y, 64 along z): thread indices then
// stay far from wrapping, so addresses made from them are seen to step evenly.
llvm::Value* load_block_dimension(llvm::IRBuilder<>& builder, llvm::Value* frame, uint32_t axis);

// Marks the atomic operations on shared memory, which the optimiser makes plain operations, and
// makes its volatile loads and stores plain (see block_local_accesses.h). Runs while shared
// addresses still come from the shared-window intrinsic, before the runtime services define it.
void mark_block_local_accesses(llvm::Module& module);

// The attribute of a block function that runs only blocks whose width is whole warps
// (KernelInfo::whole_warps_only), having left out its code for others.
inline constexpr const char* whole_warps_only_attribute = "xcuda-whole-warps-only";

// The attribute of the copy of a kernel's regions that runs its block's threads while they stand
// apart (block_function.cpp), which the optimiser only simplifies.
inline constexpr const char* threads_apart_attribute = "xcuda-threads-apart";

// Wraps each kernel in its block function __xcuda_block_<name>(parameters, frame), which runs
// every thread of the block; kernels with barriers are split into regions first. `vectorised`:
// the optimiser's level runs the vectoriser, which alone makes the warp paths (warp_lanes.h) of
// kernels with warp exchanges work; at the other levels they would be built only to be deleted.
// `whole_warp_blocks` (CompileOptions): the fallbacks of warp paths call their regions, which
// LaneExchanges inlines only where a fallback turns out needed, as it does what they call; and
// where the vectoriser runs, kernels without barriers, and those cut only at warp exchanges
// that keep no warp path, loop over whole warps, which leaves out their code for other blocks.
// `thread_limits`: the most threads a block of a kernel may have (.maxntid, .reqntid), for the
// kernels whose PTX sets one (others: host_abi::max_block_threads). Returns, per kernel with
// barriers, the stack bytes its block function needs per thread.
std::unordered_map<std::string, uint64_t> form_block_functions(llvm::Module& module, const std::unordered_map<std::string, uint32_t>& thread_limits,
                                                               bool vectorised, bool whole_warp_blocks, DiagnosticSink& diagnostics);

// The host's TargetMachine for `optimization_level`: one per thread and code generation level,
// made by the thread's first compile and kept for its later ones. nullptr and a diagnostic when
// the host has no usable LLVM target.
std::shared_ptr<llvm::TargetMachine> target_machine(int optimization_level, DiagnosticSink& diagnostics);
// A machine for the lowest processor level of the host's architecture (x86-64-v2 on x86-64),
// for code that must run on any host of it: the builtin library (builtin_library.h).
std::unique_ptr<llvm::TargetMachine> lowest_level_target_machine(DiagnosticSink& diagnostics);

// `whole_warp_blocks`: as CompileOptions says, on the host at -O2 and -O3. `cancelled`, when
// given and true, skips the passes not yet run that LLVM may skip.
void optimize(llvm::Module& module, llvm::TargetMachine& machine, int optimization_level, bool whole_warp_blocks,
              const std::atomic<bool>* cancelled = nullptr);

}  // namespace xcuda::ptx::host
