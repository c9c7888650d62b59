// The runtime side of device printf, assert and trap: the functions generated host code calls
// back into (ptx/host_abi.h names them). Output of device printf collects in one buffer that
// reaches stdout when a launch ends, the way a GPU's printf FIFO is flushed at synchronisation.
#pragma once

#include <cstdint>
#include <string>

#include "ptx/host_abi.h"

namespace xcuda::runtime::host {

// Formats `format` with CUDA's vprintf argument buffer: the arguments packed one after the
// other, each at its natural alignment (int and char 4 bytes; long, long long, size_t,
// pointers, strings and every floating-point value 8 bytes, floats having been promoted to
// double). Each conversion is formatted by the host's snprintf, as CUDA does. Appends to
// `output` and returns what CUDA's printf returns: the number of arguments read, or -1 when
// `format` is null. As on a GPU, a conversion past the 32nd argument is copied as it stands.
int format_device_printf(const char* format, const void* arguments, std::string& output);

// __xcuda_vprintf: formats into the pending device output.
int device_vprintf(const char* format, const void* arguments);

// __xcuda_assertfail: reports the failed assertion on stderr the way the CUDA driver does and
// abandons the block, failing the launch with ErrorCode::assertion_failed. The thread index is
// not known here (the callback does not receive it), so only the block is named.
void device_assert_fail(const char* message, const char* file, uint32_t line, const char* function,
                        uint64_t char_size);

// __xcuda_trap: abandons the block, failing the launch with ErrorCode::launch_failed.
[[noreturn]] void device_trap(const ptx::host_abi::BlockFrame* frame);
// __xcuda_illegal_instruction: fails the launch with ErrorCode::illegal_instruction.
[[noreturn]] void device_illegal_instruction(const ptx::host_abi::BlockFrame* frame);

// __xcuda_stack_overflow: an alloca of `bytes` found no room on its thread's stack. Logs the
// stack's size and how to raise it, and fails the launch with ErrorCode::illegal_address.
[[noreturn]] void device_stack_overflow(const ptx::host_abi::BlockFrame* frame, uint64_t bytes);

// Writes the pending device output to stdout and flushes it.
void flush_device_output();

}  // namespace xcuda::runtime::host
