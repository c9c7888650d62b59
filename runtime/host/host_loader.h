// Links host objects from the PTX compiler into the running process with LLVM's ORC JIT, one
// JITDylib per module, so that unloading a module frees exactly its code and data. LLVM stays in
// the .cpp: this header is all the rest of the backend sees.
#pragma once

#include <memory>
#include <span>

#include "ptx/host_abi.h"
#include "runtime/backend.h"

namespace xcuda::runtime::host {

// The host target's builtin library (ptx/target/host/builtin_library.h), compiled when xcuda
// was built: the functions every object the loader links may call.
std::span<const ptx::host_abi::Builtin> builtin_library();

class HostLoader : public std::enable_shared_from_this<HostLoader> {
 public:
  // Fails when LLVM cannot target the machine it runs on.
  static Expected<std::shared_ptr<HostLoader>> create();
  ~HostLoader();

  // Links the object, resolving the runtime callbacks of ptx/host_abi.h and any C library
  // function the code calls, and finds every kernel's block function and every global the
  // description names. A module keeps its loader alive.
  Expected<std::unique_ptr<LoadedModule>> load(const ptx::CompileResult& compiled);

  struct Jit;  // the LLVM side, defined in the .cpp

 private:
  explicit HostLoader(std::unique_ptr<Jit> jit);

  std::unique_ptr<Jit> jit_;
};

}  // namespace xcuda::runtime::host
