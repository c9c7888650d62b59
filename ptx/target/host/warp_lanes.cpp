#include "target/host/warp_lanes.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

#include <llvm/Analysis/DomConditionCache.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "lower/compiler_loops.h"
#include "lower/intrinsics.h"
#include "lower/warp_folds.h"

namespace xcuda::ptx::host {
namespace {

using llvm::Value;

constexpr const char* lane_exchange = "xcuda.lanes.exchange";
constexpr const char* lane_peer = "xcuda.lanes.peer";
constexpr const char* atomic_prefix = "xcuda.lanes.atomic.";
constexpr std::string_view lane_fold_prefix = "xcuda.lanes.fold.";

// Every scalar lane function's name. A fold's, i32 fold(i32 participants, i64 value, i64 offer),
// is given the lane's offer at the exchange before it.
std::vector<std::string> lane_function_names() {
  std::vector<std::string> names{lane_exchange, lane_peer};
  for (size_t kind = 0; kind < warp_fold_names.size(); ++kind) names.push_back(warp_fold_name(static_cast<WarpFold>(kind), lane_fold_prefix));
  return names;
}

// The vector forms: NAME.v32 for a warp whose lanes all run the call, NAME.v32m with the mask
// of those that do.
std::string vector_name(llvm::StringRef scalar, bool masked) { return scalar.str() + (masked ? ".v32m" : ".v32"); }

// What LLVM may assume of a lane function. The scalar forms are convergent, so that no
// optimisation moves them into or out of a branch and changes which lanes meet. The scalar
// exchange may touch any memory: a lane's accesses before it must stay before its peers' after
// it (__syncwarp between a store and a neighbour's load), and nothing else keeps the optimiser
// from reordering accesses that are independent within one thread. The others are pure.
enum class LaneFunction { exchange, peer, vector_form };

void describe(llvm::Function& function, LaneFunction kind) {
  function.setDoesNotThrow();
  function.setWillReturn();
  if (kind != LaneFunction::exchange) function.setDoesNotAccessMemory();
  if (kind != LaneFunction::vector_form) function.setConvergent();
}

// A vector form's type: each parameter and the result of the scalar form 32 wide, then the lane
// mask if `masked`.
llvm::FunctionType* vector_form_type(llvm::FunctionType* scalar, bool masked) {
  auto widen = [](llvm::Type* element) { return llvm::FixedVectorType::get(element, warp_lanes); };
  std::vector<llvm::Type*> parameters;
  for (llvm::Type* parameter : scalar->params()) parameters.push_back(widen(parameter));
  if (masked) parameters.push_back(widen(llvm::Type::getInt1Ty(scalar->getContext())));
  return llvm::FunctionType::get(widen(scalar->getReturnType()), parameters, false);
}

// Declares the scalar lane exchange `name` of `type` and its vector forms, and returns the
// scalar one. Each vector parameter of the vector forms is the scalar one's, 32 wide.
llvm::Function* declare_lane_function(llvm::Module& module, llvm::StringRef name, llvm::FunctionType* type, LaneFunction kind) {
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  auto* scalar = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
  describe(*scalar, kind);
  for (bool masked : {false, true}) {
    auto* vector = llvm::Function::Create(vector_form_type(type, masked), llvm::GlobalValue::ExternalLinkage, vector_name(name, masked), module);
    describe(*vector, LaneFunction::vector_form);
    // The vectoriser looks the forms up by name in the module; keep them until it has.
    llvm::appendToCompilerUsed(module, {vector});
  }
  return scalar;
}

llvm::CallInst* call_lane_function(llvm::Instruction* before, llvm::Function* scalar, llvm::ArrayRef<Value*> arguments) {
  llvm::IRBuilder<> builder(before);
  llvm::CallInst* call = builder.CreateCall(scalar, arguments);
  std::string vector_parameters(arguments.size(), 'v');
  std::vector<std::string> variants;
  for (bool masked : {false, true})
    variants.push_back("_ZGV_LLVM_" + std::string(masked ? "M" : "N") + std::to_string(warp_lanes) + vector_parameters + "_" +
                       scalar->getName().str() + "(" + vector_name(scalar->getName(), masked) + ")");
  llvm::VFABI::setVectorVariantNames(call, variants);
  return call;
}

const llvm::Function* callee(const llvm::Instruction& instruction) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
  return call != nullptr ? call->getCalledFunction() : nullptr;
}

// What the branches of a function tell of its values: that a warp path's block is whole warps
// wide, say, which the optimiser no longer writes out where it knows it.
struct BranchFacts {
  explicit BranchFacts(llvm::Function& function) : dominators(function) {
    for (llvm::BasicBlock& block : function)
      if (auto* branch = llvm::dyn_cast<llvm::BranchInst>(block.getTerminator()); branch != nullptr && branch->isConditional())
        conditions.registerBranch(branch);
  }
  llvm::DominatorTree dominators;
  llvm::DomConditionCache conditions;
};

// The known bits of each lane of `value` (one entry for a scalar). LLVM's analysis stops six
// operations deep, and a shuffle's lane, (the thread loop's index & 31) ^ offset, is as deep
// before the index's loop and the block's width, whose low bits are known zero on the warp path.
// So the arithmetic of lanes, splats and width changes are looked through here, once for all
// lanes: the butterfly shuffles of that warp_atomics kernel became permutations, and it compiled
// in 24 ms.
std::vector<llvm::KnownBits> lane_bits(Value* value, const llvm::SimplifyQuery& query, unsigned depth = 0) {
  unsigned width = value->getType()->getScalarSizeInBits();
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(value->getType());
  if (depth < 8) {
    auto operand = [&](unsigned index) { return lane_bits(llvm::cast<llvm::Instruction>(value)->getOperand(index), query, depth + 1); };
    if (Value* splat = vector != nullptr ? llvm::getSplatValue(value) : nullptr)
      return std::vector<llvm::KnownBits>(vector->getNumElements(), lane_bits(splat, query, depth + 1)[0]);
    auto* operation = llvm::dyn_cast<llvm::BinaryOperator>(value);
    unsigned opcode = operation != nullptr ? operation->getOpcode() : 0;
    if (opcode == llvm::Instruction::Xor || opcode == llvm::Instruction::And || opcode == llvm::Instruction::Or ||
        opcode == llvm::Instruction::Add) {
      std::vector<llvm::KnownBits> bits = operand(0), right = operand(1);
      for (size_t lane = 0; lane < bits.size(); ++lane) {
        const llvm::KnownBits& left = bits[lane];
        bits[lane] = opcode == llvm::Instruction::Xor   ? left ^ right[lane]
                     : opcode == llvm::Instruction::And ? left & right[lane]
                     : opcode == llvm::Instruction::Or  ? left | right[lane]
                                                        : llvm::KnownBits::computeForAddSub(true, false, false, left, right[lane]);
      }
      return bits;
    }
    if (llvm::isa<llvm::TruncInst>(value) || llvm::isa<llvm::ZExtInst>(value)) {
      std::vector<llvm::KnownBits> bits = operand(0);
      for (llvm::KnownBits& lane : bits) lane = llvm::isa<llvm::TruncInst>(value) ? lane.trunc(width) : lane.zext(width);
      return bits;
    }
  }
  if (vector == nullptr) return {llvm::computeKnownBits(value, 0, query)};
  std::vector<llvm::KnownBits> bits;
  for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
    bits.push_back(llvm::computeKnownBits(value, llvm::APInt::getOneBitSet(vector->getNumElements(), lane), 0, query));
  return bits;
}

// What `value` was before it was widened to an exchange's 64 bits, or null if it was not.
Value* before_widening(Value* value) {
  auto* widened = llvm::dyn_cast<llvm::ZExtInst>(value);
  return widened != nullptr ? widened->getOperand(0) : nullptr;
}

// A slot of `type` in the stack frame of the function the builder is in.
llvm::AllocaInst* stack_slot(llvm::IRBuilder<>& builder, llvm::Type* type) {
  llvm::BasicBlock& entry = builder.GetInsertBlock()->getParent()->getEntryBlock();
  return llvm::IRBuilder<>(&entry, entry.getFirstInsertionPt()).CreateAlloca(type);
}

// The offers of lanes `lanes` among `offers`, for a warp whose offers are the vector `offers`,
// picked at `place`.
Value* pick_offers(llvm::IRBuilder<>& builder, Value* offers, Value* lanes, const BranchFacts& facts, const llvm::Instruction* place) {
  // Offers of 32 bits widened to the exchange's 64 are picked at their own width: half the
  // registers, and half the instructions where lanes are picked one by one (the warp_atomics
  // kernel of tests/cuda/whole_warps.cu compiled in 39 ms rather than 46).
  if (Value* narrow = before_widening(offers)) return builder.CreateZExt(pick_offers(builder, narrow, lanes, facts, place), offers->getType());
  auto within_warp = [&](Value* lane) { return builder.CreateAnd(lane, warp_lanes - 1); };
  // shfl.up/down/bfly and fixed-lane reads: the lanes are known, and the pick is one shuffle.
  // They are known when their low five bits are, as in (the warp's first thread + 16 + lane),
  // which shfl.down gives where the thread loop's index is a multiple of 32.
  std::vector<int> mask;
  const llvm::DataLayout& layout = builder.GetInsertBlock()->getModule()->getDataLayout();
  std::vector<llvm::KnownBits> known = lane_bits(lanes, llvm::SimplifyQuery(layout, nullptr, &facts.dominators, nullptr, place, true, true, &facts.conditions));
  for (uint32_t lane = 0; lane < warp_lanes && mask.size() == lane; ++lane) {
    if (llvm::isa_and_nonnull<llvm::UndefValue>(llvm::findScalarElement(lanes, lane))) {
      mask.push_back(llvm::PoisonMaskElem);
      continue;
    }
    llvm::KnownBits within = known[lane].trunc(5);
    if (within.isConstant()) mask.push_back(static_cast<int>(within.getConstant().getZExtValue()));
  }
  if (mask.size() == warp_lanes) return builder.CreateShuffleVector(offers, mask);
  // A lane every lane reads (a broadcast).
  if (Value* lane = llvm::getSplatValue(lanes))
    return builder.CreateVectorSplat(warp_lanes, builder.CreateExtractElement(offers, within_warp(lane)));
  // Lanes known only at run time (shfl.idx by a lane each lane computes): the offers through the
  // stack, gathered. Picked one by one, 32 extractions and insertions, the one such shfl of
  // tests/cuda/whole_warps.cu's collectives kernel took 3 ms of its 36 ms compile (`perf stat -r
  // 10 ... --kernel`, two alternations), and a loop of 64 such shfl over 65536 threads ran in
  // 2.4-2.8 ms instead of 0.7-1.2. A lane that runs no thread may name any lane: frozen, the
  // name is one of the 32.
  llvm::AllocaInst* stored = stack_slot(builder, offers->getType());
  builder.CreateStore(offers, stored);
  llvm::Type* element = llvm::cast<llvm::VectorType>(offers->getType())->getElementType();
  Value* addresses = builder.CreateGEP(element, stored, within_warp(builder.CreateFreeze(lanes)));
  return builder.CreateMaskedGather(offers->getType(), addresses, layout.getABITypeAlign(element));
}

// For each lane, the lanes whose offer equals its value, as a mask: a loop over the lanes, at the
// builder's place, through the stack. Written out, its 32 comparisons of a warp's offers and the
// answer built of 32 masks were a fifth of the compile of tests/cuda/whole_warps.cu's collectives
// kernel, for its three matches (45 -> 37 ms of CPU, `perf stat -r 10 xcuda compile --target host
// -j 1 --whole-warp-blocks --kernel`; the module 71-75 -> 67-68 ms wall), and ran slower: a
// kernel of 64 match.any and match.all in a loop over 65536 threads took 4.3 ms, now 2.5.
Value* equal_offers(llvm::IRBuilder<>& builder, Value* values, Value* offers) {
  llvm::BasicBlock* before = builder.GetInsertBlock();
  llvm::Function* function = before->getParent();
  auto* masks = llvm::FixedVectorType::get(builder.getInt32Ty(), warp_lanes);
  llvm::AllocaInst* own = stack_slot(builder, values->getType());
  llvm::AllocaInst* answers = stack_slot(builder, masks);
  builder.CreateStore(values, own);
  llvm::BasicBlock* after = before->splitBasicBlock(builder.GetInsertPoint(), "equal.done");
  before->getTerminator()->eraseFromParent();
  auto* loop = llvm::BasicBlock::Create(function->getContext(), "equal.lane", function, after);
  builder.SetInsertPoint(before);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode* lane = builder.CreatePHI(builder.getInt32Ty(), 2, "lane");
  lane->addIncoming(builder.getInt32(0), before);
  llvm::Type* element = llvm::cast<llvm::VectorType>(values->getType())->getElementType();
  Value* value = builder.CreateLoad(element, builder.CreateGEP(element, own, lane));
  Value* equal = builder.CreateBitCast(builder.CreateICmpEQ(offers, builder.CreateVectorSplat(warp_lanes, value)), builder.getInt32Ty());
  builder.CreateStore(equal, builder.CreateGEP(builder.getInt32Ty(), answers, lane));
  Value* next = builder.CreateAdd(lane, builder.getInt32(1));
  lane->addIncoming(next, loop);
  keep_rolled(builder.CreateCondBr(builder.CreateICmpULT(next, builder.getInt32(warp_lanes)), loop, after));
  builder.SetInsertPoint(after, after->begin());
  return builder.CreateLoad(masks, answers);
}

// A warp fold over the lanes that run it, whose i32 `participants`, i64 `values` and `offers`
// are vectors (and i1 `running` the lanes that run it, or null for all).
Value* fold_offers(llvm::IRBuilder<>& builder, WarpFold kind, Value* participants, Value* values, Value* offers, Value* running) {
  auto lane_mask = [&](Value* lanes) { return builder.CreateBitCast(lanes, builder.getInt32Ty()); };
  if (kind == WarpFold::ballot)
    return builder.CreateAnd(builder.CreateVectorSplat(warp_lanes, lane_mask(builder.CreateICmpNE(offers, llvm::Constant::getNullValue(offers->getType())))),
                             participants);
  if (kind == WarpFold::equal) {
    // Values of 32 bits widened to the exchange's 64 compare at their own width, in half the
    // registers (tests/cuda/whole_warps.cu's collectives kernel: 96 comparisons of 32 lanes).
    Value* narrow_values = before_widening(values);
    Value* narrow_offers = before_widening(offers);
    if (narrow_values != nullptr && narrow_offers != nullptr && narrow_values->getType() == narrow_offers->getType())
      return fold_offers(builder, kind, participants, narrow_values, narrow_offers, running);
    return builder.CreateAnd(equal_offers(builder, values, offers), participants);
  }
  // The running lanes met at one exchange, so they share their participants: the first one's.
  Value* first = builder.getInt32(0);
  if (running != nullptr)
    first = builder.CreateAnd(builder.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, lane_mask(running), builder.getFalse()), warp_lanes - 1);
  Value* shared = builder.CreateVectorSplat(warp_lanes, builder.CreateExtractElement(participants, first));
  std::vector<llvm::Constant*> bits;
  for (uint32_t lane = 0; lane < warp_lanes; ++lane) bits.push_back(builder.getInt32(1u << lane));
  Value* taking = builder.CreateICmpNE(builder.CreateAnd(shared, llvm::ConstantVector::get(bits)), llvm::Constant::getNullValue(shared->getType()));
  Value* operands = builder.CreateSelect(taking, builder.CreateTrunc(offers, participants->getType()),
                                        builder.CreateVectorSplat(warp_lanes, builder.getInt32(warp_fold_identity(kind))));
  Value* folded = nullptr;
  switch (kind) {
    case WarpFold::add: folded = builder.CreateAddReduce(operands); break;
    case WarpFold::and_: folded = builder.CreateAndReduce(operands); break;
    case WarpFold::or_: folded = builder.CreateOrReduce(operands); break;
    case WarpFold::xor_: folded = builder.CreateXorReduce(operands); break;
    case WarpFold::umin: folded = builder.CreateIntMinReduce(operands, false); break;
    case WarpFold::umax: folded = builder.CreateIntMaxReduce(operands, false); break;
    case WarpFold::smin: folded = builder.CreateIntMinReduce(operands, true); break;
    default: folded = builder.CreateIntMaxReduce(operands, true); break;
  }
  return builder.CreateVectorSplat(warp_lanes, folded);
}

