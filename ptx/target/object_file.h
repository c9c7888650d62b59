// What both targets do last: LLVM's code generator to a relocatable ELF object, and lld's ELF
// driver, in-process, to link objects.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "diagnostics.h"

namespace llvm {
class Module;
class TargetMachine;
using AnalysisID = const void*;
}  // namespace llvm

namespace xcuda::ptx {

// Sets a code generator setting that LLVM has only as a command-line option, for the whole
// process: every target's code generation in it sees the setting, after links too (lld resets
// LLVM's options; link_objects hands the settings back).
void set_code_generation_option(std::string_view name, std::string_view value);

// An empty vector and a diagnostic naming `target` when the machine cannot emit objects. The
// code generator's passes `passes_left_out` (LLVM's pass IDs, such as &llvm::MachineSchedulerID)
// do not run.
std::vector<uint8_t> emit_object(llvm::Module& module, llvm::TargetMachine& machine, std::string_view target,
                                 DiagnosticSink& diagnostics, std::initializer_list<llvm::AnalysisID> passes_left_out = {});

// Links `objects` with lld's ELF driver and `options` ("-r", or "-shared" and its company).
// `what` names the result in a diagnostic when lld refuses.
std::vector<uint8_t> link_objects(std::span<const std::vector<uint8_t>> objects, std::initializer_list<const char*> options,
                                  std::string_view what, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx
