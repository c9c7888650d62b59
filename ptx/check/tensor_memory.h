// tcgen05, the tensor core instructions of sm_100a and later with their tensor memory: which
// modifiers each of its operations takes, and how many operands. No target lowers them yet; a
// module that holds them is still checked whole, so that one run reports all of its problems.
#pragma once

#include <optional>
#include <string>

#include "parse/ast.h"

namespace xcuda::ptx {

struct FormProblem {
  SourceLocation location;
  std::string message;
};

// What makes a tcgen05 instruction malformed, as NVIDIA's ptxas (CUDA 13.0) sees it; none for a
// well-formed one. Registers named in operands are resolved by the caller.
std::optional<FormProblem> tcgen05_form_problem(const Instruction& instruction);

}  // namespace xcuda::ptx