// Rewrites the calls to the vector forms of `scalar`; returns the functions changed.
std::vector<llvm::Function*> lower_vector_forms(llvm::Module& module, const std::string& scalar) {
  std::vector<llvm::Function*> changed;
  std::unordered_map<llvm::Function*, std::unique_ptr<BranchFacts>> facts;
  for (bool masked : {false, true}) {
    llvm::Function* vector = module.getFunction(vector_name(scalar, masked));
    if (vector == nullptr) continue;
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* user : vector->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user); call != nullptr && call->getCalledFunction() == vector) calls.push_back(call);
    for (llvm::CallInst* call : calls) {
      llvm::IRBuilder<> builder(call);
      Value* result = nullptr;
      if (scalar == lane_peer) {
        std::unique_ptr<BranchFacts>& function_facts = facts[call->getFunction()];
        if (!function_facts) function_facts = std::make_unique<BranchFacts>(*call->getFunction());
        result = pick_offers(builder, call->getArgOperand(1), call->getArgOperand(0), *function_facts, call);
      } else if (auto fold = warp_fold_of(scalar, lane_fold_prefix)) {
        result = fold_offers(builder, *fold, call->getArgOperand(0), call->getArgOperand(1), call->getArgOperand(2),
                             masked ? call->getArgOperand(3) : nullptr);
      } else {
        // The lanes that arrived are those that run the call.
        Value* arrived = masked ? builder.CreateBitCast(call->getArgOperand(1), builder.getInt32Ty()) : builder.getInt32(~0u);
        result = builder.CreateVectorSplat(warp_lanes, arrived);
      }
      call->replaceAllUsesWith(result);
      changed.push_back(call->getFunction());
      call->eraseFromParent();
    }
    llvm::removeFromUsedLists(module, [&](llvm::Constant* used) { return used == vector; });
    vector->eraseFromParent();
  }
  return changed;
}

