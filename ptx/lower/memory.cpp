// Loads and stores in every state space (scalar and .v2/.v4), cvta between generic and
// space-specific addresses, isspacep, and memory fences. A generic, global, local or param
// address is a host pointer; a shared address is an offset from the block's shared memory (see
// FunctionLowering::address), which is where cvta has work to do.
#include <llvm/IR/Intrinsics.h>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

uint32_t element_bytes(ScalarType type) { return type == ScalarType::pred ? 1 : bit_width(type) / 8; }

// ld/st with .relaxed, .acquire or .release are atomic accesses another thread may be
// waiting on: they must neither tear nor be cached in a register across a loop.
llvm::AtomicOrdering atomic_ordering(MemoryOrder order) {
  switch (order) {
    case MemoryOrder::unspecified: return llvm::AtomicOrdering::NotAtomic;
    case MemoryOrder::relaxed: return llvm::AtomicOrdering::Monotonic;
    case MemoryOrder::acquire: return llvm::AtomicOrdering::Acquire;
    case MemoryOrder::release: return llvm::AtomicOrdering::Release;
    case MemoryOrder::acquire_release: return llvm::AtomicOrdering::AcquireRelease;
    case MemoryOrder::sequential: return llvm::AtomicOrdering::SequentiallyConsistent;
  }
  return llvm::AtomicOrdering::NotAtomic;
}

void lower_load(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types[0];
  Value* pointer = lowering.address(instruction.operands[1], qualifiers.space);
  llvm::Type* value_type = lowering.type_of(type);
  uint32_t size = element_bytes(type);
  auto elements = elements_of(instruction.operands[0]);
  for (size_t index = 0; index < elements.size(); ++index) {
    Value* element_pointer = index == 0 ? pointer : builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, index * size);
    auto* load = builder.CreateAlignedLoad(value_type, element_pointer, llvm::Align(size), qualifiers.volatile_access);
    if (qualifiers.order != MemoryOrder::unspecified && size <= 8) {
      // Loads cannot release; a release load is ill-formed PTX but must not crash us.
      auto ordering = atomic_ordering(qualifiers.order);
      if (ordering == llvm::AtomicOrdering::Release || ordering == llvm::AtomicOrdering::AcquireRelease)
        ordering = llvm::AtomicOrdering::Acquire;
      load->setAtomic(ordering);
    }
    lowering.write(*elements[index], load, type);
  }
}

// st.async (sm_90): {.weak}{.shared::cluster}.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b,
// [mbar] stores into a block of the cluster and completes that many bytes' transactions on its
// mbarrier; .release{.gpu,.sys}{.global}.type [a], b (sm_100) is a release store. The ISA
// defines the first only in a cluster of two or more (an H200 stops a cluster of one with an
// illegal instruction); xcuda's clusters hold one block, so it stores into this block's shared
// memory, when issued.
bool is_valid_async_store(const Instruction& instruction) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  const auto& operands = instruction.operands;
  ScalarType type = qualifiers.types[0];
  if (!has_word(instruction, "mbarrier::complete_tx::bytes")) {
    bool scalar = type != ScalarType::pred && bit_width(type) <= 64 &&
                  (!is_float(type) || type == ScalarType::f32 || type == ScalarType::f64);
    return qualifiers.order == MemoryOrder::release && qualifiers.vector_width == 1 && operands.size() == 2 && scalar &&
           (qualifiers.space == StateSpace::global || qualifiers.space == StateSpace::generic);
  }
  bool word = type == ScalarType::b32 || type == ScalarType::u32 || type == ScalarType::s32 || type == ScalarType::f32;
  bool double_word = type == ScalarType::b64 || type == ScalarType::u64 || type == ScalarType::s64 || type == ScalarType::f64;
  uint32_t width = qualifiers.vector_width;
  bool shape = (word && width <= 4 && width != 3) || (double_word && width <= 2) || (type == ScalarType::b128 && width == 1);
  return qualifiers.order == MemoryOrder::unspecified && operands.size() == 3 && operands[2].kind == Operand::Kind::address &&
         (qualifiers.space == StateSpace::shared || qualifiers.space == StateSpace::generic) && shape;
}

// st.bulk{.weak}{.shared::cta} [a], size, initval (sm_100): size bytes, a multiple of 8, of the
// block's shared memory (at a shared or a generic address) set to initval, which can only be 0.
void lower_bulk_store(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  if (operands.size() != 3 || operands[2].kind != Operand::Kind::integer || operands[2].integer != 0) {
    lowering.error(instruction.location, "st.bulk takes [a], size, 0");
    return;
  }
  auto& builder = lowering.builder();
  Value* pointer = lowering.address(operands[0], instruction.qualifiers.space);
  builder.CreateMemSet(pointer, builder.getInt8(0), lowering.read(operands[1], ScalarType::u64), llvm::MaybeAlign(8));
}

