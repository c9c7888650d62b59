// The contract between code the PTX compiler emits for the host CPU and the host backend that
// runs it. Both sides include this header; it is plain C layout so generated code can address
// fields by offset.
#pragma once

#include <cstdint>

namespace xcuda::ptx::host_abi {

// What one call of a kernel's block function needs: which block of which grid, and the memory
// the block owns. The host backend fills one per block and calls
//     void <block_symbol>(const uint8_t* parameters, const BlockFrame* frame)
// which runs every thread of the block to completion. The parameter buffer is laid out as
// KernelInfo::parameters says; neither it nor the frame is written during the call.
//
// Shared memory: every .shared variable of a module has one offset, the same in all of the
// module's kernels, but variables no one kernel reaches may overlap, so each kernel's static
// part is KernelInfo::static_shared_bytes (up to the end of the last variable it reaches) and the
// dynamic part starts at that size rounded up to 16 (a kernel reaching a dynamic array reports
// the module's static size, padded to the dynamic arrays' alignment). Allocate at least
// round_up(static_shared_bytes, 16) + dynamic_shared_bytes per running block, 1024-aligned so
// that swizzle patterns see the same address bits in shared-window and generic addresses.
//
// Stack: a kernel with barriers keeps per-thread state on the calling thread's stack, about
// KernelInfo::host_stack_bytes_per_thread + 4 bytes per thread of the block, and at most
// block_stack_budget bytes: the runtime refuses a launch that would need more, and the compiler
// lays a kernel's state out for as many threads as a block of it may have (.maxntid or
// max_block_threads) only where that fits.
struct BlockFrame {
  uint32_t block_dim[3];   // %ntid
  uint32_t grid_dim[3];    // %nctaid
  uint32_t block_index[3]; // %ctaid
  uint32_t dynamic_shared_bytes;  // %dynamic_smem_size
  uint8_t* shared_memory;  // static .shared variables first, then the dynamic part, 16-aligned
  uint32_t sm_index;       // %smid: the worker running the block
  uint32_t sm_count;       // %nsmid
  uint64_t grid_id;        // %gridid
  // %envreg0-31, the driver's words for the grid. A cooperative launch puts the address of its
  // GridWorkspace in %envreg1 (high half) and %envreg2 (low half), where cooperative_groups
  // looks for it; every other word, and every word of other launches, is 0. (The H200 also
  // sets %envreg0, %envreg6 and %envreg10, to values no public header reads.)
  const uint32_t* environment;
  // Kernels that allocate at run time (KernelInfo::uses_dynamic_stack): one stack of
  // dynamic_stack_bytes per thread of the block, in the order of their linear indices, each
  // starting 16-aligned with dynamic_stack_header_bytes the generated code keeps to itself.
  // Null and 0 for other kernels.
  uint8_t* dynamic_stack;
  uint64_t dynamic_stack_bytes;
  // The launch's parameter buffer, the window isspacep.param asks about.
  const uint8_t* parameters;
  uint64_t parameter_bytes;
};

inline constexpr uint64_t dynamic_stack_header_bytes = 16;
// The most threads a block may have; a launch of more is refused.
inline constexpr uint32_t max_block_threads = 1024;
// Half of a usual 8 MiB thread stack.
inline constexpr uint64_t block_stack_budget = 4u << 20;

inline constexpr uint32_t environment_register_count = 32;

// Where cooperative_groups' grid.sync() counts the blocks that arrived (CUDA's
// cooperative_groups/details/driver_abi.h reads this layout).
struct GridWorkspace {
  uint32_t size;     // bytes of the workspace: 16, as NVIDIA's driver reports it
  uint32_t barrier;  // arrival counter; grid.sync() flips bit 31 once all blocks arrived
  uint32_t reserved[2];
};

// Symbol of the block function for kernel `name`. The object also defines each module-scope
// .global/.const variable under its PTX name.
inline constexpr const char* block_symbol_prefix = "__xcuda_block_";
// void(void), defined where a variable's initial value needs the module's addresses in a way no
// relocation gives (a byte of an address, 0xFF00(table)): the loader calls it once, after linking
// and before any launch.
inline constexpr const char* module_initialiser_symbol = "__xcuda_initialise_module";

// The host target's builtin library (ptx/target/host/builtin_library.h), linked into the
// runtime: a copy of its functions for each processor level, best first, of which the host
// backend defines the first the host supports for every object it links.
struct Builtin {
  const char* name;
  const void* address;
};
struct BuiltinLevel {
  const char* processor;  // an LLVM processor name: x86-64-v4, x86-64-v3, x86-64-v2, generic
  const Builtin* functions;
  uint64_t count;
};
inline constexpr const char* builtin_levels_symbol = "xcuda_host_builtin_levels";            // const BuiltinLevel[]
inline constexpr const char* builtin_level_count_symbol = "xcuda_host_builtin_level_count";  // const uint64_t

// Functions the generated code may call back into the runtime; the host backend defines them
// before it links an object. Objects may also call the C library's memset/memcpy/memmove and
// libm's float functions (sinf, cosf, sincosf, exp2f, log2f, fmaf …), and libgcc's half-float
// helpers on CPUs without F16C: resolve those from the process (LLJIT does so by default).
inline constexpr const char* vprintf_symbol = "__xcuda_vprintf";        // int(const char* format, const void* arguments)
// Like trap, __xcuda_assertfail should not return (on the GPU the assertion ends the launch);
// if it does, the thread carries on after the assert.
inline constexpr const char* assert_fail_symbol = "__xcuda_assertfail";  // void(const char* message, const char* file, uint32_t line, const char* function, uint64_t char_size)
inline constexpr const char* trap_symbol = "__xcuda_trap";              // [[noreturn]] void(const BlockFrame*)
inline constexpr const char* illegal_instruction_symbol = "__xcuda_illegal_instruction";  // [[noreturn]] void(const BlockFrame*)
// cudaGraphSetConditional(handle, value), which nvcc leaves to the driver as an external
// function: sets the condition of a CUgraphConditionalHandle. A handle that is not one fails the
// launch with an illegal-address error, as a GPU's store through a stray handle would.
inline constexpr const char* set_conditional_symbol = "__xcuda_set_conditional";  // void(uint64_t handle, uint32_t value)
// clusterlaunchcontrol.try_cancel: cancels a block of the grid that has not started, if there is
// one, writing the 16-byte response {cancelled (0 or 1), ctaid.x, ctaid.y, ctaid.z}.
inline constexpr const char* try_cancel_symbol = "__xcuda_try_cancel";  // void(uint32_t response[4])
// An alloca that does not fit the thread's stack (or follows a stackrestore to a position that
// is not on it) ends the launch as an illegal address, which is what an H200 reports for a
// thread that writes past its stack.
inline constexpr const char* stack_overflow_symbol = "__xcuda_stack_overflow";  // [[noreturn]] void(const BlockFrame*, uint64_t bytes)
// isspacep.local: whether `address` lies on the stack of the calling block thread (the host
// thread running the block, or the block's fibers), where .local variables live.
inline constexpr const char* thread_stack_contains_symbol = "__xcuda_thread_stack_contains";  // uint32_t(uint64_t address)

// Texture and surface instructions call these. `object` is the instruction's 64-bit
// CUtexObject/CUsurfObject, which the host backend makes the address of its descriptor.
// Four 32-bit words travel as one 16-byte vector (LLVM <4 x i32>, TextureWords in C++), in an
// SSE register both ways: coordinates {x, y, z, layer}, each a float or an integer as the
// instruction says (unused ones 0), texels and surface data.
//   TextureWords __xcuda_texture_fetch(uint64_t object, uint32_t operation,
//                                      TextureWords coordinates, float level)
//     tex and tld4: four channels as floats, or as integers when the texture reads integers.
//   TextureWords __xcuda_surface_load(uint64_t object, uint32_t operation, TextureWords coordinates)
//   void __xcuda_surface_store(uint64_t object, uint32_t operation, TextureWords coordinates,
//                              TextureWords values)
//     suld.b and sust.b of surface_access_bytes(operation) bytes at byte column x, the data in
//     the vector's first bytes. Out of range under .trap, the launch fails as on a GPU.
//   void __xcuda_surface_reduce(uint64_t object, uint32_t operation, TextureWords coordinates,
//                               uint64_t value)
//     sured: atomically combines the 4 or 8 bytes (surface_access_bytes) at column x with
//     `value` (the low 4 bytes for a 4-byte access), as the SurfaceReduction in the operation
//     word says. A byte column (sured.b) must be a multiple of the access size: otherwise an
//     H200 fails the launch with a misaligned address, under .clamp and .zero too, and so does
//     the host.
//   uint32_t __xcuda_resource_query(uint64_t object, uint32_t query, uint32_t level)
//     txq and suq: the ResourceQuery `query` of mipmap level `level`.
typedef uint32_t TextureWords __attribute__((vector_size(16)));
inline constexpr const char* texture_fetch_symbol = "__xcuda_texture_fetch";
inline constexpr const char* surface_load_symbol = "__xcuda_surface_load";
inline constexpr const char* surface_store_symbol = "__xcuda_surface_store";
inline constexpr const char* surface_reduce_symbol = "__xcuda_surface_reduce";
inline constexpr const char* resource_query_symbol = "__xcuda_resource_query";

enum TextureGeometry : uint32_t {
  geometry_1d = 0,
  geometry_2d = 1,
  geometry_3d = 2,
  geometry_layered_1d = 3,
  geometry_layered_2d = 4,
};
inline constexpr uint32_t geometry_mask = 0x7;

// The operation word of __xcuda_texture_fetch: a geometry and these bits.
inline constexpr uint32_t fetch_integer_coordinates = 1u << 3;
inline constexpr uint32_t fetch_explicit_level = 1u << 4;  // tex.level: `level` is the LOD
// tld4: gather channel (0 r, 1 g, 2 b, 3 a) of the four bilinear texels, in bits 8-9.
inline constexpr uint32_t fetch_gather = 1u << 5;
inline constexpr uint32_t fetch_gather_channel_shift = 8;

// The operation word of the surface functions: a geometry, these bits, and the access size in
// bytes (1 to 16) in bits 8-15.
inline constexpr uint32_t surface_clamp = 1u << 4;  // .clamp; neither bit: .trap
inline constexpr uint32_t surface_zero = 1u << 5;   // .zero
// x counts elements of the surface's format rather than bytes (sured.p).
inline constexpr uint32_t surface_element_column = 1u << 6;
// min and max compare as signed integers (.s32, .s64); sured.p takes the signedness of the
// surface's format instead.
inline constexpr uint32_t surface_signed = 1u << 7;
inline constexpr uint32_t surface_bytes_shift = 8;
inline constexpr uint32_t surface_access_bytes(uint32_t operation) { return (operation >> surface_bytes_shift) & 0xff; }

// sured's operation, in bits 16-19 of the operation word.
enum SurfaceReduction : uint32_t {
  reduce_add = 0,
  reduce_min = 1,
  reduce_max = 2,
  reduce_and = 3,
  reduce_or = 4,
};
inline constexpr uint32_t surface_reduction_shift = 16;
inline constexpr uint32_t surface_reduction(uint32_t operation) { return (operation >> surface_reduction_shift) & 0xf; }

// txq and suq queries. Extents are in elements; array_size counts layers.
enum ResourceQuery : uint32_t {
  query_width,
  query_height,
  query_depth,
  query_array_size,
  query_mipmap_levels,
  query_normalized_coordinates,
  query_filter_mode,
  query_address_mode_0,
  query_address_mode_1,
  query_address_mode_2,
};

// Kernels whose threads must wait for each other in ways a region-by-region schedule cannot
// express (counted barriers, bar.arrive, bar.red, warp collectives over a member mask that is
// not the whole warp) run every thread of the block as a fiber of the host thread that runs the
// block. Their block function only calls
//     __xcuda_fiber_run_block(parameters, frame, thread)
// where `thread` runs one thread of the block to its end:
//     void thread(const uint8_t* parameters, const BlockFrame* frame, uint32_t x, uint32_t y, uint32_t z)
// and the thread's code waits for others through the calls below, which suspend its fiber
// until the wait is over. When no fiber can go on, the block fails with a launch error.
inline constexpr const char* fiber_run_block_symbol = "__xcuda_fiber_run_block";
// uint32_t(uint32_t barrier, uint32_t thread_count, BarrierOperation operation, uint32_t value):
// barrier 0-15; thread_count 0 means every thread of the block that has not exited. Returns,
// for the reductions, the population count or the truth of the block's `value`s (0 or 1).
inline constexpr const char* fiber_barrier_symbol = "__xcuda_fiber_barrier";
// uint32_t(uint64_t offer, uint32_t members): waits until every lane of `members` that has not
// exited offers with the same member mask; returns those lanes as a mask.
inline constexpr const char* fiber_warp_exchange_symbol = "__xcuda_fiber_warp_exchange";
// uint64_t(uint32_t lane): what `lane` offered at the calling thread's last exchange.
inline constexpr const char* fiber_warp_peer_symbol = "__xcuda_fiber_warp_peer";
// void(const uint64_t* words, uint32_t count): offers `count` words (at most
// fiber_exchanged_words) at an exchange of the whole warp, every lane of which must come.
inline constexpr const char* fiber_warp_exchange_words_symbol = "__xcuda_fiber_warp_exchange_words";
// uint64_t(uint32_t lane, uint32_t word): word `word` of what `lane` (0 to 31) offered at the
// calling thread's last exchange of words.
inline constexpr const char* fiber_warp_peer_word_symbol = "__xcuda_fiber_warp_peer_word";
// The most words one exchange offers: mma.sync's m16n8k16 .f64 fragments of A and B take 12.
inline constexpr uint32_t fiber_exchanged_words = 16;

// uint64_t(uint32_t operation, uint64_t* mbarrier, uint64_t value, uint32_t count): the
// mbarrier instructions, `operation` a MbarrierOperation with its flags. The waits (test_wait,
// try_wait) let the block's other threads run before they answer, so that a thread polling in
// a loop does not starve those it waits for.
inline constexpr const char* fiber_mbarrier_symbol = "__xcuda_fiber_mbarrier";

enum class MbarrierOperation : uint32_t {
  init = 0,           // count: the expected arrivals of each phase
  arrive = 1,         // count arrivals; value: transactions expected first (expect_tx); → state
  expect_tx = 2,      // value: transactions the current phase also waits for
  complete_tx = 3,    // value: transactions done
  test_wait = 4,      // value: a state from arrive; → 1 once its phase completed, else 0
  test_parity = 5,    // value: a phase parity; → 1 once the phase of that parity completed
  pending_count = 6,  // value: a state from arrive; → the arrivals its phase still waited for
  invalidate = 7,
};
// With arrive: the arrivals also leave every later phase (arrive_drop).
inline constexpr uint32_t mbarrier_drop = 1u << 8;
inline constexpr uint32_t mbarrier_operation_mask = 0xff;

enum class BarrierOperation : uint32_t {
  sync = 0,        // bar.sync: wait for the barrier's threads
  arrive = 1,      // bar.arrive: count towards the barrier without waiting
  count_true = 2,  // bar.red.popc: wait, then how many threads offered a non-zero value
  all_true = 3,    // bar.red.and
  any_true = 4,    // bar.red.or
};

}  // namespace xcuda::ptx::host_abi
