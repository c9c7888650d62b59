#include "check/qualifiers.h"

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

namespace xcuda::ptx {
namespace {

constexpr std::pair<std::string_view, Rounding> roundings[] = {
    {"rn", Rounding::rn},   {"rz", Rounding::rz},   {"rm", Rounding::rm},   {"rp", Rounding::rp},
    {"rna", Rounding::rna}, {"rni", Rounding::rni}, {"rzi", Rounding::rzi}, {"rmi", Rounding::rmi},
    {"rpi", Rounding::rpi},
};

constexpr std::pair<std::string_view, Comparison> comparisons[] = {
    {"eq", Comparison::eq},   {"ne", Comparison::ne},   {"lt", Comparison::lt},   {"le", Comparison::le},
    {"gt", Comparison::gt},   {"ge", Comparison::ge},   {"lo", Comparison::lo},   {"ls", Comparison::ls},
    {"hi", Comparison::hi},   {"hs", Comparison::hs},   {"equ", Comparison::equ}, {"neu", Comparison::neu},
    {"ltu", Comparison::ltu}, {"leu", Comparison::leu}, {"gtu", Comparison::gtu}, {"geu", Comparison::geu},
    {"num", Comparison::num}, {"nan", Comparison::nan},
};

constexpr std::pair<std::string_view, Operation> operations[] = {
    {"and", Operation::and_}, {"or", Operation::or_},   {"xor", Operation::xor_}, {"add", Operation::add},
    {"min", Operation::min},  {"max", Operation::max},  {"inc", Operation::inc},  {"dec", Operation::dec},
    {"exch", Operation::exch}, {"cas", Operation::cas},
};

constexpr std::string_view cache_words[] = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc"};
constexpr std::pair<std::string_view, MemoryOrder> orders[] = {
    {"relaxed", MemoryOrder::relaxed}, {"acquire", MemoryOrder::acquire}, {"release", MemoryOrder::release},
    {"acq_rel", MemoryOrder::acquire_release}, {"sc", MemoryOrder::sequential},
};
// Scopes: every scope is the whole process on the host.
constexpr std::string_view scope_words[] = {"cta", "gpu", "sys", "cluster", "weak", "mmio"};
constexpr std::string_view barrier_words[] = {"sync", "arrive", "red", "aligned", "all", "any",
                                              "ballot", "popc", "uni", "warp", "cta", "and", "or"};

template <typename Table>
auto lookup(const Table& table, std::string_view word) -> decltype(std::optional(table[0].second)) {
  for (const auto& [name, value] : table)
    if (name == word) return value;
  return std::nullopt;
}

bool contains(std::span<const std::string_view> words, std::string_view word) {
  for (std::string_view candidate : words)
    if (candidate == word) return true;
  return false;
}

// e4m3x4, e2m1x4 ...: not ldmatrix's x4.
bool is_packed_four(std::string_view word) { return word.size() == 6 && word[0] == 'e' && word.ends_with("x4"); }

// A trailing '*' in `extras` stands for any rest of a word (wgmma's many shapes: "m64n*").
bool is_extra_word(std::string_view extras, std::string_view word) {
  while (!extras.empty()) {
    size_t end = extras.find(' ');
    std::string_view extra = extras.substr(0, end);
    if (extra.ends_with('*') ? word.starts_with(extra.substr(0, extra.size() - 1)) : extra == word) return true;
    if (end == std::string_view::npos) break;
    extras.remove_prefix(end + 1);
  }
  return false;
}

// Applies `word` to `qualifiers` when it belongs to a group the instruction accepts.
bool apply(std::string_view word, uint32_t groups, Qualifiers& qualifiers) {
  auto allowed = [&](ModifierGroup group) { return (groups & group) != 0; };
  if (auto type = scalar_type_named(word); type && allowed(type_group)) {
    qualifiers.types.push_back(*type);
    return true;
  }
  std::string_view space_word = word.substr(0, word.find("::"));
  if (auto space = state_space_named(space_word); space && allowed(space_group)) {
    qualifiers.space = *space;
    return true;
  }
  if (auto rounding = lookup(roundings, word)) {
    bool integer_rounding = *rounding >= Rounding::rni;
    if (allowed(integer_rounding ? integer_rounding_group : float_rounding_group)) {
      qualifiers.rounding = *rounding;
      return true;
    }
  }
  if (auto comparison = lookup(comparisons, word); comparison && allowed(comparison_group)) {
    qualifiers.comparison = *comparison;
    return true;
  }
  if (auto operation = lookup(operations, word)) {
    bool is_combine = *operation <= Operation::xor_;
    if (allowed(atomic_operation_group) || (is_combine && allowed(combine_group))) {
      qualifiers.operation = *operation;
      return true;
    }
  }
  if ((word == "v2" || word == "v4" || word == "v8") && allowed(vector_group)) {
    qualifiers.vector_width = static_cast<uint32_t>(word[1] - '0');
    return true;
  }
  struct Flag {
    std::string_view word;
    ModifierGroup group;
    bool Qualifiers::*field;
  };
  static constexpr Flag flags[] = {
      {"ftz", flush_group, &Qualifiers::ftz},          {"sat", saturate_group, &Qualifiers::saturate},
      {"approx", precision_group, &Qualifiers::approx}, {"full", precision_group, &Qualifiers::full},
      {"wide", width_group, &Qualifiers::wide},         {"lo", width_group, &Qualifiers::low},
      {"hi", width_group, &Qualifiers::high},           {"uni", uniform_group, &Qualifiers::uniform},
      {"volatile", volatile_group, &Qualifiers::volatile_access},
      {"to", to_group, &Qualifiers::to_space},          {"cc", carry_group, &Qualifiers::carry_out},
  };
  for (const Flag& flag : flags) {
    if (flag.word == word && allowed(flag.group)) {
      qualifiers.*flag.field = true;
      return true;
    }
  }
  if (allowed(cache_group) && (contains(cache_words, word) || word.starts_with("L1::") ||
                               word.starts_with("L2::") || word == "L2"))
    return true;
  if (allowed(ordering_group)) {
    if (auto order = lookup(orders, word)) {
      qualifiers.order = *order;
      return true;
    }
    if (contains(scope_words, word)) return true;
  }
  if (allowed(barrier_group) && contains(barrier_words, word)) {
    qualifiers.other.emplace_back(word);
    return true;
  }
  return false;
}

}  // namespace

bool packs_four(const Qualifiers& qualifiers) {
  return std::any_of(qualifiers.other.begin(), qualifiers.other.end(), is_packed_four);
}

bool decode_qualifiers(Instruction& instruction, const InstructionSignature& signature,
                       DiagnosticSink& diagnostics) {
  bool ok = true;
  for (const Modifier& modifier : instruction.modifiers) {
    if (is_extra_word(signature.extra_words, modifier.word)) {
      instruction.qualifiers.other.push_back(modifier.word);
      // cvt's tf32 and packed 8-/6-/4-bit formats have no register type: they count as the bit
      // type that holds them, so that operands are checked against it.
      if (modifier.word == "tf32") instruction.qualifiers.types.push_back(ScalarType::b32);
      if (modifier.word == "e4m3x2" || modifier.word == "e5m2x2" || modifier.word == "e3m2x2" ||
          modifier.word == "e2m3x2" || modifier.word == "ue8m0x2")
        instruction.qualifiers.types.push_back(ScalarType::b16);
      if (modifier.word == "e2m1x2") instruction.qualifiers.types.push_back(ScalarType::b8);
      if (is_packed_four(modifier.word))
        instruction.qualifiers.types.push_back(modifier.word == "e2m1x4" ? ScalarType::b16 : ScalarType::b32);
      continue;
    }
    if (!apply(modifier.word, signature.modifier_groups, instruction.qualifiers)) {
      diagnostics.error(modifier.location, "'." + modifier.word + "' is not a valid modifier for '" +
                                               instruction.opcode + "'");
      ok = false;
    }
  }
  return ok;
}

}  // namespace xcuda::ptx
