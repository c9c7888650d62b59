#include "kernel_selection.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace xcuda::ptx {
namespace {

// Below this many statements a share costs more than its thread saves: each share parses the
// text its kernels reach again, defines the runtime's services and compiles the helpers its
// kernels call again (tests/cuda/whole_warps.cu on one thread: 110 ms of CPU in one share, 121 in
// five), and -O3 compiles some 10 000 statements a second (a 1.8 MB libcusparse module, one
// thread). tests/cuda/mma_numerics.cu's module (7 kernels; six mma.sync, weighed as below)
// compiled in 0.136 s in two shares, 0.228 s in one. At 500 or 250, modules of barrier kernels
// took 10-25% less wall-clock time in more shares, but mma_numerics.cu's 5-13% more (0.068 ->
// 0.072 and 0.077 s, `perf stat -r 5 xcuda compile --target host --whole-warp-blocks`, twice;
// with each thread's target machine kept, 0.065 -> 0.066-0.068 and 0.071-0.073). Again at 500
// once the tensor cores' dot products came from the builtin library: the nvcc corpus's sm_90
// modules took 1.59 of ptxas's time in all instead of 1.66, but its small modules 10-35% more
// (graph_conditional, grid_2d, saxpy), mma_numerics.cu's 4-8% (tests/bench/compile_speed).
// At 700, the benchmark suite's module took 124-126 ms of wall-clock time instead of 154-160 and
// guarded_regions.cu's 99-103 instead of 130-132, but block_barriers.cu's 177-183 instead of
// 169-171 and mma_numerics.cu's 56 instead of 47 (three shares on two threads); at 50,
// multiple_kernels.cu 36 instead of 38 for a quarter more CPU time (`perf stat -r 10`, twice).
// Each share costs 3-5 ms of CPU more, and the weights below misjudge kernels by up to 20 times.
constexpr size_t minimum_share_statements = 1000;

// What a statement costs to compile, in plain statements. A warp collective or a matrix
// instruction on the host is an exchange among a warp's lanes, compiled both as vectors of 32
// lanes and as a loop over threads through memory: tests/cuda/whole_warps.cu, 511 statements
// of which 50 shuffles, votes and matches, takes as long at -O3 as some 15 000 plain ones. A
// block barrier starts a region, which the host's block function runs in loops over the block's
// threads of its own (block_function.cpp): in the nvcc corpus a barrier took as long as 30 to 70
// plain statements. Weighed so, the benchmark suite's module (819 statements, 35 barriers) and
// tests/cuda/block_barriers.cu's (895, 92) compile in shares on two threads: 215 -> 151 and 269
// -> 176 ms (`perf stat -r 5 xcuda compile --target host --whole-warp-blocks`).
// A lane exchange inside a loop weighs twice that: the warp path cuts a kernel at the header of a
// loop around one (warp_lanes.h), whose code then comes once more. tests/cuda/whole_warps.cu's
// rotations kernel (63 statements, five shuffles in two loops) took 30 ms to compile, row_sums
// (98, five shuffles and votes outside loops) 16; weighed so, the module's shares on two threads
// start with its two heaviest kernels, and it compiled in 78-82 ms instead of 85-87 (`perf stat
// -r 10 xcuda compile --target host --whole-warp-blocks`, three alternations).
size_t compile_cost(const Statement& statement, bool in_loop) {
  static const std::unordered_set<std::string_view> lane_exchanges = {"shfl", "vote", "match", "redux", "mma",
                                                                      "wmma", "ldmatrix", "stmatrix", "wgmma"};
  const auto* instruction = std::get_if<Instruction>(&statement);
  if (instruction == nullptr) return 1;
  if (lane_exchanges.contains(instruction->opcode)) return in_loop ? 600 : 300;
  const bool warp_barrier = std::any_of(instruction->modifiers.begin(), instruction->modifiers.end(),
                                        [](const Modifier& modifier) { return modifier.word == "warp"; });
  if ((instruction->opcode == "bar" || instruction->opcode == "barrier") && !warp_barrier) return 50;
  return 1;
}

// Every name a statement mentions: operands (a call's callee and a function's address taken by
// mov both appear as names) and address initialisers.
template <typename Visit>
void visit_names(const Operand& operand, const Visit& visit) {
  visit(operand.name);
  for (const Operand& element : operand.elements) visit_names(element, visit);
}

template <typename Visit>
void visit_names(const VariableDeclaration& declaration, const Visit& visit) {
  for (const InitialValue& value : declaration.initializer) visit(value.symbol);
}

template <typename Visit>
void visit_names(const Statement& statement, const Visit& visit) {
  if (const auto* instruction = std::get_if<Instruction>(&statement))
    for (const Operand& operand : instruction->operands) visit_names(operand, visit);
  if (const auto* declaration = std::get_if<VariableDeclaration>(&statement))
    visit_names(*declaration, visit);
}

// A function's name as an operand of anything but a call's callee.
bool takes_function_addresses(const Module& module) {
  std::unordered_set<std::string_view> functions;
  for (const Function& function : module.functions) functions.insert(function.name);
  bool taken = false;
  auto visit = [&](const std::string& name) { taken = taken || functions.contains(name); };
  for (const Function& function : module.functions)
    for (const Statement& statement : function.body) {
      const auto* instruction = std::get_if<Instruction>(&statement);
      if (instruction == nullptr) continue;
      // call [.uni] (results), callee, (arguments)[, prototype]: the callee follows the results.
      std::span<const Operand> operands = instruction->operands;
      if (instruction->opcode == "call") {
        size_t callee = !operands.empty() && operands.front().kind == Operand::Kind::list ? 1 : 0;
        if (callee < operands.size()) operands = operands.subspan(callee + 1);
      }
      for (const Operand& operand : operands) visit_names(operand, visit);
      if (taken) return true;
    }
  return false;
}

// The module's functions by name, built once for any number of walks.
class CallGraph {
 public:
  explicit CallGraph(const Module& module) {
    for (const Function& function : module.functions) by_name_.emplace(function.name, &function);
    for (const FunctionAlias& alias : module.aliases) aliasees_.emplace(alias.alias, alias.aliasee);
  }

