#include "check/targets.h"

#include <algorithm>
#include <charconv>

namespace xcuda::ptx {
namespace {

// What ptxas 13 answers, tried version by version ("PTX .version 7.4 does not support .target
// sm_89"). Architecture-specific targets (a) exist from sm_90 on, family ones (f) from sm_100
// on, the latter only from PTX 8.8.
struct Architecture {
  uint32_t number;
  uint32_t version;         // the plain and "a" targets'
  bool specific, family;    // whether the "a" and "f" targets exist
  uint32_t specific_version = 0;
};

constexpr Architecture architectures[] = {
    {10, 0, false, false},  {11, 0, false, false},  {12, 0, false, false},  {13, 0, false, false},
    {20, 0, false, false},  {21, 0, false, false},  {30, 0, false, false},  {32, 0, false, false},
    {35, 0, false, false},  {37, 0, false, false},  {50, 0, false, false},  {52, 0, false, false},
    {53, 0, false, false},  {60, 0, false, false},  {61, 0, false, false},  {62, 0, false, false},
    {70, 0, false, false},  {72, 61, false, false}, {75, 63, false, false}, {80, 70, false, false},
    {86, 71, false, false}, {87, 74, false, false}, {88, 73, false, false}, {89, 78, false, false},
    {90, 78, true, false, 80}, {100, 86, true, true}, {101, 86, true, true}, {103, 88, true, true},
    {110, 90, true, true},  {120, 87, true, true},  {121, 88, true, true},
};

constexpr uint32_t family_version = 88;

}  // namespace

std::optional<TargetName> target_name(std::string_view target) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (target.starts_with(prefix)) target.remove_prefix(prefix.size());
  uint32_t number = 0;
  auto [end, error] = std::from_chars(target.data(), target.data() + target.size(), number);
  if (error != std::errc{} || end == target.data()) return std::nullopt;
  return TargetName{number, std::string_view(end, target.data() + target.size() - end)};
}

std::optional<uint32_t> minimum_version(std::string_view target) {
  std::optional<TargetName> name = target_name(target);
  if (!name) return std::nullopt;
  const auto [number, suffix] = *name;
  for (const Architecture& architecture : architectures) {
    if (architecture.number != number) continue;
    if (suffix.empty()) return architecture.version;
    if (suffix == "a" && architecture.specific) return std::max(architecture.version, architecture.specific_version);
    if (suffix == "f" && architecture.family) return std::max(architecture.version, family_version);
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<uint32_t> version_number(std::string_view version) {
  uint32_t major = 0, minor = 0;
  const char* last = version.data() + version.size();
  auto [dot, major_error] = std::from_chars(version.data(), last, major);
  if (major_error != std::errc{} || dot == last || *dot != '.') return std::nullopt;
  auto [end, minor_error] = std::from_chars(dot + 1, last, minor);
  if (minor_error != std::errc{} || end != last || end == dot + 1 || minor > 9) return std::nullopt;
  return major * 10 + minor;
}

}  // namespace xcuda::ptx
