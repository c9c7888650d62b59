// The targets a module's .target may name, and the PTX version each needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xcuda::ptx {

// The lowest .version (ten times it: 78 for 7.8) that `target` (sm_90, compute_90a, sm_100f …)
// needs, 0 where any version PTX 6.0 or later has will do; none for a target ptxas does not know.
std::optional<uint32_t> minimum_version(std::string_view target);

// A target's architecture number and suffix: sm_90a and compute_90a are {90, "a"}; none where
// it names no number.
struct TargetName {
  uint32_t number;
  std::string_view suffix;
};
std::optional<TargetName> target_name(std::string_view target);

// A .version's number ten times over (9.0 → 90); none where it is not major.minor.
std::optional<uint32_t> version_number(std::string_view version);

}  // namespace xcuda::ptx
