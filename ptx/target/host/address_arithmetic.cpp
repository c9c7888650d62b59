#include "target/host/address_arithmetic.h"

#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

namespace xcuda::ptx::host {
namespace {

// Whether `value` may carry an address: a loaded word, a converted pointer, an argument, or
// arithmetic on one of them. Offsets (shifts, products, extensions, constants) do not.
bool may_hold_address(const llvm::Value* value, int depth = 6) {
  if (llvm::isa<llvm::Constant>(value)) return false;
  const auto* instruction = llvm::dyn_cast<llvm::Instruction>(value);
  if (instruction == nullptr || depth == 0) return true;
  switch (instruction->getOpcode()) {
    case llvm::Instruction::Add:
    case llvm::Instruction::Sub:
    case llvm::Instruction::Or:
    case llvm::Instruction::And:
      return may_hold_address(instruction->getOperand(0), depth - 1) || may_hold_address(instruction->getOperand(1), depth - 1);
    case llvm::Instruction::Shl:
    case llvm::Instruction::Mul:
    case llvm::Instruction::ZExt:
    case llvm::Instruction::SExt:
    case llvm::Instruction::Trunc:
      return false;
    default:
      return true;
  }
}

}  // namespace

llvm::PreservedAnalyses AddressArithmetic::run(llvm::Function& function, llvm::FunctionAnalysisManager&) {
  std::vector<llvm::IntToPtrInst*> pending;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* conversion = llvm::dyn_cast<llvm::IntToPtrInst>(&instruction)) pending.push_back(conversion);
  bool changed = false;
  while (!pending.empty()) {
    llvm::IntToPtrInst* conversion = pending.back();
    pending.pop_back();
    auto* sum = llvm::dyn_cast<llvm::BinaryOperator>(conversion->getOperand(0));
    if (sum == nullptr || sum->getOpcode() != llvm::Instruction::Add) continue;
    llvm::Value* base = sum->getOperand(0);
    llvm::Value* offset = sum->getOperand(1);
    if (!may_hold_address(base)) std::swap(base, offset);
    if (!may_hold_address(base) || may_hold_address(offset)) continue;
    llvm::IRBuilder<> builder(conversion);
    auto* base_pointer = llvm::cast<llvm::IntToPtrInst>(builder.CreateIntToPtr(base, conversion->getType()));
    conversion->replaceAllUsesWith(builder.CreateGEP(builder.getInt8Ty(), base_pointer, offset));
    conversion->eraseFromParent();
    pending.push_back(base_pointer);
    changed = true;
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace xcuda::ptx::host
