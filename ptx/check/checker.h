// Semantic checks between parsing and lowering: resolves every name an operand uses, decodes
// modifiers, and checks operand counts and register types against each instruction. The tree it
// leaves behind (names resolved, qualifiers decoded) is the "checked IR" the lowering reads.
#pragma once

#include "diagnostics.h"
#include "parse/ast.h"

namespace xcuda::ptx {

struct SpecialRegister {
  std::string_view name;     // without the leading %
  bool has_components;       // %tid.x, %ntid.y …
  uint32_t bits;             // 32 or 64
};

const SpecialRegister* find_special_register(std::string_view name);

// Returns false when it reported at least one error.
bool check_module(Module& module, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
