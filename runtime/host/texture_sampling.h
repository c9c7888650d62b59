// What generated code calls for tex, tld4, txq, suld, sust, sured and suq on the host backend
// (the contract is in ptx/host_abi.h). Filtering follows the CUDA C++ Programming Guide's
// "Texture Fetching" appendix, including its 9-bit fixed-point interpolation weights, so that
// results match NVIDIA hardware.
#pragma once

#include <cstdint>

#include "ptx/host_abi.h"

namespace xcuda::runtime::host {

using ptx::host_abi::TextureWords;

TextureWords texture_fetch(uint64_t object, uint32_t operation, TextureWords coordinates,
                           float level);
TextureWords surface_load(uint64_t object, uint32_t operation, TextureWords coordinates);
void surface_store(uint64_t object, uint32_t operation, TextureWords coordinates,
                   TextureWords values);
void surface_reduce(uint64_t object, uint32_t operation, TextureWords coordinates, uint64_t value);
uint32_t resource_query(uint64_t object, uint32_t query, uint32_t level);

}  // namespace xcuda::runtime::host
