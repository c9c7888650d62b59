#include "runtime/hip/hip_queue.h"

#include <string>

#include "ptx/target/amdgpu/amdgpu_abi.h"
#include "runtime/hip/hip_errors.h"
#include "runtime/hip/hip_module.h"
#include "runtime/log.h"

namespace xcuda::runtime::hip {
namespace {

// hipStreamAddCallback's form of a host function, for runtimes without hipLaunchHostFunc.
struct PendingHostFunction {
  void (*function)(void*);
  void* user_data;
};

void run_pending_host_function(HipStream, int, void* pending) {
  std::unique_ptr<PendingHostFunction> owned(static_cast<PendingHostFunction*>(pending));
  owned->function(owned->user_data);
}

}  // namespace

std::unique_ptr<HipQueue> HipQueue::create(const HipFunctions& functions, int device) {
  HipStream stream = nullptr;
  Status status = check_hip(functions, functions.set_device(device), "hipSetDevice");
  if (status)
    status =
        check_hip(functions, functions.stream_create_with_flags(&stream, hip_stream_non_blocking),
                  "hipStreamCreateWithFlags");
  if (!status) {
    logger().error("HIP device {}: {}", device, status.error().message);
    return nullptr;
  }
  return std::unique_ptr<HipQueue>(new HipQueue(functions, device, stream));
}

HipQueue::HipQueue(const HipFunctions& functions, int device, HipStream stream)
    : functions_(functions), device_(device), stream_(stream) {}

HipQueue::~HipQueue() {
  if (select_device()) (void)functions_.stream_synchronize(stream_);
  (void)functions_.stream_destroy(stream_);
}

bool HipQueue::succeeded(int error, std::string_view call) {
  if (error == hip_success) return true;
  fail(hip_error(functions_, error, call));
  return false;
}

void HipQueue::fail(Error error) {
  logger().debug("HIP device {}: {}", device_, error.message);
  std::lock_guard lock(failure_mutex_);
  if (!failure_) failure_ = std::move(error);
}

bool HipQueue::failed() {
  std::lock_guard lock(failure_mutex_);
  return failure_.has_value();
}

bool HipQueue::select_device() { return succeeded(functions_.set_device(device_), "hipSetDevice"); }

void HipQueue::copy(void* destination, const void* source, size_t bytes) {
  if (failed() || !select_device()) return;
  succeeded(functions_.memcpy_async(destination, source, bytes, hip_memcpy_default, stream_),
            "hipMemcpyAsync");
}

void HipQueue::fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) {
  if (failed() || !select_device()) return;
  switch (pattern_bytes) {
    case 1:
      succeeded(functions_.memset_d8_async(destination, static_cast<unsigned char>(pattern), count,
                                           stream_),
                "hipMemsetD8Async");
      return;
    case 2:
      succeeded(functions_.memset_d16_async(destination, static_cast<unsigned short>(pattern),
                                            count, stream_),
                "hipMemsetD16Async");
      return;
    case 4:
      succeeded(functions_.memset_d32_async(destination, static_cast<int>(pattern), count, stream_),
                "hipMemsetD32Async");
      return;
    default:
      fail(make_error(ErrorCode::invalid_value,
                      std::to_string(pattern_bytes) + "-byte fill pattern"));
  }
}

void HipQueue::launch(LoadedKernel& kernel, const LaunchShape& shape,
                      std::vector<uint8_t> parameters) {
  if (failed() || !select_device()) return;
  // Only this backend's modules hand out kernels to its queues.
  auto& hip_kernel = static_cast<HipKernel&>(kernel);
  if (parameters.size() < hip_kernel.info().parameter_buffer_size) {
    fail(make_error(ErrorCode::invalid_value,
                    std::to_string(parameters.size()) + " bytes of parameters for " +
                        hip_kernel.info().name + ", which reads " +
                        std::to_string(hip_kernel.info().parameter_buffer_size)));
    return;
  }
  if (shape.cooperative) {
    fail(make_error(ErrorCode::not_supported, "cooperative launches on AMD GPUs (" + hip_kernel.info().name + ")"));
    return;
  }
  // The %envreg source of kernels that read it, which HIP reads at its metadata offset: 0, the
  // word of a launch that is not cooperative (amdgpu_abi.h). Other kernels ignore it.
  uint32_t workspace = ptx::amdgpu_abi::grid_workspace_offset(hip_kernel.info().parameter_buffer_size);
  parameters.resize(hip_kernel.info().parameter_buffer_size);
  parameters.resize(workspace + ptx::amdgpu_abi::grid_workspace_bytes, 0);
  // HIP copies the buffer into the kernarg segment before hipModuleLaunchKernel returns.
  size_t parameter_bytes = parameters.size();
  void* extra[] = {hip_launch_parameter_buffer_pointer, parameters.data(),
                   hip_launch_parameter_buffer_size, &parameter_bytes, hip_launch_parameter_end};
  succeeded(
      functions_.module_launch_kernel(hip_kernel.function(), shape.grid[0], shape.grid[1],
                                      shape.grid[2], shape.block[0], shape.block[1], shape.block[2],
                                      shape.dynamic_shared_bytes, stream_, nullptr, extra),
      "hipModuleLaunchKernel of " + hip_kernel.info().name);
}

void HipQueue::host_function(void (*function)(void*), void* user_data) {
  bool enqueued = false;
  if (select_device()) {
    if (functions_.launch_host_func) {
      enqueued =
          succeeded(functions_.launch_host_func(stream_, function, user_data), "hipLaunchHostFunc");
    } else {
      auto pending =
          std::make_unique<PendingHostFunction>(PendingHostFunction{function, user_data});
      enqueued = succeeded(
          functions_.stream_add_callback(stream_, run_pending_host_function, pending.get(), 0),
          "hipStreamAddCallback");
      if (enqueued) (void)pending.release();  // the callback owns it now
    }
  }
  if (enqueued) return;
  // In order all the same: after whatever HIP still runs.
  (void)functions_.stream_synchronize(stream_);
  function(user_data);
}

void HipQueue::wait_for(Queue& other) {
  // Only this backend creates the queues its streams hold.
  auto& other_queue = static_cast<HipQueue&>(other);
  HipEvent event = nullptr;
  if (!other_queue.select_device() ||
      !succeeded(functions_.event_create_with_flags(&event, hip_event_disable_timing),
                 "hipEventCreateWithFlags"))
    return;
  if (succeeded(functions_.event_record(event, other_queue.stream_), "hipEventRecord") &&
      select_device())
    succeeded(functions_.stream_wait_event(stream_, event, 0), "hipStreamWaitEvent");
  // HIP releases a destroyed event once the work waiting on it is done.
  (void)functions_.event_destroy(event);
}

Status HipQueue::synchronize() {
  if (select_device()) succeeded(functions_.stream_synchronize(stream_), "hipStreamSynchronize");
  std::lock_guard lock(failure_mutex_);
  if (failure_) return *failure_;
  return {};
}

bool HipQueue::idle() {
  if (!select_device()) return true;
  int state = functions_.stream_query(stream_);
  if (state == hip_error_not_ready) return false;
  // An error means nothing more will run here; it is kept for synchronize().
  succeeded(state, "hipStreamQuery");
  return true;
}

}  // namespace xcuda::runtime::hip
