// A small reader for the one thing the xcuda command needs from an executable or shared
// library: the bytes of a named section (.nv_fatbin). 64-bit little-endian ELF only, which is
// what nvcc produces on the platforms xcuda runs on; every offset is checked against the file.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/status.h"

namespace xcuda::cli {

bool is_elf(std::span<const uint8_t> file);

// ErrorCode::not_found when the file has no such section; invalid_image when it is damaged.
Expected<std::span<const uint8_t>> find_elf_section(std::span<const uint8_t> file,
                                                    std::string_view name);

}  // namespace xcuda::cli
