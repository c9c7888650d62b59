// How errors travel inside xcuda: a code the API edge can map to a CUresult, and a message for
// the log that says what went wrong and where. Nothing below src/ throws across a boundary.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace xcuda {

enum class ErrorCode {
  invalid_value,
  invalid_image,
  invalid_ptx,
  no_binary_for_gpu,
  invalid_source,  // a link that leaves references undefined (NVIDIA's driver: CUDA_ERROR_INVALID_SOURCE)
  not_found,
  out_of_memory,
  not_supported,
  invalid_handle,
  invalid_context,
  not_initialized,
  illegal_address,
  misaligned_address,
  illegal_instruction,  // an instruction the GPU refuses to carry out as given
  launch_failed,
  assertion_failed,  // a device-side assert(): CUDA_ERROR_ASSERT
  launch_out_of_resources,
  // A cooperative grid whose blocks cannot all run on the device at once.
  cooperative_launch_too_large,
  not_ready,
  illegal_state,
  // Stream capture and graphs, as the CUDA_ERROR_STREAM_CAPTURE_* codes say.
  stream_capture_unsupported,
  stream_capture_invalidated,
  stream_capture_unmatched,
  stream_capture_unjoined,
  stream_capture_isolation,
  stream_capture_implicit,
  stream_capture_wrong_thread,
  graph_exec_update_failure,
  unknown,
};

struct Error {
  ErrorCode code = ErrorCode::unknown;
  std::string message;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(Error error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Expected<void>;

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace xcuda
