// JIT linking (cuLink*, and the images of programs built with nvcc -rdc=true): several PTX
// modules, where one declares `.extern` a function or variable another defines, become one PTX
// module that cuModuleLoadData and cuLibraryLoadData load like any other. NVIDIA's linker joins
// SASS; ours joins PTX text, since PTX is what xcuda compiles.
#pragma once

#include <span>
#include <string>

#include "runtime/fatbin_reader.h"
#include "runtime/status.h"

namespace xcuda::runtime {

struct LinkInput {
  std::string ptx;
  std::string name;  // what diagnostics call the input
};

// One PTX text holding every input: `.extern` variables another input defines are dropped,
// internal (non-.visible) names two inputs both use are renamed in the later one, duplicate
// .weak definitions are kept once. Fails with invalid_source naming every undefined
// reference and the input that makes it, and with invalid_ptx for a name defined twice.
Expected<std::string> link_ptx(std::span<const LinkInput> inputs);

// load_ptx, plus the device-linked images nvcc -rdc=true builds: a version-2 fatbin wrapper
// whose fatbin (nvlink's output) holds only SASS, but whose prelinked list points at each
// translation unit's fatbin with its PTX, which are then linked with link_ptx.
Expected<LoadedPtx> load_linked_ptx(const void* image, int target_arch,
                                    size_t size_bound = unknown_size);

}  // namespace xcuda::runtime
