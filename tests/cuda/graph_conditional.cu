// Conditional graph nodes (if, if/else, while, switch) added through cudaGraphAddNode, whose
// condition is the handle's default value, assigned at every launch: the body the value picks
// runs between the node's dependencies and its dependents, and the others do not run.
// Device code setting the condition (cudaGraphSetConditional) is left out: xcuda does not
// provide that device-runtime call yet, and a module calling it does not load.
// Expected error codes follow the CUDA documentation and await a run on NVIDIA's driver.
#include "check.h"

__global__ void add(unsigned* counter, unsigned amount) { atomicAdd(counter, amount); }
__global__ void twice(unsigned* counter) { *counter *= 2; }

static cudaGraphNode_t add_kernel(cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                  size_t count, unsigned*& counter, unsigned& amount) {
  void* arguments[] = {&counter, &amount};
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(add);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = arguments;
  cudaGraphNode_t node;
  CHECK(cudaGraphAddKernelNode(&node, graph, dependencies, count, &params));
  return node;
}

// A graph: counter += 1, then the conditional node (bodies add 100, 200, 300 …), then
// counter *= 2. Returns the counter after one launch.
static unsigned run(cudaGraphConditionalNodeType type, unsigned bodies, unsigned value) {
  unsigned* counter;
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  unsigned one = 1;
  cudaGraphNode_t before = add_kernel(graph, nullptr, 0, counter, one);

  cudaGraphConditionalHandle handle;
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, value, cudaGraphCondAssignDefault));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = bodies;
  cudaGraphNode_t conditional;
  CHECK(cudaGraphAddNode(&conditional, graph, &before, nullptr, 1, &params));
  cudaGraphNodeType node_type;
  CHECK(cudaGraphNodeGetType(conditional, &node_type));
  if (node_type != cudaGraphNodeTypeConditional) FAIL("node type %d", static_cast<int>(node_type));
  unsigned amounts[3] = {100, 200, 300};
  for (unsigned body = 0; body < bodies; ++body) {
    if (!params.conditional.phGraph_out[body]) FAIL("body %u is null", body);
    add_kernel(params.conditional.phGraph_out[body], nullptr, 0, counter, amounts[body]);
  }

  void* twice_arguments[] = {&counter};
  cudaKernelNodeParams twice_params = {};
  twice_params.func = reinterpret_cast<void*>(twice);
  twice_params.gridDim = dim3(1);
  twice_params.blockDim = dim3(1);
  twice_params.kernelParams = twice_arguments;
  cudaGraphNode_t after;
  CHECK(cudaGraphAddKernelNode(&after, graph, &conditional, 1, &twice_params));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaDeviceSynchronize());
  unsigned result = 0;
  CHECK(cudaMemcpy(&result, counter, sizeof result, cudaMemcpyDeviceToHost));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(counter));
  return result;
}

static void expect_result(const char* what, unsigned got, unsigned want) {
  EXPECT_TRUE(got == want, "%s: the counter is %u, expected %u", what, got, want);
}

static void refused_parameters() {
  cudaGraph_t graph, other;
  CHECK(cudaGraphCreate(&graph, 0));
  CHECK(cudaGraphCreate(&other, 0));
  cudaGraphConditionalHandle handle, foreign;
  EXPECT_ERROR(cudaGraphConditionalHandleCreate(&handle, graph, 0, 2), cudaErrorInvalidValue);
  CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
  CHECK(cudaGraphConditionalHandleCreate(&foreign, other, 0, 0));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 2;
  cudaGraphNode_t node;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  params.conditional.type = cudaGraphCondTypeIf;
  params.conditional.size = 3;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  params.conditional.size = 1;
  params.conditional.handle = foreign;
  EXPECT_ERROR(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params), cudaErrorInvalidValue);
  CHECK(cudaGraphDestroy(other));
  CHECK(cudaGraphDestroy(graph));
}

int main() {
  CHECK(cudaSetDevice(0));
  expect_result("if, true", run(cudaGraphCondTypeIf, 1, 1), 2 * (1 + 100));
  expect_result("if, false", run(cudaGraphCondTypeIf, 1, 0), 2 * 1);
  expect_result("if/else, true", run(cudaGraphCondTypeIf, 2, 7), 2 * (1 + 100));
  expect_result("if/else, false", run(cudaGraphCondTypeIf, 2, 0), 2 * (1 + 200));
  expect_result("while, false", run(cudaGraphCondTypeWhile, 1, 0), 2 * 1);
  expect_result("switch 0", run(cudaGraphCondTypeSwitch, 3, 0), 2 * (1 + 100));
  expect_result("switch 2", run(cudaGraphCondTypeSwitch, 3, 2), 2 * (1 + 300));
  expect_result("switch past the bodies", run(cudaGraphCondTypeSwitch, 3, 3), 2 * 1);
  refused_parameters();
  if (failures) {
    std::fprintf(stderr, "graph_conditional: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("graph_conditional: OK\n");
  return 0;
}
