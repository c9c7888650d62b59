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
// module's kernels, so each kernel's static part is KernelInfo::static_shared_bytes (the whole
// module's) and the dynamic part starts at that size rounded up to 16. Allocate at least
// round_up(static_shared_bytes, 16) + dynamic_shared_bytes, 16-aligned, per running block.
//
// Stack: a kernel with barriers keeps per-thread state on the calling thread's stack, about
// KernelInfo::host_stack_bytes_per_thread + 4 bytes per thread of the block.
struct BlockFrame {
  uint32_t block_dim[3];   // %ntid
  uint32_t grid_dim[3];    // %nctaid
  uint32_t block_index[3]; // %ctaid
  uint32_t dynamic_shared_bytes;  // %dynamic_smem_size
  uint8_t* shared_memory;  // static .shared variables first, then the dynamic part, 16-aligned
  uint32_t sm_index;       // %smid: the worker running the block
  uint32_t sm_count;       // %nsmid
  uint64_t grid_id;        // %gridid
};

// Symbol of the block function for kernel `name`. The object also defines each module-scope
// .global/.const variable under its PTX name.
inline constexpr const char* block_symbol_prefix = "__xcuda_block_";

// Functions the generated code may call back into the runtime; the host backend defines them
// before it links an object. Objects may also call the C library's memset/memcpy/memmove and
// libm's float functions (sinf, cosf, sincosf, exp2f, log2f, fmaf …), and libgcc's half-float
// helpers on CPUs without F16C: resolve those from the process (LLJIT does so by default).
inline constexpr const char* vprintf_symbol = "__xcuda_vprintf";        // int(const char* format, const void* arguments)
// Like trap, __xcuda_assertfail should not return (on the GPU the assertion ends the launch);
// if it does, the thread carries on after the assert.
inline constexpr const char* assert_fail_symbol = "__xcuda_assertfail";  // void(const char* message, const char* file, uint32_t line, const char* function, uint64_t char_size)
inline constexpr const char* trap_symbol = "__xcuda_trap";              // [[noreturn]] void(const BlockFrame*)

}  // namespace xcuda::ptx::host_abi
