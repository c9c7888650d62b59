#include "target/host/nan_canonicalization.h"

#include <unordered_set>
#include <vector>

#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/PatternMatch.h>

namespace xcuda::ptx::host {
namespace {

using llvm::Value;

// x when `value` is select(fcmp uno x, x, NaN, x), the lowering's canonicalisation of x (or
// its combined form, with a number for the second x).
Value* canonicalized_operand(const Value* value) {
  const auto* select = llvm::dyn_cast<llvm::SelectInst>(value);
  if (select == nullptr) return nullptr;
  const auto* compare = llvm::dyn_cast<llvm::FCmpInst>(select->getCondition());
  if (compare == nullptr || compare->getPredicate() != llvm::FCmpInst::FCMP_UNO) return nullptr;
  Value* operand = compare->getOperand(0);
  const Value* other = compare->getOperand(1);
  bool tests_operand = other == operand || llvm::PatternMatch::match(other, llvm::PatternMatch::m_NonNaN());
  if (!tests_operand || select->getFalseValue() != operand) return nullptr;
  if (!llvm::PatternMatch::match(select->getTrueValue(), llvm::PatternMatch::m_NaN())) return nullptr;
  return operand;
}

// Instructions whose result is a NaN when a floating-point operand is one, or is one of the
// operands: the NaN's bits may pass into the result, so the result's users decide.
bool passes_nan(const llvm::Instruction& instruction) {
  if (llvm::isa<llvm::PHINode>(instruction) || llvm::isa<llvm::SelectInst>(instruction)) return true;
  switch (instruction.getOpcode()) {
    case llvm::Instruction::FAdd:
    case llvm::Instruction::FSub:
    case llvm::Instruction::FMul:
    case llvm::Instruction::FDiv:
    case llvm::Instruction::FRem:
    case llvm::Instruction::FNeg:
      return true;
    default:
      break;
  }
  const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction);
  if (intrinsic == nullptr) return false;
  switch (intrinsic->getIntrinsicID()) {
    case llvm::Intrinsic::fma:
    case llvm::Intrinsic::fmuladd:
    case llvm::Intrinsic::sqrt:
      return true;
    default:
      return false;
  }
}

// Whether `user` sees `value`'s NaN bits without hiding them behind a comparison or a
// canonicalisation.
bool exposes_directly(const llvm::User& user, const Value& value) {
  if (llvm::isa<llvm::FCmpInst>(user)) return false;
  if (canonicalized_operand(&user) == &value) return false;
  const auto* instruction = llvm::dyn_cast<llvm::Instruction>(&user);
  return instruction == nullptr || !passes_nan(*instruction);
}

}  // namespace

llvm::PreservedAnalyses RedundantNanCanonicalization::run(llvm::Function& function, llvm::FunctionAnalysisManager&) {
  // The values whose NaN bits can be seen: those a user exposes directly, then, backwards, the
  // operands of every instruction that passes NaNs into a value already exposed.
  std::unordered_set<const Value*> exposed;
  std::vector<const llvm::Instruction*> pending;
  auto expose = [&](const Value* value) {
    if (const auto* instruction = llvm::dyn_cast<llvm::Instruction>(value); instruction && exposed.insert(value).second)
      pending.push_back(instruction);
  };
  std::vector<llvm::SelectInst*> canonicalizations;
  for (llvm::BasicBlock& block : function) {
    for (llvm::Instruction& instruction : block) {
      if (!instruction.getType()->isFPOrFPVectorTy()) continue;
      if (canonicalized_operand(&instruction) != nullptr) canonicalizations.push_back(llvm::cast<llvm::SelectInst>(&instruction));
      for (const llvm::User* user : instruction.users())
        if (exposes_directly(*user, instruction)) expose(&instruction);
    }
  }
  while (!pending.empty()) {
    const llvm::Instruction* instruction = pending.back();
    pending.pop_back();
    // Whatever flows into an exposed value through an instruction that passes NaNs is exposed.
    if (canonicalized_operand(instruction) != nullptr || !passes_nan(*instruction)) continue;
    for (const llvm::Use& operand : instruction->operands())
      if (operand->getType()->isFPOrFPVectorTy()) expose(operand.get());
  }
  bool changed = false;
  for (llvm::SelectInst* select : canonicalizations) {
    if (exposed.contains(select)) continue;
    select->replaceAllUsesWith(canonicalized_operand(select));
    changed = true;
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace xcuda::ptx::host
