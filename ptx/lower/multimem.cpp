// multimem.ld_reduce / .st / .red: accesses through a multicast address, which reach the same
// address in every device of the multicast group (NCCL's NVLink SHARP collectives). A host
// device is a group of one, so a reduction over the group is the one value there: the forms are
// ld, st and red of that address.
#include <algorithm>

#include "lower/instruction_lowering.h"

namespace xcuda::ptx {
namespace {

void lower_multimem(FunctionLowering& lowering, const Instruction& instruction) {
  constexpr std::pair<std::string_view, std::string_view> forms[] = {{"ld_reduce", "ld"}, {"st", "st"}, {"red", "red"}};
  Instruction single = instruction;
  single.qualifiers.other.clear();
  for (const auto& [form, opcode] : forms)
    if (std::find(instruction.qualifiers.other.begin(), instruction.qualifiers.other.end(), form) != instruction.qualifiers.other.end())
      single.opcode = opcode;
  size_t address = single.opcode == "ld" ? 1 : 0;
  if (single.opcode == instruction.opcode || instruction.operands.size() != 2 ||
      instruction.operands[address].kind != Operand::Kind::address || instruction.qualifiers.types.size() != 1) {
    lowering.error(instruction.location, "expected multimem.ld_reduce d, [a], multimem.st [a], b or multimem.red [a], b, with one type");
    return;
  }
  lowering_table().at(single.opcode)(lowering, single);
}

}  // namespace

void add_multimem_lowerings(LoweringTable& table) { table["multimem"] = lower_multimem; }

}  // namespace xcuda::ptx
