#include "check/special_registers.h"

namespace xcuda::ptx {
namespace {

constexpr SpecialRegister special_registers[] = {
    {"tid", true, 32},          {"ntid", true, 32},           {"ctaid", true, 32},
    {"nctaid", true, 32},       {"laneid", false, 32},        {"warpid", false, 32},
    {"nwarpid", false, 32},     {"smid", false, 32},          {"nsmid", false, 32},
    {"gridid", false, 64},      {"clock", false, 32},         {"clock64", false, 64},
    {"lanemask_eq", false, 32}, {"lanemask_le", false, 32},   {"lanemask_lt", false, 32},
    {"lanemask_ge", false, 32}, {"lanemask_gt", false, 32},   {"dynamic_smem_size", false, 32},
    {"total_smem_size", false, 32}, {"globaltimer", false, 64}, {"globaltimer_lo", false, 32},
    {"globaltimer_hi", false, 32},
    // What the module's .version and .target must offer to read them, as ptxas 13 answers.
    {"reserved_smem_offset_begin", false, 32, 76, 80}, {"reserved_smem_offset_end", false, 32, 76, 80},
    {"reserved_smem_offset_cap", false, 32, 76, 80}, {"reserved_smem_offset_0", false, 32, 76, 80},
    {"reserved_smem_offset_1", false, 32, 76, 80},
    {"clusterid", true, 32, 78, 90},    {"nclusterid", true, 32, 78, 90},     {"cluster_ctaid", true, 32, 78, 90},
    {"cluster_nctaid", true, 32, 78, 90}, {"cluster_ctarank", false, 32, 78, 90}, {"cluster_nctarank", false, 32, 78, 90},
    {"is_explicit_cluster", false, 1, 78, 90}, {"clock_hi", false, 32}, {"aggr_smem_size", false, 32, 81, 90},
    {"pm0", false, 32}, {"pm1", false, 32}, {"pm2", false, 32}, {"pm3", false, 32},
    {"pm4", false, 32}, {"pm5", false, 32}, {"pm6", false, 32}, {"pm7", false, 32},
    {"pm0_64", false, 64}, {"pm1_64", false, 64}, {"pm2_64", false, 64}, {"pm3_64", false, 64},
    {"pm4_64", false, 64}, {"pm5_64", false, 64}, {"pm6_64", false, 64}, {"pm7_64", false, 64},
    {"current_graph_exec", false, 64, 80, 0},
};

// %envreg0 to %envreg31, driver-defined words (PTX ISA: "Special Registers: %envreg<32>").
bool is_environment_register(std::string_view name) {
  constexpr std::string_view prefix = "envreg";
  if (!name.starts_with(prefix)) return false;
  std::string_view number = name.substr(prefix.size());
  if (number.empty() || number.size() > 2 || (number.size() == 2 && number[0] == '0')) return false;
  uint32_t value = 0;
  for (char digit : number) {
    if (digit < '0' || digit > '9') return false;
    value = value * 10 + uint32_t(digit - '0');
  }
  return value < 32;
}

constexpr SpecialRegister environment_register = {"envreg", false, 32};

}  // namespace

const SpecialRegister* find_special_register(std::string_view name) {
  if (is_environment_register(name)) return &environment_register;
  for (const auto& special : special_registers)
    if (special.name == name) return &special;
  return nullptr;
}

}  // namespace xcuda::ptx
