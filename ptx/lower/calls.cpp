// call: every function takes the thread context, then a pointer to each result and each
// argument .param variable, so aggregates and byte arrays pass exactly as laid out in PTX. A
// function with a body returns whether the thread exited inside it (function_result_type()).
#include <unordered_map>
#include <unordered_set>

#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

// `call (results), callee, (arguments)` or, indirect, `call (results), %pointer, (arguments),
// prototype`: the prototype (a .callprototype or .calltargets label) only served the checker,
// since every function's IR signature follows from its counts of results and parameters.
void lower_call(FunctionLowering& lowering, const Instruction& instruction) {
  const auto& operands = instruction.operands;
  auto& builder = lowering.builder();
  bool has_results = operands[0].kind == Operand::Kind::list;
  const Operand& callee = operands[has_results ? 1 : 0];
  std::vector<llvm::Value*> arguments{lowering.thread_context()};
  auto pass = [&](const Operand& list) {
    for (const Operand& value : list.elements) arguments.push_back(lowering.declaration_pointer(value.declaration));
  };
  if (has_results) pass(operands[0]);
  size_t argument_list = has_results ? 2 : 1;
  if (argument_list < operands.size() && operands[argument_list].kind == Operand::Kind::list) pass(operands[argument_list]);
  llvm::CallInst* call = nullptr;
  if (callee.resolution == Operand::Resolution::function) {
    call = builder.CreateCall(lowering.module().function(callee.declaration), arguments);
  } else {
    auto* type = llvm::FunctionType::get(builder.getInt1Ty(), std::vector<llvm::Type*>(arguments.size(), builder.getPtrTy()), false);
    llvm::Value* pointer = builder.CreateIntToPtr(lowering.read(callee, ScalarType::u64), builder.getPtrTy());
    call = builder.CreateCall(type, pointer, arguments);
  }
  if (call->getType()->isIntegerTy(1)) lowering.return_if_exited(call);
}

// Functions that reach a barrier or warp exchange, directly, through direct calls, or through
// indirect calls that may land on one of them.
class Synchronizing {
 public:
  explicit Synchronizing(llvm::Module& module) {
    for (const char* name : {intrinsics::barrier, intrinsics::barrier_operation, intrinsics::warp_exchange, intrinsics::warp_exchange_words})
      if (llvm::Function* intrinsic = module.getFunction(name)) members_.insert(intrinsic);
    for (llvm::Function& function : module)
      if (function.hasAddressTaken()) address_taken_.push_back(&function);
    for (bool changed = !members_.empty(); changed;) {
      changed = false;
      for (llvm::Function& function : module)
        if (!function.isDeclaration() && !members_.contains(&function) && reaches_member(function)) {
          members_.insert(&function);
          changed = true;
        }
    }
  }

  // The functions an indirect call may reach that synchronise: those whose address is taken
  // somewhere and whose signature matches.
  std::vector<llvm::Function*> targets(const llvm::CallBase& call) const {
    std::vector<llvm::Function*> found;
    for (llvm::Function* function : address_taken_)
      if (members_.contains(function) && function->getFunctionType() == call.getFunctionType()) found.push_back(function);
    return found;
  }

 private:
  bool reaches_member(llvm::Function& function) const {
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction)) {
          llvm::Function* callee = call->getCalledFunction();
          if (callee != nullptr ? members_.contains(callee) : !targets(*call).empty()) return true;
        }
    return false;
  }

  std::unordered_set<const llvm::Function*> members_;
  std::vector<llvm::Function*> address_taken_;
};