// A store that only known lanes make (`if (lane == 0)`) becomes a scatter with a constant mask,
// which costs as much as storing every lane; stored lane by lane it is a few instructions.
void store_known_lanes(llvm::Function& function) {
  constexpr size_t most_lanes = 4;
  std::vector<llvm::IntrinsicInst*> scatters;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction); intrinsic && intrinsic->getIntrinsicID() == llvm::Intrinsic::masked_scatter)
        scatters.push_back(intrinsic);
  for (llvm::IntrinsicInst* scatter : scatters) {
    auto* mask = llvm::dyn_cast<llvm::Constant>(scatter->getArgOperand(3));
    if (mask == nullptr) continue;
    const auto lanes = llvm::cast<llvm::FixedVectorType>(mask->getType())->getNumElements();
    std::vector<uint32_t> storing;
    bool known = true;
    for (uint32_t lane = 0; lane < lanes && known; ++lane) {
      auto* bit = llvm::dyn_cast_or_null<llvm::ConstantInt>(mask->getAggregateElement(lane));
      known = bit != nullptr;
      if (known && bit->isOne()) storing.push_back(lane);
    }
    if (!known || storing.size() > most_lanes) continue;
    llvm::IRBuilder<> builder(scatter);
    const llvm::Align alignment(llvm::cast<llvm::ConstantInt>(scatter->getArgOperand(2))->getZExtValue());
    for (uint32_t lane : storing)
      builder.CreateAlignedStore(builder.CreateExtractElement(scatter->getArgOperand(0), lane),
                                 builder.CreateExtractElement(scatter->getArgOperand(1), lane), alignment);
    scatter->eraseFromParent();
  }
}

