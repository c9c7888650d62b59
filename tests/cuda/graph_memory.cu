// What graphs own: memory allocated and freed by graph nodes (built explicitly, and captured
// from cudaMallocAsync/cudaFreeAsync), the device's graph memory accounting, and user objects
// whose destructor runs once the last reference, the graphs' included, is gone.
// Expected error codes for what the driver forbids graphs with memory nodes (cloning, node
// removal, embedding, a second executable graph, a launch before the last one's memory is
// freed) are what NVIDIA's driver 580 answered on an H100.
#include "check.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

constexpr unsigned element_count = 4096;
constexpr size_t buffer_bytes = element_count * sizeof(unsigned);

__global__ void fill(unsigned* values, unsigned count, unsigned base) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) values[i] = base + 3 * i;
}

static void check_pattern(const char* what, const std::vector<unsigned>& got, unsigned base) {
  for (unsigned i = 0; i < element_count; ++i)
    if (got[i] != base + 3 * i)
      FAIL("%s: element %u is %u, expected %u", what, i, got[i], base + 3 * i);
}

static cudaKernelNodeParams fill_node(unsigned*& target, unsigned& count, unsigned& base,
                                      void** arguments) {
  arguments[0] = &target;
  arguments[1] = &count;
  arguments[2] = &base;
  cudaKernelNodeParams params = {};
  params.func = reinterpret_cast<void*>(fill);
  params.gridDim = dim3((element_count + 255) / 256);
  params.blockDim = dim3(256);
  params.kernelParams = arguments;
  return params;
}

static cudaMemAllocNodeParams allocation_of(size_t bytes) {
  cudaMemAllocNodeParams params = {};
  params.poolProps.allocType = cudaMemAllocationTypePinned;
  params.poolProps.location.type = cudaMemLocationTypeDevice;
  params.poolProps.location.id = 0;
  params.bytesize = bytes;
  return params;
}

static unsigned long long graph_memory(cudaGraphMemAttributeType attribute) {
  unsigned long long value = ~0ull;
  CHECK(cudaDeviceGetGraphMemAttribute(0, attribute, &value));
  return value;
}

// allocate -> fill -> copy to the host -> free, launched twice; then what the driver forbids
// such a graph.
static void explicit_nodes() {
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams allocation = allocation_of(buffer_bytes);
  cudaGraphNode_t allocate, kernel, copy, release;
  CHECK(cudaGraphAddMemAllocNode(&allocate, graph, nullptr, 0, &allocation));
  if (!allocation.dptr) FAIL("the allocation node returned no address");
  unsigned* device = static_cast<unsigned*>(allocation.dptr);
  unsigned count = element_count, base = 5;
  void* arguments[3];
  cudaKernelNodeParams launch = fill_node(device, count, base, arguments);
  CHECK(cudaGraphAddKernelNode(&kernel, graph, &allocate, 1, &launch));
  std::vector<unsigned> host(element_count);
  CHECK(cudaGraphAddMemcpyNode1D(&copy, graph, &kernel, 1, host.data(), device, buffer_bytes,
                                 cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddMemFreeNode(&release, graph, &copy, 1, device));

  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(allocate, &type));
  if (type != cudaGraphNodeTypeMemAlloc) FAIL("allocation node type %d", static_cast<int>(type));
  CHECK(cudaGraphNodeGetType(release, &type));
  if (type != cudaGraphNodeTypeMemFree) FAIL("free node type %d", static_cast<int>(type));
  cudaMemAllocNodeParams reported = {};
  CHECK(cudaGraphMemAllocNodeGetParams(allocate, &reported));
  if (reported.dptr != device || reported.bytesize != buffer_bytes ||
      reported.poolProps.location.id != 0 || reported.accessDescCount != 0)
    FAIL("allocation node parameters: %p, %zu bytes", reported.dptr, reported.bytesize);
  void* freed = nullptr;
  CHECK(cudaGraphMemFreeNodeGetParams(release, &freed));
  if (freed != device) FAIL("free node frees %p, not %p", freed, static_cast<void*>(device));

  // The same allocation freed twice in its graph, or memory no allocation node returned.
  cudaGraphNode_t refused;
  EXPECT_ERROR(cudaGraphAddMemFreeNode(&refused, graph, &release, 1, device),
               cudaErrorInvalidValue);
  unsigned* ordinary;
  CHECK(cudaMalloc(&ordinary, 256));
  EXPECT_ERROR(cudaGraphAddMemFreeNode(&refused, graph, nullptr, 0, ordinary),
               cudaErrorInvalidValue);
  CHECK(cudaFree(ordinary));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (unsigned run = 0; run < 2; ++run) {
    std::fill(host.begin(), host.end(), 0u);
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    check_pattern("allocate, fill, copy, free", host, base);
  }

  // Graphs with memory nodes cannot be cloned, lose nodes, be embedded, or have two
  // executable graphs at once.
  cudaGraph_t clone = nullptr;
  EXPECT_ERROR(cudaGraphClone(&clone, graph), cudaErrorNotSupported);
  EXPECT_ERROR(cudaGraphDestroyNode(kernel), cudaErrorNotSupported);
  cudaGraph_t parent;
  CHECK(cudaGraphCreate(&parent, 0));
  cudaGraphNode_t child;
  EXPECT_ERROR(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, graph),
               cudaErrorNotSupported);
  CHECK(cudaGraphDestroy(parent));
  cudaGraphExec_t second = nullptr;
  EXPECT_ERROR(cudaGraphInstantiate(&second, graph, 0), cudaErrorNotSupported);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphInstantiate(&second, graph, 0));
  CHECK(cudaGraphExecDestroy(second));
  CHECK(cudaGraphDestroy(graph));
}

