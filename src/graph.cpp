// Graphs: explicit construction (cuGraphAdd*Node and dependencies), inspection, cloning,
// instantiation, update and launch.
//
// Each node keeps the parameters it was given (for its getters) next to the work it enqueues,
// and both are fixed when the node is added: the caller's kernelParams array, copy descriptor
// and so on may be gone by the time the graph runs.
#include "src/graph.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include "src/launch.h"
#include "src/memory.h"

#include "runtime/backend.h"
#include "runtime/event.h"
#include "runtime/graph_memory.h"
#include "runtime/library.h"
#include "runtime/module.h"
#include "runtime/strided_copy.h"

using namespace xcuda;
using runtime::Graph;
using runtime::GraphExec;
using runtime::Node;
using runtime::NodeKind;
using runtime::Stream;

namespace {

Graph* as_graph(CUgraph handle) { return reinterpret_cast<Graph*>(handle); }
Node* as_node(CUgraphNode handle) { return reinterpret_cast<Node*>(handle); }
GraphExec* as_exec(CUgraphExec handle) { return reinterpret_cast<GraphExec*>(handle); }
CUgraph as_handle(Graph* graph) { return reinterpret_cast<CUgraph>(graph); }
CUgraphNode as_handle(Node* node) { return reinterpret_cast<CUgraphNode>(node); }

// A kernel node's launch, immutable once made: the node's getters, its work and the executable
// graphs made from it share one.
struct KernelLaunch {
  CUfunction function;
  CUkernel library_kernel;  // the CUkernel the caller named, if it named one
  CUcontext context;
  runtime::LoadedKernel* kernel;
  runtime::LaunchShape shape;
  std::vector<uint8_t> parameters;
  // Where each parameter lies in `parameters`: the kernelParams the getters report.
  std::vector<void*> arguments;
  // cuGraphKernelNodeSetAttribute's values by attribute; one never set reads as zero.
  std::map<CUkernelNodeAttrID, CUkernelNodeAttrValue> attributes;
};
using SharedLaunch = std::shared_ptr<const KernelLaunch>;

// `handle` is what the caller passed: a CUfunction, or a CUkernel in its place. cudart finds
// its kernels again by the CUkernel the getters report.
SharedLaunch make_launch(CUfunction handle, runtime::Function& function,
                         runtime::LoadedKernel& kernel, const runtime::LaunchShape& shape,
                         std::vector<uint8_t> parameters) {
  bool library_kernel = runtime::live_kernels().contains(handle);
  auto launch = std::make_shared<KernelLaunch>(KernelLaunch{
      reinterpret_cast<CUfunction>(&function),
      library_kernel ? reinterpret_cast<CUkernel>(handle) : nullptr,
      reinterpret_cast<CUcontext>(&function.module().context()), &kernel, shape,
      std::move(parameters), {}, {}});
  for (const auto& parameter : kernel.info().parameters)
    launch->arguments.push_back(launch->parameters.data() + parameter.offset);
  return launch;
}

// A memory allocation node's parameters: what the caller gave, with the access descriptors
// copied, and the memory reserved for it.
struct MemoryAllocationNode {
  CUDA_MEM_ALLOC_NODE_PARAMS described;
  std::vector<CUmemAccessDesc> access;
  std::shared_ptr<runtime::GraphAllocation> allocation;
};

struct MemoryFreeNode {
  std::shared_ptr<runtime::GraphAllocation> allocation;
};

runtime::NodeWork kernel_work(SharedLaunch launch) {
  return [launch](Stream& stream) {
    stream.queue().launch(*launch->kernel, launch->shape, launch->parameters);
  };
}

// CUDA_KERNEL_NODE_PARAMS in its first form (no CUkernel) and its current one share these
// fields; the current one may name a CUkernel instead of a CUfunction.
template <class Parameters>
CUfunction function_of(const Parameters& parameters) {
  if constexpr (requires { parameters.kern; })
    if (!parameters.func) return reinterpret_cast<CUfunction>(parameters.kern);
  return parameters.func;
}

template <class Parameters>
CUresult prepare_kernel(const char* function, const Parameters* parameters, SharedLaunch& result) {
  XCUDA_MEMORY_REQUIRE(parameters, CUDA_ERROR_INVALID_VALUE, "kernel node parameters are null");
  CUfunction handle = function_of(*parameters);
  runtime::Function* resolved = nullptr;
  if (CUresult status = api::resolve_function(function, handle, resolved); status != CUDA_SUCCESS)
    return status;
  runtime::LaunchShape shape;
  shape.grid[0] = parameters->gridDimX;
  shape.grid[1] = parameters->gridDimY;
  shape.grid[2] = parameters->gridDimZ;
  shape.block[0] = parameters->blockDimX;
  shape.block[1] = parameters->blockDimY;
  shape.block[2] = parameters->blockDimZ;
  shape.dynamic_shared_bytes = parameters->sharedMemBytes;
  std::vector<uint8_t> packed;
  if (CUresult status = api::prepare_launch(function, *resolved, shape, parameters->kernelParams,
                                            parameters->extra, false, packed);
      status != CUDA_SUCCESS)
    return status;
  auto loaded = resolved->kernel(shape.block[0]);
  if (!loaded) return api::fail(function, loaded.error());
  result = make_launch(handle, *resolved, **loaded, shape, std::move(packed));
  return CUDA_SUCCESS;
}

template <class Parameters>
void describe_kernel(const KernelLaunch& launch, Parameters& result) {
  result.func = launch.function;
  result.gridDimX = launch.shape.grid[0];
  result.gridDimY = launch.shape.grid[1];
  result.gridDimZ = launch.shape.grid[2];
  result.blockDimX = launch.shape.block[0];
  result.blockDimY = launch.shape.block[1];
  result.blockDimZ = launch.shape.block[2];
  result.sharedMemBytes = launch.shape.dynamic_shared_bytes;
  result.kernelParams = const_cast<void**>(launch.arguments.data());
  result.extra = nullptr;
  if constexpr (requires { result.kern; }) {
    result.kern = launch.library_kernel;
    result.ctx = launch.context;
  }
}

// `base` with `attributes` in place of its own, as a new launch: launches are immutable
// (executable graphs may share them). Cooperation changes how the grid is checked and run, so
// the arguments are checked again against it.
CUresult with_attributes(const char* function, const KernelLaunch& base,
                         std::map<CUkernelNodeAttrID, CUkernelNodeAttrValue> attributes,
                         SharedLaunch& result) {
  auto launch = std::make_shared<KernelLaunch>(base);
  launch->attributes = std::move(attributes);
  auto cooperative = launch->attributes.find(CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
  launch->shape.cooperative =
      cooperative != launch->attributes.end() && cooperative->second.cooperative != 0;
  std::vector<uint8_t> packed;
  if (CUresult status = api::prepare_launch(
          function, *reinterpret_cast<runtime::Function*>(launch->function), launch->shape,
          launch->arguments.data(), nullptr, launch->shape.cooperative, packed);
      status != CUDA_SUCCESS)
    return status;
  // The copied arguments point into `base`'s buffer: point them into this launch's own.
  launch->parameters = std::move(packed);
  launch->arguments.clear();
  for (const auto& parameter : launch->kernel->info().parameters)
    launch->arguments.push_back(launch->parameters.data() + parameter.offset);
  result = std::move(launch);
  return CUDA_SUCCESS;
}

CUresult prepare_copy(const char* function, const CUDA_MEMCPY3D* copy, CUcontext context,
                      runtime::NodeWork& work) {
  XCUDA_MEMORY_REQUIRE(copy, CUDA_ERROR_INVALID_VALUE, "copy parameters are null");
  XCUDA_MEMORY_REQUIRE(!context || runtime::live_contexts().contains(context), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  runtime::StridedCopy strided;
  if (CUresult status = api::prepare_copy_3d(function, *copy, strided); status != CUDA_SUCCESS)
    return status;
  work = [strided](Stream& stream) { stream.queue().copy_region(strided); };
  return CUDA_SUCCESS;
}

CUresult prepare_fill(const char* function, const CUDA_MEMSET_NODE_PARAMS* fill,
                      CUcontext context, runtime::NodeWork& work) {
  XCUDA_MEMORY_REQUIRE(fill, CUDA_ERROR_INVALID_VALUE, "memset parameters are null");
  XCUDA_MEMORY_REQUIRE(!context || runtime::live_contexts().contains(context), CUDA_ERROR_INVALID_CONTEXT,
                "not a live context");
  XCUDA_MEMORY_REQUIRE(fill->elementSize == 1 || fill->elementSize == 2 || fill->elementSize == 4,
                CUDA_ERROR_INVALID_VALUE,
                fmt::format("element size {} is not 1, 2 or 4", fill->elementSize));
  runtime::StridedFill strided;
  if (CUresult status =
          api::prepare_fill_2d(function, fill->dst, fill->pitch, fill->value, fill->elementSize,
                               fill->width, fill->height, strided);
      status != CUDA_SUCCESS)
    return status;
  work = [strided](Stream& stream) { stream.queue().fill_region(strided); };
  return CUDA_SUCCESS;
}

CUresult prepare_host(const char* function, const CUDA_HOST_NODE_PARAMS* host,
                      runtime::NodeWork& work) {
  XCUDA_MEMORY_REQUIRE(host && host->fn, CUDA_ERROR_INVALID_VALUE, "host node function is null");
  work = [call = host->fn, data = host->userData](Stream& stream) {
    stream.queue().host_function(call, data);
  };
  return CUDA_SUCCESS;
}

// Event nodes name the event when the graph runs: an event destroyed meanwhile is skipped, as
// the driver leaves that undefined.
CUresult prepare_event(const char* function, CUevent event, NodeKind kind,
                       runtime::NodeWork& work) {
  XCUDA_MEMORY_REQUIRE(runtime::live_events().contains(event), CUDA_ERROR_INVALID_VALUE,
                "not a live event");
  work = [event, kind](Stream& stream) {
    if (!runtime::live_events().contains(event)) {
      runtime::logger().warn("graph: an event node's event was destroyed; the node does nothing");
      return;
    }
    auto* target = reinterpret_cast<runtime::Event*>(event);
    if (kind == NodeKind::event_record)
      target->record(stream);
    else
      target->make_stream_wait(stream);
  };
  return CUDA_SUCCESS;
}

CUresult add_node(const char* function, CUgraphNode* result, CUgraph graph_handle,
                  const CUgraphNode* dependencies, size_t count, NodeKind kind,
                  runtime::NodeWork work, std::any parameters, Node** created = nullptr) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "node output pointer is null");
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(graph_handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  Graph& graph = *as_graph(graph_handle);
  std::vector<Node*> nodes;
  if (CUresult status = api::check_graph_nodes(function, dependencies, count, graph, nodes);
      status != CUDA_SUCCESS)
    return status;
  Node& node = graph.add(kind, std::move(work), std::move(parameters), nodes);
  *result = as_handle(&node);
  if (created) *created = &node;
  return CUDA_SUCCESS;
}

CUresult check_node(const char* function, CUgraphNode handle, NodeKind kind) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_nodes().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph node");
  XCUDA_MEMORY_REQUIRE(as_node(handle)->kind() == kind, CUDA_ERROR_INVALID_VALUE,
                "the node is of another type");
  return CUDA_SUCCESS;
}

// The executable graph's copy of `handle`, which must be a node of the kind given.
CUresult exec_node(const char* function, CUgraphExec exec, CUgraphNode handle, NodeKind kind,
                   const Node*& result) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_execs().contains(exec), CUDA_ERROR_INVALID_VALUE,
                "not a live executable graph");
  if (CUresult status = check_node(function, handle, kind); status != CUDA_SUCCESS) return status;
  result = as_exec(exec)->find(*as_node(handle));
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE,
                "the node is not from the graph the executable graph was made from");
  return CUDA_SUCCESS;
}

