// Stream capture: cuStreamBeginCapture, cuStreamEndCapture and the calls that inspect or steer
// a capture, plus the checks every enqueueing entry point makes through src/graph.h.
#include "src/graph.h"
#include "src/memory.h"

#include "runtime/event.h"

using namespace xcuda;
using runtime::CaptureMode;
using runtime::CaptureStatus;
using runtime::Stream;

namespace xcuda::api {

CUresult capture_work(const char* function, Stream& stream, runtime::NodeKind kind,
                      runtime::NodeWork work, bool& captured) {
  auto node = runtime::capture(stream, kind, std::move(work), {});
  if (!node) return fail(function, node.error());
  captured = *node != nullptr;
  return CUDA_SUCCESS;
}

CUresult refuse_if_capturing(const char* function, Stream& stream) {
  if (Status status = runtime::refuse_if_capturing(stream, function); !status)
    return fail(function, status.error());
  return CUDA_SUCCESS;
}

CUresult check_unsafe_call(const char* function) {
  if (Status status = runtime::check_unsafe_call(function); !status)
    return fail(function, status.error());
  return CUDA_SUCCESS;
}

}  // namespace xcuda::api

namespace {

runtime::Graph* as_graph(CUgraph handle) { return reinterpret_cast<runtime::Graph*>(handle); }

CUresult check_mode(const char* function, CUstreamCaptureMode mode) {
  XCUDA_MEMORY_REQUIRE(mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                    mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
                    mode == CU_STREAM_CAPTURE_MODE_RELAXED,
                CUDA_ERROR_INVALID_VALUE, fmt::format("unknown capture mode {}", int(mode)));
  return CUDA_SUCCESS;
}

CUresult begin(const char* function, CUstream handle, CUstreamCaptureMode mode, CUgraph graph,
               const CUgraphNode* dependencies, const CUgraphEdgeData* edge_data, size_t count,
               bool per_thread) {
  if (CUresult status = check_mode(function, mode); status != CUDA_SUCCESS) return status;
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  std::vector<runtime::Node*> nodes;
  if (graph) {
    XCUDA_MEMORY_REQUIRE(runtime::live_graphs().contains(graph), CUDA_ERROR_INVALID_VALUE,
                  "not a live graph");
    if ((status = api::check_graph_nodes(function, dependencies, count, *as_graph(graph), nodes)) !=
            CUDA_SUCCESS ||
        (status = api::check_edge_data(function, edge_data, count)) != CUDA_SUCCESS)
      return status;
  }
  XCUDA_MEMORY_CHECK_STATUS(runtime::begin_capture(*stream, CaptureMode(mode),
                                            graph ? as_graph(graph) : nullptr, nodes));
  return CUDA_SUCCESS;
}

CUresult end(const char* function, CUstream handle, CUgraph* result, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "graph output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  auto graph = runtime::end_capture(*stream);
  if (!graph) {
    *result = nullptr;
    return api::fail(function, graph.error());
  }
  *result = reinterpret_cast<CUgraph>(*graph);
  return CUDA_SUCCESS;
}

CUresult is_capturing(const char* function, CUstream handle, CUstreamCaptureStatus* result,
                      bool per_thread) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "status output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  *result = CUstreamCaptureStatus(runtime::capture_info(*stream).status);
  return CUDA_SUCCESS;
}

// Every version of cuStreamGetCaptureInfo: each output is optional.
CUresult get_info(const char* function, CUstream handle, CUstreamCaptureStatus* status_out,
                  cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** dependencies_out,
                  const CUgraphEdgeData** edge_data_out, size_t* count_out, bool per_thread) {
  XCUDA_MEMORY_REQUIRE(status_out, CUDA_ERROR_INVALID_VALUE, "status output pointer is null");
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  runtime::CaptureInfo info = runtime::capture_info(*stream);
  *status_out = CUstreamCaptureStatus(info.status);
  if (info.status == CaptureStatus::none) return CUDA_SUCCESS;
  if (id_out) *id_out = info.id;
  if (graph_out) *graph_out = reinterpret_cast<CUgraph>(info.graph);
  if (dependencies_out)
    *dependencies_out = reinterpret_cast<const CUgraphNode*>(info.dependencies->data());
  // Every edge a capture makes is a default one, which the driver reports as no edge data.
  if (edge_data_out) *edge_data_out = nullptr;
  if (count_out) *count_out = info.dependencies->size();
  return CUDA_SUCCESS;
}

