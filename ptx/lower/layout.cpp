#include "lower/layout.h"

#include <algorithm>
#include <initializer_list>
#include <unordered_set>

namespace xcuda::ptx {
namespace {

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// What one function touches directly: the statically sized .shared variables, whether any
// dynamic (.extern .shared x[]) array, and the functions it calls or takes the address of.
struct FunctionUses {
  std::vector<uint32_t> shared;  // indices into SharedReach::variables()
  bool dynamic = false;
  std::vector<uint32_t> functions;  // indices into Module::functions, definitions only
};

class SharedReach {
 public:
  explicit SharedReach(const Module& module) : module_(module) {
    for (const auto& variable : module.variables) add_variable(variable);
    for (const auto& function : module.functions)
      for (const auto& statement : function.body)
        if (const auto* variable = std::get_if<VariableDeclaration>(&statement)) add_variable(*variable);
    std::unordered_map<std::string_view, std::vector<uint32_t>> definitions;
    for (uint32_t index = 0; index < module.functions.size(); ++index)
      if (module.functions[index].has_body) definitions[module.functions[index].name].push_back(index);
    uses_.resize(module.functions.size());
    for (uint32_t index = 0; index < module.functions.size(); ++index) describe(index, definitions);
    // A table of function pointers in a module variable may be called from any kernel.
    for (const auto& variable : module.variables)
      for (const InitialValue& value : variable.initializer)
        if (auto found = definitions.find(value.symbol); found != definitions.end())
          every_kernel_calls_.insert(every_kernel_calls_.end(), found->second.begin(), found->second.end());
  }

  const std::vector<const VariableDeclaration*>& variables() const { return variables_; }
  // The alignment the most aligned dynamic (.extern .shared x[]) array asks for, at least 16.
  uint64_t dynamic_alignment() const { return dynamic_alignment_; }

  // The static .shared variables `kernel` reaches, and whether it reaches dynamic shared memory.
  std::pair<std::vector<uint32_t>, bool> reached_from(uint32_t kernel) const {
    std::vector<bool> visited(module_.functions.size(), false);
    std::vector<uint32_t> pending{kernel};
    pending.insert(pending.end(), every_kernel_calls_.begin(), every_kernel_calls_.end());
    std::unordered_set<uint32_t> shared;
    bool dynamic = false;
    while (!pending.empty()) {
      uint32_t function = pending.back();
      pending.pop_back();
      if (visited[function]) continue;
      visited[function] = true;
      const FunctionUses& uses = uses_[function];
      shared.insert(uses.shared.begin(), uses.shared.end());
      dynamic = dynamic || uses.dynamic;
      pending.insert(pending.end(), uses.functions.begin(), uses.functions.end());
    }
    std::vector<uint32_t> sorted(shared.begin(), shared.end());
    std::sort(sorted.begin(), sorted.end());
    return {std::move(sorted), dynamic};
  }

 private:
  void add_variable(const VariableDeclaration& variable) {
    if (variable.space != StateSpace::shared) return;
    if (variable.unsized_array) {
      dynamic_alignment_ = std::max<uint64_t>(dynamic_alignment_, variable.effective_alignment());
      return;
    }
    indices_[&variable] = static_cast<uint32_t>(variables_.size());
    variables_.push_back(&variable);
  }

  void use_variable(FunctionUses& uses, const VariableDeclaration& variable) const {
    if (variable.space != StateSpace::shared) return;
    if (variable.unsized_array) uses.dynamic = true;
    else uses.shared.push_back(indices_.at(&variable));
  }

  void use_operand(FunctionUses& uses, const Function& function, const Operand& operand,
                   const std::unordered_map<std::string_view, std::vector<uint32_t>>& definitions) const {
    using Resolution = Operand::Resolution;
    if (operand.resolution == Resolution::module_variable) use_variable(uses, module_.variables[operand.declaration]);
    if (operand.resolution == Resolution::local_variable) use_variable(uses, *function.declarations[operand.declaration]);
    // By name, as a prototype's index may stand for the definition (an alias resolves to its aliasee).
    if (operand.resolution == Resolution::function)
      if (auto found = definitions.find(module_.functions[operand.declaration].name); found != definitions.end())
        uses.functions.insert(uses.functions.end(), found->second.begin(), found->second.end());
    for (const Operand& element : operand.elements) use_operand(uses, function, element, definitions);
  }

  void describe(uint32_t index, const std::unordered_map<std::string_view, std::vector<uint32_t>>& definitions) {
    const Function& function = module_.functions[index];
    FunctionUses& uses = uses_[index];
    for (const auto& statement : function.body) {
      if (const auto* variable = std::get_if<VariableDeclaration>(&statement)) use_variable(uses, *variable);
      if (const auto* instruction = std::get_if<Instruction>(&statement))
        for (const Operand& operand : instruction->operands) use_operand(uses, function, operand, definitions);
    }
    for (const TargetList& list : function.target_lists)
      for (const Operand& target : list.targets) use_operand(uses, function, target, definitions);
  }

