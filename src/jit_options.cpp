#include "src/jit_options.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace xcuda::api {

namespace {

// Option values are passed in the pointer-sized slots themselves.
unsigned slot_integer(void* value) {
  return static_cast<unsigned>(reinterpret_cast<uintptr_t>(value));
}

}  // namespace

CUresult JitOptions::read(const char* function, unsigned count, CUjit_option* options,
                          void** values, JitOptions& result) {
  if (count > 0 && (!options || !values))
    return fail(function, CUDA_ERROR_INVALID_VALUE, "JIT options are null");
  result = JitOptions{};
  for (unsigned index = 0; index < count; ++index) {
    CUjit_option option = options[index];
    if (static_cast<unsigned>(option) >= CU_JIT_NUM_OPTIONS)
      return fail(function, CUDA_ERROR_INVALID_VALUE,
                  fmt::format("JIT option {} (at index {}) is unknown",
                              static_cast<unsigned>(option), index));
    void* value = values[index];
    switch (option) {
      case CU_JIT_INFO_LOG_BUFFER: result.info_.buffer = static_cast<char*>(value); break;
      case CU_JIT_ERROR_LOG_BUFFER: result.error_.buffer = static_cast<char*>(value); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        result.info_.size_slot = &values[index];
        result.info_.capacity = slot_integer(value);
        break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        result.error_.size_slot = &values[index];
        result.error_.capacity = slot_integer(value);
        break;
      case CU_JIT_WALL_TIME: result.wall_time_slot_ = &values[index]; break;
      case CU_JIT_LOG_VERBOSE: result.verbose_ = slot_integer(value) != 0; break;
      // The rest tune NVIDIA's compiler (registers, optimisation level, target, cache mode…):
      // xcuda's own compiler has nothing they would change.
      default: break;
    }
  }
  return CUDA_SUCCESS;
}

void JitOptions::Log::fill(std::string_view text) const {
  if (!size_slot) return;
  // The length written back is the text's, without its NUL, or where the text was cut short the
  // whole buffer's (as NVIDIA's driver 580 answers).
  size_t written = 0;
  if (buffer && capacity > 0) {
    size_t copied = std::min<size_t>(text.size(), capacity - 1);
    std::memcpy(buffer, text.data(), copied);
    buffer[copied] = '\0';
    written = copied < text.size() ? capacity : copied;
  }
  *size_slot = reinterpret_cast<void*>(uintptr_t{written});
}

void JitOptions::write_back(std::string_view info, std::string_view error,
                            double milliseconds) const {
  info_.fill(info);
  error_.fill(error);
  if (!wall_time_slot_) return;
  float wall = static_cast<float>(milliseconds);
  std::memcpy(wall_time_slot_, &wall, sizeof wall);
}

}  // namespace xcuda::api