// The list convention of cuGraphGetNodes and friends: with no array, the count; with one, up
// to `*count` entries, nulls after the last, and the number written back.
CUresult list_nodes(const char* function, const std::vector<Node*>& nodes, CUgraphNode* out,
                    size_t* count) {
  XCUDA_MEMORY_REQUIRE(count, CUDA_ERROR_INVALID_VALUE, "count pointer is null");
  if (!out) {
    *count = nodes.size();
    return CUDA_SUCCESS;
  }
  size_t written = std::min(*count, nodes.size());
  for (size_t index = 0; index < *count; ++index)
    out[index] = index < written ? as_handle(nodes[index]) : nullptr;
  *count = written;
  return CUDA_SUCCESS;
}

void clear_edge_data(CUgraphEdgeData* data, size_t count) {
  for (size_t index = 0; data && index < count; ++index) data[index] = CUgraphEdgeData{};
}

CUresult node_links(const char* function, CUgraphNode handle, bool dependencies, CUgraphNode* out,
                    CUgraphEdgeData* edge_data, size_t* count) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_nodes().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph node");
  Node& node = *as_node(handle);
  CUresult status =
      list_nodes(function, dependencies ? node.dependencies() : node.dependents(), out, count);
  if (status == CUDA_SUCCESS && out) clear_edge_data(edge_data, *count);
  return status;
}

CUresult get_edges(const char* function, CUgraph handle, CUgraphNode* from, CUgraphNode* to,
                   CUgraphEdgeData* edge_data, size_t* count) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_MEMORY_REQUIRE(count, CUDA_ERROR_INVALID_VALUE, "count pointer is null");
  XCUDA_MEMORY_REQUIRE(bool(from) == bool(to), CUDA_ERROR_INVALID_VALUE,
                "from and to must both be given or both be null");
  std::vector<std::pair<Node*, Node*>> edges;
  for (const auto& node : as_graph(handle)->nodes())
    for (Node* dependency : node->dependencies()) edges.emplace_back(dependency, node.get());
  if (!from) {
    *count = edges.size();
    return CUDA_SUCCESS;
  }
  size_t written = std::min(*count, edges.size());
  for (size_t index = 0; index < *count; ++index) {
    from[index] = index < written ? as_handle(edges[index].first) : nullptr;
    to[index] = index < written ? as_handle(edges[index].second) : nullptr;
  }
  clear_edge_data(edge_data, written);
  *count = written;
  return CUDA_SUCCESS;
}

// cuGraphAddDependencies and cuGraphRemoveDependencies: checks every pair before changing any.
CUresult change_dependencies(const char* function, CUgraph handle, const CUgraphNode* from,
                             const CUgraphNode* to, const CUgraphEdgeData* edge_data,
                             size_t count, bool add) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  if (CUresult status = api::check_edge_data(function, edge_data, count); status != CUDA_SUCCESS)
    return status;
  Graph& graph = *as_graph(handle);
  XCUDA_MEMORY_REQUIRE(add || !graph.has_memory_nodes(), CUDA_ERROR_NOT_SUPPORTED,
                       "edges of a graph with memory allocation or free nodes cannot be removed");
  std::vector<Node*> sources, targets;
  if (CUresult status = api::check_graph_nodes(function, from, count, graph, sources);
      status != CUDA_SUCCESS)
    return status;
  if (CUresult status = api::check_graph_nodes(function, to, count, graph, targets);
      status != CUDA_SUCCESS)
    return status;
  for (size_t index = 0; index < count; ++index) {
    bool exists = std::find(targets[index]->dependencies().begin(),
                            targets[index]->dependencies().end(),
                            sources[index]) != targets[index]->dependencies().end();
    XCUDA_MEMORY_REQUIRE(exists != add && sources[index] != targets[index], CUDA_ERROR_INVALID_VALUE,
                  fmt::format("edge {} {}", index,
                              add ? "exists already or joins a node to itself"
                                  : "does not exist"));
  }
  for (size_t index = 0; index < count; ++index)
    XCUDA_MEMORY_CHECK_STATUS(add ? graph.add_edge(*sources[index], *targets[index])
                           : graph.remove_edge(*sources[index], *targets[index]));
  return CUDA_SUCCESS;
}

constexpr uint64_t known_instantiate_flags =
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

CUresult instantiate(const char* function, CUgraphExec* result, CUgraph handle, uint64_t flags,
                     CUgraphInstantiateResult* outcome, std::string* message) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "executable graph output pointer is null");
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_MEMORY_REQUIRE((flags & ~known_instantiate_flags) == 0, CUDA_ERROR_INVALID_VALUE,
                "unknown flags");
  XCUDA_MEMORY_REQUIRE(!(flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH), CUDA_ERROR_NOT_SUPPORTED,
                "graphs launched from the device are not supported");
  Graph& graph = *as_graph(handle);
  XCUDA_MEMORY_REQUIRE(!graph.has_memory_nodes() || !graph.has_live_instantiation(),
                       CUDA_ERROR_NOT_SUPPORTED,
                       "a graph with memory allocation or free nodes may have one executable "
                       "graph at a time");
  CUresult status;
  runtime::Context* context = api::current_context(function, status);
  if (!context) return status;
  auto exec = GraphExec::instantiate(graph, *context, flags);
  if (!exec) {
    if (outcome) *outcome = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    if (message) *message = exec.error().message;
    return api::fail(function, exec.error());
  }
  if (outcome) *outcome = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  GraphExec* created = exec->release();
  runtime::live_graph_execs().add(created);
  *result = reinterpret_cast<CUgraphExec>(created);
  return CUDA_SUCCESS;
}

CUresult instantiate_with_log(const char* function, CUgraphExec* result, CUgraph graph,
                              CUgraphNode* error_node, char* log, size_t log_size) {
  std::string message;
  if (error_node) *error_node = nullptr;
  CUresult status = instantiate(function, result, graph, 0, nullptr, &message);
  if (log && log_size) fmt::format_to_n(log, log_size - 1, "{}", message).out[0] = '\0';
  return status;
}

