// Block barriers in every PTX spelling: bar{.cta}.sync / barrier{.cta}.sync{.aligned} a{, b},
// bar.arrive / barrier.arrive a, b, bar.red / barrier.red with .popc, .and and .or (what
// __syncthreads_count/_and/_or become), and bar.warp.sync, which is a warp collective. The
// barrier of the whole block stays intrinsics::barrier, which a target may run its fastest way;
// every other form becomes intrinsics::barrier_operation. mbarrier objects (cuda::barrier,
// cuda::pipeline) become intrinsics::mbarrier.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using intrinsics::BarrierOperation;

// Operand positions: bar.red d, a{, b}, {!}c; the others a{, b}.
struct BarrierOperands {
  size_t first = 0;  // the barrier number
  size_t count = 0;  // how many operands name the barrier and its thread count
};

void emit_whole_block_barrier(FunctionLowering& lowering, llvm::Value* identifier) {
  auto& builder = lowering.builder();
  llvm::Function* barrier = lowering.module().intrinsic(intrinsics::barrier, builder.getVoidTy(),
                                                        {builder.getPtrTy(), builder.getInt32Ty()});
  barrier->addFnAttr(llvm::Attribute::Convergent);
  builder.CreateCall(barrier, {lowering.thread_context(), identifier});
}

llvm::Value* emit_barrier_operation(FunctionLowering& lowering, llvm::Value* identifier,
                                    llvm::Value* thread_count, BarrierOperation operation,
                                    llvm::Value* value) {
  auto& builder = lowering.builder();
  auto* i32 = builder.getInt32Ty();
  llvm::Function* barrier = lowering.module().intrinsic(intrinsics::barrier_operation, i32,
                                                        {builder.getPtrTy(), i32, i32, i32, i32});
  barrier->addFnAttr(llvm::Attribute::Convergent);
  return builder.CreateCall(barrier, {lowering.thread_context(), identifier, thread_count,
                                      builder.getInt32(static_cast<uint32_t>(operation)), value});
}

// barrier.cluster.arrive / .wait: a cluster is one block on xcuda, so the wait is the block's
// barrier and the arrive is nothing. A thread's wait returns only once every thread has reached
// its wait rather than its arrive, which is later than the ISA requires but never too early.
void lower_cluster_barrier(FunctionLowering& lowering, const Instruction& instruction) {
  bool arrives = has_word(instruction, "arrive"), waits = has_word(instruction, "wait");
  if (arrives == waits || !instruction.operands.empty()) {
    lowering.error(instruction.location, "barrier.cluster is .arrive or .wait, without operands");
    return;
  }
  if (waits) emit_whole_block_barrier(lowering, lowering.builder().getInt32(0));
}

void lower_barrier(FunctionLowering& lowering, const Instruction& instruction) {
  if (has_word(instruction, "warp")) {
    lower_warp_barrier(lowering, instruction);
    return;
  }
  if (has_word(instruction, "cluster")) {
    lower_cluster_barrier(lowering, instruction);
    return;
  }
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  bool reduces = has_word(instruction, "red");
  bool arrives = has_word(instruction, "arrive");
  BarrierOperation operation = BarrierOperation::sync;
  if (arrives) operation = BarrierOperation::arrive;
  if (reduces) {
    if (has_word(instruction, "popc"))
      operation = BarrierOperation::count_true;
    else if (has_word(instruction, "and"))
      operation = BarrierOperation::all_true;
    else if (has_word(instruction, "or"))
      operation = BarrierOperation::any_true;
    else {
      lowering.error(instruction.location,
                     "'" + instruction.opcode + ".red' needs .popc, .and or .or");
      return;
    }
  }
  BarrierOperands layout{reduces ? size_t{1} : size_t{0}, operands.size() - (reduces ? 2 : 0)};
  if (operands.size() < (reduces ? 3u : 1u) || layout.count < 1 || layout.count > 2 ||
      (arrives && layout.count != 2) || (reduces && arrives)) {
    lowering.error(instruction.location, "'" + instruction.opcode +
                                             "' has the wrong operands: expected " +
                                             (reduces   ? "d, a{, b}, {!}c"
                                              : arrives ? "a, b"
                                                        : "a{, b}"));
    return;
  }
  llvm::Value* identifier = lowering.read(operands[layout.first], ScalarType::u32);
  if (operation == BarrierOperation::sync && layout.count == 1) {
    emit_whole_block_barrier(lowering, identifier);
    return;
  }
  llvm::Value* thread_count = layout.count == 2
                                  ? lowering.read(operands[layout.first + 1], ScalarType::u32)
                                  : builder.getInt32(0);
  llvm::Value* value = builder.getInt32(0);
  if (reduces)
    value =
        builder.CreateZExt(lowering.read(operands.back(), ScalarType::pred), builder.getInt32Ty());
  llvm::Value* result =
      emit_barrier_operation(lowering, identifier, thread_count, operation, value);
  if (!reduces) return;
  if (operation == BarrierOperation::count_true)
    lowering.write(operands[0], result, ScalarType::u32);
  else
    lowering.write(operands[0], builder.CreateICmpNE(result, builder.getInt32(0)),
                   ScalarType::pred);
}

uint32_t code_of(intrinsics::MbarrierOperation operation) {
  return static_cast<uint32_t>(operation);
}

