// Conditional graph nodes (if, if/else, while, switch) added through cudaGraphAddNode. The
// condition is the handle's value when the stream reaches the node: the body it picks runs
// between the node's dependencies and its dependents, and the others do not run (if: the first
// body when the value is not 0, the second, if any, when it is 0; switch: body number `value`,
// none past the last; while: the body again and again while the value is not 0).
// The value comes from the handle's default, assigned at the start of every launch under
// cudaGraphCondAssignDefault, or from device code: cudaGraphSetConditional in a kernel that ends
// before the node, in the CUDA programming guide's two patterns:
//   - if and switch: a kernel ahead of the node sets the value from data in device memory; the
//     handle has no default (created with value 0 and no flags), so each launch sees what that
//     launch's kernel set;
//   - while: the body sets whether it runs again. Its kernel counts `remaining` down and sets
//     the condition to remaining > 0; the handle's default, 1, assigned at every launch, enters
//     the loop, so a launch runs the body `remaining` times (once when it starts at 0 or less),
//     including a launch after one that left the condition at 0.
// Expected error codes follow the CUDA documentation and await a run on NVIDIA's driver.
#include <vector>

#include "check.h"

__global__ void add(unsigned* counter, unsigned amount) { atomicAdd(counter, amount); }
__global__ void twice(unsigned* counter) { *counter *= 2; }
__global__ void add_and_select(unsigned* counter, const unsigned* selector,
                               cudaGraphConditionalHandle handle) {
  atomicAdd(counter, 1u);
  cudaGraphSetConditional(handle, *selector);
}
__global__ void count_down(int* remaining, unsigned* passes, cudaGraphConditionalHandle handle) {
  ++*passes;
  cudaGraphSetConditional(handle, --*remaining > 0);
}

template <typename Kernel>
static cudaGraphNode_t add_kernel_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                       size_t count, Kernel* function, void** arguments) {
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(function);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = arguments;
  cudaGraphNode_t node;
  CHECK(cudaGraphAddKernelNode(&node, graph, dependencies, count, &params));
  return node;
}

static cudaGraphNode_t add_conditional_node(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                            size_t count, cudaGraphConditionalHandle handle,
                                            cudaGraphConditionalNodeType type, unsigned bodies,
                                            cudaGraph_t* body_graphs) {
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = bodies;
  cudaGraphNode_t conditional;
  CHECK(cudaGraphAddNode(&conditional, graph, dependencies, nullptr, count, &params));
  cudaGraphNodeType node_type;
  CHECK(cudaGraphNodeGetType(conditional, &node_type));
  if (node_type != cudaGraphNodeTypeConditional) FAIL("node type %d", static_cast<int>(node_type));
  for (unsigned body = 0; body < bodies; ++body) {
    if (!params.conditional.phGraph_out[body]) FAIL("body %u is null", body);
    body_graphs[body] = params.conditional.phGraph_out[body];
  }
  return conditional;
}

template <typename T>
static void store(T* device, T value) {
  CHECK(cudaMemcpy(device, &value, sizeof value, cudaMemcpyHostToDevice));
}

template <typename T>
static T load(const T* device) {
  T value;
  CHECK(cudaMemcpy(&value, device, sizeof value, cudaMemcpyDeviceToHost));
  return value;
}

enum class Source { default_value, kernel };

// A graph: counter += 1, then the conditional node (bodies add 100, 200, 300 …), then
// counter *= 2, launched once per entry of `values` with the counter zeroed first. The
// condition is each value in turn, as the handle's default (Source::default_value, one value)
// or as what the first kernel sets (Source::kernel). Returns the counter after each launch.
static std::vector<unsigned> run(cudaGraphConditionalNodeType type, unsigned bodies,
                                 Source source, const std::vector<unsigned>& values) {
  unsigned* counter;
  unsigned* selector;
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&selector, sizeof(unsigned)));
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle handle;
  if (source == Source::default_value)
    CHECK(cudaGraphConditionalHandleCreate(&handle, graph, values.at(0), cudaGraphCondAssignDefault));
  else
    CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
  unsigned one = 1;
  void* add_arguments[] = {&counter, &one};
  void* select_arguments[] = {&counter, &selector, &handle};
  cudaGraphNode_t before =
      source == Source::default_value
          ? add_kernel_node(graph, nullptr, 0, add, add_arguments)
          : add_kernel_node(graph, nullptr, 0, add_and_select, select_arguments);

  cudaGraph_t body_graphs[3];
  cudaGraphNode_t conditional =
      add_conditional_node(graph, &before, 1, handle, type, bodies, body_graphs);
  unsigned amounts[3] = {100, 200, 300};
  void* body_arguments[3][2];
  for (unsigned body = 0; body < bodies; ++body) {
    body_arguments[body][0] = &counter;
    body_arguments[body][1] = &amounts[body];
    add_kernel_node(body_graphs[body], nullptr, 0, add, body_arguments[body]);
  }
  void* twice_arguments[] = {&counter};
  add_kernel_node(graph, &conditional, 1, twice, twice_arguments);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<unsigned> results;
  for (unsigned value : values) {
    store(counter, 0u);
    store(selector, value);
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    results.push_back(load(counter));
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(selector));
  CHECK(cudaFree(counter));
  return results;
}