CUresult instantiate_with_params(const char* function, CUgraphExec* result, CUgraph graph,
                                 CUDA_GRAPH_INSTANTIATE_PARAMS* parameters, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(parameters, CUDA_ERROR_INVALID_VALUE, "instantiate parameters are null");
  parameters->hErrNode_out = nullptr;
  parameters->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  if (parameters->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
    CUresult status;
    if (!api::resolve_stream(function, parameters->hUploadStream, per_thread, status))
      return status;
  }
  return instantiate(function, result, graph, parameters->flags, &parameters->result_out, nullptr);
}

// The graph's allocations must have been freed since its last launch, or are freed now when it
// was instantiated with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.
CUresult free_before_launch(const char* function, const GraphExec& exec) {
  for (const auto& node : exec.graph().nodes()) {
    const auto* allocation = std::any_cast<MemoryAllocationNode>(&node->parameters());
    if (!allocation || !allocation->allocation->allocated()) continue;
    XCUDA_MEMORY_REQUIRE(exec.flags() & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
                         CUDA_ERROR_INVALID_VALUE,
                         fmt::format("the allocation at {:#x} from the graph's last launch is "
                                     "not freed",
                                     allocation->allocation->address()));
    XCUDA_MEMORY_CHECK_STATUS(allocation->allocation->free());
  }
  return CUDA_SUCCESS;
}

CUresult launch(const char* function, CUgraphExec handle, CUstream stream_handle, bool per_thread,
                bool upload_only) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_execs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live executable graph");
  CUresult status;
  Stream* stream = api::resolve_stream(function, stream_handle, per_thread, status);
  if (!stream) return status;
  // The host device runs graphs from the process's memory: there is nothing to upload.
  if (upload_only) return CUDA_SUCCESS;
  GraphExec& exec = *as_exec(handle);
  bool memory_nodes = exec.graph().has_memory_nodes();
  XCUDA_MEMORY_REQUIRE(!memory_nodes || runtime::capture_info(*stream).status ==
                                            runtime::CaptureStatus::none,
                       CUDA_ERROR_NOT_SUPPORTED,
                       "a graph with memory allocation or free nodes cannot become a child graph "
                       "of a capture");
  if (memory_nodes && (status = free_before_launch(function, exec)) != CUDA_SUCCESS)
    return status;
  // Launched into a capture, the graph becomes a child graph node of the capture's graph.
  auto node = runtime::capture(*stream, NodeKind::child_graph, {}, {});
  if (!node) return api::fail(function, node.error());
  if (*node) {
    (*node)->set_child(exec.graph().clone());
    return CUDA_SUCCESS;
  }
  exec.launch(*stream);
  return CUDA_SUCCESS;
}

std::string_view kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::kernel: return "kernel";
    case NodeKind::memcpy: return "memcpy";
    case NodeKind::memset: return "memset";
    case NodeKind::host: return "host";
    case NodeKind::child_graph: return "graph";
    case NodeKind::empty: return "empty";
    case NodeKind::event_wait: return "event wait";
    case NodeKind::event_record: return "event record";
    case NodeKind::memory_allocation: return "memory allocation";
    case NodeKind::memory_free: return "memory free";
    case NodeKind::conditional: return "conditional";
  }
  return "node";
}

CUgraphNodeType node_type(NodeKind kind) {
  switch (kind) {
    case NodeKind::kernel: return CU_GRAPH_NODE_TYPE_KERNEL;
    case NodeKind::memcpy: return CU_GRAPH_NODE_TYPE_MEMCPY;
    case NodeKind::memset: return CU_GRAPH_NODE_TYPE_MEMSET;
    case NodeKind::host: return CU_GRAPH_NODE_TYPE_HOST;
    case NodeKind::child_graph: return CU_GRAPH_NODE_TYPE_GRAPH;
    case NodeKind::empty: return CU_GRAPH_NODE_TYPE_EMPTY;
    case NodeKind::event_wait: return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    case NodeKind::event_record: return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    case NodeKind::memory_allocation: return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    case NodeKind::memory_free: return CU_GRAPH_NODE_TYPE_MEM_FREE;
    case NodeKind::conditional: return CU_GRAPH_NODE_TYPE_CONDITIONAL;
  }
  return CU_GRAPH_NODE_TYPE_EMPTY;
}

std::string describe(const Node& node) {
  if (const auto* launch = std::any_cast<SharedLaunch>(&node.parameters())) {
    const auto& shape = (*launch)->shape;
    return fmt::format("kernel {}\\ngrid ({},{},{}) block ({},{},{})",
                       (*launch)->kernel->info().name, shape.grid[0], shape.grid[1],
                       shape.grid[2], shape.block[0], shape.block[1], shape.block[2]);
  }
  return std::string(kind_name(node.kind()));
}

// Kernel nodes may change function in an update, within one context.
bool same_context(const Node& current, const Node& replacement) {
  const auto* old_launch = std::any_cast<SharedLaunch>(&current.parameters());
  const auto* new_launch = std::any_cast<SharedLaunch>(&replacement.parameters());
  return old_launch && new_launch && (*old_launch)->context == (*new_launch)->context;
}

CUresult exec_update(const char* function, CUgraphExec handle, CUgraph graph,
                     CUgraphExecUpdateResultInfo& info) {
  info = CUgraphExecUpdateResultInfo{CU_GRAPH_EXEC_UPDATE_ERROR, nullptr, nullptr};
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_execs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live executable graph");
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  auto failure = as_exec(handle)->update(*as_graph(graph), same_context);
  if (!failure) {
    info.result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
  }
  using Reason = runtime::UpdateFailure::Reason;
  info.result = failure->reason == Reason::node_type_changed
                    ? CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED
                : failure->reason == Reason::function_changed
                    ? CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE
                : failure->reason == Reason::parameters_changed
                    ? CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED
                    : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
  info.errorNode = as_handle(const_cast<Node*>(failure->node));
  return api::fail(function, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, failure->message);
}

template <class Parameters>
CUresult kernel_get(const char* function, CUgraphNode handle, Parameters* result) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "parameters output pointer is null");
  if (CUresult status = check_node(function, handle, NodeKind::kernel); status != CUDA_SUCCESS)
    return status;
  describe_kernel(*std::any_cast<SharedLaunch>(as_node(handle)->parameters()), *result);
  return CUDA_SUCCESS;
}

template <class Parameters>
CUresult add_kernel(const char* function, CUgraphNode* result, CUgraph graph,
                    const CUgraphNode* dependencies, size_t count, const Parameters* parameters) {
  SharedLaunch launch;
  if (CUresult status = prepare_kernel(function, parameters, launch); status != CUDA_SUCCESS)
    return status;
  return add_node(function, result, graph, dependencies, count, NodeKind::kernel,
                  kernel_work(launch), launch);
}

// Gives a node new work, or with `exec`, that node's copy in an executable graph, for the
// launches made from now on: `prepare` builds it from the caller's parameters and `describe`
// keeps them for the getters, once they proved valid.
template <typename Prepare, typename Describe>
CUresult set_node(const char* function, CUgraphExec exec, CUgraphNode handle, NodeKind kind,
                  Prepare prepare, Describe describe) {
  const Node* exec_target = nullptr;
  if (CUresult status = exec ? exec_node(function, exec, handle, kind, exec_target)
                             : check_node(function, handle, kind);
      status != CUDA_SUCCESS)
    return status;
  runtime::NodeWork work;
  if (CUresult status = prepare(work); status != CUDA_SUCCESS) return status;
  if (exec)
    as_exec(exec)->set_work(*exec_target, std::move(work), describe());
  else
    as_node(handle)->set_work(std::move(work), describe());
  return CUDA_SUCCESS;
}

template <class Parameters>
CUresult kernel_set(const char* function, CUgraphExec exec, CUgraphNode handle,
                    const Parameters* parameters) {
  SharedLaunch launch;
  return set_node(
      function, exec, handle, NodeKind::kernel,
      [&](runtime::NodeWork& work) {
        // New parameters keep the attributes the node (or its executable copy) has.
        const runtime::Node* current =
            exec ? as_exec(exec)->find(*as_node(handle)) : as_node(handle);
        const auto& kept = std::any_cast<SharedLaunch>(current->parameters())->attributes;
        CUresult status = prepare_kernel(function, parameters, launch);
        if (status == CUDA_SUCCESS && !kept.empty())
          status = with_attributes(function, *launch, kept, launch);
        if (status == CUDA_SUCCESS) work = kernel_work(launch);
        return status;
      },
      [&] { return std::any(launch); });
}

CUresult set_copy(const char* function, CUgraphExec exec, CUgraphNode handle,
                  const CUDA_MEMCPY3D* copy, CUcontext context) {
  return set_node(
      function, exec, handle, NodeKind::memcpy,
      [&](runtime::NodeWork& work) { return prepare_copy(function, copy, context, work); },
      [&] { return std::any(*copy); });
}

CUresult set_fill(const char* function, CUgraphExec exec, CUgraphNode handle,
                  const CUDA_MEMSET_NODE_PARAMS* fill, CUcontext context) {
  return set_node(
      function, exec, handle, NodeKind::memset,
      [&](runtime::NodeWork& work) { return prepare_fill(function, fill, context, work); },
      [&] { return std::any(*fill); });
}

