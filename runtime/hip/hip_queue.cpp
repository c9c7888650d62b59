#include "runtime/hip/hip_queue.h"

#include <algorithm>
#include <cstring>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "ptx/host_abi.h"
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

std::unique_ptr<HipQueue> HipQueue::create(const HipFunctions& functions, int device,
                                           int compute_units) {
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
  return std::unique_ptr<HipQueue>(new HipQueue(functions, device, compute_units, stream));
}

HipQueue::HipQueue(const HipFunctions& functions, int device, int compute_units, HipStream stream)
    : functions_(functions), device_(device), compute_units_(compute_units), stream_(stream) {}

HipQueue::~HipQueue() {
  if (select_device()) (void)functions_.stream_synchronize(stream_);
  (void)functions_.stream_destroy(stream_);
  if (grid_workspace_) (void)functions_.free(grid_workspace_);
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

void HipQueue::copy_region(const StridedCopy& copy) {
  if (failed() || !select_device()) return;
  const StridedRegion& region = copy.region;
  bool packed_slices = copy.source_slice_pitch == copy.source_pitch * region.height &&
                       copy.destination_slice_pitch == copy.destination_pitch * region.height;
  size_t calls = packed_slices ? 1 : region.depth;
  size_t rows = packed_slices ? region.height * region.depth : region.height;
  // CUDA checks no pitch of a single row (cuMemcpy2D with Height 1, the array copies); HIP
  // refuses pitches narrower than the row.
  size_t destination_pitch = rows == 1 ? region.width : copy.destination_pitch;
  size_t source_pitch = rows == 1 ? region.width : copy.source_pitch;
  for (size_t slice = 0; slice < calls; ++slice)
    if (!succeeded(functions_.memcpy_2d_async(
                       copy.destination + slice * copy.destination_slice_pitch, destination_pitch,
                       copy.source + slice * copy.source_slice_pitch, source_pitch, region.width,
                       rows, hip_memcpy_default, stream_),
                   "hipMemcpy2DAsync"))
      return;
}

void HipQueue::fill_region(const StridedFill& region_fill) {
  for (size_t row = 0; row < region_fill.region.height; ++row)
    fill(region_fill.destination + row * region_fill.destination_pitch, region_fill.pattern,
         region_fill.pattern_bytes, region_fill.region.width / region_fill.pattern_bytes);
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
  const ptx::KernelInfo& info = hip_kernel.info();
  if (parameters.size() < info.parameter_buffer_size) {
    fail(make_error(ErrorCode::invalid_value,
                    fmt::format("{} bytes of parameters for {}, which reads {}", parameters.size(),
                                info.name, info.parameter_buffer_size)));
    return;
  }
  // The %envreg source of kernels that read it, which HIP reads at its metadata offset: 0 for a
  // launch that is not cooperative (amdgpu_abi.h). Other kernels ignore it.
  uint32_t workspace = ptx::amdgpu_abi::grid_workspace_offset(info.parameter_buffer_size);
  parameters.resize(info.parameter_buffer_size);
  parameters.resize(workspace + ptx::amdgpu_abi::grid_workspace_bytes, 0);
  if (shape.cooperative) {
    launch_cooperative(hip_kernel, shape, parameters, workspace);
    return;
  }
  // HIP copies the buffer into the kernarg segment before hipModuleLaunchKernel returns.
  size_t parameter_bytes = parameters.size();
  void* extra[] = {hip_launch_parameter_buffer_pointer, parameters.data(),
                   hip_launch_parameter_buffer_size, &parameter_bytes, hip_launch_parameter_end};
  succeeded(
      functions_.module_launch_kernel(hip_kernel.function(), shape.grid[0], shape.grid[1],
                                      shape.grid[2], shape.block[0], shape.block[1], shape.block[2],
                                      shape.dynamic_shared_bytes, stream_, nullptr, extra),
      "hipModuleLaunchKernel of " + info.name);
}

void HipQueue::launch_cooperative(const HipKernel& kernel, const LaunchShape& shape,
                                  std::vector<uint8_t>& parameters, uint32_t workspace_offset) {
  const ptx::KernelInfo& info = kernel.info();
  if (!functions_.module_launch_cooperative_kernel) {
    logger().warn(
        "HIP device {}: {} has no hipModuleLaunchCooperativeKernel, so the cooperative "
        "launch of {} cannot run",
        device_, functions_.library, info.name);
    fail(make_error(ErrorCode::not_supported, "cooperative launch of " + info.name +
                                                  " without hipModuleLaunchCooperativeKernel"));
    return;
  }
  if (!cooperative_grid_fits(kernel, shape)) return;
  std::lock_guard lock(cooperative_mutex_);
  void* workspace = reset_grid_workspace();
  if (!workspace) return;
  auto address = reinterpret_cast<uint64_t>(workspace);
  std::memcpy(parameters.data() + workspace_offset, &address, sizeof address);
  // hipModuleLaunchCooperativeKernel takes no `extra`, only a pointer to each argument, which
  // HIP copies at its metadata offset before returning. The workspace word is the last; HIP
  // ignores it for kernels of modules that do not read %envreg, which lack that argument.
  std::vector<void*> arguments;
  for (const ptx::ParameterInfo& parameter : info.parameters)
    arguments.push_back(parameters.data() + parameter.offset);
  arguments.push_back(parameters.data() + workspace_offset);
  succeeded(
      functions_.module_launch_cooperative_kernel(
          kernel.function(), shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0],
          shape.block[1], shape.block[2], shape.dynamic_shared_bytes, stream_, arguments.data()),
      "hipModuleLaunchCooperativeKernel of " + info.name);
}

bool HipQueue::cooperative_grid_fits(const HipKernel& kernel, const LaunchShape& shape) {
  const std::string& name = kernel.info().name;
  uint64_t threads = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  int per_unit = 0;
  if (!succeeded(
          functions_.module_occupancy_max_active_blocks_per_multiprocessor(
              &per_unit, kernel.function(), static_cast<int>(threads), shape.dynamic_shared_bytes),
          "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor of " + name))
    return false;
  uint64_t blocks = uint64_t{shape.grid[0]} * shape.grid[1] * shape.grid[2];
  uint64_t resident = uint64_t(std::max(per_unit, 0)) * uint64_t(std::max(compute_units_, 0));
  if (blocks <= resident) return true;
  // A grid-wide barrier would wait forever for blocks that never start.
  fail(make_error(ErrorCode::cooperative_launch_too_large,
                  fmt::format("cooperative launch of {} with {} blocks; HIP runs at most {} at "
                              "once ({} per compute unit, {} compute units)",
                              name, blocks, resident, per_unit, compute_units_)));
  return false;
}

void* HipQueue::reset_grid_workspace() {
  // NVIDIA's driver reports the workspace's size in it; the arrival counter starts at 0.
  static constexpr ptx::host_abi::GridWorkspace initial{
      sizeof(ptx::host_abi::GridWorkspace), 0, {}};
  if (!grid_workspace_) {
    void* allocated = nullptr;
    if (!succeeded(functions_.malloc(&allocated, sizeof initial), "hipMalloc of a grid workspace"))
      return nullptr;
    grid_workspace_ = allocated;
  }
  // From static storage, which outlives the asynchronous copy.
  if (!succeeded(functions_.memcpy_async(grid_workspace_, &initial, sizeof initial,
                                         hip_memcpy_default, stream_),
                 "hipMemcpyAsync of a grid workspace"))
    return nullptr;
  return grid_workspace_;
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
