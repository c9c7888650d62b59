// Stream capture through the runtime API: a pipeline of copies, kernels and a host function
// forked across two streams and joined back, captured once and launched many times with new
// input each time; then the calls the driver refuses during capture, with the codes an H100
// (driver 580) answered, and the captures each refusal invalidates.
#include "check.h"

#include <vector>

__global__ void scale(const int* in, int* out, int factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

__global__ void add(const int* in, int* out, int addend, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + addend;
}

__global__ void combine(const int* first, const int* second, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = first[i] - second[i];
}

static void count_call(void* data) { ++*static_cast<int*>(data); }

// An error case: the call must fail with `want`; the error is then cleared so that it does
// not leak into cudaGetLastError.
static void expect_error(const char* what, cudaError_t got, cudaError_t want) {
  std::printf("%s: %s (%d)\n", what, cudaGetErrorName(got), static_cast<int>(got));
  if (got != want)
    FAIL("%s: expected %s (%d), got %s (%d)", what, cudaGetErrorName(want), static_cast<int>(want),
         cudaGetErrorName(got), static_cast<int>(got));
  (void)cudaGetLastError();
}

// Ends the capture of `stream`, which must have been broken: no graph comes back.
static void expect_invalidated(const char* what, cudaStream_t stream) {
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(1);
  expect_error(what, cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  if (graph) FAIL("%s: an invalidated capture returned a graph", what);
}

int main() {
  constexpr int n = 4096;
  constexpr int threads = 128;
  constexpr int blocks = (n + threads - 1) / threads;
  constexpr int launches = 50;

  int *input = nullptr, *scaled = nullptr, *added = nullptr, *result = nullptr;
  CHECK(cudaMalloc(&input, n * sizeof(int)));
  CHECK(cudaMalloc(&scaled, n * sizeof(int)));
  CHECK(cudaMalloc(&added, n * sizeof(int)));
  CHECK(cudaMalloc(&result, n * sizeof(int)));
  std::vector<int> host_input(n), host_result(n), want(n);
  int host_calls = 0;

  cudaStream_t origin, forked;
  CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&forked, cudaStreamNonBlocking));
  cudaEvent_t fork_point, join_point;
  CHECK(cudaEventCreateWithFlags(&fork_point, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join_point, cudaEventDisableTiming));

  // --- Capture: input -> (x * 3 on origin, x + 7 on forked) -> difference -> output.
  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CHECK(cudaStreamIsCapturing(origin, &status));
  if (status != cudaStreamCaptureStatusActive) FAIL("origin stream is not capturing");
  CHECK(cudaMemcpyAsync(input, host_input.data(), n * sizeof(int), cudaMemcpyHostToDevice,
                        origin));
  CHECK(cudaEventRecord(fork_point, origin));
  CHECK(cudaStreamWaitEvent(forked, fork_point, 0));
  CHECK(cudaStreamIsCapturing(forked, &status));
  if (status != cudaStreamCaptureStatusActive) FAIL("the forked stream did not join the capture");
  scale<<<blocks, threads, 0, origin>>>(input, scaled, 3, n);
  CHECK(cudaGetLastError());
  add<<<blocks, threads, 0, forked>>>(input, added, 7, n);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(join_point, forked));
  CHECK(cudaStreamWaitEvent(origin, join_point, 0));
  combine<<<blocks, threads, 0, origin>>>(scaled, added, result, n);
  CHECK(cudaGetLastError());
  CHECK(cudaLaunchHostFunc(origin, count_call, &host_calls));
  CHECK(cudaMemcpyAsync(host_result.data(), result, n * sizeof(int), cudaMemcpyDeviceToHost,
                        origin));
  unsigned long long capture_id = 0;
  CHECK(cudaStreamGetCaptureInfo(origin, &status, &capture_id));
  if (status != cudaStreamCaptureStatusActive || capture_id == 0)
    FAIL("capture info: status %d, id %llu", static_cast<int>(status), capture_id);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(origin, &graph));
  CHECK(cudaStreamIsCapturing(forked, &status));
  if (status != cudaStreamCaptureStatusNone) FAIL("the forked stream still captures");
  if (host_calls != 0) FAIL("captured work ran during capture");

  size_t node_count = 0, root_count = 0, edge_count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &root_count));
  CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edge_count));
  // copy, 3 kernels, host function, copy; edges: copy->scale, copy->add, scale->combine,
  // add->combine, combine->host, host->copy.
  if (node_count != 6 || root_count != 1 || edge_count != 6)
    FAIL("captured graph has %zu nodes, %zu roots, %zu edges; expected 6, 1, 6", node_count,
         root_count, edge_count);

  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < launches; ++launch) {
    for (int i = 0; i < n; ++i) host_input[i] = i * (launch + 1) - 1000;
    CHECK(cudaGraphLaunch(exec, origin));
    CHECK(cudaStreamSynchronize(origin));
    for (int i = 0; i < n; ++i) want[i] = host_input[i] * 3 - (host_input[i] + 7);
    expect_equal("graph launch", host_result.data(), want.data(), n);
  }
  if (host_calls != launches) FAIL("host function ran %d times in %d launches", host_calls, launches);

  // Launches queued back to back, then one synchronisation: each sees its own input only
  // because the graph's copies run in stream order.
  for (int launch = 0; launch < 5; ++launch) CHECK(cudaGraphLaunch(exec, origin));
  CHECK(cudaStreamSynchronize(origin));
  expect_equal("queued graph launches", host_result.data(), want.data(), n);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));

  // --- What the driver refuses during capture.
  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  expect_error("stream synchronize while capturing", cudaStreamSynchronize(origin),
               cudaErrorStreamCaptureUnsupported);
  expect_invalidated("end of a capture broken by a synchronize", origin);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  expect_error("stream query while capturing", cudaStreamQuery(origin),
               cudaErrorStreamCaptureUnsupported);
  expect_invalidated("end of a capture broken by a query", origin);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  void* scratch = nullptr;
  expect_error("cudaMalloc during a global capture", cudaMalloc(&scratch, 256),
               cudaErrorStreamCaptureUnsupported);
  expect_invalidated("end of a capture broken by cudaMalloc", origin);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed));
  CHECK(cudaMalloc(&scratch, 256));
  CHECK(cudaStreamEndCapture(origin, &graph));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(scratch));

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  expect_error("capture begun twice", cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal),
               cudaErrorIllegalState);
  CHECK(cudaEventRecord(fork_point, origin));
  CHECK(cudaStreamWaitEvent(forked, fork_point, 0));
  expect_error("capture ended on a forked stream", cudaStreamEndCapture(forked, &graph),
               cudaErrorStreamCaptureUnmatched);
  expect_invalidated("end of a capture broken by an unmatched end", origin);

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(fork_point, origin));
  CHECK(cudaStreamWaitEvent(forked, fork_point, 0));
  add<<<blocks, threads, 0, forked>>>(input, added, 1, n);
  CHECK(cudaGetLastError());
  expect_error("capture with an unjoined fork", cudaStreamEndCapture(origin, &graph),
               cudaErrorStreamCaptureUnjoined);
  CHECK(cudaStreamIsCapturing(forked, &status));
  if (status != cudaStreamCaptureStatusNone) FAIL("the unjoined stream still captures");

  expect_error("end of capture on a stream that does not capture",
               cudaStreamEndCapture(origin, &graph), cudaErrorIllegalState);
  expect_error("capture of the legacy default stream",
               cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal),
               cudaErrorStreamCaptureUnsupported);

  // Work on the legacy default stream would have to wait for a blocking capturing stream.
  cudaStream_t blocking;
  CHECK(cudaStreamCreate(&blocking));
  CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal));
  scale<<<blocks, threads, 0, cudaStreamLegacy>>>(input, scaled, 2, n);
  expect_error("legacy stream launch during a blocking stream's capture", cudaGetLastError(),
               cudaErrorStreamCaptureImplicit);
  expect_invalidated("end of a capture broken by the legacy stream", blocking);
  CHECK(cudaStreamDestroy(blocking));

  CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(fork_point, origin));
  expect_error("query of an event recorded during capture", cudaEventQuery(fork_point),
               cudaErrorCapturedEvent);
  expect_invalidated("end of a capture broken by the query of its event", origin);

  CHECK(cudaStreamSynchronize(origin));
  CHECK(cudaStreamDestroy(origin));
  CHECK(cudaStreamDestroy(forked));
  CHECK(cudaEventDestroy(fork_point));
  CHECK(cudaEventDestroy(join_point));
  CHECK(cudaFree(input));
  CHECK(cudaFree(scaled));
  CHECK(cudaFree(added));
  CHECK(cudaFree(result));
  std::printf("graph_capture: %d launches of a captured fork/join pipeline, errors as expected\n",
              launches);
  return 0;
}
