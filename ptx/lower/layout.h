// Where things live in memory, decided once per module before any code is lowered: kernel
// parameter offsets (the runtime packs arguments the same way) and the offsets of .shared
// variables inside a block's shared memory.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "compiler.h"
#include "diagnostics.h"
#include "parse/ast.h"

namespace xcuda::ptx {

// Every .shared variable of the module, at module or function scope, gets one offset valid in
// every kernel, so a .func touching shared memory needs no per-kernel variant. Variables that no
// one kernel reaches together (through the functions it calls) may overlap, so a kernel needs
// only the bytes up to the end of the last variable it reaches, as on NVIDIA hardware.
// static_bytes covers every variable; dynamic shared memory (.extern .shared arrays) starts after
// it, at dynamic_offset (16-aligned, or as the arrays' .align asks), in every kernel, as a .func
// may address it too: a kernel reaching a dynamic array therefore counts all of dynamic_offset
// as its static bytes.
struct SharedLayout {
  std::unordered_map<const VariableDeclaration*, uint32_t> offsets;
  std::unordered_map<const Function*, uint32_t> kernel_static_bytes;
  uint32_t static_bytes = 0;
  uint32_t dynamic_offset = 0;
};

struct ParameterLayout {
  std::vector<uint32_t> offsets;  // one per parameter, in declaration order
  uint32_t size = 0;
};

// The most shared memory a block can have on any current GPU, and the most .local memory a
// thread can have; larger declarations are reported.
inline constexpr uint64_t max_shared_bytes = 228 * 1024;
inline constexpr uint64_t max_local_bytes = 512 * 1024;

SharedLayout lay_out_shared_memory(const Module& module, DiagnosticSink& diagnostics);
ParameterLayout lay_out_parameters(const std::vector<VariableDeclaration>& parameters);

// Whether `function` runs alloca: it must give the memory back when it returns.
bool allocates_on_stack(const Function& function);
// Whether any function of the module allocates on, saves or restores a thread's stack of run-time
// allocations. A call may lead from any kernel to any function, so then every kernel of the
// module needs such a stack (KernelInfo::uses_dynamic_stack).
bool uses_dynamic_stack(const Module& module);

// What the runtime needs to know about the module, without looking at any code.
ModuleInfo describe_module(const Module& module, const SharedLayout& shared);

}  // namespace xcuda::ptx
