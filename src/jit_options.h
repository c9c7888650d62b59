// The JIT options of cuModuleLoadDataEx, cuLinkCreate and cuLibraryLoadData: which are known,
// and the results the driver writes back into the caller's option values (the info and error
// logs, the bytes each holds, the wall time).
#pragma once

#include <string>
#include <string_view>

#include "src/api.h"

namespace xcuda::api {

class JitOptions {
 public:
  // Reads the caller's arrays, which must stay valid until write_back (for a link state, until
  // it is destroyed, as CUDA documents). Unknown options fail with CUDA_ERROR_INVALID_VALUE,
  // as NVIDIA's driver answers them.
  static CUresult read(const char* function, unsigned count, CUjit_option* options,
                       void** values, JitOptions& result);

  // CU_JIT_LOG_VERBOSE: whether the info log may say more than nothing.
  bool verbose() const { return verbose_; }

  // Fills the logs the caller asked for (each cut to its buffer, NUL-terminated), writes back
  // how many bytes each holds and, with CU_JIT_WALL_TIME, `milliseconds` as a float.
  void write_back(std::string_view info, std::string_view error, double milliseconds) const;

 private:
  // A log buffer the caller gave, and the slot that held its capacity and gets its length.
  struct Log {
    char* buffer = nullptr;
    void** size_slot = nullptr;
    unsigned capacity = 0;
    void fill(std::string_view text) const;
  };
  Log info_;
  Log error_;
  void** wall_time_slot_ = nullptr;
  bool verbose_ = false;
};

}  // namespace xcuda::api
