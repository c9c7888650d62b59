// mov: registers, immediates, special registers, addresses of variables and functions, and
// packing/unpacking of vectors ({a, b} ↔ a wide register).
#include "lower/floating_point.h"
#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

void lower_mov(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = instruction.qualifiers.types[0];
  const Operand& destination = instruction.operands[0];
  const Operand& source = instruction.operands[1];
  if (instruction.qualifiers.vector_width > 1) {
    lowering.error(instruction.location, "mov of vector registers is not supported yet");
    return;
  }
  bool packs = source.kind == Operand::Kind::vector;
  bool unpacks = destination.kind == Operand::Kind::vector;
  if (!packs && !unpacks) {
    lowering.write(destination, lowering.read(source, type), type);
    return;
  }
  const Operand& vector = packs ? source : destination;
  size_t count = vector.elements.size();
  uint32_t total_bits = bit_width(type);
  if ((packs && unpacks) || count == 0 || total_bits % count != 0 || (count != 2 && count != 4)) {
    lowering.error(vector.location, "cannot split ." + std::string(name_of(type)) + " into " + std::to_string(count) + " elements");
    return;
  }
  uint32_t element_bits = total_bits / static_cast<uint32_t>(count);
  ScalarType element_type = bits_of_width(element_bits);
  llvm::Type* whole = builder.getIntNTy(total_bits);
  // The first element is the least significant.
  if (packs) {
    Value* result = llvm::ConstantInt::get(whole, 0);
    for (size_t index = 0; index < count; ++index) {
      Value* element = builder.CreateZExt(lowering.read(vector.elements[index], element_type), whole);
      result = builder.CreateOr(result, builder.CreateShl(element, element_bits * index));
    }
    lowering.write(destination, result, type);
    return;
  }
  Value* value = builder.CreateBitCast(lowering.read(source, type), whole);
  for (size_t index = 0; index < count; ++index) {
    Value* element = builder.CreateTrunc(builder.CreateLShr(value, element_bits * index), builder.getIntNTy(element_bits));
    lowering.write(vector.elements[index], element, element_type);
  }
}

}  // namespace

void add_data_movement_lowerings(LoweringTable& table) { table["mov"] = lower_mov; }

}  // namespace xcuda::ptx