CUresult set_host(const char* function, CUgraphExec exec, CUgraphNode handle,
                  const CUDA_HOST_NODE_PARAMS* host) {
  return set_node(
      function, exec, handle, NodeKind::host,
      [&](runtime::NodeWork& work) { return prepare_host(function, host, work); },
      [&] { return std::any(*host); });
}

CUresult set_event(const char* function, CUgraphExec exec, CUgraphNode handle, NodeKind kind,
                   CUevent event) {
  return set_node(
      function, exec, handle, kind,
      [&](runtime::NodeWork& work) { return prepare_event(function, event, kind, work); },
      [&] { return std::any(event); });
}

CUresult get_event(const char* function, CUgraphNode handle, NodeKind kind, CUevent* result) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "event output pointer is null");
  if (CUresult status = check_node(function, handle, kind); status != CUDA_SUCCESS) return status;
  *result = std::any_cast<CUevent>(as_node(handle)->parameters());
  return CUDA_SUCCESS;
}

CUresult add_event(const char* function, CUgraphNode* result, CUgraph graph,
                   const CUgraphNode* dependencies, size_t count, NodeKind kind, CUevent event) {
  runtime::NodeWork work;
  if (CUresult status = prepare_event(function, event, kind, work); status != CUDA_SUCCESS)
    return status;
  return add_node(function, result, graph, dependencies, count, kind, std::move(work), event);
}

CUresult check_device_number(const char* function, int device, const char* which) {
  XCUDA_MEMORY_REQUIRE(device >= 0 && device < runtime::backend().device_count(),
                       CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} names device {}, which does not exist", which, device));
  return CUDA_SUCCESS;
}

CUresult check_allocation(const char* function, const CUDA_MEM_ALLOC_NODE_PARAMS& parameters) {
  XCUDA_MEMORY_REQUIRE(parameters.bytesize > 0, CUDA_ERROR_INVALID_VALUE,
                       "cannot allocate 0 bytes");
  const CUmemPoolProps& pool = parameters.poolProps;
  XCUDA_MEMORY_REQUIRE(pool.allocType == CU_MEM_ALLOCATION_TYPE_PINNED, CUDA_ERROR_INVALID_VALUE,
                       "allocation type must be CU_MEM_ALLOCATION_TYPE_PINNED");
  XCUDA_MEMORY_REQUIRE(pool.location.type == CU_MEM_LOCATION_TYPE_DEVICE,
                       CUDA_ERROR_INVALID_VALUE, "graph memory lives on a device");
  if (CUresult status = check_device_number(function, pool.location.id, "the location");
      status != CUDA_SUCCESS)
    return status;
  XCUDA_MEMORY_REQUIRE(pool.handleTypes == CU_MEM_HANDLE_TYPE_NONE, CUDA_ERROR_NOT_SUPPORTED,
                       "graph memory cannot be shared with other processes");
  XCUDA_MEMORY_REQUIRE(parameters.accessDescCount == 0 || parameters.accessDescs,
                       CUDA_ERROR_INVALID_VALUE, "the access descriptors are null");
  for (size_t index = 0; index < parameters.accessDescCount; ++index) {
    const CUmemAccessDesc& access = parameters.accessDescs[index];
    XCUDA_MEMORY_REQUIRE(access.location.type == CU_MEM_LOCATION_TYPE_DEVICE,
                         CUDA_ERROR_INVALID_VALUE, "access is granted to devices only");
    if (CUresult status = check_device_number(function, access.location.id, "an access descriptor");
        status != CUDA_SUCCESS)
      return status;
  }
  return CUDA_SUCCESS;
}

// Memory nodes change what graphs may do (see Graph::has_memory_nodes); a conditional body or
// an embedded child graph may not hold them.
CUresult check_memory_node_graph(const char* function, CUgraph graph) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                       "not a live graph");
  XCUDA_MEMORY_REQUIRE(!as_graph(graph)->owner(), CUDA_ERROR_NOT_SUPPORTED,
                       "memory nodes cannot be added to a child graph or a conditional body");
  return CUDA_SUCCESS;
}

runtime::NodeWork allocation_work(std::shared_ptr<runtime::GraphAllocation> allocation) {
  // Launches check beforehand that the memory is free (free_before_launch).
  return [allocation](Stream&) { (void)allocation->allocate(); };
}

runtime::NodeWork free_work(std::shared_ptr<runtime::GraphAllocation> allocation) {
  return [allocation](Stream&) {
    if (Status freed = allocation->free(); !freed)
      runtime::logger().warn("graph memory free node: {}", freed.error().message);
  };
}

CUresult reserve_graph_memory(const char* function, runtime::Context& context, size_t bytes,
                              std::shared_ptr<runtime::GraphAllocation>& result) {
  auto reserved = runtime::GraphAllocation::reserve(context, bytes);
  if (!reserved) return api::fail(function, reserved.error());
  result = std::move(*reserved);
  return CUDA_SUCCESS;
}

CUresult add_memory_allocation(const char* function, CUgraphNode* result, CUgraph graph,
                               const CUgraphNode* dependencies, size_t count,
                               CUDA_MEM_ALLOC_NODE_PARAMS* parameters) {
  XCUDA_MEMORY_REQUIRE(parameters, CUDA_ERROR_INVALID_VALUE, "allocation parameters are null");
  CUresult status;
  if ((status = check_memory_node_graph(function, graph)) != CUDA_SUCCESS ||
      (status = check_allocation(function, *parameters)) != CUDA_SUCCESS)
    return status;
  runtime::Context* context = api::current_context(function, status);
  if (!context) return status;
  MemoryAllocationNode node{*parameters,
                            {parameters->accessDescs,
                             parameters->accessDescs + parameters->accessDescCount},
                            nullptr};
  if ((status = reserve_graph_memory(function, *context, parameters->bytesize, node.allocation)) !=
      CUDA_SUCCESS)
    return status;
  auto allocation = node.allocation;
  node.described.dptr = allocation->address();
  if ((status = add_node(function, result, graph, dependencies, count,
                         NodeKind::memory_allocation, allocation_work(allocation), node)) !=
      CUDA_SUCCESS)
    return status;
  allocation->owner = as_graph(graph);
  parameters->dptr = allocation->address();
  return CUDA_SUCCESS;
}

// The driver's rule for free nodes: once in the graph that allocates, or in other graphs.
CUresult check_free(const char* function, const runtime::GraphAllocation& allocation,
                    const Graph& graph) {
  bool in_owner = allocation.owner == &graph;
  XCUDA_MEMORY_REQUIRE(in_owner ? !allocation.freed_in_owner && !allocation.freed_elsewhere
                                : !allocation.freed_in_owner,
                       CUDA_ERROR_INVALID_VALUE,
                       in_owner ? "the allocation already has a free node, or is freed by "
                                  "another graph"
                                : "the allocation is freed in the graph that allocates it");
  return CUDA_SUCCESS;
}

void note_free(runtime::GraphAllocation& allocation, const Graph& graph) {
  if (allocation.owner == &graph)
    allocation.freed_in_owner = true;
  else
    allocation.freed_elsewhere = true;
}

CUresult add_memory_free(const char* function, CUgraphNode* result, CUgraph graph,
                         const CUgraphNode* dependencies, size_t count, CUdeviceptr address) {
  if (CUresult status = check_memory_node_graph(function, graph); status != CUDA_SUCCESS)
    return status;
  auto allocation = runtime::find_graph_allocation(address);
  XCUDA_MEMORY_REQUIRE(allocation, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{:#x} is not an address an allocation node returned", address));
  if (CUresult status = check_free(function, *allocation, *as_graph(graph));
      status != CUDA_SUCCESS)
    return status;
  if (CUresult status = add_node(function, result, graph, dependencies, count,
                                 NodeKind::memory_free, free_work(allocation),
                                 MemoryFreeNode{allocation});
      status != CUDA_SUCCESS)
    return status;
  note_free(*allocation, *as_graph(graph));
  return CUDA_SUCCESS;
}

constexpr unsigned known_conditional_flags = CU_GRAPH_COND_ASSIGN_DEFAULT;

CUresult add_conditional(const char* function, CUgraphNode* result, CUgraph graph,
                         const CUgraphNode* dependencies, size_t count,
                         CUDA_CONDITIONAL_NODE_PARAMS& parameters) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                       "not a live graph");
  auto* handle = reinterpret_cast<runtime::ConditionalHandle*>(parameters.handle);
  XCUDA_MEMORY_REQUIRE(runtime::live_conditional_handles().contains(handle) &&
                           as_graph(graph)->knows_conditional_handle(handle),
                       CUDA_ERROR_INVALID_VALUE,
                       "the handle was not made for this graph or a graph embedding it");
  XCUDA_MEMORY_REQUIRE(!as_graph(graph)->conditional_handle_in_use(handle), CUDA_ERROR_INVALID_VALUE,
                       "the handle serves another conditional node already");
  unsigned size = parameters.size;
  switch (parameters.type) {
    case CU_GRAPH_COND_TYPE_IF:
      XCUDA_MEMORY_REQUIRE(size == 1 || size == 2, CUDA_ERROR_INVALID_VALUE,
                           "an if node has one body, or two with an else branch");
      break;
    case CU_GRAPH_COND_TYPE_WHILE:
      XCUDA_MEMORY_REQUIRE(size == 1, CUDA_ERROR_INVALID_VALUE, "a while node has one body");
      break;
    case CU_GRAPH_COND_TYPE_SWITCH:
      XCUDA_MEMORY_REQUIRE(size >= 1, CUDA_ERROR_INVALID_VALUE,
                           "a switch node has at least one body");
      break;
    default:
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("unknown conditional node type {}", int(parameters.type)));
  }
  runtime::Conditional conditional{as_graph(graph)->conditional_handle(handle),
                                   runtime::ConditionalKind(parameters.type)};
  Node* node = nullptr;
  if (CUresult status = add_node(function, result, graph, dependencies, count,
                                 NodeKind::conditional, {}, conditional, &node);
      status != CUDA_SUCCESS)
    return status;
  for (unsigned index = 0; index < size; ++index) node->add_body(std::make_unique<Graph>());
  // The array is the node's, valid as long as the node, as the driver's is.
  parameters.phGraph_out = reinterpret_cast<CUgraph*>(const_cast<Graph**>(node->body_array()));
  return CUDA_SUCCESS;
}

