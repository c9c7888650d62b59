// The special registers PTX code can read (%tid, %laneid, %clock64 …).
#pragma once

#include <cstdint>
#include <string_view>

namespace xcuda::ptx {

struct SpecialRegister {
  std::string_view name;  // without the leading %
  bool has_components;    // %tid.x, %ntid.y …
  uint32_t bits;          // 32 or 64, or 1 for the predicate %is_explicit_cluster
  uint32_t version = 0;   // the PTX version (ten times over) and architecture reading it needs
  uint32_t architecture = 0;
};

const SpecialRegister* find_special_register(std::string_view name);

}  // namespace xcuda::ptx
