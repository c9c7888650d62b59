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
};

}  // namespace

const SpecialRegister* find_special_register(std::string_view name) {
  for (const auto& special : special_registers)
    if (special.name == name) return &special;
  return nullptr;
}

}  // namespace xcuda::ptx
