#include "target/host/thread_order.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/CFG.h>
#include <llvm/IR/Instructions.h>

#include "host_abi.h"
#include "target/host/block_local_accesses.h"

namespace xcuda::ptx::host {
namespace {

// What `blocks` hold, with the functions they call.
struct Contents {
  bool global_atomics = false;
  bool loops = false;
};

class Survey {
 public:
  Contents of(std::span<const llvm::BasicBlock* const> blocks) {
    std::unordered_set<const llvm::BasicBlock*> members(blocks.begin(), blocks.end());
    enum class Visit { open, closed };
    std::unordered_map<const llvm::BasicBlock*, Visit> visits;
    // A successor still open on the depth-first path closes a cycle.
    std::function<void(const llvm::BasicBlock*)> visit = [&](const llvm::BasicBlock* block) {
      visits[block] = Visit::open;
      for (const llvm::BasicBlock* successor : llvm::successors(block)) {
        if (!members.contains(successor)) continue;
        auto found = visits.find(successor);
        if (found == visits.end()) visit(successor);
        else if (found->second == Visit::open) contents_.loops = true;
      }
      visits[block] = Visit::closed;
    };
    for (const llvm::BasicBlock* block : blocks)
      if (!visits.contains(block)) visit(block);
    for (const llvm::BasicBlock* block : blocks) take_instructions(*block);
    return contents_;
  }

 private:
  void take_instructions(const llvm::BasicBlock& block) {
    for (const llvm::Instruction& instruction : block) {
      if ((llvm::isa<llvm::AtomicRMWInst>(instruction) || llvm::isa<llvm::AtomicCmpXchgInst>(instruction)) && !is_block_local(instruction))
        contents_.global_atomics = true;
      const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
      const llvm::Function* callee = call != nullptr ? call->getCalledFunction() : nullptr;
      if (callee == nullptr || callee->isDeclaration()) continue;
      // A function called again while its own calls are being surveyed is a recursion: a loop.
      if (!surveyed_.insert(callee).second) {
        contents_.loops = contents_.loops || active_.contains(callee);
        continue;
      }
      active_.insert(callee);
      std::vector<const llvm::BasicBlock*> body;
      for (const llvm::BasicBlock& callee_block : *callee) body.push_back(&callee_block);
      of(body);
      active_.erase(callee);
    }
  }

  Contents contents_;
  std::unordered_set<const llvm::Function*> surveyed_;
  std::unordered_set<const llvm::Function*> active_;
};

}  // namespace

bool may_rotate(std::span<const llvm::BasicBlock* const> blocks) {
  Contents contents = Survey().of(blocks);
  return contents.global_atomics && !contents.loops;
}

llvm::Value* rotation(llvm::IRBuilder<>& builder, llvm::Value* frame, llvm::Value* width) {
  auto field = [&](uint64_t offset) {
    return builder.CreateLoad(builder.getInt32Ty(), builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, offset));
  };
  llvm::Value* worker = field(offsetof(host_abi::BlockFrame, sm_index));
  llvm::Value* workers = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, field(offsetof(host_abi::BlockFrame, sm_count)), builder.getInt32(1));
  llvm::Value* share = builder.CreateUDiv(builder.CreateMul(builder.CreateURem(worker, workers), width), workers);
  return builder.CreateAnd(share, ~31u);
}

}  // namespace xcuda::ptx::host
