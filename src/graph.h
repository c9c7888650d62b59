// What the graph family shares with the entry points that enqueue work: while a stream
// captures, their work becomes graph nodes instead of running, and the calls the driver forbids
// during capture fail as the driver's do.
#pragma once

#include <cstdint>
#include <vector>

#include "src/api.h"

#include "runtime/graph.h"
#include "runtime/graph_capture.h"

namespace xcuda::api {

// For an entry point about to enqueue `work` on `stream`. When the stream captures, the work
// becomes a node of the capture's graph, `captured` is set and the caller enqueues nothing.
// Fails as the driver does when the capture was invalidated, or when work on the legacy
// default stream would have to wait for a capturing stream.
CUresult capture_work(const char* function, runtime::Stream& stream, runtime::NodeKind kind,
                      runtime::NodeWork work, bool& captured);
// The same for a checked kernel launch, keeping what cuGraphKernelNodeGetParams reports.
CUresult capture_launch(const char* entry_point, runtime::Stream& stream, CUfunction handle,
                        runtime::Function& function, runtime::LoadedKernel& kernel,
                        const runtime::LaunchShape& shape, const std::vector<uint8_t>& parameters,
                        bool& captured);
// cuMemAllocAsync and cuMemFreeAsync on a capturing stream: a memory allocation or free node of
// the capture's graph, and `captured` set. The allocation's address is fixed at once.
CUresult capture_allocation(const char* function, runtime::Stream& stream, size_t bytes,
                            CUdeviceptr* result, bool& captured);
CUresult capture_free(const char* function, runtime::Stream& stream, CUdeviceptr address,
                      bool& captured);
// cuMemFree and cuMemFreeAsync (with `stream`) of memory a graph allocated: `handled` set, and
// the memory free for the graph's next launch.
CUresult free_graph_memory(const char* function, CUdeviceptr address, runtime::Stream* stream,
                           bool& handled);
// Calls that would wait for or query a capturing stream fail and invalidate its capture.
CUresult refuse_if_capturing(const char* function, runtime::Stream& stream);
// "Potentially unsafe" calls (cuMemAlloc, synchronous copies) fail while a capture forbids them.
CUresult check_unsafe_call(const char* function);

// A caller's list of nodes, each of which must be a live node of `graph`.
CUresult check_graph_nodes(const char* function, const CUgraphNode* nodes, size_t count,
                           const runtime::Graph& graph, std::vector<runtime::Node*>& result);
// Edge annotations: only default edges exist, since programmatic ports need a GPU's scheduler.
CUresult check_edge_data(const char* function, const CUgraphEdgeData* data, size_t count);

}  // namespace xcuda::api
