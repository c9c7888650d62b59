// Integer-to-float conversions, divisions and square roots under .rz/.rm/.rp. The lowering puts
// each in a helper that sets the rounding mode around a constrained operation; LLVM 19's AMDGPU
// back end expands these four constrained operations into library calls, which a code object
// cannot make (LLVM aborts the process). Here:
// - a conversion helper becomes exact integer arithmetic, in no particular rounding mode: the
//   magnitude cut to the format's precision converts exactly, and where the mode rounds away from
//   zero and bits were cut, the result is the next float out (one more in its bit pattern);
// - a division or square root keeps the helper's mode change and becomes the ordinary operation,
//   whose instruction sequence (v_div_scale/v_div_fmas/v_div_fixup, v_sqrt with its corrections)
//   then runs in that mode. The sequences are exact in round-to-nearest; in a directed mode each
//   of their steps rounds that way, which AMD's ISA documents as the way to get directed
//   division, but which has not been checked against NVIDIA's results on AMD hardware.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;

enum class Direction { toward_zero, down, up };

// The mode the helper sets: its llvm.set.rounding with a constant (FLT_ROUNDS encoding); the
// other one restores the caller's mode.
std::optional<Direction> helper_direction(const llvm::Function& function) {
  for (const llvm::BasicBlock& block : function)
    for (const llvm::Instruction& instruction : block)
      if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction); call && call->getIntrinsicID() == llvm::Intrinsic::set_rounding)
        if (const auto* mode = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0))) switch (mode->getZExtValue()) {
            case 0: return Direction::toward_zero;
            case 2: return Direction::up;
            case 3: return Direction::down;
            default: return std::nullopt;
          }
  return std::nullopt;
}

Value* convert_exactly(llvm::IRBuilder<>& builder, Value* integer, bool is_signed, llvm::Type* result, Direction direction) {
  auto* type = llvm::cast<llvm::IntegerType>(integer->getType());
  const llvm::fltSemantics& semantics = result->getFltSemantics();
  auto constant = [type](uint64_t value) { return llvm::ConstantInt::get(type, value); };
  Value* negative = is_signed ? builder.CreateICmpSLT(integer, constant(0)) : builder.getFalse();
  // The most negative value negates to itself, whose unsigned reading is its magnitude.
  Value* magnitude = builder.CreateSelect(negative, builder.CreateNeg(integer), integer);
  Value* leading_zeros = builder.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude, builder.getFalse());
  Value* significant_bits = builder.CreateSub(constant(type->getBitWidth()), leading_zeros);
  Value* excess = builder.CreateSub(significant_bits, constant(llvm::APFloat::semanticsPrecision(semantics)));
  Value* cut = builder.CreateSelect(builder.CreateICmpSGT(excess, constant(0)), excess, constant(0));
  Value* unit = builder.CreateShl(constant(1), cut);
  Value* kept = builder.CreateAnd(magnitude, builder.CreateNeg(unit));
  Value* inexact = builder.CreateICmpNE(kept, magnitude);
  Value* away = builder.getFalse();
  if (direction == Direction::up) away = builder.CreateAnd(builder.CreateNot(negative), inexact);
  if (direction == Direction::down) away = builder.CreateAnd(negative, inexact);
  // `kept` has no more significant bits than the format holds, so this rounds only on overflow,
  // to infinity, where rounding toward zero stops at the largest finite value instead.
  Value* base = builder.CreateUIToFP(kept, result);
  auto* bits_type = builder.getIntNTy(result->getScalarSizeInBits());
  Value* base_bits = builder.CreateBitCast(base, bits_type);
  Value* stepped = builder.CreateBitCast(builder.CreateAdd(base_bits, builder.CreateZExt(away, bits_type)), result);
  Value* infinite = builder.CreateFCmpOEQ(base, llvm::ConstantFP::getInfinity(result));
  Value* largest = llvm::ConstantFP::get(result, llvm::APFloat::getLargest(semantics));
  Value* rounded = builder.CreateSelect(infinite, builder.CreateSelect(away, base, largest), stepped);
  return builder.CreateSelect(negative, builder.CreateFNeg(rounded), rounded);
}

// Replaces the body of a conversion helper; returns false where it is not one this handles.
bool rewrite_conversion(llvm::Function& helper, const llvm::IntrinsicInst& conversion, Direction direction) {
  bool is_signed = conversion.getIntrinsicID() == llvm::Intrinsic::experimental_constrained_sitofp;
  llvm::Type* result = helper.getReturnType();
  if (helper.arg_size() != 1 || !helper.getArg(0)->getType()->isIntegerTy() || !result->isFloatingPointTy()) return false;
  helper.deleteBody();
  helper.setLinkage(llvm::GlobalValue::InternalLinkage);
  helper.removeFnAttr(llvm::Attribute::StrictFP);
  helper.removeFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(helper.getContext(), "entry", &helper));
  builder.CreateRet(convert_exactly(builder, helper.getArg(0), is_signed, result, direction));
  return true;
}

void make_ordinary(llvm::IntrinsicInst& operation) {
  llvm::IRBuilder<> builder(&operation);
  Value* result = operation.getIntrinsicID() == llvm::Intrinsic::experimental_constrained_fdiv
                      ? builder.CreateFDiv(operation.getArgOperand(0), operation.getArgOperand(1))
                      : builder.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, operation.getArgOperand(0));
  operation.replaceAllUsesWith(result);
  operation.eraseFromParent();
}

// Rewrites one helper; returns false where it holds an operation this does not know.
bool rewrite_helper(llvm::Function& helper) {
  std::vector<llvm::IntrinsicInst*> operations;
  for (llvm::BasicBlock& block : helper)
    for (llvm::Instruction& instruction : block)
      if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction)) switch (call->getIntrinsicID()) {
          case llvm::Intrinsic::experimental_constrained_sitofp:
          case llvm::Intrinsic::experimental_constrained_uitofp:
          case llvm::Intrinsic::experimental_constrained_fdiv:
          case llvm::Intrinsic::experimental_constrained_sqrt: operations.push_back(call); break;
          default: break;
        }
  if (operations.empty()) return true;
  std::optional<Direction> direction = helper_direction(helper);
  if (!direction) return false;
  llvm::Intrinsic::ID first = operations.front()->getIntrinsicID();
  if (first == llvm::Intrinsic::experimental_constrained_sitofp || first == llvm::Intrinsic::experimental_constrained_uitofp)
    return operations.size() == 1 && rewrite_conversion(helper, *operations.front(), *direction);
  for (llvm::IntrinsicInst* operation : operations) make_ordinary(*operation);
  return true;
}

}  // namespace

std::vector<std::string> expand_directed_rounding(llvm::Module& module) {
  std::vector<std::string> missing;
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && function.getName().starts_with(intrinsics::rounded_helper_prefix) && !rewrite_helper(function))
      missing.emplace_back(function.getName());
  return missing;
}

}  // namespace xcuda::ptx::amdgpu
