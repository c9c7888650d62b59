// The dispatch table from opcode to lowering. Each instruction family registers its entries in
// its own file; adding an instruction is one entry there plus its lowering function.
#pragma once

#include <optional>
#include <string_view>
#include <unordered_map>

#include "lower/function_lowering.h"
#include "lower/intrinsics.h"
#include "tensor_map.h"

namespace xcuda::ptx {

using InstructionLowering = void (*)(FunctionLowering& lowering, const Instruction& instruction);
using LoweringTable = std::unordered_map<std::string_view, InstructionLowering>;

void add_arithmetic_lowerings(LoweringTable& table);
void add_bitwise_lowerings(LoweringTable& table);
void add_comparison_lowerings(LoweringTable& table);
void add_conversion_lowerings(LoweringTable& table);
void add_data_movement_lowerings(LoweringTable& table);
void add_memory_lowerings(LoweringTable& table);
void add_atomic_lowerings(LoweringTable& table);
void add_control_flow_lowerings(LoweringTable& table);
void add_synchronization_lowerings(LoweringTable& table);
void add_call_lowerings(LoweringTable& table);
void add_warp_lowerings(LoweringTable& table);
void add_matrix_lowerings(LoweringTable& table);
void add_warpgroup_matrix_lowerings(LoweringTable& table);
void add_texture_lowerings(LoweringTable& table);
void add_async_copy_lowerings(LoweringTable& table);
void add_dynamic_stack_lowerings(LoweringTable& table);
void add_cluster_launch_control_lowerings(LoweringTable& table);
void add_video_lowerings(LoweringTable& table);
void add_multimem_lowerings(LoweringTable& table);
void add_tensor_map_lowerings(LoweringTable& table);

const LoweringTable& lowering_table();

// Shared by several families.
// Whether the instruction carries `word` among the modifiers only it cares about (.wrap, .row).
bool has_word(const Qualifiers& qualifiers, std::string_view word);
inline bool has_word(const Instruction& instruction, std::string_view word) { return has_word(instruction.qualifiers, word); }
// The operands {a, b, …} names, or the single operand.
std::vector<const Operand*> elements_of(const Operand& operand);
llvm::Value* read_special_register(FunctionLowering& lowering, const Operand& operand);
void lower_warp_barrier(FunctionLowering& lowering, const Instruction& instruction);
// Ends the kernel with an error, as trap does (or as `intrinsic` says); the block the builder is in
// ends here.
void emit_trap(FunctionLowering& lowering, const char* intrinsic = intrinsics::trap);
// The warp exchange of intrinsics.h: `offer` (at most 64 bits) is offered, and the lanes that
// arrived together are returned as a mask; peer() then reads what a lane offered.
llvm::Value* exchange(FunctionLowering& lowering, llvm::Value* offer, llvm::Value* members);
llvm::Value* peer(FunctionLowering& lowering, llvm::Value* lane);
// The exchange of words of intrinsics.h, of the i64 `words`; peer_word() then reads a lane's.
void exchange_words(FunctionLowering& lowering, const std::vector<llvm::Value*>& words);
llvm::Value* peer_word(FunctionLowering& lowering, llvm::Value* lane, uint32_t word);
llvm::Value* lane_id(FunctionLowering& lowering);
// Whether `word` is among the modifiers as written, including those the checker accepts without
// recording them in the qualifiers (cache hints, cp's completion mechanisms).
bool has_modifier(const Instruction& instruction, std::string_view word);
// Reports the instruction, written out with all its modifiers, as not supported yet.
void report_unsupported_form(FunctionLowering& lowering, const Instruction& instruction);
// A cluster is one block here, so a multicast copy reaches it when bit 0 of ctaMask is set: the
// code between begin_multicast and end_multicast(its result) runs only then.
llvm::BasicBlock* begin_multicast(FunctionLowering& lowering, const Operand& mask);
void end_multicast(FunctionLowering& lowering, llvm::BasicBlock* done);
// The tensor copies (tensor_copy.cpp), which cp's lowering (async_copy.cpp) hands on.
void lower_tensor_copy(FunctionLowering& lowering, const Instruction& instruction);
void lower_tensor_reduction(FunctionLowering& lowering, const Instruction& instruction);
// The reduction of the runtime's bulk reductions that an atomic operation names, if any.
std::optional<tensor_map::Reduction> bulk_reduction_of(Operation operation);
// The mbarrier intrinsic of intrinsics.h on the object at `address`; `operation` is a
// host_abi::MbarrierOperation with its flags.
llvm::Value* emit_mbarrier(FunctionLowering& lowering, uint32_t operation, llvm::Value* address, llvm::Value* value,
                           llvm::Value* count);

}  // namespace xcuda::ptx