// cuGraphAddNode: every node type through one tagged parameter block.
CUresult add_any_node(const char* function, CUgraphNode* result, CUgraph graph,
                      const CUgraphNode* dependencies, const CUgraphEdgeData* edge_data,
                      size_t count, CUgraphNodeParams* parameters) {
  XCUDA_MEMORY_REQUIRE(parameters, CUDA_ERROR_INVALID_VALUE, "node parameters are null");
  if (CUresult status = api::check_edge_data(function, edge_data, count); status != CUDA_SUCCESS)
    return status;
  runtime::NodeWork work;
  CUresult status = CUDA_SUCCESS;
  switch (parameters->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      return add_kernel(function, result, graph, dependencies, count, &parameters->kernel);
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      const CUDA_MEMCPY3D& copy = parameters->memcpy.copyParams;
      if ((status = prepare_copy(function, &copy, parameters->memcpy.copyCtx, work)) !=
          CUDA_SUCCESS)
        return status;
      return add_node(function, result, graph, dependencies, count, NodeKind::memcpy,
                      std::move(work), copy);
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS_v2& given = parameters->memset;
      CUDA_MEMSET_NODE_PARAMS fill{given.dst,         given.pitch, given.value,
                                   given.elementSize, given.width, given.height};
      if ((status = prepare_fill(function, &fill, given.ctx, work)) != CUDA_SUCCESS) return status;
      return add_node(function, result, graph, dependencies, count, NodeKind::memset,
                      std::move(work), fill);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS host{parameters->host.fn, parameters->host.userData};
      if ((status = prepare_host(function, &host, work)) != CUDA_SUCCESS) return status;
      return add_node(function, result, graph, dependencies, count, NodeKind::host,
                      std::move(work), host);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
      XCUDA_MEMORY_REQUIRE(parameters->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE,
                           CUDA_ERROR_NOT_SUPPORTED,
                           "child graph nodes that take ownership of their graph are not "
                           "supported");
      return cuGraphAddChildGraphNode(result, graph, dependencies, count, parameters->graph.graph);
    case CU_GRAPH_NODE_TYPE_EMPTY:
      return add_node(function, result, graph, dependencies, count, NodeKind::empty, {}, {});
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return add_event(function, result, graph, dependencies, count, NodeKind::event_wait,
                       parameters->eventWait.event);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return add_event(function, result, graph, dependencies, count, NodeKind::event_record,
                       parameters->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      // The two versions of the allocation parameters have one layout.
      static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v2) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS));
      return add_memory_allocation(
          function, result, graph, dependencies, count,
          reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(&parameters->alloc));
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      return add_memory_free(function, result, graph, dependencies, count,
                             parameters->free.dptr);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      return add_conditional(function, result, graph, dependencies, count,
                             parameters->conditional);
    default:
      return api::fail(function, CUDA_ERROR_NOT_SUPPORTED,
                       fmt::format("nodes of type {} are not supported",
                                   static_cast<int>(parameters->type)));
  }
}

// cuGraphNodeSetParams and cuGraphExecNodeSetParams (with `exec`): the kinds whose parameters
// have setters of their own.
CUresult set_any_node(const char* function, CUgraphExec exec, CUgraphNode node,
                      CUgraphNodeParams* parameters) {
  XCUDA_MEMORY_REQUIRE(parameters, CUDA_ERROR_INVALID_VALUE, "node parameters are null");
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_nodes().contains(node), CUDA_ERROR_INVALID_VALUE,
                       "not a live graph node");
  XCUDA_MEMORY_REQUIRE(node_type(as_node(node)->kind()) == parameters->type,
                       CUDA_ERROR_INVALID_VALUE, "the parameters are for another node type");
  switch (parameters->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return kernel_set(function, exec, node, &parameters->kernel);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return set_copy(function, exec, node, &parameters->memcpy.copyParams,
                      parameters->memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS_v2& given = parameters->memset;
      CUDA_MEMSET_NODE_PARAMS fill{given.dst,         given.pitch, given.value,
                                   given.elementSize, given.width, given.height};
      return set_fill(function, exec, node, &fill, given.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS host{parameters->host.fn, parameters->host.userData};
      return set_host(function, exec, node, &host);
    }
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return set_event(function, exec, node, NodeKind::event_wait, parameters->eventWait.event);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return set_event(function, exec, node, NodeKind::event_record,
                       parameters->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
    default:
      return api::fail(function, CUDA_ERROR_NOT_SUPPORTED,
                       fmt::format("changing the parameters of nodes of type {} is not supported",
                                   static_cast<int>(parameters->type)));
  }
}

// The executable graph's copy of `handle`, which must be one of the kinds that can be disabled.
CUresult switchable_node(const char* function, CUgraphExec exec, CUgraphNode handle,
                         const Node*& result) {
  XCUDA_MEMORY_REQUIRE(runtime::live_graph_nodes().contains(handle), CUDA_ERROR_INVALID_VALUE,
                       "not a live graph node");
  NodeKind kind = as_node(handle)->kind();
  XCUDA_MEMORY_REQUIRE(
      kind == NodeKind::kernel || kind == NodeKind::memcpy || kind == NodeKind::memset,
      CUDA_ERROR_INVALID_VALUE, "only kernel, memcpy and memset nodes can be disabled");
  return exec_node(function, exec, handle, kind, result);
}

runtime::UserObject* as_user_object(CUuserObject handle) {
  return reinterpret_cast<runtime::UserObject*>(handle);
}

}  // namespace

namespace xcuda::api {

CUresult capture_allocation(const char* function, Stream& stream, size_t bytes,
                            CUdeviceptr* result, bool& captured) {
  captured = false;
  if (!runtime::capture_in_progress() ||
      runtime::capture_info(stream).status == runtime::CaptureStatus::none)
    return CUDA_SUCCESS;
  MemoryAllocationNode node{};
  node.described.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  node.described.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, stream.context().device()};
  node.described.bytesize = bytes;
  if (CUresult status = reserve_graph_memory(function, stream.context(), bytes, node.allocation);
      status != CUDA_SUCCESS)
    return status;
  auto allocation = node.allocation;
  node.described.dptr = allocation->address();
  auto created =
      runtime::capture(stream, NodeKind::memory_allocation, allocation_work(allocation), node);
  if (!created) return fail(function, created.error());
  allocation->owner = &(*created)->graph();
  *result = allocation->address();
  captured = true;
  return CUDA_SUCCESS;
}

CUresult capture_free(const char* function, Stream& stream, CUdeviceptr address,
                      bool& captured) {
  captured = false;
  if (!runtime::capture_in_progress()) return CUDA_SUCCESS;
  runtime::CaptureInfo info = runtime::capture_info(stream);
  if (info.status == runtime::CaptureStatus::none) return CUDA_SUCCESS;
  auto allocation = runtime::find_graph_allocation(address);
  XCUDA_MEMORY_REQUIRE(allocation, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{:#x} is not graph memory: only memory a graph allocates "
                                   "can be freed in a capture",
                                   address));
  if (CUresult status = check_free(function, *allocation, *info.graph); status != CUDA_SUCCESS)
    return status;
  auto created = runtime::capture(stream, NodeKind::memory_free, free_work(allocation),
                                  MemoryFreeNode{allocation});
  if (!created) return fail(function, created.error());
  note_free(*allocation, *info.graph);
  captured = true;
  return CUDA_SUCCESS;
}

CUresult free_graph_memory(const char* function, CUdeviceptr address, Stream* stream,
                           bool& handled) {
  auto allocation = runtime::find_graph_allocation(address);
  handled = allocation != nullptr;
  if (!allocation) return CUDA_SUCCESS;
  XCUDA_MEMORY_CHECK_STATUS(allocation->free());
  // The memory stays reserved until the stream has run the work queued before the free.
  if (stream)
    stream->order_for_new_work().host_function(
        [](void* data) { delete static_cast<std::shared_ptr<runtime::GraphAllocation>*>(data); },
        new std::shared_ptr<runtime::GraphAllocation>(std::move(allocation)));
  return CUDA_SUCCESS;
}

