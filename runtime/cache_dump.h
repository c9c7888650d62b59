// XCUDA_DUMP_DIR: every loaded module's PTX, and for each unit compiled from it (one kernel, or
// the whole module) the object and the LLVM IR before and after optimisation, all named by the
// module's hash, so that what ran can be inspected (and a suspect object disassembled) after
// the fact.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ptx/compiler.h"

namespace xcuda::runtime {

// DIR/MODULE_KEY for a unit holding the whole module, DIR/MODULE_KEY.N for the module's N-th
// kernel alone (Module adds .any_width for its unit for blocks of any width); empty when
// XCUDA_DUMP_DIR is unset. Creates DIR.
std::string dump_prefix(std::string_view module_key, std::optional<size_t> kernel_index);

// Write DIR/MODULE_KEY.ptx and PREFIX.o when XCUDA_DUMP_DIR is set; failures are logged only.
void dump_ptx(std::string_view module_key, std::string_view ptx_text);
void dump_object(const std::string& prefix, const ptx::CompileResult& compiled);

}  // namespace xcuda::runtime