// An allocation the graph does not free outlives the launch: the program reads it, frees it,
// and only then may the graph run again (or it frees it itself with auto-free-on-launch).
static void unfreed_allocation() {
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams allocation = allocation_of(buffer_bytes);
  cudaGraphNode_t allocate, kernel;
  CHECK(cudaGraphAddMemAllocNode(&allocate, graph, nullptr, 0, &allocation));
  unsigned* device = static_cast<unsigned*>(allocation.dptr);
  unsigned count = element_count, base = 11;
  void* arguments[3];
  cudaKernelNodeParams launch = fill_node(device, count, base, arguments);
  CHECK(cudaGraphAddKernelNode(&kernel, graph, &allocate, 1, &launch));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> host(element_count);
  CHECK(cudaMemcpy(host.data(), device, buffer_bytes, cudaMemcpyDeviceToHost));
  check_pattern("memory after the graph's launch", host, base);
  unsigned long long used = graph_memory(cudaGraphMemAttrUsedMemCurrent);
  unsigned long long reserved = graph_memory(cudaGraphMemAttrReservedMemCurrent);
  EXPECT_TRUE(used >= buffer_bytes && reserved >= used,
              "graph memory used %llu, reserved %llu, with %zu bytes allocated", used, reserved,
              buffer_bytes);
  EXPECT_ERROR(cudaGraphLaunch(exec, 0), cudaErrorInvalidValue);
  CHECK(cudaFree(device));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaFreeAsync(device, 0));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(device));
  CHECK(cudaGraphExecDestroy(exec));

  CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  for (unsigned run = 0; run < 3; ++run) CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(host.data(), device, buffer_bytes, cudaMemcpyDeviceToHost));
  check_pattern("memory after auto-free launches", host, base);
  CHECK(cudaFree(device));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
}

// cudaMallocAsync and cudaFreeAsync in a capture become allocation and free nodes.
static void captured_allocation() {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<unsigned> host(element_count);
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  unsigned* device = nullptr;
  CHECK(cudaMallocAsync(&device, buffer_bytes, stream));
  fill<<<(element_count + 255) / 256, 256, 0, stream>>>(device, element_count, 23);
  CHECK(cudaMemcpyAsync(host.data(), device, buffer_bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaFreeAsync(device, stream));
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(stream, &graph));

  size_t node_count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
  if (node_count != 4) FAIL("the capture made %zu nodes, not 4", node_count);
  std::vector<cudaGraphNode_t> nodes(node_count);
  CHECK(cudaGraphGetNodes(graph, nodes.data(), &node_count));
  const cudaGraphNodeType expected[] = {cudaGraphNodeTypeMemAlloc, cudaGraphNodeTypeKernel,
                                        cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeMemFree};
  for (size_t i = 0; i < node_count; ++i) {
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(nodes[i], &type));
    if (type != expected[i]) FAIL("captured node %zu has type %d", i, static_cast<int>(type));
  }
  cudaMemAllocNodeParams reported = {};
  CHECK(cudaGraphMemAllocNodeGetParams(nodes[0], &reported));
  if (reported.dptr != device || reported.bytesize != buffer_bytes)
    FAIL("captured allocation %p of %zu bytes", reported.dptr, reported.bytesize);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (unsigned run = 0; run < 2; ++run) {
    std::fill(host.begin(), host.end(), 0u);
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    check_pattern("captured allocate, fill, copy, free", host, 23);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));

  // Memory a capture allocates and does not free is the program's after the launch.
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync(&device, buffer_bytes, stream));
  fill<<<(element_count + 255) / 256, 256, 0, stream>>>(device, element_count, 31);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaMemcpyAsync(host.data(), device, buffer_bytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaFreeAsync(device, stream));
  CHECK(cudaStreamSynchronize(stream));
  check_pattern("memory a captured graph left allocated", host, 31);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
}

