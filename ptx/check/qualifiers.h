// Decodes an instruction's modifier words into `Qualifiers`, rejecting words the instruction
// does not accept.
#pragma once

#include "check/instruction_set.h"
#include "diagnostics.h"
#include "parse/ast.h"

namespace xcuda::ptx {

// Whether cvt names a packed four (.e4m3x4, .e2m1x4 ...), which cvt.rs makes from {a, b, e, f}.
bool packs_four(const Qualifiers& qualifiers);

// Returns false after reporting when some modifier is unknown or not valid for the instruction.
bool decode_qualifiers(Instruction& instruction, const InstructionSignature& signature,
                       DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
