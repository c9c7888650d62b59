// Kernels with block barriers or warp collectives cannot run one thread to completion after
// another. They are cut at each barrier and warp exchange (see warp_exchange.h) into regions:
// the kernel becomes a resumable function that runs one thread from a resume point to its next
// cut and says where to resume, with every value that lives across a cut kept in per-thread
// storage. The block function then runs the block
// region by region (see block_function.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "diagnostics.h"

namespace llvm {
class AllocaInst;
class BasicBlock;
class Function;
}  // namespace llvm

namespace xcuda::ptx::host {

// The state a thread reports when it ran to the end of the kernel.
inline constexpr uint32_t thread_finished = 0xFFFFFFFFu;
// Set in the resume points that follow a warp exchange: threads there may go on while others
// wait at a block barrier, which must hold them until every warp exchange of the round is over.
inline constexpr uint32_t warp_resume_flag = 1u << 30;

// The block's storage: bytes_per_thread per thread, each slot holding a value for all threads
// side by side (thread t's at column + t * bytes, with column scaled by column_threads, or by
// the block's thread count where that is 0); and apart from it, the uniform area: uniform_bytes
// of block-wide entry copies of uniform values, each what the first thread of the loop held
// when a region all threads run together began (see barrier_regions.cpp), which the block
// function copies in.
struct UniformSlot {
  uint64_t entry;   // offset of the entry copy in the uniform area
  uint64_t column;  // the per-thread slot starts at column * column threads
  uint64_t bytes;
  // The resume points of the regions that read the entry copy; only before those is it filled.
  std::vector<uint32_t> read_after;
};

struct StorageLayout {
  uint64_t uniform_bytes = 0;     // multiple of 16
  uint64_t bytes_per_thread = 0;  // multiple of 16
  uint32_t column_threads = 0;    // past the kernel's thread limit, where the storage of so many fits the budget
  std::vector<UniformSlot> uniform_slots;
};

// How the block function learns where the threads that ran a region together stand after it.
enum class RegionExit {
  single,      // the region has one way out: all stand at `next`
  uniform,     // which way out depends only on block-uniform values: all stand where the first does
  per_thread,  // each thread's own resume point says
};

struct Region {
  uint32_t resume_point;
  RegionExit exit;
  uint32_t next;  // with RegionExit::single
  // Whether the region may start with some of the block's threads finished: it follows,
  // directly or through other regions, one after which each thread may finish or go on.
  bool after_partings = false;
  // The threads whose %tid.x lies outside [working_from, working_to) do nothing in the region
  // but reach resume point `skipped_exit` (`if (threadIdx.x < stride) ...; __syncthreads()`,
  // or `if (threadIdx.x >= 32) return;`), so a loop over the threads may leave them out.
  uint32_t working_from = 0;
  uint32_t working_to = UINT32_MAX;
  uint32_t skipped_exit = 0;
  // Whether the loop over the region's threads may start elsewhere than at the first thread
  // (see thread_order.h).
  bool rotates = false;
  // Whether the region compares %tid.x with a constant (`if (threadIdx.x == 0)`): its loop after a
  // parting then has a copy for a range from the first thread (block_function.cpp).
  bool compares_thread_index = false;
  // Whether the region holds lane exchanges and so runs warp by warp (see warp_lanes.h).
  bool warp_lanes = false;
};

struct ResumableKernel {
  // i32 (ptr context, ptr parameters, ptr storage, i32 resume_point, i1 together, ptr uniform):
  // runs the context's thread from resume_point (0 = the start) and returns the next one, or
  // thread_finished. `storage` is the block's (see StorageLayout), 16-aligned.
  // `together` says every unfinished thread of the block resumes at the same point, those in
  // the context's together range (see ThreadContext), and the caller has copied the uniform
  // values' entry copies into the uniform area `uniform`, which is read only then. Then a lane
  // knows that the lanes of its warp in that range arrived at the exchange it resumes after,
  // and offers without stamping (see warp_exchange.h).
  llvm::Function* function = nullptr;
  StorageLayout storage;
  std::vector<Region> regions;  // the first starts at resume point 0, the kernel's start
  uint32_t exchanged_words = 0;  // the most words one of its exchanges of words offers
};

// Returns nothing when the kernel reaches no barrier and can run thread after thread.
// `thread_limit`: the most threads a block of the kernel may have (.maxntid, .reqntid, or
// host_abi::max_block_threads). `first_tier`: for the quick first compile, whose warp exchanges
// call shared functions rather than each holding their code (warp_exchange.h).
std::optional<ResumableKernel> split_at_barriers(llvm::Function& kernel, std::string_view kernel_name, uint32_t thread_limit,
                                                bool first_tier, DiagnosticSink& diagnostics);

// A copy of the kernel, if it reaches a warp exchange, cut at its block barriers only, its
// exchanges left in place as lane exchanges (see warp_lanes.h), and around the loops beside
// them; the kernel itself stays as it is. Returns nothing when the kernel reaches no exchange or
// the copy cannot run: the threads of a region may part ways, or a region with exchanges has a
// loop.
std::optional<ResumableKernel> split_for_warp_lanes(llvm::Function& kernel, uint32_t thread_limit);

// Whether loads, and stores to it, are all that use `alloca`: its address goes nowhere else.
bool only_loaded_and_stored(const llvm::AllocaInst& alloca);

// The blocks of the resumable function a thread may run from `start` until it returns: a
// region, `start` first.
std::vector<const llvm::BasicBlock*> region_blocks(const llvm::BasicBlock* start);

// The block of the resumable function where `resume_point` starts.
const llvm::BasicBlock* region_start(const llvm::Function& resumable, uint32_t resume_point);

}  // namespace xcuda::ptx::host
