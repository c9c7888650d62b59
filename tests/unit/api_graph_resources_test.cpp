// What graphs own, through the exported Driver API: memory allocation and free nodes, user
// objects and conditional nodes; and the generic node calls (cuGraphAddNode,
// cuGraphNodeSetParams, cuGraphExecNodeSetParams, cuGraphNodeSetEnabled). xcuda's answers to
// arguments NVIDIA's driver dereferences or does not document (made-up handles, unsupported node
// types and properties); the behaviour both drivers share is tested by tests/cuda/graph_memory.cu
// and graph_conditional.cu.
#include "tests/unit/driver_api_fixture.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace xcuda::testing {
namespace {

class GraphResources : public DriverApiTest {
 protected:
  void SetUp() override {
    DriverApiTest::SetUp();
    ASSERT_EQ(cuGraphCreate(&graph_, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (graph_) {
      EXPECT_EQ(cuGraphDestroy(graph_), CUDA_SUCCESS);
    }
    DriverApiTest::TearDown();
  }

  CUDA_MEM_ALLOC_NODE_PARAMS allocation(size_t bytes) const {
    CUDA_MEM_ALLOC_NODE_PARAMS params = {};
    params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params.poolProps.location.id = device_;
    params.bytesize = bytes;
    return params;
  }

  // An if node on a new handle whose default is 1 (set at every launch), added to `graph`; returns
  // its body.
  CUgraph add_if_node(CUgraph graph, CUgraphNode* node, CUgraphConditionalHandle* handle) {
    EXPECT_EQ(cuGraphConditionalHandleCreate(handle, graph, context_, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
              CUDA_SUCCESS);
    return add_if_node(graph, node, *handle);
  }
  CUgraph add_if_node(CUgraph graph, CUgraphNode* node, CUgraphConditionalHandle handle) {
    CUgraphNodeParams params = {};
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional = {handle, CU_GRAPH_COND_TYPE_IF, 1, nullptr, context_};
    EXPECT_EQ(cuGraphAddNode(node, graph, nullptr, 0, &params), CUDA_SUCCESS);
    return params.conditional.phGraph_out ? params.conditional.phGraph_out[0] : nullptr;
  }

  CUgraph graph_ = nullptr;
};

TEST_F(GraphResources, AllocationNodesCheckTheirProperties) {
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEM_ALLOC_NODE_PARAMS params = allocation(0);
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  params = allocation(256);
  params.poolProps.location.id = 1000;
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  params = allocation(256);
  params.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &params), CUDA_ERROR_NOT_SUPPORTED);
  params = allocation(256);
  params.accessDescCount = 1;
  EXPECT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);

