// atom and red as LLVM atomic read-modify-write operations. Blocks run concurrently on several
// host threads, so these must be real atomics; they are sequentially consistent, which is at
// least as strong as any ordering PTX can ask for.
#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"

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

// Half types (f16x2 and bf16x2 arrive as 32-bit integers) add in f32 and round back, in a
// compare-exchange loop: the host has no bf16 arithmetic, and GCC 12's libgcc lacks the
// __truncsfbf2 LLVM would call. f32 carries over twice their precision plus two bits, so the sum's
// two roundings give PTX's one.
Value* add_halves(FunctionLowering& lowering, Value* pointer, Value* operand, ScalarType type, llvm::Align alignment) {
  auto& builder = lowering.builder();
  auto ordering = llvm::AtomicOrdering::SequentiallyConsistent;
  llvm::Type* bits = builder.getIntNTy(bit_width(type));
  llvm::Type* arithmetic = arithmetic_type(lowering, type);
  Value* addend = widen_half(lowering, builder.CreateBitCast(operand, arithmetic));
  auto* initial = builder.CreateAlignedLoad(bits, pointer, alignment);
  initial->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* entry = builder.GetInsertBlock();
  auto* retry = llvm::BasicBlock::Create(builder.getContext(), "atomic.retry", entry->getParent());
  auto* done = llvm::BasicBlock::Create(builder.getContext(), "atomic.done", entry->getParent());
  builder.CreateBr(retry);
  builder.SetInsertPoint(retry);
  llvm::PHINode* expected = builder.CreatePHI(bits, 2);
  expected->addIncoming(initial, entry);
  Value* sum = builder.CreateFAdd(widen_half(lowering, builder.CreateBitCast(expected, arithmetic)), addend);
  Value* desired = builder.CreateBitCast(narrow_half(lowering, sum, type, NarrowRounding{}), bits);
  auto* exchange = builder.CreateAtomicCmpXchg(pointer, expected, desired, alignment, ordering, ordering);
  Value* seen = builder.CreateExtractValue(exchange, 0);
  expected->addIncoming(seen, builder.GetInsertBlock());
  builder.CreateCondBr(builder.CreateExtractValue(exchange, 1), done, retry);
  builder.SetInsertPoint(done);
  return seen;
}