CUresult update_dependencies(const char* function, CUstream handle, CUgraphNode* dependencies,
                             const CUgraphEdgeData* edge_data, size_t count, unsigned flags,
                             bool per_thread) {
  XCUDA_MEMORY_REQUIRE(flags == CU_STREAM_ADD_CAPTURE_DEPENDENCIES ||
                    flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES,
                CUDA_ERROR_INVALID_VALUE, "unknown flags");
  if (CUresult status = api::check_edge_data(function, edge_data, count); status != CUDA_SUCCESS)
    return status;
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  runtime::CaptureInfo info = runtime::capture_info(*stream);
  XCUDA_MEMORY_REQUIRE(info.status != CaptureStatus::none, CUDA_ERROR_ILLEGAL_STATE,
                "the stream is not capturing");
  std::vector<runtime::Node*> nodes;
  if ((status = api::check_graph_nodes(function, dependencies, count, *info.graph, nodes)) != CUDA_SUCCESS)
    return status;
  XCUDA_MEMORY_CHECK_STATUS(runtime::update_capture_dependencies(
      *stream, nodes, flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  return CUDA_SUCCESS;
}

}  // namespace

// cuStreamBeginCapture predates capture modes; it captures in global mode.
XCUDA_EXPORT CUresult cuStreamBeginCapture(CUstream stream) {
  return begin(__func__, stream, CU_STREAM_CAPTURE_MODE_GLOBAL, nullptr, nullptr, nullptr, 0,
               false);
}
XCUDA_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream stream) {
  return begin(__func__, stream, CU_STREAM_CAPTURE_MODE_GLOBAL, nullptr, nullptr, nullptr, 0,
               true);
}
XCUDA_EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
  return begin(__func__, stream, mode, nullptr, nullptr, nullptr, 0, false);
}
XCUDA_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode) {
  return begin(__func__, stream, mode, nullptr, nullptr, nullptr, 0, true);
}
XCUDA_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream stream, CUgraph graph,
                                                  const CUgraphNode* dependencies,
                                                  const CUgraphEdgeData* edge_data, size_t count,
                                                  CUstreamCaptureMode mode) {
  XCUDA_REQUIRE(graph, CUDA_ERROR_INVALID_VALUE, "graph is null");
  return begin(__func__, stream, mode, graph, dependencies, edge_data, count, false);
}
XCUDA_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream stream, CUgraph graph,
                                                       const CUgraphNode* dependencies,
                                                       const CUgraphEdgeData* edge_data,
                                                       size_t count, CUstreamCaptureMode mode) {
  XCUDA_REQUIRE(graph, CUDA_ERROR_INVALID_VALUE, "graph is null");
  return begin(__func__, stream, mode, graph, dependencies, edge_data, count, true);
}

XCUDA_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  return end(__func__, stream, graph, false);
}
XCUDA_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) {
  return end(__func__, stream, graph, true);
}

XCUDA_EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  return is_capturing(__func__, stream, status, false);
}
XCUDA_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream stream, CUstreamCaptureStatus* status) {
  return is_capturing(__func__, stream, status, true);
}

XCUDA_EXPORT CUresult cuStreamGetCaptureInfo(CUstream stream, CUstreamCaptureStatus* status,
                                             cuuint64_t* id) {
  return get_info(__func__, stream, status, id, nullptr, nullptr, nullptr, nullptr, false);
}
XCUDA_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream stream, CUstreamCaptureStatus* status,
                                                  cuuint64_t* id) {
  return get_info(__func__, stream, status, id, nullptr, nullptr, nullptr, nullptr, true);
}
XCUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream stream, CUstreamCaptureStatus* status,
                                                cuuint64_t* id, CUgraph* graph,
                                                const CUgraphNode** dependencies, size_t* count) {
  return get_info(__func__, stream, status, id, graph, dependencies, nullptr, count, false);
}
XCUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream stream,
                                                     CUstreamCaptureStatus* status,
                                                     cuuint64_t* id, CUgraph* graph,
                                                     const CUgraphNode** dependencies,
                                                     size_t* count) {
  return get_info(__func__, stream, status, id, graph, dependencies, nullptr, count, true);
}
XCUDA_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream stream, CUstreamCaptureStatus* status,
                                                cuuint64_t* id, CUgraph* graph,
                                                const CUgraphNode** dependencies,
                                                const CUgraphEdgeData** edge_data, size_t* count) {
  return get_info(__func__, stream, status, id, graph, dependencies, edge_data, count, false);
}
XCUDA_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream stream,
                                                     CUstreamCaptureStatus* status,
                                                     cuuint64_t* id, CUgraph* graph,
                                                     const CUgraphNode** dependencies,
                                                     const CUgraphEdgeData** edge_data,
                                                     size_t* count) {
  return get_info(__func__, stream, status, id, graph, dependencies, edge_data, count, true);
}

XCUDA_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream stream, CUgraphNode* dependencies,
                                                        size_t count, unsigned int flags) {
  return update_dependencies(__func__, stream, dependencies, nullptr, count, flags, false);
}
XCUDA_EXPORT CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream stream,
                                                             CUgraphNode* dependencies,
                                                             size_t count, unsigned int flags) {
  return update_dependencies(__func__, stream, dependencies, nullptr, count, flags, true);
}
XCUDA_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(CUstream stream,
                                                           CUgraphNode* dependencies,
                                                           const CUgraphEdgeData* edge_data,
                                                           size_t count, unsigned int flags) {
  return update_dependencies(__func__, stream, dependencies, edge_data, count, flags, false);
}
XCUDA_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream stream,
                                                                CUgraphNode* dependencies,
                                                                const CUgraphEdgeData* edge_data,
                                                                size_t count, unsigned int flags) {
  return update_dependencies(__func__, stream, dependencies, edge_data, count, flags, true);
}

XCUDA_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  XCUDA_REQUIRE(mode, CUDA_ERROR_INVALID_VALUE, "mode pointer is null");
  if (CUresult status = check_mode(__func__, *mode); status != CUDA_SUCCESS) return status;
  *mode = CUstreamCaptureMode(runtime::exchange_thread_capture_mode(CaptureMode(*mode)));
  return CUDA_SUCCESS;
}
