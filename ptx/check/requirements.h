// What a feature of PTX (an instruction, a modifier, a type, a special register) needs of the
// module's .version and .target, as NVIDIA's ptxas answers: "Feature 'redux' requires .target
// sm_80 or higher", "... requires PTX ISA .version 7.0 or later". The driver's compiler refuses
// such a module, so xcuda does too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parse/ast.h"

namespace xcuda::ptx {

// What a module offers: its .version ten times over (78 for 7.8), its .target's architecture
// number (90 for sm_90a) and the target itself without its prefix ("90a"); 0 and empty where the
// module does not say, which lets everything pass.
struct ModuleLevel {
  uint32_t version = 0;
  uint32_t architecture = 0;
  std::string target;
};

ModuleLevel module_level(const Module& module);

// One message per feature of `instruction` that `level` lacks, in ptxas's words.
std::vector<std::string> unmet_requirements(const Instruction& instruction, const ModuleLevel& level);

// The same for a declaration's type (.b128 needs PTX 8.3 and sm_70).
std::vector<std::string> unmet_requirements(const VariableDeclaration& declaration, const ModuleLevel& level);

}  // namespace xcuda::ptx