  // The functions `roots` name, and every function those reach.
  template <typename Roots>
  std::unordered_set<std::string> reach(const Roots& roots) const {
    std::unordered_set<std::string> reached;
    std::vector<std::string_view> pending;
    // A prototype and its definition share a name: reaching the name keeps both.
    auto reach = [&](std::string_view name) {
      if (by_name_.contains(name) && reached.emplace(name).second) pending.push_back(name);
    };
    roots(reach);
    while (!pending.empty()) {
      std::string_view name = pending.back();
      pending.pop_back();
      // `.alias a, b;`: calls to a run b's body.
      auto [first_aliasee, last_aliasee] = aliasees_.equal_range(name);
      for (auto aliasee = first_aliasee; aliasee != last_aliasee; ++aliasee) reach(aliasee->second);
      auto [first, last] = by_name_.equal_range(name);
      for (auto entry = first; entry != last; ++entry)
        for (const Statement& statement : entry->second->body) visit_names(statement, reach);
    }
    return reached;
  }

 private:
  std::unordered_multimap<std::string_view, const Function*> by_name_;
  std::unordered_multimap<std::string_view, std::string_view> aliasees_;
};

}  // namespace

std::unordered_set<std::string> reachable_functions(const Module& module, std::span<const std::string> kernels) {
  return CallGraph(module).reach([&](const auto& reach) {
    for (const std::string& name : kernels) reach(name);
    for (const VariableDeclaration& variable : module.variables) visit_names(variable, reach);
  });
}

std::vector<std::vector<std::string>> share_out_kernels(const Module& module, unsigned count) {
  std::vector<std::string> kernels;
  for (const Function& function : module.functions)
    if (function.is_entry && function.has_body) kernels.push_back(function.name);
  std::unordered_map<std::string_view, size_t> costs;
  for (const Function& function : module.functions) {
    // Loops: the statements from a label to a branch back to it, counted as each starts and ends.
    std::unordered_map<std::string_view, size_t> labels;
    std::vector<int> loops_entered(function.body.size() + 1, 0);
    for (size_t index = 0; index < function.body.size(); ++index) {
      if (const auto* label = std::get_if<Label>(&function.body[index])) labels.emplace(label->name, index);
      const auto* instruction = std::get_if<Instruction>(&function.body[index]);
      if (instruction == nullptr || instruction->opcode != "bra" || instruction->operands.empty()) continue;
      if (auto target = labels.find(instruction->operands.back().name); target != labels.end()) {
        ++loops_entered[target->second];
        --loops_entered[index + 1];
      }
    }
    int depth = 0;
    for (size_t index = 0; index < function.body.size(); ++index) {
      depth += loops_entered[index];
      costs[function.name] += compile_cost(function.body[index], depth > 0);
    }
  }
  // A kernel's size: the cost of its statements and of those of the functions it calls. What the
  // module's variables name goes to every share alike, so it is left out.
  CallGraph graph(module);
  std::vector<size_t> sizes;
  for (const std::string& kernel : kernels) {
    size_t size = 0;
    for (const std::string& name : graph.reach([&](const auto& reach) { reach(kernel); })) size += costs[name];
    sizes.push_back(size);
  }
  size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  size_t shares = std::min<size_t>({count, kernels.size(), total / minimum_share_statements});
  if (shares <= 1 || takes_function_addresses(module)) return {kernels};
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t left, size_t right) { return sizes[left] > sizes[right]; });
  std::vector<size_t> load(shares, 0), share_of(kernels.size());
  for (size_t index : order) {
    size_t lightest = std::min_element(load.begin(), load.end()) - load.begin();
    load[lightest] += sizes[index];
    share_of[index] = lightest;
  }
  std::vector<size_t> heaviest_first(shares);
  std::iota(heaviest_first.begin(), heaviest_first.end(), size_t{0});
  std::stable_sort(heaviest_first.begin(), heaviest_first.end(), [&](size_t left, size_t right) { return load[left] > load[right]; });
  std::vector<size_t> position(shares);
  for (size_t rank = 0; rank < shares; ++rank) position[heaviest_first[rank]] = rank;
  std::vector<std::vector<std::string>> result(shares);
  for (size_t index = 0; index < kernels.size(); ++index) result[position[share_of[index]]].push_back(kernels[index]);
  return result;
}

}  // namespace xcuda::ptx
