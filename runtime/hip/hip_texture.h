// Textures and surfaces as generated code for AMD GPUs reads them: a CUtexObject or
// CUsurfObject on the HIP backend is the device address of the ptx::amdgpu_abi::TextureObject
// made here, which HipBackend::create_texture_object copies to device memory. (tests/amdgpu
// runs the generated sampler on this encoding.)
#pragma once

#include "ptx/target/amdgpu/amdgpu_abi.h"
#include "runtime/status.h"
#include "runtime/texture.h"

namespace xcuda::runtime::hip {

// The device's description of `texture`, whose images' data are device addresses. Fails with
// not_supported for cube maps and for more than amdgpu_abi::max_texture_levels levels.
Expected<ptx::amdgpu_abi::TextureObject> encode_texture_object(const TextureDescriptor& texture);

}  // namespace xcuda::runtime::hip
