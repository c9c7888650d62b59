// SHA-256, the one hash the code cache uses: for entry names (the key) and entry checksums.
// A strong hash because a collision would silently run the wrong machine code.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace xcuda::runtime {

using Digest = std::array<uint8_t, 32>;

Digest sha256(std::span<const uint8_t> bytes);
std::string to_hex(const Digest& digest);

}  // namespace xcuda::runtime