// Once every graph is gone and its memory freed, trimming gives all graph memory back.
static void accounting_after_trim() {
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaDeviceGraphMemTrim(0));
  unsigned long long used = graph_memory(cudaGraphMemAttrUsedMemCurrent);
  unsigned long long reserved = graph_memory(cudaGraphMemAttrReservedMemCurrent);
  unsigned long long used_high = graph_memory(cudaGraphMemAttrUsedMemHigh);
  unsigned long long reserved_high = graph_memory(cudaGraphMemAttrReservedMemHigh);
  EXPECT_TRUE(used == 0 && reserved == 0, "after trimming: graph memory used %llu, reserved %llu",
              used, reserved);
  EXPECT_TRUE(used_high >= buffer_bytes && reserved_high >= used_high,
              "high watermarks: used %llu, reserved %llu", used_high, reserved_high);
  unsigned long long zero = 0, five = 5;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
  EXPECT_TRUE(graph_memory(cudaGraphMemAttrUsedMemHigh) == 0 &&
                  graph_memory(cudaGraphMemAttrReservedMemHigh) == 0,
              "high watermarks were not reset");
  EXPECT_ERROR(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &five),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &zero),
               cudaErrorInvalidValue);
}

static std::atomic<int> destroyed{0};

static void destroy_counter(void* counter) {
  static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// The driver runs destructors asynchronously: wait a while for it.
static bool destructor_ran(int times) {
  for (int tries = 0; tries < 500 && destroyed.load() < times; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return destroyed.load() == times;
}

static void user_objects() {
  cudaUserObject_t object;
  EXPECT_ERROR(cudaUserObjectCreate(&object, &destroyed, destroy_counter, 1, 0),
               cudaErrorInvalidValue);
  EXPECT_ERROR(
      cudaUserObjectCreate(&object, &destroyed, destroy_counter, 0, cudaUserObjectNoDestructorSync),
      cudaErrorInvalidValue);
  CHECK(cudaUserObjectCreate(&object, &destroyed, destroy_counter, 2,
                             cudaUserObjectNoDestructorSync));
  CHECK(cudaUserObjectRetain(object, 1));
  CHECK(cudaUserObjectRelease(object, 2));

  // The last reference the program holds moves to a graph, which an executable graph copies.
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t empty;
  CHECK(cudaGraphAddEmptyNode(&empty, graph, nullptr, 0));
  CHECK(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove));
  CHECK(cudaGraphRetainUserObject(graph, object, 2, 0));
  CHECK(cudaGraphReleaseUserObject(graph, object, 2));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaGraphLaunch(exec, 0));
  CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(destroyed.load() == 0,
              "the destructor ran while an executable graph held a reference");
  CHECK(cudaGraphExecDestroy(exec));
  EXPECT_TRUE(destructor_ran(1), "the destructor ran %d times, not once", destroyed.load());
}

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(nullptr));
  EXPECT_TRUE(graph_memory(cudaGraphMemAttrUsedMemCurrent) == 0 &&
                  graph_memory(cudaGraphMemAttrReservedMemCurrent) == 0,
              "graph memory is in use before any graph exists");
  explicit_nodes();
  unfreed_allocation();
  captured_allocation();
  accounting_after_trim();
  user_objects();
  if (failures) {
    std::fprintf(stderr, "graph_memory: %d failure(s)\n", failures);
    return 1;
  }
  std::printf("graph_memory: OK\n");
  return 0;
}