// The vectoriser neither widens nor predicates atomics, so a warp's lane loop with one in it
// (`if (lane == 0) atomicAdd(total, sum)`) would stay scalar. Each atomic of `function` becomes
// a call to a function of its own that performs it, whose vector forms perform it lane by lane;
// LaneExchanges inlines them all after vectorisation. A compare-and-swap answers the value it
// found, and whether it swapped is that value's equality with the expected one (PTX's atom.cas
// is strong). Returns false, leaving the function unusable, for a compare-and-swap whose answer
// is used whole.
bool call_atomics(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  std::vector<llvm::Instruction*> atomics;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (llvm::isa<llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(instruction)) atomics.push_back(&instruction);
  for (llvm::Instruction* atomic : atomics) {
    auto* swap = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(atomic);
    if (swap != nullptr && !std::all_of(swap->user_begin(), swap->user_end(), [](const llvm::User* user) { return llvm::isa<llvm::ExtractValueInst>(user); }))
      return false;
    std::vector<Value*> operands(atomic->op_begin(), atomic->op_end());
    std::vector<llvm::Type*> types;
    for (Value* operand : operands) types.push_back(operand->getType());
    llvm::Type* result = swap != nullptr ? swap->getCompareOperand()->getType() : atomic->getType();
    auto* scalar = llvm::Function::Create(llvm::FunctionType::get(result, types, false), llvm::GlobalValue::InternalLinkage,
                                          atomic_prefix + std::to_string(atomics.size()), module);
    scalar->setDoesNotThrow();
    scalar->setWillReturn();
    // Inlined before vectorisation, it would be an atomic in the lane loop again.
    scalar->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", scalar));
    llvm::Instruction* performed = atomic->clone();
    for (unsigned index = 0; index < operands.size(); ++index) performed->setOperand(index, scalar->getArg(index));
    builder.Insert(performed);
    builder.CreateRet(swap != nullptr ? builder.CreateExtractValue(performed, 0) : performed);
    // A loop over the lanes: written out, the 32 atomics and their branches were a quarter of
    // a warp-atomics kernel's code.
    for (bool masked : {false, true}) {
      auto* vector = llvm::Function::Create(vector_form_type(scalar->getFunctionType(), masked), llvm::GlobalValue::InternalLinkage,
                                            vector_name(scalar->getName(), masked), module);
      llvm::LLVMContext& context = module.getContext();
      auto* entry = llvm::BasicBlock::Create(context, "entry", vector);
      auto* loop = llvm::BasicBlock::Create(context, "lane", vector);
      auto* perform = llvm::BasicBlock::Create(context, "perform", vector);
      auto* next = llvm::BasicBlock::Create(context, "next", vector);
      auto* done = llvm::BasicBlock::Create(context, "done", vector);
      llvm::IRBuilder<> lanes(entry);
      lanes.CreateBr(loop);
      lanes.SetInsertPoint(loop);
      llvm::PHINode* lane = lanes.CreatePHI(lanes.getInt32Ty(), 2, "lane");
      llvm::PHINode* answers = lanes.CreatePHI(vector->getReturnType(), 2, "answers");
      lane->addIncoming(lanes.getInt32(0), entry);
      answers->addIncoming(llvm::PoisonValue::get(vector->getReturnType()), entry);
      if (masked) lanes.CreateCondBr(lanes.CreateExtractElement(vector->getArg(operands.size()), lane), perform, next);
      else lanes.CreateBr(perform);
      lanes.SetInsertPoint(perform);
      std::vector<Value*> arguments;
      for (unsigned index = 0; index < operands.size(); ++index) arguments.push_back(lanes.CreateExtractElement(vector->getArg(index), lane));
      Value* answered = lanes.CreateInsertElement(answers, lanes.CreateCall(scalar, arguments), lane);
      lanes.CreateBr(next);
      lanes.SetInsertPoint(next);
      llvm::PHINode* merged = lanes.CreatePHI(answers->getType(), 2);
      merged->addIncoming(answered, perform);
      if (masked) merged->addIncoming(answers, loop);
      Value* following = lanes.CreateAdd(lane, lanes.getInt32(1));
      lane->addIncoming(following, next);
      answers->addIncoming(merged, next);
      keep_rolled(lanes.CreateCondBr(lanes.CreateICmpULT(following, lanes.getInt32(warp_lanes)), loop, done));
      lanes.SetInsertPoint(done);
      lanes.CreateRet(merged);
      llvm::appendToCompilerUsed(module, {vector});
    }
    llvm::CallInst* call = call_lane_function(atomic, scalar, operands);
    if (swap == nullptr) {
      atomic->replaceAllUsesWith(call);
    } else {
      llvm::IRBuilder<> after(atomic);
      Value* swapped = after.CreateICmpEQ(call, swap->getCompareOperand());
      for (llvm::User* user : llvm::make_early_inc_range(swap->users())) {
        auto* part = llvm::cast<llvm::ExtractValueInst>(user);
        part->replaceAllUsesWith(part->getIndices()[0] == 0 ? static_cast<Value*>(call) : swapped);
        part->eraseFromParent();
      }
    }
    atomic->eraseFromParent();
  }
  return true;
}

