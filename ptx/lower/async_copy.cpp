// cp.async (sm_80): a copy from global to shared memory that completes by the next
// cp.async.wait_group/wait_all. On the host the copy is made when it is issued, which is one of
// the orders the PTX memory model allows, so commit_group and the waits have nothing left to do.
// The bulk (TMA) forms are reported as not supported yet.
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"

namespace xcuda::ptx {
namespace {

// Cache hints are accepted by the checker without being recorded among the qualifiers.
bool is_written(const Instruction& instruction, std::string_view word) {
  for (const Modifier& modifier : instruction.modifiers)
    if (modifier.word == word) return true;
  return false;
}

bool is_predicate(FunctionLowering& lowering, const Operand& operand) {
  return operand.resolution == Operand::Resolution::register_ &&
         lowering.function().declarations[operand.declaration]->type == ScalarType::pred;
}

// cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}:
// cp-size bytes land at dst, the first src-size of them from src (none with ignore-src true),
// the rest zeros.
void lower_copy(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  bool has_policy = is_written(instruction, "L2::cache_hint");
  size_t count = operands.size() - (has_policy ? 1 : 0);
  if (count < 3 || count > 4 || operands[0].kind != Operand::Kind::address ||
      operands[1].kind != Operand::Kind::address || operands[2].kind != Operand::Kind::integer) {
    lowering.error(instruction.location, "cp.async takes [dst], [src], cp-size{, src-size}{, cache-policy}");
    return;
  }
  uint64_t copy_bytes = operands[2].integer;
  if (copy_bytes != 4 && copy_bytes != 8 && copy_bytes != 16) {
    lowering.error(operands[2].location, "cp.async copies 4, 8 or 16 bytes, not " + std::to_string(copy_bytes));
    return;
  }
  auto& builder = lowering.builder();
  llvm::Value* destination = lowering.address(operands[0], StateSpace::shared);
  llvm::Value* source = lowering.address(operands[1], StateSpace::global);
  llvm::Value* total = builder.getInt64(copy_bytes);
  llvm::Value* copied = total;
  if (count == 4) {
    const Operand& size = operands[3];
    if (is_predicate(lowering, size)) {
      copied = builder.CreateSelect(lowering.read(size, ScalarType::pred), builder.getInt64(0), total);
    } else {
      llvm::Value* requested = builder.CreateZExt(lowering.read(size, ScalarType::u32), builder.getInt64Ty());
      copied = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, requested, total);
    }
  }
  builder.CreateMemCpy(destination, llvm::Align(1), source, llvm::Align(1), copied);
  if (copied != total) {
    llvm::Value* rest = builder.CreateGEP(builder.getInt8Ty(), destination, copied);
    builder.CreateMemSet(rest, builder.getInt8(0), builder.CreateSub(total, copied), llvm::Align(1));
  }
}

// cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]: the mbarrier sees an arrival once
// the thread's earlier cp.async copies are complete, which here they are. Without .noinc the
// pending count is raised first, so the arrival leaves the phase as it was: nothing to do.
void lower_copy_arrival(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  if (operands.size() != 1 || operands[0].kind != Operand::Kind::address) {
    lowering.error(instruction.location, "cp.async.mbarrier.arrive takes [addr]");
    return;
  }
  if (!is_written(instruction, "noinc")) return;
  auto& builder = lowering.builder();
  emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::arrive), lowering.address(operands[0], StateSpace::shared),
                builder.getInt64(0), builder.getInt32(1));
}

void lower_cp(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& modifiers = instruction.modifiers;
  bool is_async = !modifiers.empty() && modifiers[0].word == "async";
  std::string_view next = modifiers.size() > 1 ? std::string_view(modifiers[1].word) : std::string_view();
  if (is_async && (next == "commit_group" || next == "wait_group" || next == "wait_all")) return;
  if (is_async && (next == "ca" || next == "cg")) return lower_copy(lowering, instruction);
  if (is_async && next == "mbarrier") return lower_copy_arrival(lowering, instruction);
  std::string form = "cp";
  for (const Modifier& modifier : modifiers) form += "." + modifier.word;
  lowering.error(instruction.location, "'" + form + "' is not supported yet");
}

}  // namespace

void add_async_copy_lowerings(LoweringTable& table) { table["cp"] = lower_cp; }

}  // namespace xcuda::ptx
