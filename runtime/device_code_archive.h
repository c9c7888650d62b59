// Device code inside host build products, as cuLinkAddData/cuLinkAddFile take them:
// CU_JIT_INPUT_OBJECT, a host object built with nvcc -rdc=true (its device code in a fatbin in
// the __nv_relfatbin section; .nv_fatbin in objects built without -rdc), and
// CU_JIT_INPUT_LIBRARY, an ar archive of such objects (nvcc -lib -rdc=true), of fatbins, or of
// PTX. Like fatbin_reader.h, nothing here trusts the input: every read is bounds-checked.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/linker.h"
#include "runtime/status.h"

namespace xcuda::runtime {

// The PTX for `target_arch` of every fatbin in a 64-bit little-endian ELF host object, named
// after `name`; none for an object without device code. invalid_image for a damaged object.
Expected<std::vector<LinkInput>> object_device_code(std::span<const uint8_t> object,
                                                    int target_arch, std::string_view name);

// The PTX of every archive member that holds device code: host objects as above, fatbins and
// PTX texts, each named "archive(member)". invalid_image for a damaged archive.
Expected<std::vector<LinkInput>> archive_device_code(std::span<const uint8_t> archive,
                                                     int target_arch, std::string_view name);

}  // namespace xcuda::runtime