CUresult check_graph_nodes(const char* function, const CUgraphNode* nodes, size_t count,
                           const Graph& graph, std::vector<Node*>& result) {
  XCUDA_MEMORY_REQUIRE(count == 0 || nodes, CUDA_ERROR_INVALID_VALUE, "the node list is null");
  for (size_t index = 0; index < count; ++index) {
    XCUDA_MEMORY_REQUIRE(runtime::live_graph_nodes().contains(nodes[index]), CUDA_ERROR_INVALID_VALUE,
                  fmt::format("node {} of the list is not a live graph node", index));
    XCUDA_MEMORY_REQUIRE(graph.owns(*as_node(nodes[index])), CUDA_ERROR_INVALID_VALUE,
                  fmt::format("node {} of the list belongs to another graph", index));
    result.push_back(as_node(nodes[index]));
  }
  return CUDA_SUCCESS;
}

CUresult check_edge_data(const char* function, const CUgraphEdgeData* data, size_t count) {
  for (size_t index = 0; data && index < count; ++index)
    XCUDA_MEMORY_REQUIRE(data[index].type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT &&
                      data[index].from_port == 0 && data[index].to_port == 0,
                  CUDA_ERROR_NOT_SUPPORTED,
                  fmt::format("edge {} is not a default edge; only default edges are supported",
                              index));
  return CUDA_SUCCESS;
}

CUresult capture_launch(const char* entry_point, Stream& stream, CUfunction handle,
                        runtime::Function& function, runtime::LoadedKernel& kernel,
                        const runtime::LaunchShape& shape,
                        const std::vector<uint8_t>& parameters, bool& captured) {
  if (!runtime::capture_in_progress()) {
    captured = false;
    return CUDA_SUCCESS;
  }
  SharedLaunch launch = make_launch(handle, function, kernel, shape, parameters);
  auto node = runtime::capture(stream, NodeKind::kernel, kernel_work(launch), launch);
  if (!node) return fail(entry_point, node.error());
  captured = *node != nullptr;
  return CUDA_SUCCESS;
}

}  // namespace xcuda::api

XCUDA_EXPORT CUresult cuGraphCreate(CUgraph* result, unsigned int flags) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "graph output pointer is null");
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  *result = as_handle(new Graph());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphDestroy(CUgraph handle) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(handle), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE(!as_graph(handle)->owner(), CUDA_ERROR_INVALID_VALUE,
                "the graph belongs to a child graph node");
  delete as_graph(handle);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphClone(CUgraph* result, CUgraph original) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "graph output pointer is null");
  XCUDA_REQUIRE(runtime::live_graphs().contains(original), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE(!as_graph(original)->has_memory_nodes(), CUDA_ERROR_NOT_SUPPORTED,
                "a graph with memory allocation or free nodes cannot be cloned");
  *result = as_handle(as_graph(original)->clone().release());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode* result, CUgraphNode original,
                                             CUgraph clone) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "node output pointer is null");
  XCUDA_REQUIRE(runtime::live_graph_nodes().contains(original), CUDA_ERROR_INVALID_VALUE,
                "not a live graph node");
  XCUDA_REQUIRE(runtime::live_graphs().contains(clone), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  Node* found = as_graph(clone)->find_clone(*as_node(original));
  XCUDA_REQUIRE(found, CUDA_ERROR_INVALID_VALUE, "the graph is not a clone of the node's graph");
  *result = as_handle(found);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode* result, CUgraph graph,
                                           const CUgraphNode* dependencies, size_t count,
                                           const CUDA_KERNEL_NODE_PARAMS_v1* parameters) {
  return add_kernel(__func__, result, graph, dependencies, count, parameters);
}
XCUDA_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode* result, CUgraph graph,
                                              const CUgraphNode* dependencies, size_t count,
                                              const CUDA_KERNEL_NODE_PARAMS* parameters) {
  return add_kernel(__func__, result, graph, dependencies, count, parameters);
}
XCUDA_EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode node,
                                                 CUDA_KERNEL_NODE_PARAMS_v1* result) {
  return kernel_get(__func__, node, result);
}
XCUDA_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node,
                                                    CUDA_KERNEL_NODE_PARAMS* result) {
  return kernel_get(__func__, node, result);
}
XCUDA_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode node,
                                                 const CUDA_KERNEL_NODE_PARAMS_v1* parameters) {
  return kernel_set(__func__, nullptr, node, parameters);
}
XCUDA_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node,
                                                    const CUDA_KERNEL_NODE_PARAMS* parameters) {
  return kernel_set(__func__, nullptr, node, parameters);
}
XCUDA_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                     const CUDA_KERNEL_NODE_PARAMS_v1* parameters) {
  return kernel_set(__func__, exec, node, parameters);
}
XCUDA_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node,
                                                        const CUDA_KERNEL_NODE_PARAMS* parameters) {
  return kernel_set(__func__, exec, node, parameters);
}

XCUDA_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode* result, CUgraph graph,
                                           const CUgraphNode* dependencies, size_t count,
                                           const CUDA_MEMCPY3D* copy, CUcontext context) {
  runtime::NodeWork work;
  if (CUresult status = prepare_copy(__func__, copy, context, work); status != CUDA_SUCCESS)
    return status;
  return add_node(__func__, result, graph, dependencies, count, NodeKind::memcpy, std::move(work),
                  *copy);
}
XCUDA_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode node, CUDA_MEMCPY3D* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "parameters output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::memcpy); status != CUDA_SUCCESS)
    return status;
  const auto* copy = std::any_cast<CUDA_MEMCPY3D>(&as_node(node)->parameters());
  XCUDA_REQUIRE(copy, CUDA_ERROR_NOT_SUPPORTED,
                "the node was captured from a stream; xcuda keeps no descriptor for it");
  *result = *copy;
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode node, const CUDA_MEMCPY3D* copy) {
  return set_copy(__func__, nullptr, node, copy, nullptr);
}
XCUDA_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                     const CUDA_MEMCPY3D* copy,
                                                     CUcontext context) {
  return set_copy(__func__, exec, node, copy, context);
}

XCUDA_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode* result, CUgraph graph,
                                           const CUgraphNode* dependencies, size_t count,
                                           const CUDA_MEMSET_NODE_PARAMS* fill,
                                           CUcontext context) {
  runtime::NodeWork work;
  if (CUresult status = prepare_fill(__func__, fill, context, work); status != CUDA_SUCCESS)
    return status;
  return add_node(__func__, result, graph, dependencies, count, NodeKind::memset, std::move(work),
                  *fill);
}
XCUDA_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode node,
                                                 CUDA_MEMSET_NODE_PARAMS* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "parameters output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::memset); status != CUDA_SUCCESS)
    return status;
  const auto* fill = std::any_cast<CUDA_MEMSET_NODE_PARAMS>(&as_node(node)->parameters());
  XCUDA_REQUIRE(fill, CUDA_ERROR_NOT_SUPPORTED,
                "the node was captured from a stream; xcuda keeps no descriptor for it");
  *result = *fill;
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode node,
                                                 const CUDA_MEMSET_NODE_PARAMS* fill) {
  return set_fill(__func__, nullptr, node, fill, nullptr);
}
XCUDA_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                     const CUDA_MEMSET_NODE_PARAMS* fill,
                                                     CUcontext context) {
  return set_fill(__func__, exec, node, fill, context);
}

XCUDA_EXPORT CUresult cuGraphAddHostNode(CUgraphNode* result, CUgraph graph,
                                         const CUgraphNode* dependencies, size_t count,
                                         const CUDA_HOST_NODE_PARAMS* host) {
  runtime::NodeWork work;
  if (CUresult status = prepare_host(__func__, host, work); status != CUDA_SUCCESS) return status;
  return add_node(__func__, result, graph, dependencies, count, NodeKind::host, std::move(work),
                  *host);
}
XCUDA_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode node, CUDA_HOST_NODE_PARAMS* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "parameters output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::host); status != CUDA_SUCCESS)
    return status;
  const auto* host = std::any_cast<CUDA_HOST_NODE_PARAMS>(&as_node(node)->parameters());
  XCUDA_REQUIRE(host, CUDA_ERROR_NOT_SUPPORTED,
                "the node was captured from a stream; xcuda keeps no descriptor for it");
  *result = *host;
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode node,
                                               const CUDA_HOST_NODE_PARAMS* host) {
  return set_host(__func__, nullptr, node, host);
}
XCUDA_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                   const CUDA_HOST_NODE_PARAMS* host) {
  return set_host(__func__, exec, node, host);
}

XCUDA_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode* result, CUgraph graph,
                                          const CUgraphNode* dependencies, size_t count) {
  return add_node(__func__, result, graph, dependencies, count, NodeKind::empty, {}, {});
}

