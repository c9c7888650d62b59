// A CUDA stream on an AMD GPU: one non-blocking HIP stream. Ordering against the legacy stream is
// the runtime's business (it is built from wait_for), so HIP's own null-stream rules stay out.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "runtime/backend.h"
#include "runtime/hip/hip_library.h"
#include "runtime/strided_copy.h"

namespace xcuda::runtime::hip {

class HipKernel;

class HipQueue final : public Queue {
 public:
  // `device` is HIP's ordinal, with `compute_units` CUs (or WGPs), which bound a cooperative
  // grid; `functions` must outlive the queue. Null when HIP refuses the stream (the reason goes
  // to the log).
  static std::unique_ptr<HipQueue> create(const HipFunctions& functions, int device,
                                          int compute_units);
  // Finishes the work already enqueued first.
  ~HipQueue() override;

  // Data movement and kernels are skipped once the queue has failed, as on a lost context.
  void copy(void* destination, const void* source, size_t bytes) override;
  void fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) override;
  // A cooperative launch gets this queue's grid workspace, reset first, in its workspace word;
  // it fails with not_supported where HIP lacks hipModuleLaunchCooperativeKernel, and with
  // cooperative_launch_too_large when HIP's occupancy says its blocks cannot all run at once.
  void launch(LoadedKernel& kernel, const LaunchShape& shape,
              std::vector<uint8_t> parameters) override;
  // A rectangular copy (into or out of a CUDA array's texels, say) as one hipMemcpy2DAsync per
  // slice, or one for all slices when both sides' slices follow one another without gaps.
  void copy_region(const StridedCopy& copy) override;
  // A rectangular fill (cuMemsetD2D*) as one fill() per row.
  void fill_region(const StridedFill& fill) override;
  // Runs even after the queue has failed, and at once if HIP refuses it: events and waits are
  // built from host functions, and dropping one would leave somebody waiting forever.
  void host_function(void (*function)(void*), void* user_data) override;
  void wait_for(Queue& other) override;
  Status synchronize() override;
  bool idle() override;

 private:
  HipQueue(const HipFunctions& functions, int device, int compute_units, HipStream stream);

  // `parameters` holds the kernel's parameters and its workspace word at `workspace_offset`.
  void launch_cooperative(const HipKernel& kernel, const LaunchShape& shape,
                          std::vector<uint8_t>& parameters, uint32_t workspace_offset);
  // Whether every block of `shape` fits on the device at once, as HIP's occupancy says.
  bool cooperative_grid_fits(const HipKernel& kernel, const LaunchShape& shape);
  // This queue's ptx::host_abi::GridWorkspace in device memory, reset on the stream for the
  // next cooperative launch; null, the queue failed, when HIP refuses.
  void* reset_grid_workspace();

  // Makes this queue's device current for the calling thread, as every HIP call needs.
  bool select_device();
  // Keeps the first failure; true when `error` is hip_success.
  bool succeeded(int error, std::string_view call);
  void fail(Error error);
  bool failed();

  const HipFunctions& functions_;
  int device_;
  int compute_units_;
  HipStream stream_;
  // Allocated by the first cooperative launch; launches on one stream run one after another,
  // so they share it.
  void* grid_workspace_ = nullptr;  // guarded by cooperative_mutex_
  // Held from a workspace's reset through its launch: another launch's reset may not come between.
  std::mutex cooperative_mutex_;
  std::mutex failure_mutex_;
  std::optional<Error> failure_;  // the first error, guarded by failure_mutex_
};

}  // namespace xcuda::runtime::hip
