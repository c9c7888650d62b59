#include "check/instruction_set.h"

namespace xcuda::ptx {
namespace {

constexpr uint32_t float_math = type_group | float_rounding_group | flush_group | saturate_group;
constexpr uint32_t memory = type_group | space_group | vector_group | volatile_group | cache_group | ordering_group;

constexpr InstructionSignature instruction_set[] = {
    // arithmetic
    {"add", float_math | carry_group, "ttt", ""},
    {"sub", float_math | carry_group, "ttt", ""},
    {"addc", type_group | carry_group, "ttt", ""},
    {"subc", type_group | carry_group, "ttt", ""},
    {"mul", float_math | width_group, "wtt", ""},
    {"mad", float_math | width_group | carry_group, "wttw", ""},
    {"madc", type_group | width_group | carry_group, "wttw", ""},
    {"mul24", type_group | width_group, "ttt", ""},
    {"mad24", type_group | width_group | saturate_group, "tttt", ""},
    {"fma", float_math, "tttt", ""},
    {"div", float_math | precision_group, "ttt", ""},
    {"rem", type_group, "ttt", ""},
    {"abs", type_group | flush_group, "tt", ""},
    {"neg", type_group | flush_group, "tt", ""},
    {"min", type_group | flush_group, "ttt", "NaN xorsign"},
    {"max", type_group | flush_group, "ttt", "NaN xorsign"},
    {"rcp", float_math | precision_group, "tt", ""},
    {"sqrt", float_math | precision_group, "tt", ""},
    {"rsqrt", type_group | flush_group | precision_group, "tt", ""},
    {"sin", type_group | flush_group | precision_group, "tt", ""},
    {"cos", type_group | flush_group | precision_group, "tt", ""},
    {"lg2", type_group | flush_group | precision_group, "tt", ""},
    {"ex2", type_group | flush_group | precision_group, "tt", ""},
    {"tanh", type_group | precision_group, "tt", ""},
    {"copysign", type_group, "ttt", ""},
    {"dp4a", type_group, "*ts*", ""},
    {"dp2a", type_group | width_group, "*ts*", ""},
    {"testp", type_group, "pt", "finite infinite number notanumber normal subnormal"},
    // bits
    {"and", type_group, "ttt", ""},
    {"or", type_group, "ttt", ""},
    {"xor", type_group, "ttt", ""},
    {"not", type_group, "tt", ""},
    {"cnot", type_group, "tt", ""},
    {"shl", type_group, "ttu", ""},
    {"shr", type_group, "ttu", ""},
    {"shf", type_group, "tttu", "l r wrap clamp"},
    {"popc", type_group, "ut", ""},
    {"clz", type_group, "ut", ""},
    {"brev", type_group, "tt", ""},
    {"bfind", type_group, "ut", "shiftamt"},
    {"bfe", type_group, "ttuu", ""},
    {"bfi", type_group, "tttuu", ""},
    {"prmt", type_group, "tttt", "f4e b4e rc8 ecl ecr rc16"},
    {"lop3", type_group, "tttt*", ""},
    {"bmsk", type_group, "tuu", "clamp wrap"},
    {"szext", type_group, "ttu", "clamp wrap"},
    // comparison and selection
    {"setp", type_group | comparison_group | combine_group | flush_group, "Ptt?c", ""},
    {"set", type_group | comparison_group | combine_group | flush_group, "*ss?c", ""},
    {"selp", type_group, "tttc", ""},
    {"slct", type_group | flush_group, "ttts", ""},
    // data movement and conversion
    {"mov", type_group | vector_group, "t*", ""},
    {"cvt", type_group | float_rounding_group | integer_rounding_group | flush_group | saturate_group, "ts?s", "relu"},
    {"cvta", type_group | space_group | to_group, "t*", ""},
    {"ld", memory, "ta", ""},
    {"ldu", memory, "ta", ""},
    {"st", memory, "at", ""},
    {"prefetch", space_group | cache_group, "a", "L1 L2"},
    {"isspacep", space_group, "pt", ""},
    // control flow
    {"bra", uniform_group, "l", ""},
    {"call", uniform_group, "*?**", ""},
    {"ret", uniform_group, "", ""},
    {"exit", 0, "", ""},
    {"trap", 0, "", ""},
    {"brkpt", 0, "", ""},
    {"nanosleep", type_group, "*", ""},
    // synchronisation and atomics
    {"bar", type_group | barrier_group, "?***", ""},
    {"barrier", type_group | barrier_group, "?***", ""},
    {"membar", ordering_group, "", "gl"},
    {"fence", ordering_group, "", "proxy alias async"},
    {"atom", type_group | space_group | atomic_operation_group | ordering_group, "ta*?*", "noftz"},
    {"red", type_group | space_group | atomic_operation_group | ordering_group, "a*", "noftz"},
    // warp collectives: parsed and checked, lowered in a later stage of the project
    {"shfl", type_group | barrier_group, "****?*", "up down bfly idx"},
    {"vote", type_group | barrier_group, "***?*", "uni"},
    {"activemask", type_group, "t", ""},
    {"match", type_group | barrier_group, "***?*", ""},
    {"redux", type_group | barrier_group | atomic_operation_group, "***", ""},
};

constexpr std::string_view later_instructions[] = {
    "sad", "fns", "istypep", "tex", "tld4",
    "txq", "suld", "sust", "sured", "suq", "ldmatrix", "stmatrix", "movmatrix", "mma", "wmma", "wgmma",
    "cp", "mbarrier", "mapa", "getctarank", "elect", "griddepcontrol", "setmaxnreg", "stacksave",
    "stackrestore", "alloca", "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
    "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4",
    "vabsdiff4", "vmin4", "vmax4", "vset4", "multimem", "tensormap", "applypriority", "discard",
    "createpolicy", "prefetchu", "cctl", "pmevent", "clusterlaunchcontrol", "tcgen05",
};

}  // namespace

bool is_later_ptx_instruction(std::string_view opcode) {
  for (std::string_view name : later_instructions)
    if (name == opcode) return true;
  return false;
}

const InstructionSignature* find_instruction(std::string_view opcode) {
  for (const auto& signature : instruction_set)
    if (signature.opcode == opcode) return &signature;
  return nullptr;
}

}  // namespace xcuda::ptx
