#include "parse/ast.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace xcuda::ptx {
namespace {

struct TypeDescription {
  std::string_view name;
  ScalarType type;
  uint32_t bits;
  TypeKind kind;
};

constexpr TypeDescription type_descriptions[] = {
    {"b8", ScalarType::b8, 8, TypeKind::bits},
    {"b16", ScalarType::b16, 16, TypeKind::bits},
    {"b32", ScalarType::b32, 32, TypeKind::bits},
    {"b64", ScalarType::b64, 64, TypeKind::bits},
    {"b128", ScalarType::b128, 128, TypeKind::bits},
    {"u8", ScalarType::u8, 8, TypeKind::unsigned_integer},
    {"u16", ScalarType::u16, 16, TypeKind::unsigned_integer},
    {"u32", ScalarType::u32, 32, TypeKind::unsigned_integer},
    {"u64", ScalarType::u64, 64, TypeKind::unsigned_integer},
    {"s8", ScalarType::s8, 8, TypeKind::signed_integer},
    {"s16", ScalarType::s16, 16, TypeKind::signed_integer},
    {"s32", ScalarType::s32, 32, TypeKind::signed_integer},
    {"s64", ScalarType::s64, 64, TypeKind::signed_integer},
    {"f16", ScalarType::f16, 16, TypeKind::floating},
    {"f16x2", ScalarType::f16x2, 32, TypeKind::floating},
    {"bf16", ScalarType::bf16, 16, TypeKind::floating},
    {"bf16x2", ScalarType::bf16x2, 32, TypeKind::floating},
    {"f32", ScalarType::f32, 32, TypeKind::floating},
    {"f64", ScalarType::f64, 64, TypeKind::floating},
    {"pred", ScalarType::pred, 1, TypeKind::predicate},
    {"s16x2", ScalarType::s16x2, 32, TypeKind::signed_integer},
    {"u16x2", ScalarType::u16x2, 32, TypeKind::unsigned_integer},
    {"f32x2", ScalarType::f32x2, 64, TypeKind::floating},
};

const TypeDescription& describe(ScalarType type) {
  return type_descriptions[static_cast<size_t>(type)];
}

constexpr std::pair<std::string_view, StateSpace> space_names[] = {
    {"reg", StateSpace::reg},     {"sreg", StateSpace::sreg},     {"const", StateSpace::constant},
    {"global", StateSpace::global}, {"local", StateSpace::local}, {"param", StateSpace::param},
    {"shared", StateSpace::shared}, {"tex", StateSpace::tex},
};

}  // namespace

uint32_t bit_width(ScalarType type) { return describe(type).bits; }
TypeKind kind_of(ScalarType type) { return describe(type).kind; }
std::string_view name_of(ScalarType type) { return describe(type).name; }

std::optional<ScalarType> scalar_type_named(std::string_view word) {
  for (const auto& description : type_descriptions)
    if (description.name == word) return description.type;
  return std::nullopt;
}

std::optional<StateSpace> state_space_named(std::string_view word) {
  for (const auto& [name, space] : space_names)
    if (name == word) return space;
  return std::nullopt;
}

std::string_view name_of(StateSpace space) {
  for (const auto& [name, candidate] : space_names)
    if (candidate == space) return name;
  return "generic";
}

uint64_t VariableDeclaration::size_in_bytes() const {
  uint64_t size = element_bytes();
  for (uint64_t dimension : array_dimensions) {
    // Saturates rather than wraps, so absurd sizes stay absurd and get reported.
    if (dimension != 0 && size > UINT64_MAX / dimension) return UINT64_MAX;
    size *= dimension;
  }
  return size;
}

}  // namespace xcuda::ptx
