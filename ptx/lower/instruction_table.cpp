#include "lower/instruction_lowering.h"

namespace xcuda::ptx {

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
    add_texture_lowerings(entries);
    add_async_copy_lowerings(entries);
    add_video_lowerings(entries);
    add_multimem_lowerings(entries);
    return entries;
  }();
  return table;
}

}  // namespace xcuda::ptx