  // The access descriptors reported are the node's copy.
  CUmemAccessDesc access = {};
  access.location = {CU_MEM_LOCATION_TYPE_DEVICE, device_};
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  params.accessDescs = &access;
  ASSERT_EQ(cuGraphAddMemAllocNode(&node, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CUDA_MEM_ALLOC_NODE_PARAMS reported = {};
  ASSERT_EQ(cuGraphMemAllocNodeGetParams(node, &reported), CUDA_SUCCESS);
  ASSERT_EQ(reported.accessDescCount, 1u);
  EXPECT_NE(reported.accessDescs, &access);
  EXPECT_EQ(reported.accessDescs[0].flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_EQ(reported.dptr, params.dptr);
  CUdeviceptr freed = 0;
  EXPECT_EQ(cuGraphMemFreeNodeGetParams(node, &freed), CUDA_ERROR_INVALID_VALUE);

  // A copy may name the memory when the graph is built, before any launch allocates it.
  CUgraphNode fill = nullptr;
  CUDA_MEMSET_NODE_PARAMS memset = {};
  memset.dst = params.dptr;
  memset.elementSize = 4;
  memset.width = 64;
  memset.height = 1;
  EXPECT_EQ(cuGraphAddMemsetNode(&fill, graph_, &node, 1, &memset, context_), CUDA_SUCCESS);
}

TEST_F(GraphResources, GraphMemoryFreedByAnotherGraph) {
  CUDA_MEM_ALLOC_NODE_PARAMS params = allocation(1 << 16);
  CUgraphNode allocate = nullptr, release = nullptr;
  ASSERT_EQ(cuGraphAddMemAllocNode(&allocate, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  CUgraph freeing = nullptr;
  ASSERT_EQ(cuGraphCreate(&freeing, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddMemFreeNode(&release, freeing, nullptr, 0, params.dptr), CUDA_SUCCESS);
  // Freed elsewhere, it can no longer be freed in the graph that allocates it.
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddMemFreeNode(&refused, graph_, &allocate, 1, params.dptr),
            CUDA_ERROR_INVALID_VALUE);

  CUgraphExec allocating = nullptr, releasing = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&allocating, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphInstantiateWithFlags(&releasing, freeing, 0), CUDA_SUCCESS);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(cuGraphLaunch(allocating, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD32_v2(params.dptr, 7, 1 << 14), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(releasing, nullptr), CUDA_SUCCESS);
  }
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  // Nothing allocates it now: freeing it again fails.
  EXPECT_EQ(cuMemFree_v2(params.dptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphExecDestroy(allocating), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecDestroy(releasing), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(freeing), CUDA_SUCCESS);
}

TEST_F(GraphResources, MemoryNodesStayOutOfEmbeddedGraphs) {
  CUgraph child = nullptr;
  ASSERT_EQ(cuGraphCreate(&child, 0), CUDA_SUCCESS);
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddChildGraphNode(&node, graph_, nullptr, 0, child), CUDA_SUCCESS);
  CUgraph embedded = nullptr;
  ASSERT_EQ(cuGraphChildGraphNodeGetGraph(node, &embedded), CUDA_SUCCESS);
  CUDA_MEM_ALLOC_NODE_PARAMS params = allocation(256);
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddMemAllocNode(&refused, embedded, nullptr, 0, &params),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuGraphDestroy(child), CUDA_SUCCESS);
}

TEST_F(GraphResources, AddNodeAnswersEveryType) {
  CUgraphNodeParams params = {};
  CUgraphNode node = nullptr;
  EXPECT_EQ(cuGraphAddNode(&node, graph_, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  params.type = CU_GRAPH_NODE_TYPE_EMPTY;
  ASSERT_EQ(cuGraphAddNode(&node, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  CUgraphNodeType type;
  ASSERT_EQ(cuGraphNodeGetType(node, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_EMPTY);
  params.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT;
  EXPECT_EQ(cuGraphAddNode(&node, graph_, nullptr, 0, &params), CUDA_ERROR_NOT_SUPPORTED);
  params = {};
  params.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  params.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.alloc.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, device_};
  params.alloc.bytesize = 1024;
  CUgraphNode allocate = nullptr;
  ASSERT_EQ(cuGraphAddNode_v2(&allocate, graph_, &node, nullptr, 1, &params), CUDA_SUCCESS);
  EXPECT_NE(params.alloc.dptr, 0u);
  CUdeviceptr address = params.alloc.dptr;
  params = {};
  params.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  params.free.dptr = address;
  CUgraphNode release = nullptr;
  ASSERT_EQ(cuGraphAddNode(&release, graph_, &allocate, 1, &params), CUDA_SUCCESS);
  CUdeviceptr freed = 0;
  ASSERT_EQ(cuGraphMemFreeNodeGetParams(release, &freed), CUDA_SUCCESS);
  EXPECT_EQ(freed, address);
  // Programmatic edges need a GPU's scheduler.
  CUgraphEdgeData edge = {};
  edge.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  params = {};
  params.type = CU_GRAPH_NODE_TYPE_EMPTY;
  EXPECT_EQ(cuGraphAddNode_v2(&node, graph_, &release, &edge, 1, &params),
            CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(GraphResources, NodesChangeParametersAndCanBeDisabled) {
  CUdeviceptr memory = 0;
  ASSERT_EQ(cuMemAlloc_v2(&memory, 64 * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(memory, 0, 64), CUDA_SUCCESS);
  CUgraphNodeParams params = {};
  params.type = CU_GRAPH_NODE_TYPE_MEMSET;
  params.memset = {memory, 0, 5, 4, 64, 1, context_};
  CUgraphNode fill = nullptr;
  ASSERT_EQ(cuGraphAddNode(&fill, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  params.memset.value = 6;
  ASSERT_EQ(cuGraphNodeSetParams(fill, &params), CUDA_SUCCESS);
  CUgraphNodeParams wrong = {};
  wrong.type = CU_GRAPH_NODE_TYPE_HOST;
  EXPECT_EQ(cuGraphNodeSetParams(fill, &wrong), CUDA_ERROR_INVALID_VALUE);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  auto launch_and_read = [&] {
    uint32_t value = 0;
    EXPECT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuMemcpyDtoH_v2(&value, memory, sizeof value), CUDA_SUCCESS);
    return value;
  };
  EXPECT_EQ(launch_and_read(), 6u);
  params.memset.value = 7;
  ASSERT_EQ(cuGraphExecNodeSetParams(exec, fill, &params), CUDA_SUCCESS);
  EXPECT_EQ(launch_and_read(), 7u);
  unsigned enabled = 0;
  ASSERT_EQ(cuGraphNodeGetEnabled(exec, fill, &enabled), CUDA_SUCCESS);
  EXPECT_EQ(enabled, 1u);
  ASSERT_EQ(cuGraphNodeSetEnabled(exec, fill, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(memory, 1, 64), CUDA_SUCCESS);
  EXPECT_EQ(launch_and_read(), 1u);
  ASSERT_EQ(cuGraphNodeGetEnabled(exec, fill, &enabled), CUDA_SUCCESS);
  EXPECT_EQ(enabled, 0u);
  ASSERT_EQ(cuGraphNodeSetEnabled(exec, fill, 1), CUDA_SUCCESS);
  EXPECT_EQ(launch_and_read(), 7u);

  CUgraphNode empty = nullptr;
  ASSERT_EQ(cuGraphAddEmptyNode(&empty, graph_, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphNodeSetEnabled(exec, empty, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(memory), CUDA_SUCCESS);
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

// Holds a stream back from its construction until open() or its destruction (which waits for
// the stream to finish): calls made meanwhile find the launches queued before them not yet run.
class StreamGate {
 public:
  explicit StreamGate(CUstream stream) : stream_(stream) {
    EXPECT_EQ(cuLaunchHostFunc(stream, hold, this), CUDA_SUCCESS);
  }
  ~StreamGate() {
    open();
    EXPECT_EQ(cuStreamSynchronize(stream_), CUDA_SUCCESS);
  }
  void open() {
    opened_.store(true);
    opened_.notify_all();
  }

 private:
  static void hold(void* data) { static_cast<StreamGate*>(data)->opened_.wait(false); }
  CUstream stream_;
  std::atomic<bool> opened_{false};
};

std::atomic<int> destroyed{0};
void count_destruction(void*) { destroyed.fetch_add(1); }

TEST_F(GraphResources, UserObjectsLiveWhileReferenced) {
  destroyed = 0;
  int not_an_object = 0;
  auto* made_up = reinterpret_cast<CUuserObject>(&not_an_object);
  EXPECT_EQ(cuUserObjectRetain(made_up, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuUserObjectRelease(made_up, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphRetainUserObject(graph_, made_up, 1, 0), CUDA_ERROR_INVALID_VALUE);
  CUuserObject object = nullptr;
  EXPECT_EQ(cuUserObjectCreate(&object, nullptr, nullptr, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(
      cuUserObjectCreate(&object, nullptr, count_destruction, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
      CUDA_SUCCESS);
  EXPECT_EQ(cuUserObjectRetain(object, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphRetainUserObject(graph_, object, 1, 2), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuGraphRetainUserObject(graph_, object, 1, CU_GRAPH_USER_OBJECT_MOVE), CUDA_SUCCESS);
  // A graph releases only references it holds. NVIDIA's driver 580 lets this through, releases
  // the caller's reference too (the destructor runs), and the program crashed soon after (an H100).
  EXPECT_EQ(cuGraphReleaseUserObject(graph_, object, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(destroyed.load(), 0);
  // A clone holds references of its own.
  CUgraph clone = nullptr;
  ASSERT_EQ(cuGraphClone(&clone, graph_), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph_), CUDA_SUCCESS);
  graph_ = nullptr;
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_EQ(cuGraphReleaseUserObject(clone, object, 1), CUDA_SUCCESS);
  EXPECT_EQ(destroyed.load(), 1);
  // Destroyed, the object's handle is no longer live.
  EXPECT_EQ(cuUserObjectRetain(object, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(clone), CUDA_SUCCESS);
}

TEST_F(GraphResources, ConditionalNodesNestAndPrint) {
  CUgraphConditionalHandle outer = 0, inner = 0;
  EXPECT_EQ(cuGraphConditionalHandleCreate(nullptr, graph_, context_, 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(
      cuGraphConditionalHandleCreate(&outer, graph_, context_, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
      CUDA_SUCCESS);
  CUgraphNodeParams params = {};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional = {outer, CU_GRAPH_COND_TYPE_IF, 1, nullptr, context_};
  CUgraphNode node = nullptr;
  ASSERT_EQ(cuGraphAddNode(&node, graph_, nullptr, 0, &params), CUDA_SUCCESS);
  ASSERT_NE(params.conditional.phGraph_out, nullptr);
  CUgraph body = params.conditional.phGraph_out[0];
  // A body belongs to its node.
  EXPECT_EQ(cuGraphDestroy(body), CUDA_ERROR_INVALID_VALUE);
  // Memory nodes cannot go into a body.
  CUDA_MEM_ALLOC_NODE_PARAMS allocation_params = allocation(256);
  CUgraphNode refused = nullptr;
  EXPECT_EQ(cuGraphAddMemAllocNode(&refused, body, nullptr, 0, &allocation_params),
            CUDA_ERROR_NOT_SUPPORTED);

  // A body may use its own handles and those of the graphs around it.
  ASSERT_EQ(cuGraphConditionalHandleCreate(&inner, body, context_, 2, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  params.conditional = {inner, CU_GRAPH_COND_TYPE_SWITCH, 3, nullptr, context_};
  CUgraphNode nested = nullptr;
  ASSERT_EQ(cuGraphAddNode(&nested, body, nullptr, 0, &params), CUDA_SUCCESS);
  std::vector<int> order;
  CUDA_HOST_NODE_PARAMS host = {
      [](void* data) { static_cast<std::vector<int>*>(data)->push_back(2); }, &order};
  CUgraphNode host_node = nullptr;
  ASSERT_EQ(cuGraphAddHostNode(&host_node, params.conditional.phGraph_out[2], nullptr, 0, &host),
            CUDA_SUCCESS);
  // A handle serves one node, wherever the second would go.
  params.conditional = {outer, CU_GRAPH_COND_TYPE_WHILE, 1, nullptr, context_};
  EXPECT_EQ(cuGraphAddNode(&refused, graph_, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphAddNode(&refused, body, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  params.conditional = {inner, CU_GRAPH_COND_TYPE_IF, 1, nullptr, context_};
  EXPECT_EQ(cuGraphAddNode(&refused, body, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  params.conditional = {outer, CU_GRAPH_COND_TYPE_WHILE, 1, nullptr, context_};
  CUgraph other = nullptr;
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphAddNode(&refused, other, nullptr, 0, &params), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  for (int launch = 0; launch < 2; ++launch) ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{2, 2}));
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);

  std::string path = ::testing::TempDir() + "conditional.dot";
  ASSERT_EQ(cuGraphDebugDotPrint(graph_, path.c_str(), 0), CUDA_SUCCESS);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_NE(text.str().find("conditional"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("subgraph cluster_"), std::string::npos) << text.str();
  std::remove(path.c_str());
}

TEST_F(GraphResources, ExecutableGraphsUpdateConditionalBodies) {
  CUgraphConditionalHandle handle = 0;
  CUgraphNode node = nullptr;
  CUgraph body = add_if_node(graph_, &node, &handle);
  ASSERT_NE(body, nullptr);
  std::vector<int> order;
  Step first{&order, 1}, second{&order, 2};
  CUDA_HOST_NODE_PARAMS host = {append_step, &first};
  CUgraphNode host_node = nullptr;
  ASSERT_EQ(cuGraphAddHostNode(&host_node, body, nullptr, 0, &host), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  host.userData = &second;
  ASSERT_EQ(cuGraphHostNodeSetParams(host_node, &host), CUDA_SUCCESS);
  CUgraphExecUpdateResultInfo result = {};
  ASSERT_EQ(cuGraphExecUpdate_v2(exec, graph_, &result), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));

  // The same shape with a handle of its own: the executable graph cannot take it.
  CUgraph other = nullptr;
  ASSERT_EQ(cuGraphCreate(&other, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphConditionalHandleCreate(&handle, other, context_, 1, 0), CUDA_SUCCESS);
  CUgraph other_body = add_if_node(other, &node, handle);
  ASSERT_NE(other_body, nullptr);
  ASSERT_EQ(cuGraphAddHostNode(&host_node, other_body, nullptr, 0, &host), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphExecUpdate_v2(exec, other, &result), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(result.result, CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
  EXPECT_EQ(result.errorNode, node);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(other), CUDA_SUCCESS);
}

// The driver's rule for changes to an executable graph: launches made before a change run with
// what they were made with, whenever their stream reaches them.
TEST_F(GraphResources, UpdatesLeaveEarlierLaunchesAlone) {
  CUgraphConditionalHandle handle = 0;
  CUgraphNode node = nullptr;
  CUgraph outer_body = add_if_node(graph_, &node, &handle);
  ASSERT_NE(outer_body, nullptr);
  // The host node two bodies deep: an if node inside the first one's body.
  CUgraphNode inner = nullptr;
  CUgraphConditionalHandle inner_handle = 0;
  CUgraph inner_body = add_if_node(outer_body, &inner, &inner_handle);
  ASSERT_NE(inner_body, nullptr);
  std::vector<int> order;
  Step first{&order, 1}, second{&order, 2};
  CUDA_HOST_NODE_PARAMS host = {append_step, &first};
  CUgraphNode host_node = nullptr;
  ASSERT_EQ(cuGraphAddHostNode(&host_node, inner_body, nullptr, 0, &host), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);

  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    StreamGate gate(stream);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    host.userData = &second;
    ASSERT_EQ(cuGraphHostNodeSetParams(host_node, &host), CUDA_SUCCESS);
    CUgraphExecUpdateResultInfo result = {};
    ASSERT_EQ(cuGraphExecUpdate_v2(exec, graph_, &result), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
}

// Every call that changes an executable graph's nodes, made while its earlier launches wait.
TEST_F(GraphResources, NodeChangesLeaveEarlierLaunchesAlone) {
  CUdeviceptr memory = 0;
  ASSERT_EQ(cuMemAlloc_v2(&memory, 64 * sizeof(uint32_t)), CUDA_SUCCESS);
  CUDA_MEMSET_NODE_PARAMS fill = {memory, 0, 5, 4, 64, 1};
  CUgraphNode fill_node = nullptr;
  ASSERT_EQ(cuGraphAddMemsetNode(&fill_node, graph_, nullptr, 0, &fill, context_), CUDA_SUCCESS);
  unsigned count = 1;
  void* arguments[] = {&memory, &count};
  CUDA_KERNEL_NODE_PARAMS add = {};
  add.func = kernel("add_one");
  add.gridDimX = add.gridDimY = add.gridDimZ = 1;
  add.blockDimX = 64;
  add.blockDimY = add.blockDimZ = 1;
  add.kernelParams = arguments;
  CUgraphNode add_node = nullptr;
  ASSERT_EQ(cuGraphAddKernelNode_v2(&add_node, graph_, &fill_node, 1, &add), CUDA_SUCCESS);
  std::vector<int> order;
  Step first{&order, 1}, second{&order, 2}, third{&order, 3};
  CUDA_HOST_NODE_PARAMS host = {append_step, &first};
  CUgraphNode host_node = nullptr;
  ASSERT_EQ(cuGraphAddHostNode(&host_node, graph_, &add_node, 1, &host), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph_, 0), CUDA_SUCCESS);

  CUstream stream = nullptr;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  uint32_t words[3][2] = {};
  {
    StreamGate gate(stream);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoHAsync_v2(words[0], memory, sizeof words[0], stream), CUDA_SUCCESS);

    fill.value = 7;
    ASSERT_EQ(cuGraphExecMemsetNodeSetParams(exec, fill_node, &fill, context_), CUDA_SUCCESS);
    count = 2;
    ASSERT_EQ(cuGraphExecKernelNodeSetParams_v2(exec, add_node, &add), CUDA_SUCCESS);
    host.userData = &second;
    ASSERT_EQ(cuGraphExecHostNodeSetParams(exec, host_node, &host), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoHAsync_v2(words[1], memory, sizeof words[1], stream), CUDA_SUCCESS);

    ASSERT_EQ(cuGraphNodeSetEnabled(exec, fill_node, 0), CUDA_SUCCESS);
    CUgraphNodeParams generic = {};
    generic.type = CU_GRAPH_NODE_TYPE_HOST;
    generic.host = {append_step, &third};
    ASSERT_EQ(cuGraphExecNodeSetParams(exec, host_node, &generic), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoHAsync_v2(words[2], memory, sizeof words[2], stream), CUDA_SUCCESS);
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(words[0][0], 6u);
  EXPECT_EQ(words[0][1], 5u);
  EXPECT_EQ(words[1][0], 8u);
  EXPECT_EQ(words[1][1], 8u);
  // The fill disabled, the kernel adds to what the second launch left.
  EXPECT_EQ(words[2][0], 9u);
  EXPECT_EQ(words[2][1], 9u);
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(memory), CUDA_SUCCESS);
}

}  // namespace
}  // namespace xcuda::testing
