// The contract between code the PTX compiler emits for the host CPU and the host backend that
// runs it. Both sides include this header; it is plain C layout so generated code can address
// fields by offset.
#pragma once

#include <cstdint>

namespace xcuda::ptx::host_abi {

// What one call of a kernel's block function needs: which block of which grid, and the memory
// the block owns. The host backend fills one per block and calls
//     void <block_symbol>(const uint8_t* parameters, const BlockFrame* frame)
// which runs every thread of the block to completion.
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
// before it links an object.
inline constexpr const char* vprintf_symbol = "__xcuda_vprintf";        // int(const char* format, const void* arguments)
inline constexpr const char* assert_fail_symbol = "__xcuda_assertfail";  // void(const char* message, const char* file, uint32_t line, const char* function, uint64_t char_size)
inline constexpr const char* trap_symbol = "__xcuda_trap";              // [[noreturn]] void(const BlockFrame*)

}  // namespace xcuda::ptx::host_abi