XCUDA_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode* result, CUgraph graph,
                                               const CUgraphNode* dependencies, size_t count,
                                               CUgraph child) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(child), CUDA_ERROR_INVALID_VALUE,
                "the child graph is not a live graph");
  XCUDA_REQUIRE(child != graph, CUDA_ERROR_INVALID_VALUE, "a graph cannot contain itself");
  XCUDA_REQUIRE(!as_graph(child)->has_memory_nodes(), CUDA_ERROR_NOT_SUPPORTED,
                "a graph with memory allocation or free nodes cannot be a child graph");
  Node* node = nullptr;
  if (CUresult status = add_node(__func__, result, graph, dependencies, count,
                                 NodeKind::child_graph, {}, {}, &node);
      status != CUDA_SUCCESS)
    return status;
  // The node embeds a copy: later changes to `child` do not reach it, as the driver documents.
  node->set_child(as_graph(child)->clone());
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode node, CUgraph* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "graph output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::child_graph); status != CUDA_SUCCESS)
    return status;
  *result = as_handle(as_node(node)->child());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode* result, CUgraph graph,
                                                const CUgraphNode* dependencies, size_t count,
                                                CUevent event) {
  return add_event(__func__, result, graph, dependencies, count, NodeKind::event_record, event);
}
XCUDA_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode* result, CUgraph graph,
                                              const CUgraphNode* dependencies, size_t count,
                                              CUevent event) {
  return add_event(__func__, result, graph, dependencies, count, NodeKind::event_wait, event);
}
XCUDA_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode node, CUevent* result) {
  return get_event(__func__, node, NodeKind::event_record, result);
}
XCUDA_EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode node, CUevent* result) {
  return get_event(__func__, node, NodeKind::event_wait, result);
}
XCUDA_EXPORT CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode node, CUevent event) {
  return set_event(__func__, nullptr, node, NodeKind::event_record, event);
}
XCUDA_EXPORT CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode node, CUevent event) {
  return set_event(__func__, nullptr, node, NodeKind::event_wait, event);
}
XCUDA_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec exec, CUgraphNode node,
                                                         CUevent event) {
  return set_event(__func__, exec, node, NodeKind::event_record, event);
}
XCUDA_EXPORT CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec exec, CUgraphNode node,
                                                       CUevent event) {
  return set_event(__func__, exec, node, NodeKind::event_wait, event);
}

XCUDA_EXPORT CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "type output pointer is null");
  XCUDA_REQUIRE(runtime::live_graph_nodes().contains(node), CUDA_ERROR_INVALID_VALUE,
                "not a live graph node");
  *result = node_type(as_node(node)->kind());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphDestroyNode(CUgraphNode node) {
  XCUDA_REQUIRE(runtime::live_graph_nodes().contains(node), CUDA_ERROR_INVALID_VALUE,
                "not a live graph node");
  XCUDA_REQUIRE(!as_node(node)->graph().has_memory_nodes(), CUDA_ERROR_NOT_SUPPORTED,
                "nodes of a graph with memory allocation or free nodes cannot be destroyed");
  as_node(node)->graph().destroy(*as_node(node));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  std::vector<Node*> all;
  for (const auto& node : as_graph(graph)->nodes()) all.push_back(node.get());
  return list_nodes(__func__, all, nodes, count);
}
XCUDA_EXPORT CUresult cuGraphGetRootNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  return list_nodes(__func__, as_graph(graph)->roots(), nodes, count);
}
XCUDA_EXPORT CUresult cuGraphGetEdges(CUgraph graph, CUgraphNode* from, CUgraphNode* to,
                                      size_t* count) {
  return get_edges(__func__, graph, from, to, nullptr, count);
}
XCUDA_EXPORT CUresult cuGraphGetEdges_v2(CUgraph graph, CUgraphNode* from, CUgraphNode* to,
                                         CUgraphEdgeData* edge_data, size_t* count) {
  return get_edges(__func__, graph, from, to, edge_data, count);
}
XCUDA_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode node, CUgraphNode* dependencies,
                                                 size_t* count) {
  return node_links(__func__, node, true, dependencies, nullptr, count);
}
XCUDA_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode node, CUgraphNode* dependencies,
                                                    CUgraphEdgeData* edge_data, size_t* count) {
  return node_links(__func__, node, true, dependencies, edge_data, count);
}
XCUDA_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode node, CUgraphNode* dependents,
                                                   size_t* count) {
  return node_links(__func__, node, false, dependents, nullptr, count);
}
XCUDA_EXPORT CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode node, CUgraphNode* dependents,
                                                      CUgraphEdgeData* edge_data, size_t* count) {
  return node_links(__func__, node, false, dependents, edge_data, count);
}
XCUDA_EXPORT CUresult cuGraphAddDependencies(CUgraph graph, const CUgraphNode* from,
                                             const CUgraphNode* to, size_t count) {
  return change_dependencies(__func__, graph, from, to, nullptr, count, true);
}
XCUDA_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph graph, const CUgraphNode* from,
                                                const CUgraphNode* to,
                                                const CUgraphEdgeData* edge_data, size_t count) {
  return change_dependencies(__func__, graph, from, to, edge_data, count, true);
}
XCUDA_EXPORT CUresult cuGraphRemoveDependencies(CUgraph graph, const CUgraphNode* from,
                                                const CUgraphNode* to, size_t count) {
  return change_dependencies(__func__, graph, from, to, nullptr, count, false);
}
XCUDA_EXPORT CUresult cuGraphRemoveDependencies_v2(CUgraph graph, const CUgraphNode* from,
                                                   const CUgraphNode* to,
                                                   const CUgraphEdgeData* edge_data,
                                                   size_t count) {
  return change_dependencies(__func__, graph, from, to, edge_data, count, false);
}

XCUDA_EXPORT CUresult cuGraphInstantiate(CUgraphExec* result, CUgraph graph,
                                         CUgraphNode* error_node, char* log, size_t log_size) {
  return instantiate_with_log(__func__, result, graph, error_node, log, log_size);
}
XCUDA_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec* result, CUgraph graph,
                                            CUgraphNode* error_node, char* log, size_t log_size) {
  return instantiate_with_log(__func__, result, graph, error_node, log, log_size);
}
XCUDA_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* result, CUgraph graph,
                                                  unsigned long long flags) {
  return instantiate(__func__, result, graph, flags, nullptr, nullptr);
}
XCUDA_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec* result, CUgraph graph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS* parameters) {
  return instantiate_with_params(__func__, result, graph, parameters, false);
}
XCUDA_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* result, CUgraph graph,
                                                        CUDA_GRAPH_INSTANTIATE_PARAMS* parameters) {
  return instantiate_with_params(__func__, result, graph, parameters, true);
}

XCUDA_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec exec, cuuint64_t* flags) {
  XCUDA_REQUIRE(flags, CUDA_ERROR_INVALID_VALUE, "flags output pointer is null");
  XCUDA_REQUIRE(runtime::live_graph_execs().contains(exec), CUDA_ERROR_INVALID_VALUE,
                "not a live executable graph");
  *flags = as_exec(exec)->flags();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  XCUDA_REQUIRE(runtime::live_graph_execs().contains(exec), CUDA_ERROR_INVALID_VALUE,
                "not a live executable graph");
  // Work already queued holds copies of what it needs, so the graph may go at once.
  runtime::live_graph_execs().remove(as_exec(exec));
  delete as_exec(exec);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  return launch(__func__, exec, stream, false, false);
}
XCUDA_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream) {
  return launch(__func__, exec, stream, true, false);
}
XCUDA_EXPORT CUresult cuGraphUpload(CUgraphExec exec, CUstream stream) {
  return launch(__func__, exec, stream, false, true);
}
XCUDA_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec exec, CUstream stream) {
  return launch(__func__, exec, stream, true, true);
}

XCUDA_EXPORT CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphNode* error_node,
                                        CUgraphExecUpdateResult* result) {
  XCUDA_REQUIRE(error_node && result, CUDA_ERROR_INVALID_VALUE, "output pointers are null");
  CUgraphExecUpdateResultInfo info;
  CUresult status = exec_update(__func__, exec, graph, info);
  *error_node = info.errorNode;
  *result = info.result;
  return status;
}
XCUDA_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph,
                                           CUgraphExecUpdateResultInfo* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "result output pointer is null");
  return exec_update(__func__, exec, graph, *result);
}

