#include "runtime/cache_hash.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/SHA256.h>

namespace xcuda::runtime {

Digest sha256(std::span<const uint8_t> bytes) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(bytes.data(), bytes.size()));
}

std::string to_hex(const Digest& digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(digest.size() * 2);
  for (uint8_t byte : digest) {
    text += digits[byte >> 4];
    text += digits[byte & 0xf];
  }
  return text;
}

}  // namespace xcuda::runtime
