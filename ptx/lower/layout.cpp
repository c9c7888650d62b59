#include "lower/layout.h"

#include <algorithm>

namespace xcuda::ptx {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

void place(SharedLayout& layout, uint64_t& cursor, const VariableDeclaration& variable, DiagnosticSink& diagnostics) {
  if (variable.space != StateSpace::shared || variable.unsized_array) return;
  cursor = align_up(cursor, std::max<uint32_t>(1, variable.effective_alignment()));
  uint64_t size = variable.size_in_bytes();
  if (size > max_shared_bytes || cursor + size > max_shared_bytes) {
    diagnostics.error(variable.location, "'" + variable.name + "' takes the module's .shared variables beyond " +
                                             std::to_string(max_shared_bytes) + " bytes");
    return;
  }
  layout.offsets[&variable] = static_cast<uint32_t>(cursor);
  cursor += size;
}

}  // namespace

SharedLayout lay_out_shared_memory(const Module& module, DiagnosticSink& diagnostics) {
  SharedLayout layout;
  uint64_t cursor = 0;
  for (const auto& variable : module.variables) place(layout, cursor, variable, diagnostics);
  for (const auto& function : module.functions)
    for (const auto& statement : function.body)
      if (const auto* variable = std::get_if<VariableDeclaration>(&statement)) place(layout, cursor, *variable, diagnostics);
  layout.static_bytes = static_cast<uint32_t>(cursor);
  layout.dynamic_offset = static_cast<uint32_t>(align_up(layout.static_bytes, 16));
  return layout;
}

ParameterLayout lay_out_parameters(const std::vector<VariableDeclaration>& parameters) {
  ParameterLayout layout;
  uint64_t cursor = 0;
  uint64_t widest = 1;
  for (const auto& parameter : parameters) {
    uint64_t alignment = std::max<uint32_t>(1, parameter.effective_alignment());
    widest = std::max(widest, alignment);
    cursor = align_up(cursor, alignment);
    layout.offsets.push_back(static_cast<uint32_t>(cursor));
    cursor += parameter.size_in_bytes();
  }
  layout.size = static_cast<uint32_t>(align_up(cursor, widest));
  return layout;
}

ModuleInfo describe_module(const Module& module, const SharedLayout& shared) {
  ModuleInfo info;
  for (const auto& function : module.functions) {
    if (!function.is_entry || !function.has_body) continue;
    KernelInfo kernel;
    kernel.name = function.name;
    ParameterLayout parameters = lay_out_parameters(function.parameters);
    for (size_t i = 0; i < function.parameters.size(); ++i) {
      const auto& parameter = function.parameters[i];
      kernel.parameters.push_back(ParameterInfo{parameters.offsets[i], static_cast<uint32_t>(parameter.size_in_bytes()),
                                                std::max<uint32_t>(1, parameter.effective_alignment())});
    }
    kernel.parameter_buffer_size = parameters.size;
    kernel.static_shared_bytes = shared.static_bytes;
    uint64_t local_bytes = 0;
    for (const auto& statement : function.body)
      if (const auto* variable = std::get_if<VariableDeclaration>(&statement); variable && variable->space == StateSpace::local)
        local_bytes += variable->size_in_bytes();
    kernel.local_bytes_per_thread = static_cast<uint32_t>(std::min<uint64_t>(local_bytes, UINT32_MAX));
    const auto& limit = function.required_threads[0] != 0 ? function.required_threads : function.max_threads;
    if (limit[0] != 0) kernel.max_threads_per_block = limit[0] * limit[1] * limit[2];
    for (int axis = 0; axis < 3; ++axis) kernel.required_block[axis] = function.required_threads[static_cast<size_t>(axis)];
    info.kernels.push_back(std::move(kernel));
  }
  for (const auto& variable : module.variables) {
    if ((variable.space != StateSpace::global && variable.space != StateSpace::constant) || variable.is_extern) continue;
    info.globals.push_back(GlobalInfo{variable.name, variable.size_in_bytes(), variable.space == StateSpace::constant});
  }
  return info;
}

}  // namespace xcuda::ptx