// Inlines every call to the functions call_atomics made, and deletes them; returns the
// functions changed.
std::vector<llvm::Function*> inline_atomics(llvm::Module& module) {
  std::vector<llvm::Function*> made;
  for (llvm::Function& function : module)
    if (function.getName().starts_with(atomic_prefix)) made.push_back(&function);
  // The vector forms first: they call the scalar one.
  std::sort(made.begin(), made.end(), [](llvm::Function* left, llvm::Function* right) { return left->getName().size() > right->getName().size(); });
  std::vector<llvm::Function*> changed;
  for (llvm::Function* function : made) {
    std::vector<llvm::CallBase*> calls;
    for (llvm::User* user : function->users())
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(user);
          call != nullptr && call->getCalledFunction() == function && !call->getFunction()->getName().starts_with(atomic_prefix))
        calls.push_back(call);
    for (llvm::CallBase* call : calls) {
      changed.push_back(call->getFunction());
      llvm::InlineFunctionInfo info;
      llvm::InlineFunction(*call, info);
    }
  }
  for (llvm::Function* function : made) {
    llvm::removeFromUsedLists(module, [&](llvm::Constant* used) { return used == function; });
    function->eraseFromParent();
  }
  return changed;
}

// Whether the always-inliner takes `call`, unless it was deferred.
bool inlined_unless_deferred(const llvm::CallInst& call) {
  const llvm::Function* callee = call.getCalledFunction();
  return callee != nullptr && callee->hasFnAttribute(llvm::Attribute::AlwaysInline);
}

