// Test-only loader for the objects the PTX compiler emits: links one with ORC, the way the
// runtime's host backend will, and runs a kernel over a grid one block after another.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler.h"

namespace xcuda::ptx::testing {

// A kernel's parameter buffer, packed at the offsets the compiler reported.
class ParameterBuffer {
 public:
  explicit ParameterBuffer(const KernelInfo& kernel) : kernel_(kernel), bytes_(kernel.parameter_buffer_size) {}

  template <typename Value>
  ParameterBuffer& set(size_t index, const Value& value) {
    const ParameterInfo& parameter = kernel_.parameters.at(index);
    if (sizeof(Value) != parameter.size) throw std::invalid_argument("parameter size mismatch");
    std::memcpy(bytes_.data() + parameter.offset, &value, sizeof(Value));
    return *this;
  }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  const KernelInfo& kernel_;
  std::vector<uint8_t> bytes_;
};

struct PrintfCall {
  std::string format;
  std::vector<uint8_t> arguments;  // the first 64 bytes of the argument buffer
};

class LoadedModule {
 public:
  // Compiles `ptx` (CompileOptions::threads: `threads`) and links the object; check
  // `diagnostics()` when `ok()` is false.
  explicit LoadedModule(std::string_view ptx, int optimization_level = 3, unsigned threads = 1);
  // The same, with the options given.
  LoadedModule(std::string_view ptx, const CompileOptions& options);
  ~LoadedModule();

  bool ok() const { return ok_; }
  const std::vector<Diagnostic>& diagnostics() const { return result_.diagnostics; }
  std::string diagnostics_text() const;
  const ModuleInfo& info() const { return result_.module; }
  const std::vector<PassTime>& pass_times() const { return result_.pass_times; }
  size_t object_bytes() const { return result_.object.size(); }
  // The object's named symbols, each with whether the object defines it or only refers to it.
  std::vector<std::pair<std::string, bool>> symbols() const;
  const KernelInfo& kernel(std::string_view name) const;
  void* global(std::string_view name) const;

  // Runs every block of the grid, in order, on this thread.
  void launch(std::string_view kernel_name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
              const ParameterBuffer& parameters, uint32_t dynamic_shared_bytes = 0);

  static std::vector<PrintfCall>& printed();

 private:
  struct Jit;
  CompileResult result_;
  std::unique_ptr<Jit> jit_;
  bool ok_ = false;
};

}  // namespace xcuda::ptx::testing