// red.async (sm_90): .relaxed.cluster{.shared::cluster}{.mbarrier::complete_tx::bytes}.op.type [a], b,
// [mbar] reduces into a block of the cluster and completes the access's bytes on its mbarrier;
// .release{.gpu,.sys}{.global}.add.type [a], b (sm_100) is a release reduction. Which operations
// take which types follows the ISA's table.
bool is_valid_async_reduction(const Instruction& instruction) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types[0];
  bool u32 = type == ScalarType::u32, s32 = type == ScalarType::s32, u64 = type == ScalarType::u64;
  if (qualifiers.order == MemoryOrder::release)
    return qualifiers.operation == Operation::add && (u32 || s32 || u64 || type == ScalarType::s64) &&
           !has_word(instruction, "mbarrier::complete_tx::bytes") && instruction.operands.size() == 2 &&
           (qualifiers.space == StateSpace::global || qualifiers.space == StateSpace::generic);
  bool typed = false;
  switch (qualifiers.operation) {
    case Operation::inc: case Operation::dec: typed = u32; break;
    case Operation::min: case Operation::max: typed = u32 || s32; break;
    case Operation::and_: case Operation::or_: case Operation::xor_: typed = type == ScalarType::b32; break;
    case Operation::add: typed = u32 || s32 || u64; break;
    default: break;
  }
  return typed && qualifiers.order == MemoryOrder::relaxed && instruction.operands.size() == 3 &&
         instruction.operands[2].kind == Operand::Kind::address &&
         (qualifiers.space == StateSpace::shared || qualifiers.space == StateSpace::generic);
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
  // A cluster is one block here: red.async's destination and mbarrier are this block's, and
  // its reduction completes when issued.
  const bool asynchronous = has_word(instruction, "async");
  if (asynchronous && !is_valid_async_reduction(instruction)) {
    lowering.error(instruction.location, "red.async takes .relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes "
                                         "with .inc/.dec.u32, .min/.max.u32/.s32, .and/.or/.xor.b32 or .add.u32/.s32/.u64 "
                                         "and [a], b, [mbar]; or .release{.global}.add.u32/.s32/.u64/.s64 with [a], b");
    return;
  }
  const size_t barrier_operand = asynchronous && qualifiers.order != MemoryOrder::release ? 1 : 0;
  // The cache policy of .L2::cache_hint, last: the host has no cache to steer.
  const size_t policy_operand = has_modifier(instruction, "L2::cache_hint") ? 1 : 0;
  const bool swaps = qualifiers.operation == Operation::cas;
  auto operation = operation_for(qualifiers.operation, type);
  const bool counted = instruction.operands.size() == first + 2 + (swaps ? 1 : barrier_operand) + policy_operand;
  if (swaps && (!counted || is_float(type))) {
    lowering.error(instruction.location, counted ? "atom.cas takes .b32/.b64 types" : "atom.cas needs a compare and a new value");
    return;
  }
  if (!swaps && (!counted || !operation)) {
    lowering.error(instruction.location, "this form of '" + instruction.opcode + "' is not supported yet");
    return;
  }
  // .v2/.v4/.v8 (sm_90): each element an atomic operation of its own on consecutive elements.
  std::vector<const Operand*> values = elements_of(instruction.operands[first + 1]);
  std::vector<const Operand*> results = returns_value ? elements_of(instruction.operands[0]) : values;
  if (values.size() != qualifiers.vector_width || results.size() != values.size() || (swaps && values.size() != 1)) {
    const std::string width = std::to_string(qualifiers.vector_width);
    lowering.error(instruction.location, qualifiers.vector_width == 1 ? "'" + instruction.opcode + "' without .v2, .v4 or .v8 takes single values"
                                                                      : "'" + instruction.opcode + "' with .v" + width + " takes vectors of " + width);
    return;
  }
  Value* address = lowering.address(instruction.operands[first], qualifiers.space);
  auto ordering = llvm::AtomicOrdering::SequentiallyConsistent;
  const uint32_t bytes = bit_width(type) / 8;
  llvm::Align alignment(bytes);
  for (size_t index = 0; index < values.size(); ++index) {
    Value* pointer = index == 0 ? address : builder.CreateConstGEP1_64(builder.getInt8Ty(), address, index * bytes);
    Value* operand = lowering.read(*values[index], type);
    Value* old = nullptr;
    if (swaps) {
      Value* replacement = lowering.read(instruction.operands[first + 2], type);
      old = builder.CreateExtractValue(builder.CreateAtomicCmpXchg(pointer, operand, replacement, alignment, ordering, ordering), 0);
    } else if (*operation == AtomicRMWInst::FAdd && is_half_type(type)) {
      old = add_halves(lowering, pointer, operand, type, alignment);
    } else {
      old = builder.CreateAtomicRMW(*operation, pointer, operand, alignment, ordering);
    }
    if (returns_value) lowering.write(*results[index], old, type);
  }
  if (barrier_operand)
    emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                  lowering.address(instruction.operands[first + 2], qualifiers.space), builder.getInt64(bit_width(type) / 8),
                  builder.getInt32(0));
}

void lower_atom(FunctionLowering& lowering, const Instruction& instruction) { lower_atomic(lowering, instruction, true); }
void lower_red(FunctionLowering& lowering, const Instruction& instruction) { lower_atomic(lowering, instruction, false); }

}  // namespace

void add_atomic_lowerings(LoweringTable& table) {
  table["atom"] = lower_atom;
  table["red"] = lower_red;
}

}  // namespace xcuda::ptx