// What a fallback and its regions defer (defer_inlining): they run now.
void inline_deferred_calls(llvm::Function& fallback) {
  for (bool inlined = true; inlined;) {
    std::vector<llvm::CallInst*> deferred;
    for (llvm::Instruction& instruction : llvm::instructions(fallback))
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction); call != nullptr && call->isNoInline() && inlined_unless_deferred(*call))
        deferred.push_back(call);
    for (llvm::CallInst* call : deferred) {
      llvm::InlineFunctionInfo info;
      llvm::InlineFunction(*call, info);
    }
    inlined = !deferred.empty();
  }
}

}  // namespace

void defer_inlining(llvm::Function& function) {
  for (llvm::Instruction& instruction : llvm::instructions(function))
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction); call != nullptr && inlined_unless_deferred(*call)) call->setIsNoInline();
}

bool use_lane_exchanges(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  llvm::LLVMContext& context = module.getContext();
  auto* i32 = llvm::Type::getInt32Ty(context);
  auto* i64 = llvm::Type::getInt64Ty(context);
  llvm::Function* exchange = declare_lane_function(module, lane_exchange, llvm::FunctionType::get(i32, {i64}, false), LaneFunction::exchange);
  llvm::Function* peer = declare_lane_function(module, lane_peer, llvm::FunctionType::get(i64, {i32, i64}, false), LaneFunction::peer);
  for (llvm::BasicBlock& block : function) {
    Value* offer = nullptr;
    for (llvm::Instruction& instruction : llvm::make_early_inc_range(block)) {
      const llvm::Function* called = callee(instruction);
      if (called == nullptr) continue;
      auto* call = llvm::cast<llvm::CallInst>(&instruction);
      llvm::CallInst* replacement = nullptr;
      if (called->getName() == intrinsics::warp_exchange) {
        // Other member masks make the kernel a fiber kernel (see the intrinsic).
        if (auto* members = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(2)); members == nullptr || !members->isAllOnesValue())
          return false;
        offer = call->getArgOperand(1);
        replacement = call_lane_function(call, exchange, {offer});
      } else if (called->getName() == intrinsics::warp_peer) {
        if (offer == nullptr) return false;
        replacement = call_lane_function(call, peer, {call->getArgOperand(1), offer});
      } else if (auto fold = warp_fold_of(called->getName())) {
        if (offer == nullptr) return false;
        llvm::Function* folding = declare_lane_function(module, warp_fold_name(*fold, lane_fold_prefix), llvm::FunctionType::get(i32, {i32, i64, i64}, false),
                                                        LaneFunction::peer);
        replacement = call_lane_function(call, folding, {call->getArgOperand(1), call->getArgOperand(2), offer});
      } else {
        continue;
      }
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
  }
  return call_atomics(function);
}

