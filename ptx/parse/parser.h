// Recursive-descent parser from tokens to the syntax tree. A malformed statement produces one
// located diagnostic and parsing resumes after it, so one run reports every broken statement.
#pragma once

#include <string_view>

#include "diagnostics.h"
#include "parse/ast.h"

namespace xcuda::ptx {

Module parse_module(std::string_view source, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