XCUDA_EXPORT CUresult cuGraphDebugDotPrint(CUgraph graph, const char* path, unsigned int flags) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE(path, CUDA_ERROR_INVALID_VALUE, "path is null");
  std::ofstream file(path);
  XCUDA_REQUIRE(file, CUDA_ERROR_OPERATING_SYSTEM, fmt::format("cannot write {}", path));
  file << as_graph(graph)->dot(describe);
  XCUDA_REQUIRE(file.flush(), CUDA_ERROR_OPERATING_SYSTEM, fmt::format("cannot write {}", path));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode* result, CUgraph graph,
                                             const CUgraphNode* dependencies, size_t count,
                                             CUDA_MEM_ALLOC_NODE_PARAMS* parameters) {
  return add_memory_allocation(__func__, result, graph, dependencies, count, parameters);
}
XCUDA_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode node,
                                                   CUDA_MEM_ALLOC_NODE_PARAMS* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "parameters output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::memory_allocation);
      status != CUDA_SUCCESS)
    return status;
  const auto& allocation = std::any_cast<const MemoryAllocationNode&>(as_node(node)->parameters());
  *result = allocation.described;
  // The node owns the descriptors it reports, as the driver's does.
  result->accessDescs = allocation.access.data();
  result->accessDescCount = allocation.access.size();
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode* result, CUgraph graph,
                                            const CUgraphNode* dependencies, size_t count,
                                            CUdeviceptr address) {
  return add_memory_free(__func__, result, graph, dependencies, count, address);
}
XCUDA_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode node, CUdeviceptr* result) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "address output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::memory_free); status != CUDA_SUCCESS)
    return status;
  *result = std::any_cast<const MemoryFreeNode&>(as_node(node)->parameters())
                .allocation->address();
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* result,
                                                     CUgraph graph, CUcontext context,
                                                     unsigned int default_value,
                                                     unsigned int flags) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "handle output pointer is null");
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE((flags & ~known_conditional_flags) == 0, CUDA_ERROR_INVALID_VALUE,
                "unknown flags");
  XCUDA_REQUIRE(!context || runtime::live_contexts().contains(context), CUDA_ERROR_INVALID_VALUE,
                "not a live context");
  runtime::ConditionalHandle& handle = as_graph(graph)->add_conditional_handle(
      default_value, (flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0);
  *result = reinterpret_cast<CUgraphConditionalHandle>(&handle);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphAddNode(CUgraphNode* result, CUgraph graph,
                                     const CUgraphNode* dependencies, size_t count,
                                     CUgraphNodeParams* parameters) {
  return add_any_node(__func__, result, graph, dependencies, nullptr, count, parameters);
}
XCUDA_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode* result, CUgraph graph,
                                        const CUgraphNode* dependencies,
                                        const CUgraphEdgeData* edge_data, size_t count,
                                        CUgraphNodeParams* parameters) {
  return add_any_node(__func__, result, graph, dependencies, edge_data, count, parameters);
}

XCUDA_EXPORT CUresult cuUserObjectCreate(CUuserObject* result, void* pointer, CUhostFn destroy,
                                         unsigned int references, unsigned int flags) {
  XCUDA_REQUIRE(result && destroy, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(references > 0, CUDA_ERROR_INVALID_VALUE, "the initial count must not be 0");
  // The driver asks callers to name the one flag it has, so that it may define others later.
  XCUDA_REQUIRE(flags == CU_USER_OBJECT_NO_DESTRUCTOR_SYNC, CUDA_ERROR_INVALID_VALUE,
                "flags must be CU_USER_OBJECT_NO_DESTRUCTOR_SYNC");
  *result = reinterpret_cast<CUuserObject>(new runtime::UserObject(pointer, destroy, references));
  return CUDA_SUCCESS;
}
namespace {
// cuUserObjectRetain/Release: `change` (retain or release) by `count` references.
CUresult change_references(const char* function, CUuserObject object, unsigned int count,
                           void (runtime::UserObject::*change)(unsigned int)) {
  if (!runtime::live_user_objects().contains(object))
    return api::fail(function, CUDA_ERROR_INVALID_VALUE, "not a live user object");
  if (count == 0) return api::fail(function, CUDA_ERROR_INVALID_VALUE, "the count must not be 0");
  (as_user_object(object)->*change)(count);
  return CUDA_SUCCESS;
}
}  // namespace
XCUDA_EXPORT CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return change_references(__func__, object, count, &runtime::UserObject::retain);
}
XCUDA_EXPORT CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return change_references(__func__, object, count, &runtime::UserObject::release);
}
XCUDA_EXPORT CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object,
                                              unsigned int count, unsigned int flags) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE(runtime::live_user_objects().contains(object), CUDA_ERROR_INVALID_VALUE,
                "not a live user object");
  XCUDA_REQUIRE(count > 0, CUDA_ERROR_INVALID_VALUE, "the count must not be 0");
  XCUDA_REQUIRE((flags & ~CU_GRAPH_USER_OBJECT_MOVE) == 0, CUDA_ERROR_INVALID_VALUE,
                "unknown flags");
  as_graph(graph)->retain_user_object(*as_user_object(object), count,
                                      (flags & CU_GRAPH_USER_OBJECT_MOVE) != 0);
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
                                               unsigned int count) {
  XCUDA_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                "not a live graph");
  XCUDA_REQUIRE(runtime::live_user_objects().contains(object), CUDA_ERROR_INVALID_VALUE,
                "not a live user object");
  XCUDA_REQUIRE(count > 0, CUDA_ERROR_INVALID_VALUE, "the count must not be 0");
  XCUDA_CHECK_STATUS(as_graph(graph)->release_user_object(*as_user_object(object), count));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphNodeSetParams(CUgraphNode node, CUgraphNodeParams* parameters) {
  return set_any_node(__func__, nullptr, node, parameters);
}
XCUDA_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                               CUgraphNodeParams* parameters) {
  return set_any_node(__func__, exec, node, parameters);
}

XCUDA_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec exec, CUgraphNode node,
                                            unsigned int enabled) {
  const Node* target = nullptr;
  if (CUresult status = switchable_node(__func__, exec, node, target); status != CUDA_SUCCESS)
    return status;
  as_exec(exec)->set_enabled(*target, enabled != 0);
  return CUDA_SUCCESS;
}
XCUDA_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec exec, CUgraphNode node,
                                            unsigned int* enabled) {
  XCUDA_REQUIRE(enabled, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  const Node* target = nullptr;
  if (CUresult status = switchable_node(__func__, exec, node, target); status != CUDA_SUCCESS)
    return status;
  *enabled = target->enabled() ? 1 : 0;
  return CUDA_SUCCESS;
}

namespace {

SharedLaunch launch_of(CUgraphNode node) {
  return std::any_cast<SharedLaunch>(as_node(node)->parameters());
}

CUresult set_attributes(const char* function, CUgraphNode node,
                        std::map<CUkernelNodeAttrID, CUkernelNodeAttrValue> attributes) {
  SharedLaunch launch;
  if (CUresult status = with_attributes(function, *launch_of(node), std::move(attributes), launch);
      status != CUDA_SUCCESS)
    return status;
  as_node(node)->set_work(kernel_work(launch), launch);
  return CUDA_SUCCESS;
}

// The attributes a kernel node keeps, with what xcuda can honour: clusters of more than one
// block are not supported, as in cuLaunchKernelEx, nor nodes that kernels update.
CUresult check_attribute(const char* function, CUkernelNodeAttrID attribute,
                         const CUkernelNodeAttrValue& value) {
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
      XCUDA_MEMORY_REQUIRE(!value.deviceUpdatableKernelNode.deviceUpdatable,
                           CUDA_ERROR_NOT_SUPPORTED, "kernels cannot update graph nodes yet");
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
      const auto& cluster = value.clusterDim;
      XCUDA_MEMORY_REQUIRE(cluster.x * cluster.y * cluster.z <= 1, CUDA_ERROR_NOT_SUPPORTED,
                           "thread-block clusters are not supported yet");
      return CUDA_SUCCESS;
    }
    default:
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} is not a kernel node attribute", int(attribute)));
  }
}

}  // namespace

XCUDA_EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode node, CUkernelNodeAttrID attribute,
                                                    CUkernelNodeAttrValue* value) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value output pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::kernel); status != CUDA_SUCCESS)
    return status;
  if (CUresult status = check_attribute(__func__, attribute, CUkernelNodeAttrValue{});
      status != CUDA_SUCCESS)
    return status;
  SharedLaunch launch = launch_of(node);
  auto found = launch->attributes.find(attribute);
  *value = found != launch->attributes.end() ? found->second : CUkernelNodeAttrValue{};
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode node, CUkernelNodeAttrID attribute,
                                                    const CUkernelNodeAttrValue* value) {
  XCUDA_REQUIRE(value, CUDA_ERROR_INVALID_VALUE, "value pointer is null");
  if (CUresult status = check_node(__func__, node, NodeKind::kernel); status != CUDA_SUCCESS)
    return status;
  if (CUresult status = check_attribute(__func__, attribute, *value); status != CUDA_SUCCESS)
    return status;
  auto attributes = launch_of(node)->attributes;
  attributes[attribute] = *value;
  return set_attributes(__func__, node, std::move(attributes));
}

XCUDA_EXPORT CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode destination, CUgraphNode source) {
  if (CUresult status = check_node(__func__, destination, NodeKind::kernel); status != CUDA_SUCCESS)
    return status;
  if (CUresult status = check_node(__func__, source, NodeKind::kernel); status != CUDA_SUCCESS)
    return status;
  XCUDA_REQUIRE(launch_of(destination)->context == launch_of(source)->context,
                CUDA_ERROR_INVALID_CONTEXT, "the nodes' kernels are in different contexts");
  return set_attributes(__func__, destination, launch_of(source)->attributes);
}