void lower_store(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  if (has_word(instruction, "bulk")) {
    lower_bulk_store(lowering, instruction);
    return;
  }
  ScalarType type = qualifiers.types[0];
  const bool asynchronous = has_word(instruction, "async");
  if (asynchronous && !is_valid_async_store(instruction)) {
    lowering.error(instruction.location, "st.async takes {.shared::cluster}.mbarrier::complete_tx::bytes{.v2,.v4} and "
                                         ".b32/.u32/.s32/.f32 (.v4 at most), .b64/.u64/.s64/.f64 (.v2 at most) or "
                                         ".b128 with [a], b, [mbar]; or .release{.global} with [a], b");
    return;
  }
  Value* pointer = lowering.address(instruction.operands[0], qualifiers.space);
  uint32_t size = element_bytes(type);
  auto elements = elements_of(instruction.operands[1]);
  for (size_t index = 0; index < elements.size(); ++index) {
    Value* element_pointer = index == 0 ? pointer : builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, index * size);
    llvm::Value* value = lowering.read(*elements[index], type);
    auto* store = builder.CreateAlignedStore(value, element_pointer, llvm::Align(size), qualifiers.volatile_access);
    if (qualifiers.order != MemoryOrder::unspecified && size <= 8) {
      auto ordering = atomic_ordering(qualifiers.order);
      if (ordering == llvm::AtomicOrdering::Acquire || ordering == llvm::AtomicOrdering::AcquireRelease)
        ordering = llvm::AtomicOrdering::Release;
      store->setAtomic(ordering);
    }
  }
  if (asynchronous && instruction.operands.size() == 3)
    emit_mbarrier(lowering, static_cast<uint32_t>(intrinsics::MbarrierOperation::complete_tx),
                  lowering.address(instruction.operands[2], qualifiers.space), builder.getInt64(uint64_t{size} * elements.size()),
                  builder.getInt32(0));
}

void lower_cvta(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types[0];
  Value* value = lowering.read(instruction.operands[1], type);
  if (qualifiers.space == StateSpace::shared) {
    Value* base = builder.CreatePtrToInt(lowering.shared_base(), value->getType());
    value = qualifiers.to_space ? builder.CreateSub(value, base) : builder.CreateAdd(value, base);
  } else if (qualifiers.space == StateSpace::generic) {
    lowering.error(instruction.location, "cvta needs a state space");
    return;
  }
  lowering.write(instruction.operands[0], value, type);
}

// isspacep.space p, a. The .param window lies within the .global one (PTX ISA); the module's
// .const variables do not (an H100 answers .global false for a __constant__ variable's address):
// an address is global unless it is shared, local or constant.
void lower_isspacep(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* address = lowering.read(instruction.operands[1], ScalarType::u64);
  auto* pointer = builder.getPtrTy();
  auto in_window = [&](const char* intrinsic) {
    llvm::Function* test = lowering.module().intrinsic(intrinsic, builder.getInt1Ty(), {pointer, builder.getInt64Ty()});
    return builder.CreateCall(test, {lowering.thread_context(), address});
  };
  auto in_constant_variable = [&] {
    const Module& module = lowering.module().source();
    Value* inside = builder.getFalse();
    for (uint32_t index = 0; index < module.variables.size(); ++index) {
      const VariableDeclaration& variable = module.variables[index];
      llvm::GlobalVariable* global = lowering.module().variable(index);
      if (variable.space != StateSpace::constant || global == nullptr) continue;
      Value* offset = builder.CreateSub(address, builder.CreatePtrToInt(global, builder.getInt64Ty()));
      inside = builder.CreateOr(inside, builder.CreateICmpULT(offset, builder.getInt64(variable.size_in_bytes())));
    }
    return inside;
  };
  Value* inside = nullptr;
  switch (instruction.qualifiers.space) {
    case StateSpace::shared: inside = in_window(intrinsics::in_shared_window); break;
    case StateSpace::local: inside = in_window(intrinsics::in_local_window); break;
    case StateSpace::param: inside = in_window(intrinsics::in_parameter_window); break;
    case StateSpace::constant: inside = in_constant_variable(); break;
    case StateSpace::global:
      inside = builder.CreateNot(builder.CreateOr(
          builder.CreateOr(in_window(intrinsics::in_shared_window), in_window(intrinsics::in_local_window)),
          in_constant_variable()));
      break;
    default:
      lowering.error(instruction.location, "isspacep needs .global, .shared, .local, .const or .param");
      return;
  }
  lowering.write(instruction.operands[0], inside, ScalarType::pred);
}

void lower_fence(FunctionLowering& lowering, const Instruction& instruction) {
  bool proxy_only = std::find(instruction.qualifiers.other.begin(), instruction.qualifiers.other.end(), "proxy") !=
                    instruction.qualifiers.other.end();
  if (!proxy_only) lowering.builder().CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

// Cache hints have no meaning on the host: prefetch, prefetchu, applypriority, and discard,
// after which the ISA leaves the line's contents undefined, so keeping them is allowed.
void lower_prefetch(FunctionLowering&, const Instruction&) {}

// createpolicy's result is an opaque cache policy, which only the cache-hint operands of loads,
// stores and copies read, and the host ignores.
void lower_createpolicy(FunctionLowering& lowering, const Instruction& instruction) {
  lowering.write(instruction.operands[0], lowering.builder().getInt64(0), ScalarType::b64);
}

// A cluster is one block on xcuda: its block 0 is the only rank, whose shared memory is this
// block's, at the same addresses (mapa's rank b can only be 0).
void lower_mapa(FunctionLowering& lowering, const Instruction& instruction) {
  ScalarType type = instruction.qualifiers.types[0];
  lowering.write(instruction.operands[0], lowering.read(instruction.operands[1], type), type);
}

void lower_getctarank(FunctionLowering& lowering, const Instruction& instruction) {
  lowering.write(instruction.operands[0], lowering.builder().getInt32(0), ScalarType::b32);
}

}  // namespace

void add_memory_lowerings(LoweringTable& table) {
  table["ld"] = lower_load;
  table["ldu"] = lower_load;
  table["st"] = lower_store;
  table["cvta"] = lower_cvta;
  table["isspacep"] = lower_isspacep;
  table["membar"] = lower_fence;
  table["fence"] = lower_fence;
  table["prefetch"] = lower_prefetch;
  table["prefetchu"] = lower_prefetch;
  table["applypriority"] = lower_prefetch;
  table["discard"] = lower_prefetch;
  table["createpolicy"] = lower_createpolicy;
  table["mapa"] = lower_mapa;
  table["getctarank"] = lower_getctarank;
}

}  // namespace xcuda::ptx
