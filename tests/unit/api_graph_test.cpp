// Graphs and stream capture through the exported Driver API: handles, edges, the list
// conventions of the getters, instantiation and launch order, and the error codes for misuse.
// Every expectation here was confirmed against NVIDIA's driver on an H200 (CUDA 13).
#include "tests/unit/driver_api_fixture.h"

#include <cstring>
#include <vector>

namespace xcuda::testing {
namespace {

class GraphApi : public DriverApiTest {
 protected:
  void SetUp() override {
    DriverApiTest::SetUp();
    ASSERT_EQ(cuGraphCreate(&graph_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy_v2(stream_), CUDA_SUCCESS);
    if (graph_) {
      EXPECT_EQ(cuGraphDestroy(graph_), CUDA_SUCCESS);
    }
    DriverApiTest::TearDown();
  }

  CUgraphNode empty(const std::vector<CUgraphNode>& dependencies = {}) {
    CUgraphNode node = nullptr;
    EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, dependencies.data(), dependencies.size()),
              CUDA_SUCCESS);
    return node;
  }

  CUgraph graph_ = nullptr;
  CUstream stream_ = nullptr;
};

void append(void* data) {
  auto* order = static_cast<std::vector<int>*>(data);
  order->push_back(static_cast<int>(order->size()));
}

// A host node that appends its own number to a shared list.
struct Step {
  std::vector<int>* order;
  int number;
};

void append_step(void* data) {
  auto* step = static_cast<Step*>(data);
  step->order->push_back(step->number);
}

TEST_F(GraphApi, RejectsInvalidHandlesAndArguments) {
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  CUgraph other = nullptr;
  EXPECT_EQ(cuGraphCreate(&other, 1), CUDA_ERROR_INVALID_VALUE);
  int not_a_graph = 0;
  EXPECT_EQ(cuGraphAddEmptyNode(&node, reinterpret_cast<CUgraph>(&not_a_graph), nullptr, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(reinterpret_cast<CUgraph>(&not_a_graph)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  CUDA_HOST_NODE_PARAMS host = {nullptr, nullptr};
  EXPECT_EQ(cuGraphAddHostNode(&node, graph_, nullptr, 0, &host), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMSET_NODE_PARAMS fill = {};
  fill.elementSize = 3;
  fill.width = 1;
  fill.height = 1;
  EXPECT_EQ(cuGraphAddMemsetNode(&node, graph_, nullptr, 0, &fill, context_),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphLaunch(reinterpret_cast<CUgraphExec>(&not_a_graph), stream_),
            CUDA_ERROR_INVALID_VALUE);

  // A dependency from another graph is refused.
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  CUgraphNode foreign = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&foreign, other, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, &foreign, 1), CUDA_ERROR_INVALID_VALUE);
  // A node of the wrong type for the getter.
  CUDA_KERNEL_NODE_PARAMS kernel_params = {};
  EXPECT_EQ(cuGraphKernelNodeGetParams_v2(foreign, &kernel_params), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphAddEmptyNode(&node, graph_, &foreign, 1), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(GraphApi, EdgesAndTheListConventions) {
  CUgraphNode a = empty(), b = empty({a}), c = empty({a}), d = empty({b, c});
  size_t count = 0;
  ASSERT_EQ(cuGraphGetNodes(graph_, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 4u);
  // An array longer than the list gets nulls after the last node.
  std::vector<CUgraphNode> nodes(6, reinterpret_cast<CUgraphNode>(1));
  count = nodes.size();
  ASSERT_EQ(cuGraphGetNodes(graph_, nodes.data(), &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(nodes[0], a);
  EXPECT_EQ(nodes[3], d);
  EXPECT_EQ(nodes[4], nullptr);
  ASSERT_EQ(cuGraphGetRootNodes(graph_, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1u);
  ASSERT_EQ(cuGraphGetEdges(graph_, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 4u);
  CUgraphNode dependencies[2] = {};
  count = 2;
  ASSERT_EQ(cuGraphNodeGetDependencies(d, dependencies, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(dependencies[0], b);
  EXPECT_EQ(dependencies[1], c);
  ASSERT_EQ(cuGraphNodeGetDependentNodes(a, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);

  // An edge that exists, one to the node itself, and removing one that does not exist.
  EXPECT_EQ(cuGraphAddDependencies(graph_, &a, &b, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddDependencies(graph_, &a, &a, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphRemoveDependencies(graph_, &d, &a, 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphRemoveDependencies(graph_, &a, &c, 1), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphGetRootNodes(graph_, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(cuGraphDestroyNode(b), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphGetEdges(graph_, nullptr, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1u);  // c -> d
}

TEST_F(GraphApi, ACycleCannotBeInstantiated) {
  CUgraphNode a = empty(), b = empty({a});
  ASSERT_EQ(cuGraphAddDependencies(graph_, &b, &a, 1), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  EXPECT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_ERROR_INVALID_VALUE);
  CUDA_GRAPH_INSTANTIATE_PARAMS parameters = {};
  EXPECT_EQ(cuGraphInstantiateWithParams(&exec, graph_, &parameters), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(parameters.result_out, CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);
}

TEST_F(GraphApi, HostNodesRunInDependencyOrderOnEveryLaunch) {
  // Steps 0 -> 1 -> 2, created in reverse, so creation order is not run order.
  std::vector<int> order;
  Step steps[] = {{&order, 0}, {&order, 1}, {&order, 2}};
  CUgraphNode nodes[3] = {};
  for (int step = 2; step >= 0; --step) {
    CUDA_HOST_NODE_PARAMS host = {append_step, &steps[step]};
    ASSERT_EQ(cuGraphAddHostNode(&nodes[step], graph_, nullptr, 0, &host), CUDA_SUCCESS);
  }
  ASSERT_EQ(cuGraphAddDependencies(graph_, &nodes[0], &nodes[1], 1), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddDependencies(graph_, &nodes[1], &nodes[2], 1), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  for (int launch = 0; launch < 4; ++launch)
    ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  ASSERT_EQ(order.size(), 12u);
  for (size_t index = 0; index < order.size(); ++index) EXPECT_EQ(order[index], int(index % 3));
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(GraphApi, KernelNodeCopiesItsArgumentsAndTheExecutableGraphItsNodes) {
  CUdeviceptr data = 0;
  constexpr int n = 64;
  ASSERT_EQ(cuMemAlloc_v2(&data, n * sizeof(int)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(data, 0, n), CUDA_SUCCESS);
  CUgraphNode add = nullptr;
  {
    CUdeviceptr argument = data;
    int count = n;
    void* arguments[] = {&argument, &count};
    CUDA_KERNEL_NODE_PARAMS params = {};
    params.func = kernel("add_one");
    params.gridDimX = params.gridDimY = params.gridDimZ = 1;
    params.blockDimX = n;
    params.blockDimY = params.blockDimZ = 1;
    params.kernelParams = arguments;
    ASSERT_EQ(cuGraphAddKernelNode_v2(&add, graph_, nullptr, 0, &params), CUDA_SUCCESS);
    argument = 0;  // the node must have copied it
    count = 0;
  }
  CUDA_KERNEL_NODE_PARAMS read_back = {};
  ASSERT_EQ(cuGraphKernelNodeGetParams_v2(add, &read_back), CUDA_SUCCESS);
  EXPECT_EQ(read_back.func, kernel("add_one"));
  EXPECT_EQ(read_back.blockDimX, unsigned(n));
  ASSERT_NE(read_back.kernelParams, nullptr);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(read_back.kernelParams[0]), data);
  EXPECT_EQ(*static_cast<int*>(read_back.kernelParams[1]), n);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  // Destroying the graph leaves the executable graph whole.
  ASSERT_EQ(cuGraphDestroy(graph_), CUDA_SUCCESS);
  graph_ = nullptr;
  for (int launch = 0; launch < 3; ++launch)
    ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  std::vector<int> host(n);
  ASSERT_EQ(cuMemcpyDtoH_v2(host.data(), data, n * sizeof(int)), CUDA_SUCCESS);
  for (int value : host) ASSERT_EQ(value, 3);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(data), CUDA_SUCCESS);
}

TEST_F(GraphApi, KernelNodesKeepLaunchAttributes) {
  CUdeviceptr data = 0;
  constexpr int n = 32;
  ASSERT_EQ(cuMemAlloc_v2(&data, n * sizeof(int)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(data, 0, n), CUDA_SUCCESS);
  CUdeviceptr argument = data;
  int count = n;
  void* arguments[] = {&argument, &count};
  CUDA_KERNEL_NODE_PARAMS params = {};
  params.func = kernel("add_one");
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = n;
  params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = arguments;
  CUgraphNode first = nullptr, second = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode_v2(&first, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddKernelNode_v2(&second, graph_, &first, 1, &params), CUDA_SUCCESS);

  // Never set: zero.
  CUkernelNodeAttrValue value;
  std::memset(&value, 0xff, sizeof value);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(first, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.priority, 0);
  CUkernelNodeAttrValue set = {};
  set.priority = 3;
  ASSERT_EQ(cuGraphKernelNodeSetAttribute(first, CU_LAUNCH_ATTRIBUTE_PRIORITY, &set),
            CUDA_SUCCESS);
  set = {};
  set.cooperative = 1;
  ASSERT_EQ(cuGraphKernelNodeSetAttribute(first, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &set),
            CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(first, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.priority, 3);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(first, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.cooperative, 1);
  ASSERT_EQ(cuGraphKernelNodeCopyAttributes(second, first), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(second, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.priority, 3);

  // New parameters leave the attributes as they were.
  ASSERT_EQ(cuGraphKernelNodeSetParams_v2(second, &params), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(second, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.priority, 3);

  // The parameters survive the new attributes: both nodes still add one.
  CUDA_KERNEL_NODE_PARAMS read_back = {};
  ASSERT_EQ(cuGraphKernelNodeGetParams_v2(second, &read_back), CUDA_SUCCESS);
  EXPECT_EQ(*static_cast<CUdeviceptr*>(read_back.kernelParams[0]), data);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  std::vector<int> host(n);
  ASSERT_EQ(cuMemcpyDtoH_v2(host.data(), data, n * sizeof(int)), CUDA_SUCCESS);
  for (int element : host) ASSERT_EQ(element, 2);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);

  EXPECT_EQ(cuGraphKernelNodeGetAttribute(first, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeSetAttribute(first, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(first, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, &value),
            CUDA_ERROR_INVALID_VALUE) << "not a kernel node attribute";
  set = {};
  set.clusterDim.x = 2;
  set.clusterDim.y = set.clusterDim.z = 1;
  EXPECT_EQ(cuGraphKernelNodeSetAttribute(first, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &set),
            CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNode other = empty();
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(other, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_ERROR_INVALID_VALUE) << "not a kernel node";
  EXPECT_EQ(cuGraphKernelNodeCopyAttributes(other, first), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeCopyAttributes(first, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(data), CUDA_SUCCESS);
}

TEST_F(GraphApi, CaptureRecordsInsteadOfRunning) {
  std::vector<int> order;
  ASSERT_EQ(cuStreamBeginCapture_v2(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(stream_, append, &order), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(stream_, append, &order), CUDA_SUCCESS);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph captured = nullptr;
  const CUgraphNode* dependencies = nullptr;
  size_t count = 0;
  ASSERT_EQ(cuStreamGetCaptureInfo_v2(stream_, &status, &id, &captured, &dependencies, &count),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_NE(id, 0u);
  ASSERT_EQ(count, 1u);
  // Replacing the dependencies with none makes the next node a second root.
  ASSERT_EQ(cuStreamUpdateCaptureDependencies(stream_, nullptr, 0,
                                              CU_STREAM_SET_CAPTURE_DEPENDENCIES),
            CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(stream_, append, &order), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamEndCapture(stream_, &captured), CUDA_SUCCESS);
  EXPECT_TRUE(order.empty());
  ASSERT_EQ(cuGraphGetRootNodes(captured, nullptr, &count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(cuStreamGetCaptureInfo_v2(stream_, &status, &id, nullptr, nullptr, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, captured, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, stream_), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  EXPECT_EQ(order.size(), 3u);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(captured), CUDA_SUCCESS);
}

TEST_F(GraphApi, CaptureErrors) {
  CUgraph captured = nullptr;
  EXPECT_EQ(cuStreamEndCapture(stream_, &captured), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_EQ(cuStreamBeginCapture_v2(stream_, static_cast<CUstreamCaptureMode>(7)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamBeginCapture_v2(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(cuStreamUpdateCaptureDependencies(stream_, nullptr, 0, 0), CUDA_ERROR_ILLEGAL_STATE);

  // A thread-local capture forbids cuMemAlloc to its own thread only while its mode is not
  // relaxed.
  ASSERT_EQ(cuStreamBeginCapture_v2(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  ASSERT_EQ(cuThreadExchangeStreamCaptureMode(&mode), CUDA_SUCCESS);
  EXPECT_EQ(mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
  CUdeviceptr memory = 0;
  ASSERT_EQ(cuMemAlloc_v2(&memory, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuThreadExchangeStreamCaptureMode(&mode), CUDA_SUCCESS);
  EXPECT_EQ(mode, CU_STREAM_CAPTURE_MODE_RELAXED);
  CUdeviceptr refused = 0;
  EXPECT_EQ(cuMemAlloc_v2(&refused, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(cuStreamEndCapture(stream_, &captured), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(captured, nullptr);

  // Work on an invalidated capture is refused until the capture ends.
  ASSERT_EQ(cuStreamBeginCapture_v2(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(stream_), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  ASSERT_EQ(cuStreamIsCapturing(stream_, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  EXPECT_EQ(cuMemsetD32Async(memory, 0, 1, stream_), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(cuStreamEndCapture(stream_, &captured), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  ASSERT_EQ(cuStreamIsCapturing(stream_, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(cuMemFree_v2(memory), CUDA_SUCCESS);
}

}  // namespace
}  // namespace xcuda::testing
