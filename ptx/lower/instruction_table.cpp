#include "lower/instruction_lowering.h"

#include <algorithm>

namespace xcuda::ptx {

bool has_word(const Qualifiers& qualifiers, std::string_view word) {
  return std::find(qualifiers.other.begin(), qualifiers.other.end(), word) != qualifiers.other.end();
}

std::vector<const Operand*> elements_of(const Operand& operand) {
  std::vector<const Operand*> elements;
  if (operand.kind == Operand::Kind::vector) {
    for (const Operand& element : operand.elements) elements.push_back(&element);
  } else {
    elements.push_back(&operand);
  }
  return elements;
}

const LoweringTable& lowering_table() {
  static const LoweringTable table = [] {
    LoweringTable entries;
    add_arithmetic_lowerings(entries);
    add_bitwise_lowerings(entries);
    add_comparison_lowerings(entries);
    add_conversion_lowerings(entries);
    add_data_movement_lowerings(entries);
    add_memory_lowerings(entries);
    add_atomic_lowerings(entries);
    add_control_flow_lowerings(entries);
    add_synchronization_lowerings(entries);
    add_call_lowerings(entries);
    add_warp_lowerings(entries);
    add_matrix_lowerings(entries);
    add_warpgroup_matrix_lowerings(entries);
    add_texture_lowerings(entries);
    add_async_copy_lowerings(entries);
    add_dynamic_stack_lowerings(entries);
    add_cluster_launch_control_lowerings(entries);
    add_video_lowerings(entries);
    add_multimem_lowerings(entries);
    add_tensor_map_lowerings(entries);
    return entries;
  }();
  return table;
}

}  // namespace xcuda::ptx
