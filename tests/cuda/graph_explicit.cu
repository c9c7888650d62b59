// Graphs built node by node through the runtime API: memset, memcpy, kernel, child-graph, host
// and event-record nodes; launched, changed through the executable graph, updated from a
// modified clone and from a second capture; plus the errors of an update that changes the
// topology and of a graph with a cycle (the cycle's code confirmed on an H200 with CUDA 13).
#include "check.h"

#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

__global__ void axpy(int* y, const int* x, int alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += alpha * x[i];
}

__global__ void scale(int* data, int factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

static void count_call(void* data) { ++*static_cast<int*>(data); }

constexpr int n = 2048;
constexpr int threads = 256;
constexpr int blocks = n / threads;

static cudaKernelNodeParams axpy_params(void** arguments) {
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(axpy);
  params.gridDim = dim3(blocks);
  params.blockDim = dim3(threads);
  params.kernelParams = arguments;
  return params;
}

static void expect_result(const char* what, const std::vector<int>& got,
                          const std::vector<int>& x, int alpha, int factor) {
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i) want[i] = alpha * x[i] * factor;
  expect_equal(what, got.data(), want.data(), n);
}

int main() {
  int *y = nullptr, *x = nullptr;
  CHECK(cudaMalloc(&y, n * sizeof(int)));
  CHECK(cudaMalloc(&x, n * sizeof(int)));
  std::vector<int> host_x(n), host_y(n);
  for (int i = 0; i < n; ++i) host_x[i] = (i % 97) - 40;
  int host_calls = 0;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));

  // --- memset y = 0, copy x in (both roots) -> y += alpha * x -> child { y *= 3 } -> host ->
  // copy y out -> event record.
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t clear, load, multiply, child, host, unload, record;
  cudaMemsetParams memset_params = {};
  memset_params.dst = y;
  memset_params.value = 0;
  memset_params.elementSize = sizeof(int);
  memset_params.width = n;
  memset_params.height = 1;
  CHECK(cudaGraphAddMemsetNode(&clear, graph, nullptr, 0, &memset_params));
  CHECK(cudaGraphAddMemcpyNode1D(&load, graph, nullptr, 0, x, host_x.data(), n * sizeof(int),
                                 cudaMemcpyHostToDevice));
  {
    // The argument array and its values die with this scope: the node keeps its own copy.
    int alpha = 5;
    int count = n;
    int* y_argument = y;
    const int* x_argument = x;
    void* arguments[] = {&y_argument, &x_argument, &alpha, &count};
    cudaKernelNodeParams params = axpy_params(arguments);
    cudaGraphNode_t roots[] = {clear, load};
    CHECK(cudaGraphAddKernelNode(&multiply, graph, roots, 2, &params));
    alpha = -100;
    y_argument = nullptr;
  }
  cudaGraph_t inner;
  CHECK(cudaGraphCreate(&inner, 0));
  {
    int factor = 3;
    int count = n;
    void* arguments[] = {&y, &factor, &count};
    cudaKernelNodeParams params = {};
    params.func = reinterpret_cast<void*>(scale);
    params.gridDim = dim3(blocks);
    params.blockDim = dim3(threads);
    params.kernelParams = arguments;
    cudaGraphNode_t scale_node;
    CHECK(cudaGraphAddKernelNode(&scale_node, inner, nullptr, 0, &params));
  }
  CHECK(cudaGraphAddChildGraphNode(&child, graph, &multiply, 1, inner));
  CHECK(cudaGraphDestroy(inner));  // the node holds a copy
  cudaHostNodeParams host_params = {count_call, &host_calls};
  CHECK(cudaGraphAddHostNode(&host, graph, &child, 1, &host_params));
  CHECK(cudaGraphAddMemcpyNode1D(&unload, graph, &host, 1, host_y.data(), y, n * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddEventRecordNode(&record, graph, &unload, 1, done));

  size_t count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  if (count != 7) FAIL("graph has %zu nodes, expected 7", count);
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &count));
  if (count != 2) FAIL("graph has %zu roots, expected 2", count);
  CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &count));
  if (count != 6) FAIL("graph has %zu edges, expected 6", count);
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(child, &type));
  if (type != cudaGraphNodeTypeGraph) FAIL("child node has type %d", static_cast<int>(type));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 3; ++launch) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaEventSynchronize(done));
  CHECK(cudaStreamSynchronize(stream));
  expect_result("explicit graph", host_y, host_x, 5, 3);
  if (host_calls != 3) FAIL("host node ran %d times in 3 launches", host_calls);

  // --- Changing a kernel node of the executable graph leaves the graph as it was.
  {
    int alpha = -2;
    int count_argument = n;
    void* arguments[] = {&y, &x, &alpha, &count_argument};
    cudaKernelNodeParams params = axpy_params(arguments);
    CHECK(cudaGraphExecKernelNodeSetParams(exec, multiply, &params));
  }
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_result("executable graph with new kernel arguments", host_y, host_x, -2, 3);

  // --- Update from a clone whose kernel takes another argument.
  cudaGraph_t changed;
  CHECK(cudaGraphClone(&changed, graph));
  cudaGraphNode_t changed_multiply;
  CHECK(cudaGraphNodeFindInClone(&changed_multiply, multiply, changed));
  {
    int alpha = 11;
    int count_argument = n;
    void* arguments[] = {&y, &x, &alpha, &count_argument};
    cudaKernelNodeParams params = axpy_params(arguments);
    CHECK(cudaGraphKernelNodeSetParams(changed_multiply, &params));
  }
  cudaGraphExecUpdateResultInfo update_info;
  CHECK(cudaGraphExecUpdate(exec, changed, &update_info));
  if (update_info.result != cudaGraphExecUpdateSuccess)
    FAIL("update result %d", static_cast<int>(update_info.result));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_result("executable graph updated from a clone", host_y, host_x, 11, 3);

  // --- An update that adds a node changes the topology and is refused.
  cudaGraphNode_t extra;
  CHECK(cudaGraphAddEmptyNode(&extra, changed, nullptr, 0));
  cudaError_t refused = cudaGraphExecUpdate(exec, changed, &update_info);
  std::printf("update with another topology: %s (%d), result %d\n", cudaGetErrorName(refused),
              static_cast<int>(refused), static_cast<int>(update_info.result));
  if (refused != cudaErrorGraphExecUpdateFailure ||
      update_info.result != cudaGraphExecUpdateErrorTopologyChanged)
    FAIL("an update with another topology was not refused as the driver refuses it");
  (void)cudaGetLastError();
  CHECK(cudaGraphLaunch(exec, stream));  // still the graph of the last good update
  CHECK(cudaStreamSynchronize(stream));
  expect_result("executable graph after a refused update", host_y, host_x, 11, 3);
  CHECK(cudaGraphDestroy(changed));

  // --- Update from a second capture of the same work with another kernel argument.
  auto capture = [&](int alpha) {
    cudaGraph_t captured;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    CHECK(cudaMemsetAsync(y, 0, n * sizeof(int), stream));
    axpy<<<blocks, threads, 0, stream>>>(y, x, alpha, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(host_y.data(), y, n * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamEndCapture(stream, &captured));
    return captured;
  };
  cudaGraph_t first = capture(4), second = capture(-9);
  cudaGraphExec_t captured_exec;
  CHECK(cudaGraphInstantiate(&captured_exec, first, 0));
  CHECK(cudaGraphLaunch(captured_exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_result("captured graph", host_y, host_x, 4, 1);
  CHECK(cudaGraphExecUpdate(captured_exec, second, &update_info));
  CHECK(cudaGraphLaunch(captured_exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  expect_result("captured graph updated from another capture", host_y, host_x, -9, 1);
  CHECK(cudaGraphExecDestroy(captured_exec));
  CHECK(cudaGraphDestroy(first));
  CHECK(cudaGraphDestroy(second));

  // --- A cycle cannot be instantiated.
  cudaGraph_t cyclic;
  CHECK(cudaGraphCreate(&cyclic, 0));
  cudaGraphNode_t a, b;
  CHECK(cudaGraphAddEmptyNode(&a, cyclic, nullptr, 0));
  CHECK(cudaGraphAddEmptyNode(&b, cyclic, &a, 1));
  CHECK(cudaGraphAddDependencies(cyclic, &b, &a, nullptr, 1));
  cudaGraphExec_t cyclic_exec = nullptr;
  cudaError_t cycle = cudaGraphInstantiate(&cyclic_exec, cyclic, 0);
  std::printf("instantiate a cycle: %s (%d)\n", cudaGetErrorName(cycle), static_cast<int>(cycle));
  if (cycle != cudaErrorInvalidValue) FAIL("a graph with a cycle was not refused");
  (void)cudaGetLastError();
  CHECK(cudaGraphDestroy(cyclic));

  // A name of this process's own: the test's builds for each architecture run side by side in
  // the same directory, and one removed the file another was about to read.
  const std::string dot_path = "graph_explicit." + std::to_string(getpid()) + ".dot";
  CHECK(cudaGraphDebugDotPrint(graph, dot_path.c_str(), cudaGraphDebugDotFlagsVerbose));
  FILE* dot = std::fopen(dot_path.c_str(), "r");
  if (!dot || std::fgetc(dot) == EOF) FAIL("cudaGraphDebugDotPrint wrote nothing");
  std::fclose(dot);
  std::remove(dot_path.c_str());

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(done));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  std::printf("graph_explicit: graphs built, launched, set and updated as expected\n");
  return 0;
}