  const Module& module_;
  uint64_t dynamic_alignment_ = 16;
  std::vector<const VariableDeclaration*> variables_;
  std::unordered_map<const VariableDeclaration*, uint32_t> indices_;
  std::vector<FunctionUses> uses_;
  std::vector<uint32_t> every_kernel_calls_;
};

// The lowest offset for `size` bytes at `alignment` clear of every occupied [begin, end) range.
uint64_t first_fit(std::vector<std::pair<uint64_t, uint64_t>>& occupied, uint64_t size, uint64_t alignment) {
  std::sort(occupied.begin(), occupied.end());
  uint64_t cursor = 0;
  for (const auto& [begin, end] : occupied) {
    if (align_up(cursor, alignment) + size <= begin) break;
    cursor = std::max(cursor, end);
  }
  return align_up(cursor, alignment);
}

}  // namespace

SharedLayout lay_out_shared_memory(const Module& module, DiagnosticSink& diagnostics) {
  SharedLayout layout;
  SharedReach reach(module);
  const auto& variables = reach.variables();
  std::vector<uint32_t> kernels;
  std::vector<std::vector<uint32_t>> kernels_of(variables.size());
  std::vector<bool> dynamic;
  for (uint32_t index = 0; index < module.functions.size(); ++index) {
    if (!module.functions[index].is_entry || !module.functions[index].has_body) continue;
    auto [reached, uses_dynamic] = reach.reached_from(index);
    for (uint32_t variable : reached) kernels_of[variable].push_back(static_cast<uint32_t>(kernels.size()));
    kernels.push_back(index);
    dynamic.push_back(uses_dynamic);
  }
  // Variables no one kernel reaches together may overlap: each kernel keeps its own ranges.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> occupied(kernels.size());
  std::vector<uint64_t> kernel_bytes(kernels.size(), 0);
  uint64_t extent = 0;
  for (size_t index = 0; index < variables.size(); ++index) {
    const VariableDeclaration& variable = *variables[index];
    uint64_t size = variable.size_in_bytes();
    if (size > max_shared_bytes) {
      diagnostics.error(variable.location, "'" + variable.name + "' takes the module's .shared variables beyond " +
                                               std::to_string(max_shared_bytes) + " bytes");
      continue;
    }
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (uint32_t kernel : kernels_of[index]) taken.insert(taken.end(), occupied[kernel].begin(), occupied[kernel].end());
    uint64_t offset = first_fit(taken, size, std::max<uint32_t>(1, variable.effective_alignment()));
    if (offset + size > max_shared_bytes) {
      uint32_t fullest = *std::max_element(kernels_of[index].begin(), kernels_of[index].end(),
                                           [&](uint32_t left, uint32_t right) { return kernel_bytes[left] < kernel_bytes[right]; });
      diagnostics.error(variable.location, "'" + variable.name + "' takes the .shared variables of kernel '" +
                                               module.functions[kernels[fullest]].name + "' beyond " +
                                               std::to_string(max_shared_bytes) + " bytes");
      continue;
    }
    layout.offsets[&variable] = static_cast<uint32_t>(offset);
    for (uint32_t kernel : kernels_of[index]) {
      occupied[kernel].emplace_back(offset, offset + size);
      kernel_bytes[kernel] = std::max(kernel_bytes[kernel], offset + size);
    }
    extent = std::max(extent, offset + size);
  }
  layout.static_bytes = static_cast<uint32_t>(extent);
  // The dynamic part starts as aligned as its most aligned declaration asks (swizzled tensor
  // copies want 1024 bytes), and a kernel reaching it counts the padding before it as static.
  layout.dynamic_offset = static_cast<uint32_t>(align_up(layout.static_bytes, reach.dynamic_alignment()));
  for (size_t kernel = 0; kernel < kernels.size(); ++kernel)
    layout.kernel_static_bytes[&module.functions[kernels[kernel]]] =
        dynamic[kernel] ? layout.dynamic_offset : static_cast<uint32_t>(kernel_bytes[kernel]);
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

namespace {

bool runs_any(const Function& function, std::initializer_list<std::string_view> opcodes) {
  for (const auto& statement : function.body)
    if (const auto* instruction = std::get_if<Instruction>(&statement))
      for (std::string_view opcode : opcodes)
        if (instruction->opcode == opcode) return true;
  return false;
}

}  // namespace

bool allocates_on_stack(const Function& function) { return runs_any(function, {"alloca"}); }

bool uses_dynamic_stack(const Module& module) {
  return std::any_of(module.functions.begin(), module.functions.end(), [](const Function& function) {
    return runs_any(function, {"alloca", "stacksave", "stackrestore"});
  });
}

ModuleInfo describe_module(const Module& module, const SharedLayout& shared) {
  ModuleInfo info;
  const bool dynamic_stack = uses_dynamic_stack(module);
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
    kernel.static_shared_bytes = shared.kernel_static_bytes.at(&function);
    uint64_t local_bytes = 0;
    for (const auto& statement : function.body)
      if (const auto* variable = std::get_if<VariableDeclaration>(&statement); variable && variable->space == StateSpace::local)
        local_bytes += variable->size_in_bytes();
    kernel.local_bytes_per_thread = static_cast<uint32_t>(std::min<uint64_t>(local_bytes, UINT32_MAX));
    const auto& limit = function.required_threads[0] != 0 ? function.required_threads : function.max_threads;
    if (limit[0] != 0) kernel.max_threads_per_block = limit[0] * limit[1] * limit[2];
    for (int axis = 0; axis < 3; ++axis) kernel.required_block[axis] = function.required_threads[static_cast<size_t>(axis)];
    kernel.min_blocks_per_multiprocessor = function.min_blocks_per_multiprocessor;
    kernel.uses_dynamic_stack = dynamic_stack;
    info.kernels.push_back(std::move(kernel));
  }
  for (const auto& variable : module.variables) {
    if ((variable.space != StateSpace::global && variable.space != StateSpace::constant) || variable.is_extern) continue;
    info.globals.push_back(GlobalInfo{variable.name, variable.size_in_bytes(), variable.space == StateSpace::constant, variable.is_managed});
  }
  return info;
}

}  // namespace xcuda::ptx