// mbarrier.<operation>{.parity}{.noComplete}{.expect_tx}{.sem}{.scope}{.space}.b64 with the
// operands each operation takes (PTX ISA "Parallel Synchronization and Communication
// Instructions: mbarrier"). The object is a .b64 in shared memory, reached through the space the
// instruction names; the layout of its word is the target's. .noComplete promises that the
// arrival does not complete the phase, which changes nothing for a correct program.
void lower_mbarrier(FunctionLowering& lowering, const Instruction& instruction) {
  using Operation = intrinsics::MbarrierOperation;
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  std::string form = instruction.modifiers.empty() ? "" : instruction.modifiers[0].word;
  auto wrong_operands = [&](std::string_view expected) {
    lowering.error(instruction.location,
                   "'mbarrier." + form + "' takes " + std::string(expected));
  };
  auto is_address = [&](size_t index) {
    return index < operands.size() && operands[index].kind == Operand::Kind::address;
  };
  auto address_at = [&](size_t index) {
    return lowering.address(operands[index], instruction.qualifiers.space);
  };
  auto u32_at = [&](size_t index) { return lowering.read(operands[index], ScalarType::u32); };
  auto u64_from_u32_at = [&](size_t index) {
    return builder.CreateZExt(u32_at(index), builder.getInt64Ty());
  };
  llvm::Value* none32 = builder.getInt32(0);
  llvm::Value* none64 = builder.getInt64(0);

  if (form == "init") {
    if (operands.size() != 2 || !is_address(0)) return wrong_operands("[addr], count");
    emit_mbarrier(lowering, code_of(Operation::init), address_at(0), none64, u32_at(1));
  } else if (form == "inval") {
    if (operands.size() != 1 || !is_address(0)) return wrong_operands("[addr]");
    emit_mbarrier(lowering, code_of(Operation::invalidate), address_at(0), none64, none32);
  } else if (form == "expect_tx" || form == "complete_tx") {
    if (operands.size() != 2 || !is_address(0)) return wrong_operands("[addr], txCount");
    Operation operation = form == "expect_tx" ? Operation::expect_tx : Operation::complete_tx;
    emit_mbarrier(lowering, code_of(operation), address_at(0), u64_from_u32_at(1), none32);
  } else if (form == "arrive" || form == "arrive_drop") {
    bool expects = has_word(instruction, "expect_tx");
    if (operands.size() < 2 || operands.size() > 3 || !is_address(1) ||
        (expects && operands.size() != 3))
      return wrong_operands(expects ? "state, [addr], txCount" : "state, [addr]{, count}");
    llvm::Value* transactions = expects ? u64_from_u32_at(2) : none64;
    llvm::Value* count = !expects && operands.size() == 3 ? u32_at(2) : builder.getInt32(1);
    uint32_t operation =
        code_of(Operation::arrive) | (form == "arrive_drop" ? host_abi::mbarrier_drop : 0);
    lowering.write(operands[0], emit_mbarrier(lowering, operation, address_at(1), transactions, count),
                   ScalarType::b64);
  } else if (form == "test_wait" || form == "try_wait") {
    bool parity = has_word(instruction, "parity");
    // try_wait's optional suspend-time hint only bounds how long a GPU may wait.
    size_t most = form == "try_wait" ? 4 : 3;
    if (operands.size() < 3 || operands.size() > most || !is_address(1))
      return wrong_operands(parity ? "p, [addr], phaseParity" : "p, [addr], state");
    llvm::Value* value =
        parity ? u64_from_u32_at(2) : lowering.read(operands[2], ScalarType::b64);
    Operation operation = parity ? Operation::test_parity : Operation::test_wait;
    llvm::Value* done = emit_mbarrier(lowering, code_of(operation), address_at(1), value, none32);
    lowering.write(operands[0], builder.CreateICmpNE(done, none64), ScalarType::pred);
  } else if (form == "pending_count") {
    if (operands.size() != 2) return wrong_operands("count, state");
    llvm::Value* count = emit_mbarrier(lowering, code_of(Operation::pending_count),
                                       llvm::ConstantPointerNull::get(builder.getPtrTy()),
                                       lowering.read(operands[1], ScalarType::b64), none32);
    lowering.write(operands[0], builder.CreateTrunc(count, builder.getInt32Ty()), ScalarType::u32);
  } else {
    lowering.error(instruction.location, "'mbarrier." + form + "' is not supported yet");
  }
}

}  // namespace

llvm::Value* emit_mbarrier(FunctionLowering& lowering, uint32_t operation, llvm::Value* address,
                           llvm::Value* value, llvm::Value* count) {
  auto& builder = lowering.builder();
  auto* i32 = builder.getInt32Ty();
  auto* i64 = builder.getInt64Ty();
  llvm::Function* mbarrier = lowering.module().intrinsic(
      intrinsics::mbarrier, i64, {builder.getPtrTy(), i32, builder.getPtrTy(), i64, i32});
  return builder.CreateCall(mbarrier, {lowering.thread_context(), builder.getInt32(operation),
                                       address, value, count});
}

void add_synchronization_lowerings(LoweringTable& table) {
  table["bar"] = lower_barrier;
  table["barrier"] = lower_barrier;
  table["mbarrier"] = lower_mbarrier;
}

}  // namespace xcuda::ptx
