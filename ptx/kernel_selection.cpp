#include "kernel_selection.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace xcuda::ptx {
namespace {

// What compiling a kernel for the host at -O3 costs, in microseconds of CPU time, fitted to 156
// kernels (every kernel of the 28 sm_90 modules of the nvcc corpus with more than one, and 24 of
// a 1.8 MB libcusparse module): each kernel's `xcuda compile --target host -j 1
// --whole-warp-blocks --kernel` less a `ret;` kernel's. A statement costs about 85 us; a kernel
// 1.5-3.5 ms whatever its size (2 keeps a module of 18 one-line kernels, which take 0.5 ms each,
// whole); a warp collective or matrix instruction, an exchange among a warp's lanes, 0.5 ms, and
// 5.4 inside a loop, whose header the warp path cuts the kernel at (warp_lanes.h); a block
// barrier starts a region, which the host's block function runs in loops over the block's threads
// of its own (block_function.cpp), 0.56 ms, and having any costs 13.5 ms more. Kernels with
// barriers still vary the most (7 to 90 ms): for the kernels over 5 ms the median error is a
// factor of 1.47, and a tenth are misjudged by more than 3.2 times; the weights of before
// (statements weighed 1, exchanges 300 or 600, barriers 50) were, scaled to fit, 4.3 and 11.
constexpr size_t kernel_microseconds = 2000;
constexpr size_t statement_microseconds = 85;
constexpr size_t lane_exchange_microseconds = 500;
constexpr size_t looped_lane_exchange_microseconds = 5400;
constexpr size_t block_barrier_microseconds = 560;
constexpr size_t barrier_kernel_microseconds = 13500;

// A share of a module costs 3-4 ms of CPU time of its own (tests/cuda/whole_warps.cu's five
// kernels in five shares on one thread: 115-117 ms, in one 98.5-99.5; `perf stat -r 10`, two
// alternations): no share is made for less than this much work, which is worth it sooner the more
// threads would otherwise wait. On two threads, 20 ms: at 10 the small modules of the nvcc corpus
// gained (grid_2d.cu 29.5 -> 22.7 ms of wall-clock time, multiple_kernels.cu 37.8 -> 27.2) but
// mma_numerics.cu lost (43.5 -> 46.4) and block_barriers.cu (157.8 -> 165.4); at 30,
// mma_numerics.cu took 69 ms and guarded_regions.cu 128 (`xcuda compile --target host
// --whole-warp-blocks`, the three thresholds' binaries alternating, medians of six). On sixteen,
// 5 ms: mma_numerics.cu took 41 ms instead of 70-75, grid_2d.cu 30-33 instead of 47-53,
// multiple_kernels.cu 31-32 instead of 52-54, the others as long (whole_warps.cu, block_barriers.cu,
// guarded_regions.cu, the benchmark suite's module; tests/bench/compile_speed/run --runs 7 on a
// 16-core Xeon, two alternations of 20 and 5 ms; 10 and 2.5 ms between those two).
constexpr size_t two_thread_share_microseconds = 20000;
constexpr size_t many_thread_share_microseconds = 5000;

size_t minimum_share_microseconds(unsigned threads) {
  return std::clamp<size_t>(2 * two_thread_share_microseconds / threads, many_thread_share_microseconds, two_thread_share_microseconds);
}

bool is_block_barrier(const Instruction& instruction) {
  const bool warp_barrier = std::any_of(instruction.modifiers.begin(), instruction.modifiers.end(),
                                        [](const Modifier& modifier) { return modifier.word == "warp"; });
  return (instruction.opcode == "bar" || instruction.opcode == "barrier") && !warp_barrier;
}

size_t compile_microseconds(const Statement& statement, bool in_loop) {
  static const std::unordered_set<std::string_view> lane_exchanges = {"shfl", "vote", "match", "redux", "mma",
                                                                      "wmma", "ldmatrix", "stmatrix", "wgmma"};
  const auto* instruction = std::get_if<Instruction>(&statement);
  if (instruction == nullptr) return statement_microseconds;
  if (lane_exchanges.contains(instruction->opcode)) return in_loop ? looped_lane_exchange_microseconds : lane_exchange_microseconds;
  if (is_block_barrier(*instruction)) return block_barrier_microseconds;
  return statement_microseconds;
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

// A function's name as an operand of anything but a call's callee, or in a variable's
// initialiser: a table of function pointers (a vtable) holds the first share's copies, compiled
// for the first share's kernels only (tests/cuda/indirect_calls.cu's virtual functions, one of
// which waits at a block barrier, faulted when called from a kernel of another share).
bool takes_function_addresses(const Module& module) {
  std::unordered_set<std::string_view> functions;
  for (const Function& function : module.functions) functions.insert(function.name);
  bool taken = false;
  auto visit = [&](const std::string& name) { taken = taken || functions.contains(name); };
  for (const VariableDeclaration& variable : module.variables) visit_names(variable, visit);
  for (const Function& function : module.functions)
    for (const Statement& statement : function.body) {
      if (const auto* declaration = std::get_if<VariableDeclaration>(&statement)) visit_names(*declaration, visit);
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

std::vector<std::vector<std::string>> share_out_kernels(const Module& module, unsigned threads) {
  std::vector<std::string> kernels;
  for (const Function& function : module.functions)
    if (function.is_entry && function.has_body) kernels.push_back(function.name);
  if (threads <= 1 || kernels.size() <= 1 || takes_function_addresses(module)) return {kernels};
  std::unordered_map<std::string_view, size_t> costs;
  std::unordered_set<std::string_view> with_block_barriers;
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
      costs[function.name] += compile_microseconds(function.body[index], depth > 0);
      if (const auto* instruction = std::get_if<Instruction>(&function.body[index]); instruction != nullptr && is_block_barrier(*instruction))
        with_block_barriers.insert(function.name);
    }
  }
  // A kernel's size: the cost of its statements and of those of the functions it calls. What the
  // module's variables name goes to every share alike, so it is left out.
  CallGraph graph(module);
  std::vector<size_t> sizes;
  for (const std::string& kernel : kernels) {
    size_t size = kernel_microseconds;
    bool barriers = false;
    for (const std::string& name : graph.reach([&](const auto& reach) { reach(kernel); })) {
      size += costs[name];
      barriers = barriers || with_block_barriers.contains(name);
    }
    sizes.push_back(size + (barriers ? barrier_kernel_microseconds : 0));
  }
  size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  // Four shares a thread at most, which the threads take heaviest first as they come free: the
  // sizes are estimates, and a thread that drew a share lighter than its estimate takes another.
  // On two threads, tests/cuda/whole_warps.cu's five kernels took 0.48 s in two shares, 0.41 in
  // four, 0.34 in five; a 1.8 MB libcusparse module 2.26 s in two, 1.95 in eight (sixteen: no
  // faster). A few shares of several kernels each come in a multiple of the threads, else the
  // share left over runs alone: tests/cuda/mma_numerics.cu's seven kernels took 53.5 ms of
  // wall-clock time in three shares on two threads, 43.5 in two (`xcuda compile --target host
  // --whole-warp-blocks`, medians of five runs).
  size_t shares = std::min<size_t>({4 * size_t{threads}, kernels.size(), total / minimum_share_microseconds(threads)});
  if (shares > threads && shares < kernels.size()) shares -= shares % threads;
  if (shares <= 1) return {kernels};
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
