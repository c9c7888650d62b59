// atom and red as LLVM atomic read-modify-write operations. Blocks run concurrently on several
// host threads, so these must be real atomics; they are sequentially consistent, which is at
// least as strong as any ordering PTX can ask for.
#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::AtomicRMWInst;
using llvm::Value;

std::optional<AtomicRMWInst::BinOp> operation_for(Operation operation, ScalarType type) {
  bool floating = is_float(type);
  bool signed_type = is_signed(type);
  switch (operation) {
    case Operation::add: return floating ? AtomicRMWInst::FAdd : AtomicRMWInst::Add;
    // LLVM's fmin/fmax differ from PTX on NaN and signed zeros, so float min/max wait.
    case Operation::min:
      if (floating) return std::nullopt;
      return signed_type ? AtomicRMWInst::Min : AtomicRMWInst::UMin;
    case Operation::max:
      if (floating) return std::nullopt;
      return signed_type ? AtomicRMWInst::Max : AtomicRMWInst::UMax;
    case Operation::inc: return AtomicRMWInst::UIncWrap;  // PTX inc/dec wrap exactly like these
    case Operation::dec: return AtomicRMWInst::UDecWrap;
    case Operation::and_: return AtomicRMWInst::And;
    case Operation::or_: return AtomicRMWInst::Or;
    case Operation::xor_: return AtomicRMWInst::Xor;
    case Operation::exch: return AtomicRMWInst::Xchg;
    default: return std::nullopt;
  }
}

void lower_atomic(FunctionLowering& lowering, const Instruction& instruction, bool returns_value) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types[0];
  size_t first = returns_value ? 1 : 0;
  if (instruction.operands.size() < first + 2) {
    lowering.error(instruction.location, "'" + instruction.opcode + "' needs an address and a value");
    return;
  }
  Value* pointer = lowering.address(instruction.operands[first], qualifiers.space);
  Value* operand = lowering.read(instruction.operands[first + 1], type);
  auto ordering = llvm::AtomicOrdering::SequentiallyConsistent;
  llvm::Align alignment(bit_width(type) / 8);
  Value* old = nullptr;
  if (qualifiers.operation == Operation::cas) {
    if (instruction.operands.size() != first + 3) {
      lowering.error(instruction.location, "atom.cas needs a compare and a new value");
      return;
    }
    Value* replacement = lowering.read(instruction.operands[first + 2], type);
    if (is_float(type)) {
      lowering.error(instruction.location, "atom.cas takes .b32/.b64 types");
      return;
    }
    auto* exchange = builder.CreateAtomicCmpXchg(pointer, operand, replacement, alignment, ordering, ordering);
    old = builder.CreateExtractValue(exchange, 0);
  } else {
    auto operation = operation_for(qualifiers.operation, type);
    if (!operation || instruction.operands.size() != first + 2) {
      lowering.error(instruction.location, "this form of '" + instruction.opcode + "' is not supported yet");
      return;
    }
    old = builder.CreateAtomicRMW(*operation, pointer, operand, alignment, ordering);
  }
  if (returns_value) lowering.write(instruction.operands[0], old, type);
}

void lower_atom(FunctionLowering& lowering, const Instruction& instruction) { lower_atomic(lowering, instruction, true); }
void lower_red(FunctionLowering& lowering, const Instruction& instruction) { lower_atomic(lowering, instruction, false); }

}  // namespace

void add_atomic_lowerings(LoweringTable& table) {
  table["atom"] = lower_atom;
  table["red"] = lower_red;
}

}  // namespace xcuda::ptx
