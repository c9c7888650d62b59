// The XCUDA_* environment variables, read and checked once. A malformed value is reported in
// the log and replaced by the default; it never stops the application.
#pragma once

#include <string>

namespace xcuda::runtime {

enum class BackendChoice { automatic, host, hip };

struct Environment {
  std::string log_level = "off";  // XCUDA_LOG: off|error|warn|info|debug|trace
  std::string log_file;           // XCUDA_LOG_FILE: empty means stderr
  int compute_major = 8;          // XCUDA_CC, e.g. "8.6" or "86"
  int compute_minor = 6;
  BackendChoice backend = BackendChoice::automatic;  // XCUDA_BACKEND: auto|host|hip
  unsigned host_threads = 0;      // XCUDA_HOST_THREADS: workers for the host device, 0 = one per core

  // What was wrong with the environment, for the log once the logger exists.
  std::string problems;
};

const Environment& environment();

}  // namespace xcuda::runtime