// Moves a synchronising function's body into `<name>.body`, which every direct call then
// reaches, and leaves at its address a body that traps: nothing calls through that address any
// more (see call_directly), and a target need not find a barrier in a function no kernel inlines.
llvm::Function* separate_body(llvm::Function& function) {
  auto* body = llvm::Function::Create(function.getFunctionType(), llvm::GlobalValue::InternalLinkage,
                                      function.getName() + ".body", function.getParent());
  body->copyAttributesFrom(&function);
  body->splice(body->begin(), &function);
  for (unsigned index = 0; index < function.arg_size(); ++index) function.getArg(index)->replaceAllUsesWith(body->getArg(index));
  std::vector<llvm::CallBase*> direct_calls;
  for (llvm::User* user : function.users())
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(user); call && call->getCalledFunction() == &function) direct_calls.push_back(call);
  for (llvm::CallBase* call : direct_calls) call->setCalledFunction(body);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(function.getContext(), "called_through_pointer", &function));
  auto* pointer = builder.getPtrTy();
  llvm::FunctionType* trap_type = llvm::FunctionType::get(builder.getVoidTy(), {pointer}, false);
  llvm::FunctionCallee trap = function.getParent()->getOrInsertFunction(intrinsics::trap, trap_type);
  builder.CreateCall(trap, {function.getArg(0)});
  builder.CreateUnreachable();
  return body;
}

// if (pointer == f) f.body(...) else if (pointer == g) g.body(...) else pointer(...), joined by
// a phi.
void call_directly(llvm::CallBase& call, const std::vector<llvm::Function*>& targets,
                   const std::unordered_map<llvm::Function*, llvm::Function*>& bodies) {
  llvm::LLVMContext& context = call.getContext();
  llvm::BasicBlock* before = call.getParent();
  llvm::BasicBlock* join = before->splitBasicBlock(&call, "after_indirect_call");
  before->getTerminator()->eraseFromParent();
  llvm::IRBuilder<> builder(before);
  llvm::Function* function = before->getParent();
  std::vector<llvm::Value*> arguments(call.arg_begin(), call.arg_end());
  llvm::PHINode* result = llvm::PHINode::Create(call.getType(), static_cast<unsigned>(targets.size() + 1), "called");
  result->insertBefore(join->begin());
  for (llvm::Function* target : targets) {
    auto* direct = llvm::BasicBlock::Create(context, "call." + target->getName(), function, join);
    auto* next = llvm::BasicBlock::Create(context, "not." + target->getName(), function, join);
    builder.CreateCondBr(builder.CreateICmpEQ(call.getCalledOperand(), target), direct, next);
    builder.SetInsertPoint(direct);
    result->addIncoming(builder.CreateCall(bodies.at(target), arguments), direct);
    builder.CreateBr(join);
    builder.SetInsertPoint(next);
  }
  call.removeFromParent();
  call.insertInto(builder.GetInsertBlock(), builder.GetInsertBlock()->end());
  result->addIncoming(&call, builder.GetInsertBlock());
  builder.CreateBr(join);
  call.replaceUsesWithIf(result, [&](llvm::Use& use) { return use.getUser() != result; });
}

}  // namespace

void call_synchronizing_targets_directly(llvm::Module& module) {
  std::vector<llvm::CallBase*> indirect_calls;
  for (llvm::Function& function : module)
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& instruction : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction); call && call->getCalledFunction() == nullptr)
          indirect_calls.push_back(call);
  if (indirect_calls.empty()) return;
  Synchronizing synchronizing(module);
  std::vector<std::pair<llvm::CallBase*, std::vector<llvm::Function*>>> rewrites;
  for (llvm::CallBase* call : indirect_calls)
    if (auto targets = synchronizing.targets(*call); !targets.empty()) rewrites.emplace_back(call, std::move(targets));
  std::unordered_map<llvm::Function*, llvm::Function*> bodies;
  for (auto& [call, targets] : rewrites)
    for (llvm::Function* target : targets)
      if (!bodies.contains(target)) bodies[target] = separate_body(*target);
  for (auto& [call, targets] : rewrites) call_directly(*call, targets, bodies);
}

void add_call_lowerings(LoweringTable& table) { table["call"] = lower_call; }

}  // namespace xcuda::ptx
