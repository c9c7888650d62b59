// The on-disk form of one code-cache entry: a compiled module (object bytes plus its
// ptx::ModuleInfo) in a small versioned binary format of our own.
//
//   offset  size  field
//   0       8     magic "XCUDACC\0"
//   8       4     format version (entry_format_version), little-endian like every integer here
//   12      4     reserved, zero
//   16      8     payload size in bytes
//   24      32    SHA-256 of the payload
//   56      ...   payload: the key, the object, the kernels, the globals
//
// Nothing read from disk is trusted: every length is checked against what remains, and the
// checksum covers every payload byte, so damage anywhere is found before anything is used.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/compiler.h"
#include "runtime/status.h"

namespace xcuda::runtime {

// Bump when the layout of the payload changes; older entries then read as stale, not damaged.
inline constexpr uint32_t entry_format_version = 4;
inline constexpr size_t entry_header_bytes = 56;

// `key` is stored inside the entry so that a file renamed or copied under another key is
// refused rather than run.
std::vector<uint8_t> serialize_entry(std::string_view key, const ptx::CompileResult& compiled);

// Fails with ErrorCode::invalid_image and a message saying what is wrong and at which offset.
Expected<ptx::CompileResult> parse_entry(std::span<const uint8_t> bytes, std::string_view key);

}  // namespace xcuda::runtime