static void expect_results(const char* what, const std::vector<unsigned>& got,
                           const std::vector<unsigned>& want) {
  for (size_t launch = 0; launch < want.size(); ++launch)
    EXPECT_TRUE(launch < got.size() && got[launch] == want[launch],
                "%s: the counter after launch %zu is %u, expected %u", what, launch,
                launch < got.size() ? got[launch] : 0u, want[launch]);
}

// A while node whose body counts `remaining` down (header comment), launched with remaining 3
// and then 5. Checks the body's passes and `remaining` after each launch.
static void while_set_by_body() {
  int* remaining;
  unsigned* passes;
  CHECK(cudaMalloc(&remaining, sizeof(int)));
  CHECK(cudaMalloc(&passes, sizeof(unsigned)));
  store(passes, 0u);
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphConditionalHandle handle;
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
  cudaGraph_t body;
  add_conditional_node(graph, nullptr, 0, handle, cudaGraphCondTypeWhile, 1, &body);
  void* arguments[] = {&remaining, &passes, &handle};
  add_kernel_node(body, nullptr, 0, count_down, arguments);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  unsigned expected_passes = 0;
  for (int start : {3, 5}) {
    store(remaining, start);
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    expected_passes += start;
    unsigned got_passes = load(passes);
    int got_remaining = load(remaining);
    EXPECT_TRUE(got_passes == expected_passes && got_remaining == 0,
                "while from %d: %u passes in all and %d remaining, expected %u and 0", start,
                got_passes, got_remaining, expected_passes);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(passes));
  CHECK(cudaFree(remaining));
}

static void refused_parameters() {
  cudaGraph_t graph, other;
  CHECK(cudaGraphCreate(&graph, 0));
  CHECK(cudaGraphCreate(&other, 0));
  cudaGraphConditionalHandle handle, foreign;
  CHECK(cudaGraphConditionalHandleCreate(&foreign, other, 0, 0));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 1;
  // Before `graph` has handles of its own: NVIDIA's handles are numbers counted per graph, so
  // there a handle of another graph is told apart only where its number is none of this one's.
  params.conditional.handle = foreign;
  cudaGraphNode_t node;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGraphConditionalHandleCreate(&handle, graph, 0, 2), cudaErrorInvalidValue);
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 2;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 3;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  params.conditional.size = 1;
  CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params));
  cudaGraphNode_t second;
  EXPECT_ERROR(cudaGraphAddNode(&second, graph, nullptr, nullptr, 0, &params),
               cudaErrorInvalidValue);
  CHECK(cudaGraphDestroy(other));
  CHECK(cudaGraphDestroy(graph));
}

int main() {
  CHECK(cudaSetDevice(0));
  const Source fixed = Source::default_value;
  expect_results("if, true", run(cudaGraphCondTypeIf, 1, fixed, {1}), {2 * (1 + 100)});
  expect_results("if, false", run(cudaGraphCondTypeIf, 1, fixed, {0}), {2 * 1});
  expect_results("if/else, true", run(cudaGraphCondTypeIf, 2, fixed, {7}), {2 * (1 + 100)});
  expect_results("if/else, false", run(cudaGraphCondTypeIf, 2, fixed, {0}), {2 * (1 + 200)});
  expect_results("while, false", run(cudaGraphCondTypeWhile, 1, fixed, {0}), {2 * 1});
  expect_results("switch 0", run(cudaGraphCondTypeSwitch, 3, fixed, {0}), {2 * (1 + 100)});
  expect_results("switch 2", run(cudaGraphCondTypeSwitch, 3, fixed, {2}), {2 * (1 + 300)});
  expect_results("switch past the bodies", run(cudaGraphCondTypeSwitch, 3, fixed, {3}), {2 * 1});
  expect_results("if set by a kernel", run(cudaGraphCondTypeIf, 1, Source::kernel, {0, 9}),
                 {2 * 1, 2 * (1 + 100)});
  expect_results("if/else set by a kernel", run(cudaGraphCondTypeIf, 2, Source::kernel, {5, 0, 1}),
                 {2 * (1 + 100), 2 * (1 + 200), 2 * (1 + 100)});
  expect_results("switch set by a kernel", run(cudaGraphCondTypeSwitch, 3, Source::kernel, {2, 0, 7}),
                 {2 * (1 + 300), 2 * (1 + 100), 2 * 1});
  while_set_by_body();
  refused_parameters();
  if (failures) {
    std::fprintf(stderr, "graph_conditional: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("graph_conditional: OK\n");
  return 0;
}
