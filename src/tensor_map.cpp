// Tensor map object management: cuTensorMapEncodeTiled and cuTensorMapReplaceAddress. The
// im2col encodings are not implemented yet (unsupported.cpp answers for them).
#include "src/api.h"

#include "runtime/tensor_map.h"

using namespace xcuda;

XCUDA_EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType,
                                             cuuint32_t tensorRank, void* globalAddress, const cuuint64_t* globalDim,
                                             const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
                                             const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                             CUtensorMapFloatOOBfill oobFill) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(tensorMap && globalAddress && globalDim && boxDim && elementStrides, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_REQUIRE(globalStrides || tensorRank == 1, CUDA_ERROR_INVALID_VALUE, "globalStrides is null");
  runtime::TiledTensorDescription description;
  description.element_type = static_cast<uint32_t>(tensorDataType);
  description.rank = tensorRank;
  description.global_address = globalAddress;
  description.global_dims = globalDim;
  description.global_strides = globalStrides;
  description.box = boxDim;
  description.element_strides = elementStrides;
  description.interleave = static_cast<uint32_t>(interleave);
  description.swizzle = static_cast<uint32_t>(swizzle);
  description.l2_promotion = static_cast<uint32_t>(l2Promotion);
  description.fill = static_cast<uint32_t>(oobFill);
  XCUDA_CHECK_STATUS(runtime::encode_tiled_tensor_map(description, tensorMap));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuTensorMapReplaceAddress(CUtensorMap* tensorMap, void* globalAddress) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  XCUDA_REQUIRE(tensorMap && globalAddress, CUDA_ERROR_INVALID_VALUE, "null pointer");
  XCUDA_CHECK_STATUS(runtime::replace_tensor_map_address(tensorMap, globalAddress));
  return CUDA_SUCCESS;
}
