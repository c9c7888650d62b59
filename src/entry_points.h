// The entry-point table (entry_points.def) as data, for cuGetProcAddress.
#pragma once

#include <span>
#include <string_view>

namespace xcuda::api {

struct EntryPoint {
  std::string_view name;  // as the caller asks for it: "cuMemAlloc"
  int version;            // the CUDA version that introduced this signature, e.g. 3020
  bool per_thread;        // the per-thread-default-stream variant
  void* function;
};

std::span<const EntryPoint> entry_points();

}  // namespace xcuda::api
