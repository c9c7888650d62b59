// XCUDA_DUMP_DIR: every loaded module's PTX and object, named by its cache key, so that what
// ran can be inspected (and a suspect object disassembled) after the fact.
#pragma once

#include <string_view>

#include "ptx/compiler.h"

namespace xcuda::runtime {

// Writes DIR/KEY.ptx and DIR/KEY.o when XCUDA_DUMP_DIR is set; failures are logged only.
void dump_module(std::string_view key, std::string_view ptx_text,
                 const ptx::CompileResult& compiled);

}  // namespace xcuda::runtime
