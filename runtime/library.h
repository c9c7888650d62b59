// Context-independent libraries (cuLibraryLoadData), which is how cudart 12+ registers the
// fatbins embedded in an executable. A library keeps its PTX and loads it into a module for a
// context only when a kernel or global of it is first needed there, and the module compiles a
// kernel only when it is launched: cudart registers every fatbin at start-up, including ones
// whose kernels the program never launches.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "runtime/module.h"

namespace xcuda::runtime {

class Library;

// A kernel of a library, valid in every context (CUkernel).
class Kernel {
 public:
  Kernel(Library& library, std::string name) : library_(library), name_(std::move(name)) {}
  Library& library() const { return library_; }
  const std::string& name() const { return name_; }
  // The kernel's function in `context`, loading the library there on first use.
  Expected<Function*> function(Context& context);

 private:
  Library& library_;
  std::string name_;
};

class Library {
 public:
  // Reads the image now (so a damaged container fails here) and the PTX later.
  static Expected<std::unique_ptr<Library>> load(const void* image, std::string_view origin);
  ~Library();

  Expected<Module*> module(Context& context);
  Expected<Kernel*> kernel(std::string_view name);
  // Kernels the library defines, loading it in `context` to find out.
  Expected<std::vector<Kernel*>> kernels(Context& context);

 private:
  Library(std::shared_ptr<const std::string> ptx, std::string origin);

  std::shared_ptr<const std::string> ptx_;
  std::string origin_;
  std::mutex mutex_;
  std::map<Context*, std::unique_ptr<Module>> modules_;
  std::map<std::string, std::unique_ptr<Kernel>, std::less<>> kernels_;
  std::set<std::string, std::less<>> kernel_names_;  // every kernel the PTX defines, once scanned
};

HandleRegistry<Library>& live_libraries();
HandleRegistry<Kernel>& live_kernels();

}  // namespace xcuda::runtime