bool is_lane_exchange(const llvm::Instruction& instruction) {
  const llvm::Function* called = callee(instruction);
  return called != nullptr && (called->getName() == lane_exchange || called->getName() == lane_peer ||
                               warp_fold_of(called->getName(), lane_fold_prefix));
}

Value* load_warp_lanes_switch(llvm::IRBuilder<>& builder, const std::string& block_name) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  auto* byte = builder.getInt8Ty();
  auto* on = llvm::cast<llvm::GlobalVariable>(module.getOrInsertGlobal(warp_lanes_switch_prefix + block_name, byte));
  on->setInitializer(llvm::ConstantInt::get(byte, 1));
  return builder.CreateICmpNE(builder.CreateLoad(byte, on), builder.getInt8(0));
}

llvm::PreservedAnalyses LaneExchanges::run(llvm::Module& module, llvm::ModuleAnalysisManager& analyses) {
  std::vector<llvm::Function*> changed;
  for (const std::string& name : lane_function_names())
    for (llvm::Function* function : lower_vector_forms(module, name)) changed.push_back(function);
  for (llvm::Function* function : inline_atomics(module)) changed.push_back(function);
  // What the vectoriser left scalar: the warp path of its kernel cannot run.
  bool left_outside_block_functions = false;
  std::vector<llvm::Function*> scalar_forms;
  std::vector<llvm::GlobalVariable*> switched_off;
  for (const std::string& name : lane_function_names()) {
    llvm::Function* scalar = module.getFunction(name);
    if (scalar == nullptr) continue;
    scalar_forms.push_back(scalar);
    for (llvm::User* user : scalar->users()) {
      const auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (call == nullptr) continue;
      std::string caller = call->getFunction()->getName().str();
      if (auto* on = module.getNamedGlobal(warp_lanes_switch_prefix + caller)) switched_off.push_back(on);
      else left_outside_block_functions = true;
    }
  }
  // A call left in a function a block function calls: no block function's warp path is known
  // to be whole.
  if (left_outside_block_functions)
    for (llvm::GlobalVariable& global : module.globals())
      if (global.getName().starts_with(warp_lanes_switch_prefix)) switched_off.push_back(&global);
  // A switch that is off stays off: its warp path is dead code, which would cost as much to
  // compile as the rest of the kernel.
  std::sort(switched_off.begin(), switched_off.end());
  switched_off.erase(std::unique(switched_off.begin(), switched_off.end()), switched_off.end());
  std::vector<llvm::Function*> fallen_back;
  for (llvm::GlobalVariable* on : switched_off) {
    for (llvm::User* user : llvm::make_early_inc_range(on->users())) {
      auto* load = llvm::cast<llvm::LoadInst>(user);
      changed.push_back(load->getFunction());
      fallen_back.push_back(load->getFunction());
      load->replaceAllUsesWith(llvm::ConstantInt::get(on->getValueType(), 0));
      load->eraseFromParent();
    }
    on->eraseFromParent();
  }
  for (llvm::Function* scalar : scalar_forms) {
    if (scalar->use_empty()) {
      scalar->eraseFromParent();
      continue;
    }
    scalar->setLinkage(llvm::GlobalValue::InternalLinkage);
    scalar->setAttributes({});
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", scalar));
    builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    builder.CreateUnreachable();
  }
  if (changed.empty()) return llvm::PreservedAnalyses::all();
  // The picks are shuffles of widened 64-bit offers, often of constants: combine them down; the
  // lanes then known also tell which lanes a conditional store or an atomic is for.
  auto& functions = analyses.getResult<llvm::FunctionAnalysisManagerModuleProxy>(module).getManager();
  llvm::InstCombinePass combine;
  llvm::SimplifyCFGPass simplify;
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  auto clean_up = [&](llvm::Function& function) {
    functions.invalidate(function, llvm::PreservedAnalyses::none());
    combine.run(function, functions);
    simplify.run(function, functions);
  };
  for (llvm::Function* function : changed) {
    clean_up(*function);
    store_known_lanes(*function);
  }
  // After the clean-up, which deleted the warp path: the block function only calls its fallback,
  // which may call the kernel's regions.
  std::vector<llvm::Function*> callers = fallen_back;
  while (!callers.empty()) {
    llvm::Function* caller = callers.back();
    callers.pop_back();
    for (llvm::Instruction& instruction : llvm::instructions(*caller)) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
      llvm::Function* fallback = call != nullptr ? call->getCalledFunction() : nullptr;
      if (fallback == nullptr || !fallback->hasFnAttribute(warp_lanes_fallback_attribute)) continue;
      fallback->removeFnAttr(warp_lanes_fallback_attribute);
      inline_deferred_calls(*fallback);
      functions.invalidate(*fallback, llvm::PreservedAnalyses::none());
      optimization_.run(*fallback, functions);
      callers.push_back(fallback);
    }
  }
  return llvm::PreservedAnalyses::none();
}

}  // namespace xcuda::ptx::host
