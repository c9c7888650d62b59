// Semantic checks between parsing and lowering: resolves every name an operand uses, decodes
// modifiers, and checks operand counts and register types against each instruction. The tree it
// leaves behind (names resolved, qualifiers decoded) is the "checked IR" the lowering reads.
#pragma once

#include "diagnostics.h"
#include "parse/ast.h"

namespace xcuda::ptx {

void check_module(Module& module, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
