#include "check/requirements.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "check/special_registers.h"
#include "check/targets.h"

namespace xcuda::ptx {
namespace {

// A feature and what it needs. It is used where an instruction's opcode is one of `opcodes`
// (any, where empty) and its modifiers hold `words` in that order, not necessarily adjacent
// (cvt.rn.f32.bf16 holds "f32 bf16", cvt.rn.bf16.f32 does not), and, where `operands` is not 0,
// it has that many operands; and only for a .target from architecture `from` on and below
// `below`, where that is not 0. A '*' in the feature's name stands for the opcode. Some features
// exist only on architecture-specific targets: `only_on` lists them ("90a", "100a 103a"), or says
// "specific" for any target with the a or f suffix.
struct Rule {
  std::string_view feature;
  std::string_view opcodes;
  std::string_view words;
  uint32_t version;       // ten times over: 70 for PTX 7.0; 0 for any
  uint32_t architecture;  // 80 for sm_80 or higher; 0 for any
  uint32_t operands = 0;
  uint32_t from = 0, below = 0;
  std::string_view only_on = {};
};

// What ptxas 13.0 answered for every form of tests/unit/ptx_inputs/ptxas_forms.txt and every
// conformance case, assembled under `.version 6.0` and `.target sm_50`, where it names each
// requirement the instruction misses; tests/unit/ptx_inputs/ptxas_requirements.py asks again.
constexpr Rule rules[] = {
    // Types and modifiers, on whichever instruction carries them.
    {".bf16", "", "bf16", 70, 80},
    {".bf16x2", "", "bf16x2", 70, 80},
    {".tf32", "", "tf32", 70, 80},
    {".relu", "", "relu", 70, 80},
    {".NaN", "", "NaN", 70, 80},
    {".xorsign", "", "xorsign", 72, 86},
    {".satfinite", "", "satfinite", 0, 70},
    {".oob", "", "oob", 81, 90},
    {".mmio", "", "mmio", 82, 70},
    {".relaxed", "", "relaxed", 0, 70},
    {".acquire", "", "acquire", 0, 70},
    {".release", "", "release", 0, 70},
    {".acq_rel", "", "acq_rel", 0, 70},
    {".weak", "ld st", "weak", 0, 70},
    {".cluster scope", "", "cluster", 78, 90},
    {"::cluster", "", "shared::cluster", 78, 90},
    {"::cta", "", "shared::cta", 78, 0},
    {"::entry", "", "param::entry", 83, 0},
    {".multicast::cluster", "", "multicast::cluster", 80, 90},
    {".mbarrier::complete_tx::bytes", "", "mbarrier::complete_tx::bytes", 80, 90},
    {".bulk_group", "", "bulk_group", 80, 90},
    {".tile", "", "tile", 80, 90},
    {".L2::cache_hint", "", "L2::cache_hint", 74, 80},
    {"cache prefetching", "", "L2::64B", 74, 75},
    {"cache prefetching", "", "L2::128B", 74, 75},
    {"256B cache prefetching", "", "L2::256B", 74, 80},
    {".L1::evict_first", "ld st", "L1::evict_first", 74, 70},
    {".L1::evict_last", "ld st", "L1::evict_last", 74, 70},
    {".L1::evict_normal", "ld st", "L1::evict_normal", 74, 70},
    {".L1::evict_unchanged", "ld st", "L1::evict_unchanged", 74, 70},
    {".L1::no_allocate", "ld st", "L1::no_allocate", 74, 70},
    {"cache eviction priority", "prefetch", "L2::evict_last", 74, 80},
    {"cache eviction priority", "prefetch", "L2::evict_normal", 74, 80},
    {".tensormap", "prefetch", "tensormap", 80, 90},
    {"scopes on atomic operations", "atom red", "cta", 0, 60},
    {"scopes on atomic operations", "atom red", "gpu", 0, 60},
    {"scopes on atomic operations", "atom red", "sys", 0, 60},

    // Half-precision arithmetic.
    {"f16 arithmetic and compare instructions", "add sub mul fma neg abs setp set", "f16", 0, 53},
    {"f16 arithmetic and compare instructions", "add sub mul fma neg abs setp set", "f16x2", 0, 53},
    {"abs.f16 or abs.f16x2", "abs", "f16", 65, 0},
    {"abs.f16 or abs.f16x2", "abs", "f16x2", 65, 0},
    {"half precision floating point set instruction with integer result", "set", "u32 f16", 65, 53},
    {"half precision floating point set instruction with integer result", "set", "u32 f16x2", 65, 53},
    {"half precision floating point set instruction with integer result", "set", "s32 f16", 65, 53},
    {"half precision floating point set instruction with integer result", "set", "s32 f16x2", 65, 53},
    {"half precision floating point set instruction with integer result", "set", "u16 f16", 65, 53},
    {"half precision floating point set instruction with integer result", "set", "s16 f16", 65, 53},
    {"*.f16 or *.f16x2", "min max", "f16", 70, 80},
    {"*.f16 or *.f16x2", "min max", "f16x2", 70, 80},
    {"*.bf16", "add sub mul set setp", "bf16", 78, 90},
    {"*.bf16x2", "add sub mul set setp", "bf16x2", 78, 90},
    {"*.f32x2", "add sub mul fma", "f32x2", 86, 100},
    {"*.s16x2", "add min max", "s16x2", 80, 90},
    {"*.u16x2", "add min max", "u16x2", 80, 90},
    {"*.relu", "min max", "relu", 80, 90},
    {".abs", "min max", "abs", 72, 86},
    {"*.f32 with 3 input operands", "min max", "", 88, 100, 4},
    {"ex2.f16/f16x2", "ex2", "f16", 70, 75},
    {"ex2.f16/f16x2", "ex2", "f16x2", 70, 75},
    {"ex2.bf16", "ex2", "bf16", 78, 90},
    {"ex2.bf16x2", "ex2", "bf16x2", 78, 90},
    {"tanh", "tanh", "", 70, 75},
    {"tanh.bf16", "tanh", "bf16", 78, 90},
    {"tanh.bf16x2", "tanh", "bf16x2", 78, 90},

    // Conversions.
    {"cvt with .f32.bf16", "cvt", "f32 bf16", 71, 80},
    {"cvt with .f64.bf16", "cvt", "f64 bf16", 78, 90},
    {"cvt with .f16.bf16", "cvt", "f16 bf16", 78, 90},
    {"cvt with .s32.bf16", "cvt", "s32 bf16", 78, 90},
    {"cvt with .bf16.f16", "cvt", "bf16 f16", 78, 90},
    {"cvt with .bf16.f64", "cvt", "bf16 f64", 78, 90},
    {"cvt.f16x2.f32", "cvt", "f16x2 f32", 70, 80},
    {"cvt with .tf32.f32.rn", "cvt", "rn tf32 f32", 78, 90},
    {"cvt with .tf32.f32.rz", "cvt", "rz tf32 f32", 78, 90},
    {".satfinite on cvt.tf32.f32.rn", "cvt", "rn satfinite tf32", 86, 100},
    {".satfinite on cvt.tf32.f32.rna", "cvt", "rna satfinite tf32", 81, 80},
    {".satfinite on cvt.f16.f32", "cvt", "satfinite f16 f32", 81, 0},
    {".satfinite on cvt.f16x2.f32", "cvt", "satfinite f16x2 f32", 81, 0},
    {".satfinite on cvt.bf16.f32", "cvt", "satfinite bf16 f32", 81, 0},
    {".satfinite on cvt.bf16x2.f32", "cvt", "satfinite bf16x2 f32", 81, 0},
    // sm_89 has them from PTX 8.1, later architectures from 7.8.
    {"cvt with .e4m3x2/.e5m2x2", "cvt", "e4m3x2", 78, 90, 0, 0, 89},
    {"cvt with .e4m3x2/.e5m2x2", "cvt", "e5m2x2", 78, 90, 0, 0, 89},
    {"cvt with .e4m3x2/.e5m2x2", "cvt", "e4m3x2", 78, 0, 0, 90},
    {"cvt with .e4m3x2/.e5m2x2", "cvt", "e5m2x2", 78, 0, 0, 90},
    {"cvt with .e4m3x2/.e5m2x2 on sm_89", "cvt", "e4m3x2", 81, 0, 0, 89, 90},
    {"cvt with .e4m3x2/.e5m2x2 on sm_89", "cvt", "e5m2x2", 81, 0, 0, 89, 90},
    {"cvt with .e2m1x2", "cvt", "e2m1x2", 86, 0, 0, 0, 0, "100a 100f 103a 103f 110a 110f 120a 120f 121a 121f"},
    {"cvt with .e2m3x2/.e3m2x2", "cvt", "e2m3x2", 86, 0, 0, 0, 0, "100a 100f 103a 103f 110a 110f 120a 120f 121a 121f"},
    {"cvt with .e2m3x2/.e3m2x2", "cvt", "e3m2x2", 86, 0, 0, 0, 0, "100a 100f 103a 103f 110a 110f 120a 120f 121a 121f"},
    {"cvt with .ue8m0x2", "cvt", "ue8m0x2", 86, 0, 0, 0, 0, "100a 100f 103a 103f 110a 110f 120a 120f 121a 121f"},
    {".rs", "cvt", "rs", 87, 0, 0, 0, 0, "100a 103a"},
    {"cvt.pack", "cvt", "pack", 65, 72},
    {"cvt.pack with sub-byte type", "cvt", "pack s4", 65, 75},
    {"cvt.pack with sub-byte type", "cvt", "pack u4", 65, 75},
    {"cvt.pack with sub-byte type", "cvt", "pack s2", 65, 75},
    {"cvt.pack with sub-byte type", "cvt", "pack u2", 65, 75},
    {"cvta/isspacep with .param state space", "cvta isspacep", "param", 77, 70},
    {"cvta/isspacep with .param state space", "isspacep", "param::entry", 77, 70},

    // Integer and bit instructions.
    {"*", "dp4a dp2a", "", 0, 61},
    {"*", "bmsk szext", "", 76, 70},
    {"lop3.<BoolOp>", "lop3", "and", 82, 70},
    {"lop3.<BoolOp>", "lop3", "or", 82, 70},

    // Memory.
    {"Instruction type .b128 for instruction *", "ld ldu st mov", "b128", 83, 70},
    {"*.b128", "atom", "b128", 83, 90},
    {"*.cas.b16", "atom", "cas b16", 63, 70},
    {"*.add.f16", "atom red", "add f16", 63, 70},
    {"*.add.f16x2", "atom red", "add f16x2", 62, 60},
    {"*.add.f64", "atom red", "add f64", 0, 60},
    {"*.add.bf16", "atom red", "add bf16", 78, 90},
    {"*.add.bf16x2", "atom red", "add bf16x2", 78, 90},
    {"* instruction with vector types", "atom red", "v2", 81, 90},
    {"* instruction with vector types", "atom red", "v4", 81, 90},
    {"* instruction with vector types", "atom red", "v8", 81, 90},
    {"256 bit wide load/store", "ld st", "v8", 88, 100},
    {"256 bit wide load/store", "ld st", "v4 b64", 88, 100},
    {"256 bit wide load/store", "ld st", "v4 u64", 88, 100},
    {"256 bit wide load/store", "ld st", "v4 s64", 88, 100},
    {"256 bit wide load/store", "ld st", "v4 f64", 88, 100},
    {"st.async/red.async", "st red", "async", 81, 90},
    {"st.async/red.async with .global state space", "st red", "async global", 87, 100},
    {"st.bulk", "st", "bulk", 86, 100},
    {"multimem", "multimem", "", 81, 90},
    {".acc::f32", "multimem", "acc::f32", 82, 90},
    {"*", "alloca stacksave stackrestore", "", 73, 52},
    {"*", "applypriority discard createpolicy", "", 74, 80},

    // Asynchronous copies.
    {"cp.async", "cp", "async", 70, 80},
    {"cp.async.bulk", "cp", "async bulk", 80, 90},
    {"cp.async.bulk with destination state space as .shared::cta", "cp", "async bulk shared::cta global", 86, 90},

    // Barriers, fences and synchronisation.
    {"*.cta", "bar barrier", "cta", 78, 0},
    {".relaxed on barrier.cluster.arrive", "barrier", "cluster arrive relaxed", 80, 90},
    {"fence instruction", "fence", "", 0, 70},
    {"fence.proxy", "fence", "proxy", 75, 70},
    {".async", "fence", "proxy async", 80, 90},
    {"fence.proxy with unidirection proxy fence", "fence", "proxy tensormap::generic", 83, 70},
    {"fence.proxy with unidirection proxy fence", "fence", "proxy async::generic", 86, 90},
    {".mbarrier_init", "fence", "mbarrier_init", 80, 90},
    {".sync_restrict", "fence", "sync_restrict::shared::cta", 86, 90},
    {".sync_restrict", "fence", "sync_restrict::shared::cluster", 86, 90},
    {"membar.proxy", "membar", "proxy", 75, 60},
    {"mbarrier", "mbarrier", "", 70, 80},
    {"mbarrier.test_wait.parity", "mbarrier", "test_wait parity", 71, 80},
    {"mbarrier.try_wait", "mbarrier", "try_wait", 78, 90},
    {"mbarrier.expect_tx", "mbarrier", "expect_tx", 80, 90},
    {"mbarrier.complete_tx", "mbarrier", "complete_tx", 80, 90},
    {".release on mbarrier.arrive", "mbarrier", "release", 80, 0},
    {"scopes on mbarrier operations", "mbarrier", "cta", 80, 0},
    {"scopes on mbarrier operations", "mbarrier", "cluster", 80, 0},
    {".relaxed on mbarrier.try_wait.parity", "mbarrier", "try_wait parity relaxed", 86, 90},
    {"redux", "redux", "", 70, 80},
    {"redux.f32", "redux", "f32", 86, 0, 0, 0, 0, "100a 100f 103a 103f"},
    {".abs on redux", "redux", "abs", 86, 86},
    {"match", "match", "", 0, 70},
    {"nanosleep", "nanosleep", "", 62, 70},
    {"activemask", "activemask", "", 62, 0},
    {"elect", "elect", "", 80, 90},
    {"*", "mapa getctarank", "", 78, 90},
    {"griddepcontrol", "griddepcontrol", "", 78, 90},
    {"setmaxnreg", "setmaxnreg", "", 80, 0, 0, 0, 0, "specific"},
    {"clusterlaunchcontrol", "clusterlaunchcontrol", "", 86, 100},
    {"tensormap", "tensormap", "", 83, 0},
    {"tensormap.replace", "tensormap", "replace", 83, 0, 0, 0, 0, "specific"},

    // Matrix instructions.
    {"ldmatrix", "ldmatrix", "", 65, 75},
    {"stmatrix", "stmatrix", "", 78, 90},
    {"movmatrix", "movmatrix", "", 78, 75},
    {"mma", "mma", "", 64, 70},
    {".m16n8k8", "mma", "m16n8k8", 65, 75},
    {".m8n8k16", "mma", "m8n8k16", 65, 75},
    {".m8n8k32", "mma", "m8n8k32", 65, 75},
    {".m8n8k32", "wmma", "m8n8k32", 63, 75},
    {".m8n8k128", "mma wmma", "m8n8k128", 63, 75},
    {".m16n8k16", "mma", "m16n8k16", 70, 80},
    {".m16n8k32", "mma", "m16n8k32", 70, 80},
    {".m16n8k64", "mma", "m16n8k64", 70, 80},
    {".m16n8k128", "mma", "m16n8k128", 70, 80},
    {".m16n8k256", "mma", "m16n8k256", 70, 80},
    {".m16n8k4", "mma", "m16n8k4", 70, 80},
    {".m8n8k4 with double types", "mma", "m8n8k4 f64", 70, 80},
    {".m16n8k4 with double types", "mma", "m16n8k4 f64", 78, 90},
    {".m16n8k8 with double types", "mma", "m16n8k8 f64", 78, 90},
    {".m16n8k16 with double types", "mma", "m16n8k16 f64", 78, 90},
    {".and on mma", "mma", "and", 71, 80},
    {".b1", "mma wmma", "b1", 63, 75},
    {".s4", "mma wmma", "s4", 63, 75},
    {".u4", "mma wmma", "u4", 63, 75},
    {"mma with FP8 floating point type", "mma", "e4m3", 84, 89},
    {"mma with FP8 floating point type", "mma", "e5m2", 84, 89},
    {"mma with FP8 floating point type and FP16 accumulation", "mma", "f16 e4m3", 87, 89},
    {"mma with FP8 floating point type and FP16 accumulation", "mma", "f16 e5m2", 87, 89},
    {"mma with FP8 floating point type and .m16n8k16 shape", "mma", "m16n8k16 e4m3", 87, 89},
    {"mma with FP8 floating point type and .m16n8k16 shape", "mma", "m16n8k16 e5m2", 87, 89},
    {"WMMA with floating point types", "wmma", "", 0, 70},
    {".aligned modifier for wmma", "wmma", "aligned", 63, 0},
    {".m32n8k16", "wmma", "m32n8k16", 61, 70},
    {".m8n32k16", "wmma", "m8n32k16", 61, 70},
    {".m16n16k8", "wmma", "m16n16k8", 70, 80},
    {"WMMA with integer types", "wmma", "s8", 63, 72},
    {"WMMA with integer types", "wmma", "u8", 63, 72},
    {"WMMA with integer types", "wmma", "s32", 63, 72},
    {"WMMA with fp64 types", "wmma", "f64", 70, 80},
    {"WGMMA", "wgmma", "", 80, 0, 0, 0, 0, "90a"},
};

// The first word of a space-separated `list`, which loses it.
std::string_view take_word(std::string_view& list) {
  size_t space = list.find(' ');
  std::string_view word = list.substr(0, space);
  list = space == std::string_view::npos ? std::string_view{} : list.substr(space + 1);
  return word;
}

bool contains(std::string_view list, std::string_view word) {
  while (!list.empty())
    if (take_word(list) == word) return true;
  return false;
}

// Whether `modifiers` hold every word of `words` in that order.
bool holds_in_order(const std::vector<Modifier>& modifiers, std::string_view words) {
  auto next = modifiers.begin();
  while (!words.empty()) {
    std::string_view word = take_word(words);
    next = std::find_if(next, modifiers.end(), [&](const Modifier& modifier) { return modifier.word == word; });
    if (next == modifiers.end()) return false;
    ++next;
  }
  return true;
}

// Whether a target ("90a", "100f") is one of `only_on`.
bool offers(std::string_view only_on, std::string_view target) {
  if (only_on == "specific") return target.ends_with('a') || target.ends_with('f');
  return contains(only_on, target);
}

std::string version_text(uint32_t version) { return std::to_string(version / 10) + "." + std::to_string(version % 10); }

// ptxas's two messages, for whichever of the two `level` lacks.
void report(std::vector<std::string>& messages, std::string_view feature, uint32_t version, uint32_t architecture,
            const ModuleLevel& level, std::string_view opcode = {}, std::string_view only_on = {}) {
  std::string name;
  for (char letter : feature) name += letter == '*' ? std::string(opcode) : std::string(1, letter);
  if (level.architecture != 0 && level.architecture < architecture)
    messages.push_back("'" + name + "' requires .target sm_" + std::to_string(architecture) + " or higher");
  else if (!only_on.empty() && !level.target.empty() && !offers(only_on, level.target))
    messages.push_back("'" + name + "' is not supported on .target sm_" + level.target);
  if (level.version != 0 && level.version < version)
    messages.push_back("'" + name + "' requires PTX ISA .version " + version_text(version) + " or later");
}

void report_registers(std::vector<std::string>& messages, const Operand& operand, const ModuleLevel& level) {
  for (const Operand& element : operand.elements) report_registers(messages, element, level);
  if (operand.kind != Operand::Kind::name) return;
  if (!operand.name.starts_with('%')) return;
  if (const SpecialRegister* special = find_special_register(std::string_view(operand.name).substr(1)))
    report(messages, operand.name, special->version, special->architecture, level);
}

// The rules that may apply to `instruction`, in the table's order: those of its opcode and those
// of any opcode whose first word it carries. Trying all of them on every instruction took a
// twelfth of parsing and checking a 1.8 MB libcusparse module, and each share of a module checks
// it whole.
std::vector<size_t> candidate_rules(const Instruction& instruction) {
  using Index = std::unordered_map<std::string_view, std::vector<size_t>>;
  static const std::pair<Index, Index> indexes = [] {
    Index by_opcode, by_first_word;
    for (size_t index = 0; index < std::size(rules); ++index) {
      std::string_view words = rules[index].words;
      if (rules[index].opcodes.empty()) by_first_word[take_word(words)].push_back(index);
      for (std::string_view opcodes = rules[index].opcodes; !opcodes.empty();) by_opcode[take_word(opcodes)].push_back(index);
    }
    return std::pair{by_opcode, by_first_word};
  }();
  const auto& [by_opcode, by_first_word] = indexes;
  std::vector<size_t> candidates;
  auto add = [&](const Index& index, std::string_view key) {
    if (auto found = index.find(key); found != index.end()) candidates.insert(candidates.end(), found->second.begin(), found->second.end());
  };
  add(by_opcode, instruction.opcode);
  for (const Modifier& modifier : instruction.modifiers) add(by_first_word, modifier.word);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  return candidates;
}

}  // namespace

ModuleLevel module_level(const Module& module) {
  ModuleLevel level;
  level.version = version_number(module.version).value_or(0);
  if (std::optional<TargetName> target = target_name(module.target)) {
    level.architecture = target->number;
    level.target = std::to_string(target->number) + std::string(target->suffix);
  }
  return level;
}

std::vector<std::string> unmet_requirements(const Instruction& instruction, const ModuleLevel& level) {
  std::vector<std::string> messages;
  for (size_t index : candidate_rules(instruction)) {
    const Rule& rule = rules[index];
    if (rule.operands != 0 && instruction.operands.size() != rule.operands) continue;
    if (level.architecture < rule.from || (rule.below != 0 && level.architecture >= rule.below)) continue;
    if (holds_in_order(instruction.modifiers, rule.words))
      report(messages, rule.feature, rule.version, rule.architecture, level, instruction.opcode, rule.only_on);
  }
  for (const Operand& operand : instruction.operands) report_registers(messages, operand, level);
  return messages;
}

std::vector<std::string> unmet_requirements(const VariableDeclaration& declaration, const ModuleLevel& level) {
  std::vector<std::string> messages;
  if (declaration.type == ScalarType::b128) report(messages, "Type .b128", 83, 70, level);
  return messages;
}

}  // namespace xcuda::ptx
