/*
 * xcuda/cuda.h - xcuda's description of the CUDA Driver API binary interface.
 *
 * Describes the interface of libcuda.so.1 as of CUDA 13.0: types, enumerations,
 * constants, structure layouts and the exported entry points. It was written for
 * xcuda from the public CUDA Driver API reference; names, values and layouts
 * follow that ABI exactly (tests/abi/ checks them against a CUDA toolkit).
 *
 * Knobs (define before including):
 *   XCUDA_NO_PROTOTYPES          only types, enumerations and constants.
 *   XCUDA_EXPORTED_NAMES_ONLY    do not map plain API names (cuMemAlloc, ...) to
 *                                the versioned symbols (cuMemAlloc_v2, ...); also
 *                                declares the legacy entry points still exported
 *                                under those plain names.
 *   CUDA_API_PER_THREAD_DEFAULT_STREAM
 *                                plain names map to the _ptds / _ptsz symbols.
 *
 * Usable from C11 and C++11 or later (anonymous unions are part of the ABI);
 * depends only on <stddef.h> and <stdint.h>.
 */
#ifndef XCUDA_CUDA_H
#define XCUDA_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* API version described here: 1000 * major + 10 * minor. */
#define CUDA_VERSION 13000

/* Calling convention of entry points and of callbacks (only differs on Windows). */
#ifndef CUDAAPI
#if defined(_WIN32)
#define CUDAAPI __stdcall
#else
#define CUDAAPI
#endif
#endif
#ifndef CUDA_CB
#if defined(_WIN32)
#define CUDA_CB __stdcall
#else
#define CUDA_CB
#endif
#endif

/* Over-alignment of a structure member (CUtensorMap). */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define XCUDA_ALIGNAS(n) alignas(n)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define XCUDA_ALIGNAS(n) _Alignas(n)
#elif defined(__GNUC__)
#define XCUDA_ALIGNAS(n) __attribute__((aligned(n)))
#else
#define XCUDA_ALIGNAS(n)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types 1: Scalar, handle and identifier types -------------------------- */

/* Fixed-width integers used throughout the API. */
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;

/* Device virtual address: an integer as wide as a host pointer. */
#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long CUdeviceptr_v2;
#else
typedef unsigned int CUdeviceptr_v2;
#endif
typedef CUdeviceptr_v2 CUdeviceptr;

/* Device ordinal. */
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

/* Opaque handles; each points to an object owned by the driver. */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef struct CUtexref_st *CUtexref;
typedef struct CUsurfref_st *CUsurfref;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef struct CUgraphicsResource_st *CUgraphicsResource;
typedef struct CUextMemory_st *CUexternalMemory;
typedef struct CUextSemaphore_st *CUexternalSemaphore;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUuserObject_st *CUuserObject;
typedef struct CUgraphDeviceUpdatableNode_st *CUgraphDeviceNode; /* kernel node updatable from the device */
typedef struct CUasyncCallbackEntry_st *CUasyncCallbackHandle;
typedef struct CUgreenCtx_st *CUgreenCtx;
typedef struct CUlinkState_st *CUlinkState;                     /* pending JIT link session */
typedef struct CUdevResourceDesc_st *CUdevResourceDesc;         /* set of device resources (green contexts) */
typedef struct CUlogsCallbackEntry_st *CUlogsCallbackHandle;

/* 64-bit object identifiers (not pointers). */
typedef unsigned long long CUtexObject_v1;
typedef CUtexObject_v1 CUtexObject;
typedef unsigned long long CUsurfObject_v1;
typedef CUsurfObject_v1 CUsurfObject;
typedef unsigned long long CUmemGenericAllocationHandle_v1;
typedef CUmemGenericAllocationHandle_v1 CUmemGenericAllocationHandle;
typedef cuuint64_t CUgraphConditionalHandle;  /* condition variable of a conditional graph node */
typedef unsigned int CUlogIterator;           /* position in the driver's error log */

/* Pseudo device ordinals accepted where a CUdevice names a memory location. */
#define CU_DEVICE_CPU     ((CUdevice)-1)
#define CU_DEVICE_INVALID ((CUdevice)-2)

/* Special stream handles: the legacy NULL stream and the per-thread default stream. */
#define CU_STREAM_LEGACY     ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

/* 16-byte device UUID (shared with the runtime API, which may define it first). */
#ifndef CU_UUID_HAS_BEEN_DEFINED
#define CU_UUID_HAS_BEEN_DEFINED
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;
#endif

/* Size of the opaque inter-process handles below. */
#define CU_IPC_HANDLE_SIZE 64

/* Exportable fabric handle of a physical allocation. */
typedef struct CUmemFabricHandle_st {
    unsigned char data[64];
} CUmemFabricHandle_v1;
typedef CUmemFabricHandle_v1 CUmemFabricHandle;

/* Inter-process handle for an event (cuIpcGetEventHandle). */
typedef struct CUipcEventHandle_st {
    char reserved[CU_IPC_HANDLE_SIZE];
} CUipcEventHandle_v1;
typedef CUipcEventHandle_v1 CUipcEventHandle;

/* Inter-process handle for device memory (cuIpcGetMemHandle). */
typedef struct CUipcMemHandle_st {
    char reserved[CU_IPC_HANDLE_SIZE];
} CUipcMemHandle_v1;
typedef CUipcMemHandle_v1 CUipcMemHandle;

/* Flags of cuIpcOpenMemHandle. */
typedef enum CUipcMem_flags_enum {
    CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1,
} CUipcMem_flags;

/* ---- Types 2: Result codes ------------------------------------------------- */

/* Status returned by every driver API entry point. */
typedef enum cudaError_enum {
    CUDA_SUCCESS                              = 0,
    CUDA_ERROR_INVALID_VALUE                  = 1,
    CUDA_ERROR_OUT_OF_MEMORY                  = 2,
    CUDA_ERROR_NOT_INITIALIZED                = 3,
    CUDA_ERROR_DEINITIALIZED                  = 4,
    CUDA_ERROR_PROFILER_DISABLED              = 5,
    CUDA_ERROR_PROFILER_NOT_INITIALIZED       = 6,
    CUDA_ERROR_PROFILER_ALREADY_STARTED       = 7,
    CUDA_ERROR_PROFILER_ALREADY_STOPPED       = 8,
    CUDA_ERROR_STUB_LIBRARY                   = 34,
    CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER     = 36,
    CUDA_ERROR_DEVICE_UNAVAILABLE             = 46,
    CUDA_ERROR_NO_DEVICE                      = 100,
    CUDA_ERROR_INVALID_DEVICE                 = 101,
    CUDA_ERROR_DEVICE_NOT_LICENSED            = 102,
    CUDA_ERROR_INVALID_IMAGE                  = 200,
    CUDA_ERROR_INVALID_CONTEXT                = 201,
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT        = 202,
    CUDA_ERROR_MAP_FAILED                     = 205,
    CUDA_ERROR_UNMAP_FAILED                   = 206,
    CUDA_ERROR_ARRAY_IS_MAPPED                = 207,
    CUDA_ERROR_ALREADY_MAPPED                 = 208,
    CUDA_ERROR_NO_BINARY_FOR_GPU              = 209,
    CUDA_ERROR_ALREADY_ACQUIRED               = 210,
    CUDA_ERROR_NOT_MAPPED                     = 211,
    CUDA_ERROR_NOT_MAPPED_AS_ARRAY            = 212,
    CUDA_ERROR_NOT_MAPPED_AS_POINTER          = 213,
    CUDA_ERROR_ECC_UNCORRECTABLE              = 214,
    CUDA_ERROR_UNSUPPORTED_LIMIT              = 215,
    CUDA_ERROR_CONTEXT_ALREADY_IN_USE         = 216,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED        = 217,
    CUDA_ERROR_INVALID_PTX                    = 218,
    CUDA_ERROR_INVALID_GRAPHICS_CONTEXT       = 219,
    CUDA_ERROR_NVLINK_UNCORRECTABLE           = 220,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND         = 221,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION        = 222,
    CUDA_ERROR_JIT_COMPILATION_DISABLED       = 223,
    CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY      = 224,
    CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC       = 225,
    CUDA_ERROR_CONTAINED                      = 226,
    CUDA_ERROR_INVALID_SOURCE                 = 300,
    CUDA_ERROR_FILE_NOT_FOUND                 = 301,
    CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED      = 303,
    CUDA_ERROR_OPERATING_SYSTEM               = 304,
    CUDA_ERROR_INVALID_HANDLE                 = 400,
    CUDA_ERROR_ILLEGAL_STATE                  = 401,
    CUDA_ERROR_LOSSY_QUERY                    = 402,
    CUDA_ERROR_NOT_FOUND                      = 500,
    CUDA_ERROR_NOT_READY                      = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS                = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES        = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT                 = 702,
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING  = 703,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED    = 704,
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED        = 705,
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE         = 708,
    CUDA_ERROR_CONTEXT_IS_DESTROYED           = 709,
    CUDA_ERROR_ASSERT                         = 710,
    CUDA_ERROR_TOO_MANY_PEERS                 = 711,
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED     = 713,
    CUDA_ERROR_HARDWARE_STACK_ERROR           = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION            = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS             = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE          = 717,
    CUDA_ERROR_INVALID_PC                     = 718,
    CUDA_ERROR_LAUNCH_FAILED                  = 719,
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE   = 720,
    CUDA_ERROR_TENSOR_MEMORY_LEAK             = 721,
    CUDA_ERROR_NOT_PERMITTED                  = 800,
    CUDA_ERROR_NOT_SUPPORTED                  = 801,
    CUDA_ERROR_SYSTEM_NOT_READY               = 802,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH         = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_MPS_CONNECTION_FAILED          = 805,
    CUDA_ERROR_MPS_RPC_FAILURE                = 806,
    CUDA_ERROR_MPS_SERVER_NOT_READY           = 807,
    CUDA_ERROR_MPS_MAX_CLIENTS_REACHED        = 808,
    CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED    = 809,
    CUDA_ERROR_MPS_CLIENT_TERMINATED          = 810,
    CUDA_ERROR_CDP_NOT_SUPPORTED              = 811,
    CUDA_ERROR_CDP_VERSION_MISMATCH           = 812,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED     = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED     = 901,
    CUDA_ERROR_STREAM_CAPTURE_MERGE           = 902,
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED       = 903,
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED        = 904,
    CUDA_ERROR_STREAM_CAPTURE_ISOLATION       = 905,
    CUDA_ERROR_STREAM_CAPTURE_IMPLICIT        = 906,
    CUDA_ERROR_CAPTURED_EVENT                 = 907,
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD    = 908,
    CUDA_ERROR_TIMEOUT                        = 909,
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE      = 910,
    CUDA_ERROR_EXTERNAL_DEVICE                = 911,
    CUDA_ERROR_INVALID_CLUSTER_SIZE           = 912,
    CUDA_ERROR_FUNCTION_NOT_LOADED            = 913,
    CUDA_ERROR_INVALID_RESOURCE_TYPE          = 914,
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915,
    CUDA_ERROR_KEY_ROTATION                   = 916,
    CUDA_ERROR_UNKNOWN                        = 999,
} CUresult;

/* ---- Types 3: Devices ------------------------------------------------------ */

/* Queries of cuDeviceGetAttribute. */
typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK                         = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X                               = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y                               = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z                               = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X                                = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y                                = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z                                = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK                   = 8,
    CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK                       = 8,
    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY                         = 9,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE                                     = 10,
    CU_DEVICE_ATTRIBUTE_MAX_PITCH                                     = 11,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK                       = 12,
    CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK                           = 12,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE                                    = 13,
    CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT                             = 14,
    CU_DEVICE_ATTRIBUTE_GPU_OVERLAP                                   = 15,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT                          = 16,
    CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT                           = 17,
    CU_DEVICE_ATTRIBUTE_INTEGRATED                                    = 18,
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY                           = 19,
    CU_DEVICE_ATTRIBUTE_COMPUTE_MODE                                  = 20,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH                       = 21,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH                       = 22,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT                      = 23,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH                       = 24,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT                      = 25,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH                       = 26,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH               = 27,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT              = 28,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS              = 29,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH                 = 27,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT                = 28,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES             = 29,
    CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT                             = 30,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS                            = 31,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED                                   = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID                                    = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID                                 = 34,
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER                                    = 35,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE                             = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH                       = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE                                 = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR                = 39,
    CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT                            = 40,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING                            = 41,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH               = 42,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS              = 43,
    CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER                              = 44,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH                = 45,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT               = 46,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE             = 47,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE            = 48,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE             = 49,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID                                 = 50,
    CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT                       = 51,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH                  = 52,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH          = 53,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS         = 54,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH                       = 55,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH                       = 56,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT                      = 57,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH                       = 58,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT                      = 59,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH                       = 60,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH               = 61,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS              = 62,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH               = 63,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT              = 64,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS              = 65,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH                  = 66,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH          = 67,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS         = 68,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH                = 69,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH                = 70,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT               = 71,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH                = 72,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH             = 73,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT            = 74,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR                      = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR                      = 76,
    CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH             = 77,
    CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED                   = 78,
    CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED                     = 79,
    CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED                      = 80,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR          = 81,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR              = 82,
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY                                = 83,
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD                               = 84,
    CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID                      = 85,
    CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED                  = 86,
    CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO         = 87,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS                        = 88,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS                     = 89,
    CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED                  = 90,
    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM       = 91,
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1                     = 92,
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1              = 93,
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1              = 94,
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH                            = 95,
    CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH               = 96,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN             = 97,
    CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES                       = 98,
    CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED                       = 99,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES  = 100,
    CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST           = 101,
    CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED          = 102,
    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED           = 102,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED   = 103,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED            = 104,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED        = 105,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR                 = 106,
    CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED                 = 107,
    CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE                  = 108,
    CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE                 = 109,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED       = 110,
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK              = 111,
    CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED                   = 112,
    CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED             = 113,
    CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED          = 114,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED                        = 115,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED                     = 116,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS          = 117,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING               = 118,
    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES                = 119,
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH                                = 120,
    CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED         = 121,
    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS                 = 122,
    CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR                 = 123,
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED                             = 124,
    CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED                           = 125,
    CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT                         = 126,
    CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED                   = 127,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED                  = 128,
    CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS                     = 129,
    CU_DEVICE_ATTRIBUTE_NUMA_CONFIG                                   = 130,
    CU_DEVICE_ATTRIBUTE_NUMA_ID                                       = 131,
    CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED                           = 132,
    CU_DEVICE_ATTRIBUTE_MPS_ENABLED                                   = 133,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID                                  = 134,
    CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED                           = 135,
    CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK                 = 136,
    CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH                 = 137,
    CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED                          = 138,
    CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID                             = 139,
    CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID                          = 140,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED              = 142,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED             = 143,
    CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED                   = 144,
    CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED      = 145,
    CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED                  = 146,
    CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED     = 147,
    CU_DEVICE_ATTRIBUTE_MAX                                           = 148,
} CUdevice_attribute;

/* Legacy device properties (cuDeviceGetProperties). */
typedef struct CUdevprop_st {
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int sharedMemPerBlock;
    int totalConstantMemory;
    int SIMDWidth;
    int memPitch;
    int regsPerBlock;
    int clockRate;
    int textureAlign;
} CUdevprop_v1;
typedef CUdevprop_v1 CUdevprop;

/* Compute mode of a device. */
typedef enum CUcomputemode_enum {
    CU_COMPUTEMODE_DEFAULT           = 0,
    CU_COMPUTEMODE_PROHIBITED        = 2,
    CU_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
} CUcomputemode;

/* Queries of cuDeviceGetP2PAttribute. */
typedef enum CUdevice_P2PAttribute_enum {
    CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK                     = 1,
    CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED                     = 2,
    CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED              = 3,
    CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED              = 4,
    CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED          = 4,
    CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 5,
} CUdevice_P2PAttribute;

/* Atomic operations named in cuDeviceGetHostAtomicCapabilities / P2P queries. */
typedef enum CUatomicOperation_enum {
    CU_ATOMIC_OPERATION_INTEGER_ADD       = 0,
    CU_ATOMIC_OPERATION_INTEGER_MIN       = 1,
    CU_ATOMIC_OPERATION_INTEGER_MAX       = 2,
    CU_ATOMIC_OPERATION_INTEGER_INCREMENT = 3,
    CU_ATOMIC_OPERATION_INTEGER_DECREMENT = 4,
    CU_ATOMIC_OPERATION_AND               = 5,
    CU_ATOMIC_OPERATION_OR                = 6,
    CU_ATOMIC_OPERATION_XOR               = 7,
    CU_ATOMIC_OPERATION_EXCHANGE          = 8,
    CU_ATOMIC_OPERATION_CAS               = 9,
    CU_ATOMIC_OPERATION_FLOAT_ADD         = 10,
    CU_ATOMIC_OPERATION_FLOAT_MIN         = 11,
    CU_ATOMIC_OPERATION_FLOAT_MAX         = 12,
    CU_ATOMIC_OPERATION_MAX               = 13,
} CUatomicOperation;

/* Capability bits reported for an atomic operation. */
typedef enum CUatomicOperationCapability_enum {
    CU_ATOMIC_CAPABILITY_SIGNED      = 0x1,
    CU_ATOMIC_CAPABILITY_UNSIGNED    = 0x2,
    CU_ATOMIC_CAPABILITY_REDUCTION   = 0x4,
    CU_ATOMIC_CAPABILITY_SCALAR_32   = 0x8,
    CU_ATOMIC_CAPABILITY_SCALAR_64   = 0x10,
    CU_ATOMIC_CAPABILITY_SCALAR_128  = 0x20,
    CU_ATOMIC_CAPABILITY_VECTOR_32x4 = 0x40,
} CUatomicOperationCapability;

/* Values of CU_DEVICE_ATTRIBUTE_NUMA_CONFIG. */
typedef enum CUdeviceNumaConfig_enum {
    CU_DEVICE_NUMA_CONFIG_NONE      = 0,
    CU_DEVICE_NUMA_CONFIG_NUMA_NODE = 1,
} CUdeviceNumaConfig;

/* Bits of CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS. */
typedef enum CUflushGPUDirectRDMAWritesOptions_enum {
    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST   = 0x1,
    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS = 0x2,
} CUflushGPUDirectRDMAWritesOptions;

/* Values of CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING. */
typedef enum CUGPUDirectRDMAWritesOrdering_enum {
    CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE        = 0,
    CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER       = 100,
    CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES = 200,
} CUGPUDirectRDMAWritesOrdering;

/* Scope argument of cuFlushGPUDirectRDMAWrites. */
typedef enum CUflushGPUDirectRDMAWritesScope_enum {
    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER       = 100,
    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES = 200,
} CUflushGPUDirectRDMAWritesScope;

/* Target argument of cuFlushGPUDirectRDMAWrites. */
typedef enum CUflushGPUDirectRDMAWritesTarget_enum {
    CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX = 0,
} CUflushGPUDirectRDMAWritesTarget;

/* ---- Types 4: Contexts ----------------------------------------------------- */

/* Context creation flags (scheduling policy in the low bits). */
typedef enum CUctx_flags_enum {
    CU_CTX_SCHED_AUTO           = 0x0,
    CU_CTX_SCHED_SPIN           = 0x1,
    CU_CTX_SCHED_YIELD          = 0x2,
    CU_CTX_SCHED_BLOCKING_SYNC  = 0x4,
    CU_CTX_BLOCKING_SYNC        = 0x4,
    CU_CTX_SCHED_MASK           = 0x7,
    CU_CTX_MAP_HOST             = 0x8,
    CU_CTX_LMEM_RESIZE_TO_MAX   = 0x10,
    CU_CTX_COREDUMP_ENABLE      = 0x20,
    CU_CTX_USER_COREDUMP_ENABLE = 0x40,
    CU_CTX_SYNC_MEMOPS          = 0x80,
    CU_CTX_FLAGS_MASK           = 0xff,
} CUctx_flags;

/* Per-context limits (cuCtxSetLimit / cuCtxGetLimit). */
typedef enum CUlimit_enum {
    CU_LIMIT_STACK_SIZE                       = 0,
    CU_LIMIT_PRINTF_FIFO_SIZE                 = 1,
    CU_LIMIT_MALLOC_HEAP_SIZE                 = 2,
    CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH           = 3,
    CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4,
    CU_LIMIT_MAX_L2_FETCH_GRANULARITY         = 5,
    CU_LIMIT_PERSISTING_L2_CACHE_SIZE         = 6,
    CU_LIMIT_SHMEM_SIZE                       = 7,
    CU_LIMIT_CIG_ENABLED                      = 8,
    CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED       = 9,
    CU_LIMIT_MAX                              = 10,
} CUlimit;

/* Preferred split between L1 cache and shared memory. */
typedef enum CUfunc_cache_enum {
    CU_FUNC_CACHE_PREFER_NONE   = 0,
    CU_FUNC_CACHE_PREFER_SHARED = 1,
    CU_FUNC_CACHE_PREFER_L1     = 2,
    CU_FUNC_CACHE_PREFER_EQUAL  = 3,
} CUfunc_cache;

/* Shared memory bank size (deprecated, accepted and ignored). */
typedef enum CUsharedconfig_enum {
    CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE    = 0,
    CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE  = 1,
    CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 2,
} CUsharedconfig;

/* Kinds of execution affinity. */
typedef enum CUexecAffinityType_enum {
    CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0,
    CU_EXEC_AFFINITY_TYPE_MAX      = 1,
} CUexecAffinityType;

/* SM-count affinity value. */
typedef struct CUexecAffinitySmCount_st {
    unsigned int val;
} CUexecAffinitySmCount_v1;
typedef CUexecAffinitySmCount_v1 CUexecAffinitySmCount;

/* One execution affinity parameter of cuCtxCreate. */
typedef struct CUexecAffinityParam_st {
    CUexecAffinityType type;
    union {
        CUexecAffinitySmCount smCount;
    } param;
} CUexecAffinityParam_v1;
typedef CUexecAffinityParam_v1 CUexecAffinityParam;

/* Kind of client data shared with a CUDA-in-graphics context. */
typedef enum CUcigDataType_enum {
    CIG_DATA_TYPE_D3D12_COMMAND_QUEUE = 1,
    CIG_DATA_TYPE_NV_BLOB             = 2,
} CUcigDataType;

/* CUDA-in-graphics parameters of cuCtxCreate. */
typedef struct CUctxCigParam_st {
    CUcigDataType sharedDataType;
    void          *sharedData;
} CUctxCigParam;

/* Optional parameters of cuCtxCreate_v4. */
typedef struct CUctxCreateParams_st {
    CUexecAffinityParam *execAffinityParams;
    int                 numExecAffinityParams;
    CUctxCigParam       *cigParams;
} CUctxCreateParams;

/* ---- Types 5: Streams, events and callbacks -------------------------------- */

/* Stream creation flags. */
typedef enum CUstream_flags_enum {
    CU_STREAM_DEFAULT      = 0x0,
    CU_STREAM_NON_BLOCKING = 0x1,
} CUstream_flags;

/* Event creation flags. */
typedef enum CUevent_flags_enum {
    CU_EVENT_DEFAULT        = 0x0,
    CU_EVENT_BLOCKING_SYNC  = 0x1,
    CU_EVENT_DISABLE_TIMING = 0x2,
    CU_EVENT_INTERPROCESS   = 0x4,
} CUevent_flags;

/* Flags of cuEventRecordWithFlags. */
typedef enum CUevent_record_flags_enum {
    CU_EVENT_RECORD_DEFAULT  = 0x0,
    CU_EVENT_RECORD_EXTERNAL = 0x1,
} CUevent_record_flags;

/* Flags of cuStreamWaitEvent. */
typedef enum CUevent_wait_flags_enum {
    CU_EVENT_WAIT_DEFAULT  = 0x0,
    CU_EVENT_WAIT_EXTERNAL = 0x1,
} CUevent_wait_flags;

/* How a thread waiting on an event is scheduled (spin, yield or block). */
typedef enum CUevent_sched_flags_enum {
    CU_EVENT_SCHED_AUTO          = 0x0,
    CU_EVENT_SCHED_SPIN          = 0x1,
    CU_EVENT_SCHED_YIELD         = 0x2,
    CU_EVENT_SCHED_BLOCKING_SYNC = 0x4,
} CUevent_sched_flags;

/* The same event wait policies under NVIDIA OpenCL (NVCL) names. */
typedef enum cl_event_flags_enum {
    NVCL_EVENT_SCHED_AUTO          = 0x0,
    NVCL_EVENT_SCHED_SPIN          = 0x1,
    NVCL_EVENT_SCHED_YIELD         = 0x2,
    NVCL_EVENT_SCHED_BLOCKING_SYNC = 0x4,
} cl_event_flags;

/* Context wait policies under NVIDIA OpenCL (NVCL) names. */
typedef enum cl_context_flags_enum {
    NVCL_CTX_SCHED_AUTO          = 0x0,
    NVCL_CTX_SCHED_SPIN          = 0x1,
    NVCL_CTX_SCHED_YIELD         = 0x2,
    NVCL_CTX_SCHED_BLOCKING_SYNC = 0x4,
} cl_context_flags;

/* Capture state of a stream. */
typedef enum CUstreamCaptureStatus_enum {
    CU_STREAM_CAPTURE_STATUS_NONE        = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE      = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
} CUstreamCaptureStatus;

/* How strictly unsafe calls are rejected during capture. */
typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL       = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED      = 2,
} CUstreamCaptureMode;

/* Flags of cuStreamUpdateCaptureDependencies. */
typedef enum CUstreamUpdateCaptureDependencies_flags_enum {
    CU_STREAM_ADD_CAPTURE_DEPENDENCIES = 0x0,
    CU_STREAM_SET_CAPTURE_DEPENDENCIES = 0x1,
} CUstreamUpdateCaptureDependencies_flags;

/* Host function enqueued with cuLaunchHostFunc or used by a host graph node. */
typedef void (CUDA_CB *CUhostFn)(void *userData);

/* Callback of cuStreamAddCallback. */
typedef void (CUDA_CB *CUstreamCallback)(CUstream hStream, CUresult status, void *userData);

/* Kinds of asynchronous driver notification. */
typedef enum CUasyncNotificationType_enum {
    CU_ASYNC_NOTIFICATION_TYPE_OVER_BUDGET = 1,
} CUasyncNotificationType;

/* Payload of an asynchronous notification. */
typedef struct CUasyncNotificationInfo_st {
    CUasyncNotificationType type;
    union {
        struct {
            unsigned long long bytesOverBudget;
        } overBudget;
    } info;
} CUasyncNotificationInfo;

/* Callback registered with cuDeviceRegisterAsyncNotification. */
typedef void (*CUasyncCallback)(CUasyncNotificationInfo *info, void *userData, CUasyncCallbackHandle callback);

/* Comparison and flush flags of cuStreamWaitValue32/64. */
typedef enum CUstreamWaitValue_flags_enum {
    CU_STREAM_WAIT_VALUE_GEQ   = 0x0,
    CU_STREAM_WAIT_VALUE_EQ    = 0x1,
    CU_STREAM_WAIT_VALUE_AND   = 0x2,
    CU_STREAM_WAIT_VALUE_NOR   = 0x3,
    CU_STREAM_WAIT_VALUE_FLUSH = 0x40000000,
} CUstreamWaitValue_flags;

/* Flags of cuStreamWriteValue32/64. */
typedef enum CUstreamWriteValue_flags_enum {
    CU_STREAM_WRITE_VALUE_DEFAULT           = 0x0,
    CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 0x1,
} CUstreamWriteValue_flags;

/* Operation kinds of cuStreamBatchMemOp. */
typedef enum CUstreamBatchMemOpType_enum {
    CU_STREAM_MEM_OP_WAIT_VALUE_32       = 1,
    CU_STREAM_MEM_OP_WRITE_VALUE_32      = 2,
    CU_STREAM_MEM_OP_WAIT_VALUE_64       = 4,
    CU_STREAM_MEM_OP_WRITE_VALUE_64      = 5,
    CU_STREAM_MEM_OP_BARRIER             = 6,
    CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES = 3,
} CUstreamBatchMemOpType;

/* Scopes of a CU_STREAM_MEM_OP_BARRIER operation. */
typedef enum CUstreamMemoryBarrier_flags_enum {
    CU_STREAM_MEMORY_BARRIER_TYPE_SYS = 0x0,
    CU_STREAM_MEMORY_BARRIER_TYPE_GPU = 0x1,
} CUstreamMemoryBarrier_flags;

/* One operation of cuStreamBatchMemOp (tagged by "operation"). */
typedef union CUstreamBatchMemOpParams_union {
    CUstreamBatchMemOpType operation;
    struct CUstreamMemOpWaitValueParams_st {
        CUstreamBatchMemOpType operation;
        CUdeviceptr            address;
        union {
            cuuint32_t value;
            cuuint64_t value64;
        };
        unsigned int flags;
        CUdeviceptr  alias;
    } waitValue;
    struct CUstreamMemOpWriteValueParams_st {
        CUstreamBatchMemOpType operation;
        CUdeviceptr            address;
        union {
            cuuint32_t value;
            cuuint64_t value64;
        };
        unsigned int flags;
        CUdeviceptr  alias;
    } writeValue;
    struct CUstreamMemOpFlushRemoteWritesParams_st {
        CUstreamBatchMemOpType operation;
        unsigned int           flags;
    } flushRemoteWrites;
    struct CUstreamMemOpMemoryBarrierParams_st {
        CUstreamBatchMemOpType operation;
        unsigned int           flags;
    } memoryBarrier;
    cuuint64_t pad[6];
} CUstreamBatchMemOpParams_v1;
typedef CUstreamBatchMemOpParams_v1 CUstreamBatchMemOpParams;

/* ---- Types 6: Memory, arrays and copies ------------------------------------ */

/* Kind of memory a pointer or copy operand refers to. */
typedef enum CUmemorytype_enum {
    CU_MEMORYTYPE_HOST    = 1,
    CU_MEMORYTYPE_DEVICE  = 2,
    CU_MEMORYTYPE_ARRAY   = 3,
    CU_MEMORYTYPE_UNIFIED = 4,
} CUmemorytype;

/* Attachment scopes of managed memory. */
typedef enum CUmemAttach_flags_enum {
    CU_MEM_ATTACH_GLOBAL = 0x1,
    CU_MEM_ATTACH_HOST   = 0x2,
    CU_MEM_ATTACH_SINGLE = 0x4,
} CUmemAttach_flags;

/* Advice of cuMemAdvise. */
typedef enum CUmem_advise_enum {
    CU_MEM_ADVISE_SET_READ_MOSTLY          = 1,
    CU_MEM_ADVISE_UNSET_READ_MOSTLY        = 2,
    CU_MEM_ADVISE_SET_PREFERRED_LOCATION   = 3,
    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
    CU_MEM_ADVISE_SET_ACCESSED_BY          = 5,
    CU_MEM_ADVISE_UNSET_ACCESSED_BY        = 6,
} CUmem_advise;

/* Queries of cuMemRangeGetAttribute(s). */
typedef enum CUmem_range_attribute_enum {
    CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY                 = 1,
    CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION          = 2,
    CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY                 = 3,
    CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION      = 4,
    CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE     = 5,
    CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID       = 6,
    CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
    CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID   = 8,
} CUmem_range_attribute;

/* Queries of cuPointerGetAttribute(s). */
typedef enum CUpointer_attribute_enum {
    CU_POINTER_ATTRIBUTE_CONTEXT                    = 1,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE                = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER             = 3,
    CU_POINTER_ATTRIBUTE_HOST_POINTER               = 4,
    CU_POINTER_ATTRIBUTE_P2P_TOKENS                 = 5,
    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS                = 6,
    CU_POINTER_ATTRIBUTE_BUFFER_ID                  = 7,
    CU_POINTER_ATTRIBUTE_IS_MANAGED                 = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL             = 9,
    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR           = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE                 = 12,
    CU_POINTER_ATTRIBUTE_MAPPED                     = 13,
    CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES       = 14,
    CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
    CU_POINTER_ATTRIBUTE_ACCESS_FLAGS               = 16,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE             = 17,
    CU_POINTER_ATTRIBUTE_MAPPING_SIZE               = 18,
    CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR          = 19,
    CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID            = 20,
    CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE   = 21,
} CUpointer_attribute;

/* Value of CU_POINTER_ATTRIBUTE_P2P_TOKENS (deprecated). */
typedef struct CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st {
    unsigned long long p2pToken;
    unsigned int       vaSpaceToken;
} CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_v1;
typedef CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_v1 CUDA_POINTER_ATTRIBUTE_P2P_TOKENS;

/* Value of CU_POINTER_ATTRIBUTE_ACCESS_FLAGS. */
typedef enum CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS_enum {
    CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE      = 0x0,
    CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ      = 0x1,
    CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE = 0x3,
} CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS;

/* Flags of cuMemHostAlloc. */
#define CU_MEMHOSTALLOC_PORTABLE      0x01
#define CU_MEMHOSTALLOC_DEVICEMAP     0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04

/* Flags of cuMemHostRegister. */
#define CU_MEMHOSTREGISTER_PORTABLE  0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_MEMHOSTREGISTER_IOMEMORY  0x04
#define CU_MEMHOSTREGISTER_READ_ONLY 0x08

/* Element formats of CUDA arrays. */
typedef enum CUarray_format_enum {
    CU_AD_FORMAT_UNSIGNED_INT8           = 0x1,
    CU_AD_FORMAT_UNSIGNED_INT16          = 0x2,
    CU_AD_FORMAT_UNSIGNED_INT32          = 0x3,
    CU_AD_FORMAT_SIGNED_INT8             = 0x8,
    CU_AD_FORMAT_SIGNED_INT16            = 0x9,
    CU_AD_FORMAT_SIGNED_INT32            = 0xa,
    CU_AD_FORMAT_HALF                    = 0x10,
    CU_AD_FORMAT_FLOAT                   = 0x20,
    CU_AD_FORMAT_NV12                    = 0xb0,
    CU_AD_FORMAT_UNORM_INT8X1            = 0xc0,
    CU_AD_FORMAT_UNORM_INT8X2            = 0xc1,
    CU_AD_FORMAT_UNORM_INT8X4            = 0xc2,
    CU_AD_FORMAT_UNORM_INT16X1           = 0xc3,
    CU_AD_FORMAT_UNORM_INT16X2           = 0xc4,
    CU_AD_FORMAT_UNORM_INT16X4           = 0xc5,
    CU_AD_FORMAT_SNORM_INT8X1            = 0xc6,
    CU_AD_FORMAT_SNORM_INT8X2            = 0xc7,
    CU_AD_FORMAT_SNORM_INT8X4            = 0xc8,
    CU_AD_FORMAT_SNORM_INT16X1           = 0xc9,
    CU_AD_FORMAT_SNORM_INT16X2           = 0xca,
    CU_AD_FORMAT_SNORM_INT16X4           = 0xcb,
    CU_AD_FORMAT_BC1_UNORM               = 0x91,
    CU_AD_FORMAT_BC1_UNORM_SRGB          = 0x92,
    CU_AD_FORMAT_BC2_UNORM               = 0x93,
    CU_AD_FORMAT_BC2_UNORM_SRGB          = 0x94,
    CU_AD_FORMAT_BC3_UNORM               = 0x95,
    CU_AD_FORMAT_BC3_UNORM_SRGB          = 0x96,
    CU_AD_FORMAT_BC4_UNORM               = 0x97,
    CU_AD_FORMAT_BC4_SNORM               = 0x98,
    CU_AD_FORMAT_BC5_UNORM               = 0x99,
    CU_AD_FORMAT_BC5_SNORM               = 0x9a,
    CU_AD_FORMAT_BC6H_UF16               = 0x9b,
    CU_AD_FORMAT_BC6H_SF16               = 0x9c,
    CU_AD_FORMAT_BC7_UNORM               = 0x9d,
    CU_AD_FORMAT_BC7_UNORM_SRGB          = 0x9e,
    CU_AD_FORMAT_P010                    = 0x9f,
    CU_AD_FORMAT_P016                    = 0xa1,
    CU_AD_FORMAT_NV16                    = 0xa2,
    CU_AD_FORMAT_P210                    = 0xa3,
    CU_AD_FORMAT_P216                    = 0xa4,
    CU_AD_FORMAT_YUY2                    = 0xa5,
    CU_AD_FORMAT_Y210                    = 0xa6,
    CU_AD_FORMAT_Y216                    = 0xa7,
    CU_AD_FORMAT_AYUV                    = 0xa8,
    CU_AD_FORMAT_Y410                    = 0xa9,
    CU_AD_FORMAT_Y416                    = 0xb1,
    CU_AD_FORMAT_Y444_PLANAR8            = 0xb2,
    CU_AD_FORMAT_Y444_PLANAR10           = 0xb3,
    CU_AD_FORMAT_YUV444_8bit_SemiPlanar  = 0xb4,
    CU_AD_FORMAT_YUV444_16bit_SemiPlanar = 0xb5,
    CU_AD_FORMAT_UNORM_INT_101010_2      = 0x50,
    CU_AD_FORMAT_MAX                     = 0x7fffffff,
} CUarray_format;

/* Kinds of resource behind a texture/surface object or sparse mapping. */
typedef enum CUresourcetype_enum {
    CU_RESOURCE_TYPE_ARRAY           = 0,
    CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 1,
    CU_RESOURCE_TYPE_LINEAR          = 2,
    CU_RESOURCE_TYPE_PITCH2D         = 3,
} CUresourcetype;

/* Faces of a cubemap array layer. */
typedef enum CUarray_cubemap_face_enum {
    CU_CUBEMAP_FACE_POSITIVE_X = 0,
    CU_CUBEMAP_FACE_NEGATIVE_X = 1,
    CU_CUBEMAP_FACE_POSITIVE_Y = 2,
    CU_CUBEMAP_FACE_NEGATIVE_Y = 3,
    CU_CUBEMAP_FACE_POSITIVE_Z = 4,
    CU_CUBEMAP_FACE_NEGATIVE_Z = 5,
} CUarray_cubemap_face;

/* Operands of a 2D copy (cuMemcpy2D*). */
typedef struct CUDA_MEMCPY2D_st {
    size_t       srcXInBytes;
    size_t       srcY;
    CUmemorytype srcMemoryType;
    const void   *srcHost;
    CUdeviceptr  srcDevice;
    CUarray      srcArray;
    size_t       srcPitch;
    size_t       dstXInBytes;
    size_t       dstY;
    CUmemorytype dstMemoryType;
    void         *dstHost;
    CUdeviceptr  dstDevice;
    CUarray      dstArray;
    size_t       dstPitch;
    size_t       WidthInBytes;
    size_t       Height;
} CUDA_MEMCPY2D_v2;
typedef CUDA_MEMCPY2D_v2 CUDA_MEMCPY2D;

/* Operands of a 3D copy (cuMemcpy3D*). */
typedef struct CUDA_MEMCPY3D_st {
    size_t       srcXInBytes;
    size_t       srcY;
    size_t       srcZ;
    size_t       srcLOD;
    CUmemorytype srcMemoryType;
    const void   *srcHost;
    CUdeviceptr  srcDevice;
    CUarray      srcArray;
    void         *reserved0;
    size_t       srcPitch;
    size_t       srcHeight;
    size_t       dstXInBytes;
    size_t       dstY;
    size_t       dstZ;
    size_t       dstLOD;
    CUmemorytype dstMemoryType;
    void         *dstHost;
    CUdeviceptr  dstDevice;
    CUarray      dstArray;
    void         *reserved1;
    size_t       dstPitch;
    size_t       dstHeight;
    size_t       WidthInBytes;
    size_t       Height;
    size_t       Depth;
} CUDA_MEMCPY3D_v2;
typedef CUDA_MEMCPY3D_v2 CUDA_MEMCPY3D;

/* Operands of a 3D copy between contexts (cuMemcpy3DPeer*). */
typedef struct CUDA_MEMCPY3D_PEER_st {
    size_t       srcXInBytes;
    size_t       srcY;
    size_t       srcZ;
    size_t       srcLOD;
    CUmemorytype srcMemoryType;
    const void   *srcHost;
    CUdeviceptr  srcDevice;
    CUarray      srcArray;
    CUcontext    srcContext;
    size_t       srcPitch;
    size_t       srcHeight;
    size_t       dstXInBytes;
    size_t       dstY;
    size_t       dstZ;
    size_t       dstLOD;
    CUmemorytype dstMemoryType;
    void         *dstHost;
    CUdeviceptr  dstDevice;
    CUarray      dstArray;
    CUcontext    dstContext;
    size_t       dstPitch;
    size_t       dstHeight;
    size_t       WidthInBytes;
    size_t       Height;
    size_t       Depth;
} CUDA_MEMCPY3D_PEER_v1;
typedef CUDA_MEMCPY3D_PEER_v1 CUDA_MEMCPY3D_PEER;

/* Shape of a 1D/2D CUDA array. */
typedef struct CUDA_ARRAY_DESCRIPTOR_st {
    size_t         Width;
    size_t         Height;
    CUarray_format Format;
    unsigned int   NumChannels;
} CUDA_ARRAY_DESCRIPTOR_v2;
typedef CUDA_ARRAY_DESCRIPTOR_v2 CUDA_ARRAY_DESCRIPTOR;

/* Flags of CUDA_ARRAY3D_DESCRIPTOR::Flags. */
#define CUDA_ARRAY3D_LAYERED             0x01
#define CUDA_ARRAY3D_2DARRAY             0x01
#define CUDA_ARRAY3D_SURFACE_LDST        0x02
#define CUDA_ARRAY3D_CUBEMAP             0x04
#define CUDA_ARRAY3D_TEXTURE_GATHER      0x08
#define CUDA_ARRAY3D_DEPTH_TEXTURE       0x10
#define CUDA_ARRAY3D_COLOR_ATTACHMENT    0x20
#define CUDA_ARRAY3D_SPARSE              0x40
#define CUDA_ARRAY3D_DEFERRED_MAPPING    0x80
#define CUDA_ARRAY3D_VIDEO_ENCODE_DECODE 0x100

/* Shape of a 3D, layered or cubemap CUDA array. */
typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
    size_t         Width;
    size_t         Height;
    size_t         Depth;
    CUarray_format Format;
    unsigned int   NumChannels;
    unsigned int   Flags;
} CUDA_ARRAY3D_DESCRIPTOR_v2;
typedef CUDA_ARRAY3D_DESCRIPTOR_v2 CUDA_ARRAY3D_DESCRIPTOR;

/* Bit of CUDA_ARRAY_SPARSE_PROPERTIES::flags: one mip tail for all layers. */
#define CU_ARRAY_SPARSE_PROPERTIES_SINGLE_MIPTAIL 0x1

/* Tiling properties of a sparse CUDA array. */
typedef struct CUDA_ARRAY_SPARSE_PROPERTIES_st {
    struct {
        unsigned int width;
        unsigned int height;
        unsigned int depth;
    } tileExtent;
    unsigned int       miptailFirstLevel;
    unsigned long long miptailSize;
    unsigned int       flags;
    unsigned int       reserved[4];
} CUDA_ARRAY_SPARSE_PROPERTIES_v1;
typedef CUDA_ARRAY_SPARSE_PROPERTIES_v1 CUDA_ARRAY_SPARSE_PROPERTIES;

/* Backing-memory requirements of a deferred-mapping array. */
typedef struct CUDA_ARRAY_MEMORY_REQUIREMENTS_st {
    size_t       size;
    size_t       alignment;
    unsigned int reserved[4];
} CUDA_ARRAY_MEMORY_REQUIREMENTS_v1;
typedef CUDA_ARRAY_MEMORY_REQUIREMENTS_v1 CUDA_ARRAY_MEMORY_REQUIREMENTS;

/* ---- Types 7: Virtual memory management, memory pools and batched copies ---- */

/* Kinds of memory location. */
typedef enum CUmemLocationType_enum {
    CU_MEM_LOCATION_TYPE_INVALID           = 0,
    CU_MEM_LOCATION_TYPE_NONE              = 0,
    CU_MEM_LOCATION_TYPE_DEVICE            = 1,
    CU_MEM_LOCATION_TYPE_HOST              = 2,
    CU_MEM_LOCATION_TYPE_HOST_NUMA         = 3,
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 4,
    CU_MEM_LOCATION_TYPE_MAX               = 0x7fffffff,
} CUmemLocationType;

/* A memory location: a kind and an id (device ordinal, NUMA node, ...). */
typedef struct CUmemLocation_st {
    CUmemLocationType type;
    int               id;
} CUmemLocation_v1;
typedef CUmemLocation_v1 CUmemLocation;

/* Kinds of physical allocation. */
typedef enum CUmemAllocationType_enum {
    CU_MEM_ALLOCATION_TYPE_INVALID = 0,
    CU_MEM_ALLOCATION_TYPE_PINNED  = 1,
    CU_MEM_ALLOCATION_TYPE_MANAGED = 2,
    CU_MEM_ALLOCATION_TYPE_MAX     = 0x7fffffff,
} CUmemAllocationType;

/* OS handle types an allocation may be exported to. */
typedef enum CUmemAllocationHandleType_enum {
    CU_MEM_HANDLE_TYPE_NONE                  = 0x0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
    CU_MEM_HANDLE_TYPE_WIN32                 = 0x2,
    CU_MEM_HANDLE_TYPE_WIN32_KMT             = 0x4,
    CU_MEM_HANDLE_TYPE_FABRIC                = 0x8,
    CU_MEM_HANDLE_TYPE_MAX                   = 0x7fffffff,
} CUmemAllocationHandleType;

/* Access rights of a mapping. */
typedef enum CUmemAccess_flags_enum {
    CU_MEM_ACCESS_FLAGS_PROT_NONE      = 0x0,
    CU_MEM_ACCESS_FLAGS_PROT_READ      = 0x1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
    CU_MEM_ACCESS_FLAGS_PROT_MAX       = 0x7fffffff,
} CUmemAccess_flags;

/* Which granularity cuMemGetAllocationGranularity reports. */
typedef enum CUmemAllocationGranularity_flags_enum {
    CU_MEM_ALLOC_GRANULARITY_MINIMUM     = 0,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
} CUmemAllocationGranularity_flags;

/* Compression requested for an allocation. */
typedef enum CUmemAllocationCompType_enum {
    CU_MEM_ALLOCATION_COMP_NONE    = 0x0,
    CU_MEM_ALLOCATION_COMP_GENERIC = 0x1,
} CUmemAllocationCompType;

/* Bits of CUmemAllocationProp::allocFlags.usage. */
#define CU_MEM_CREATE_USAGE_TILE_POOL     0x1
#define CU_MEM_CREATE_USAGE_HW_DECOMPRESS 0x2

/* Properties of a physical allocation (cuMemCreate). */
typedef struct CUmemAllocationProp_st {
    CUmemAllocationType       type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation             location;
    void                      *win32HandleMetaData;
    struct {
        unsigned char  compressionType;
        unsigned char  gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char  reserved[4];
    } allocFlags;
} CUmemAllocationProp_v1;
typedef CUmemAllocationProp_v1 CUmemAllocationProp;

/* Access rights granted to one location (cuMemSetAccess). */
typedef struct CUmemAccessDesc_st {
    CUmemLocation     location;
    CUmemAccess_flags flags;
} CUmemAccessDesc_v1;
typedef CUmemAccessDesc_v1 CUmemAccessDesc;

/* Handle types of cuMemGetHandleForAddressRange. */
typedef enum CUmemRangeHandleType_enum {
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1,
    CU_MEM_RANGE_HANDLE_TYPE_MAX        = 0x7fffffff,
} CUmemRangeHandleType;

/* Flags of cuMemGetHandleForAddressRange. */
typedef enum CUmemRangeFlags_enum {
    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 0x1,
} CUmemRangeFlags;

/* Sub-resource kinds of a sparse array mapping. */
typedef enum CUarraySparseSubresourceType_enum {
    CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL = 0,
    CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_MIPTAIL      = 1,
} CUarraySparseSubresourceType;

/* Map or unmap (cuMemMapArrayAsync). */
typedef enum CUmemOperationType_enum {
    CU_MEM_OPERATION_TYPE_MAP   = 1,
    CU_MEM_OPERATION_TYPE_UNMAP = 2,
} CUmemOperationType;

/* Kinds of memory handle in CUarrayMapInfo. */
typedef enum CUmemHandleType_enum {
    CU_MEM_HANDLE_TYPE_GENERIC = 0,
} CUmemHandleType;

/* One sparse array (un)mapping request of cuMemMapArrayAsync. */
typedef struct CUarrayMapInfo_st {
    CUresourcetype resourceType;
    union {
        CUmipmappedArray mipmap;
        CUarray          array;
    } resource;
    CUarraySparseSubresourceType subresourceType;
    union {
        struct {
            unsigned int level;
            unsigned int layer;
            unsigned int offsetX;
            unsigned int offsetY;
            unsigned int offsetZ;
            unsigned int extentWidth;
            unsigned int extentHeight;
            unsigned int extentDepth;
        } sparseLevel;
        struct {
            unsigned int       layer;
            unsigned long long offset;
            unsigned long long size;
        } miptail;
    } subresource;
    CUmemOperationType memOperationType;
    CUmemHandleType    memHandleType;
    union {
        CUmemGenericAllocationHandle memHandle;
    } memHandle;
    unsigned long long offset;
    unsigned int       deviceBitMask;
    unsigned int       flags;
    unsigned int       reserved[2];
} CUarrayMapInfo_v1;
typedef CUarrayMapInfo_v1 CUarrayMapInfo;

/* Which granularity cuMulticastGetGranularity reports. */
typedef enum CUmulticastGranularity_flags_enum {
    CU_MULTICAST_GRANULARITY_MINIMUM     = 0,
    CU_MULTICAST_GRANULARITY_RECOMMENDED = 1,
} CUmulticastGranularity_flags;

/* Properties of a multicast object (cuMulticastCreate). */
typedef struct CUmulticastObjectProp_st {
    unsigned int       numDevices;
    size_t             size;
    unsigned long long handleTypes;
    unsigned long long flags;
} CUmulticastObjectProp_v1;
typedef CUmulticastObjectProp_v1 CUmulticastObjectProp;

/* Attributes of a memory pool. */
typedef enum CUmemPool_attribute_enum {
    CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES   = 1,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC         = 2,
    CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD                 = 4,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT              = 5,
    CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH                 = 6,
    CU_MEMPOOL_ATTR_USED_MEM_CURRENT                  = 7,
    CU_MEMPOOL_ATTR_USED_MEM_HIGH                     = 8,
} CUmemPool_attribute;

/* Bit of CUmemPoolProps::usage. */
#define CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS 0x2

/* Properties of a memory pool (cuMemPoolCreate). */
typedef struct CUmemPoolProps_st {
    CUmemAllocationType       allocType;
    CUmemAllocationHandleType handleTypes;
    CUmemLocation             location;
    void                      *win32SecurityAttributes;
    size_t                    maxSize;
    unsigned short            usage;
    unsigned char             reserved[54];
} CUmemPoolProps_v1;
typedef CUmemPoolProps_v1 CUmemPoolProps;

/* Opaque data describing a pool allocation shared with another process. */
typedef struct CUmemPoolPtrExportData_st {
    unsigned char reserved[64];
} CUmemPoolPtrExportData_v1;
typedef CUmemPoolPtrExportData_v1 CUmemPoolPtrExportData;

/* Algorithms of cuMemBatchDecompressAsync. */
typedef enum CUmemDecompressAlgorithm_enum {
    CU_MEM_DECOMPRESS_UNSUPPORTED       = 0x0,
    CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE = 0x1,
    CU_MEM_DECOMPRESS_ALGORITHM_SNAPPY  = 0x2,
    CU_MEM_DECOMPRESS_ALGORITHM_LZ4     = 0x4,
} CUmemDecompressAlgorithm;

/* One decompression request of cuMemBatchDecompressAsync. */
typedef struct CUmemDecompressParams_st {
    size_t                   srcNumBytes;
    size_t                   dstNumBytes;
    cuuint32_t               *dstActBytes;
    const void               *src;
    void                     *dst;
    CUmemDecompressAlgorithm algo;
    unsigned char            padding[20];
} CUmemDecompressParams;

/* Flags of a batched copy attribute. */
typedef enum CUmemcpyFlags_enum {
    CU_MEMCPY_FLAG_DEFAULT                     = 0x0,
    CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE = 0x1,
} CUmemcpyFlags;

/* When the source of a batched copy may be read. */
typedef enum CUmemcpySrcAccessOrder_enum {
    CU_MEMCPY_SRC_ACCESS_ORDER_INVALID         = 0x0,
    CU_MEMCPY_SRC_ACCESS_ORDER_STREAM          = 0x1,
    CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 0x2,
    CU_MEMCPY_SRC_ACCESS_ORDER_ANY             = 0x3,
    CU_MEMCPY_SRC_ACCESS_ORDER_MAX             = 0x7fffffff,
} CUmemcpySrcAccessOrder;

/* Attributes shared by copies of cuMemcpyBatchAsync. */
typedef struct CUmemcpyAttributes_st {
    CUmemcpySrcAccessOrder srcAccessOrder;
    CUmemLocation          srcLocHint;
    CUmemLocation          dstLocHint;
    unsigned int           flags;
} CUmemcpyAttributes_v1;
typedef CUmemcpyAttributes_v1 CUmemcpyAttributes;

/* Kinds of operand of a batched 3D copy. */
typedef enum CUmemcpy3DOperandType_enum {
    CU_MEMCPY_OPERAND_TYPE_POINTER = 0x1,
    CU_MEMCPY_OPERAND_TYPE_ARRAY   = 0x2,
    CU_MEMCPY_OPERAND_TYPE_MAX     = 0x7fffffff,
} CUmemcpy3DOperandType;

/* Offset into a 3D operand. */
typedef struct CUoffset3D_st {
    size_t x;
    size_t y;
    size_t z;
} CUoffset3D_v1;
typedef CUoffset3D_v1 CUoffset3D;

/* Extent of a 3D copy. */
typedef struct CUextent3D_st {
    size_t width;
    size_t height;
    size_t depth;
} CUextent3D_v1;
typedef CUextent3D_v1 CUextent3D;

/* Source or destination of a batched 3D copy. */
typedef struct CUmemcpy3DOperand_st {
    CUmemcpy3DOperandType type;
    union {
        struct {
            CUdeviceptr   ptr;
            size_t        rowLength;
            size_t        layerHeight;
            CUmemLocation locHint;
        } ptr;
        struct {
            CUarray    array;
            CUoffset3D offset;
        } array;
    } op;
} CUmemcpy3DOperand_v1;
typedef CUmemcpy3DOperand_v1 CUmemcpy3DOperand;

/* One copy of cuMemcpy3DBatchAsync. */
typedef struct CUDA_MEMCPY3D_BATCH_OP_st {
    CUmemcpy3DOperand      src;
    CUmemcpy3DOperand      dst;
    CUextent3D             extent;
    CUmemcpySrcAccessOrder srcAccessOrder;
    unsigned int           flags;
} CUDA_MEMCPY3D_BATCH_OP_v1;
typedef CUDA_MEMCPY3D_BATCH_OP_v1 CUDA_MEMCPY3D_BATCH_OP;

/* ---- Types 8: Textures, surfaces, tensor maps and graphics interop --------- */

/* Texture addressing modes. */
typedef enum CUaddress_mode_enum {
    CU_TR_ADDRESS_MODE_WRAP   = 0,
    CU_TR_ADDRESS_MODE_CLAMP  = 1,
    CU_TR_ADDRESS_MODE_MIRROR = 2,
    CU_TR_ADDRESS_MODE_BORDER = 3,
} CUaddress_mode;

/* Texture filtering modes. */
typedef enum CUfilter_mode_enum {
    CU_TR_FILTER_MODE_POINT  = 0,
    CU_TR_FILTER_MODE_LINEAR = 1,
} CUfilter_mode;

/* Formats of a resource view. */
typedef enum CUresourceViewFormat_enum {
    CU_RES_VIEW_FORMAT_NONE          = 0x0,
    CU_RES_VIEW_FORMAT_UINT_1X8      = 0x1,
    CU_RES_VIEW_FORMAT_UINT_2X8      = 0x2,
    CU_RES_VIEW_FORMAT_UINT_4X8      = 0x3,
    CU_RES_VIEW_FORMAT_SINT_1X8      = 0x4,
    CU_RES_VIEW_FORMAT_SINT_2X8      = 0x5,
    CU_RES_VIEW_FORMAT_SINT_4X8      = 0x6,
    CU_RES_VIEW_FORMAT_UINT_1X16     = 0x7,
    CU_RES_VIEW_FORMAT_UINT_2X16     = 0x8,
    CU_RES_VIEW_FORMAT_UINT_4X16     = 0x9,
    CU_RES_VIEW_FORMAT_SINT_1X16     = 0xa,
    CU_RES_VIEW_FORMAT_SINT_2X16     = 0xb,
    CU_RES_VIEW_FORMAT_SINT_4X16     = 0xc,
    CU_RES_VIEW_FORMAT_UINT_1X32     = 0xd,
    CU_RES_VIEW_FORMAT_UINT_2X32     = 0xe,
    CU_RES_VIEW_FORMAT_UINT_4X32     = 0xf,
    CU_RES_VIEW_FORMAT_SINT_1X32     = 0x10,
    CU_RES_VIEW_FORMAT_SINT_2X32     = 0x11,
    CU_RES_VIEW_FORMAT_SINT_4X32     = 0x12,
    CU_RES_VIEW_FORMAT_FLOAT_1X16    = 0x13,
    CU_RES_VIEW_FORMAT_FLOAT_2X16    = 0x14,
    CU_RES_VIEW_FORMAT_FLOAT_4X16    = 0x15,
    CU_RES_VIEW_FORMAT_FLOAT_1X32    = 0x16,
    CU_RES_VIEW_FORMAT_FLOAT_2X32    = 0x17,
    CU_RES_VIEW_FORMAT_FLOAT_4X32    = 0x18,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC1  = 0x19,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC2  = 0x1a,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC3  = 0x1b,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC4  = 0x1c,
    CU_RES_VIEW_FORMAT_SIGNED_BC4    = 0x1d,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC5  = 0x1e,
    CU_RES_VIEW_FORMAT_SIGNED_BC5    = 0x1f,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC6H = 0x20,
    CU_RES_VIEW_FORMAT_SIGNED_BC6H   = 0x21,
    CU_RES_VIEW_FORMAT_UNSIGNED_BC7  = 0x22,
} CUresourceViewFormat;

/* Resource bound to a texture or surface object (tagged by resType). */
typedef struct CUDA_RESOURCE_DESC_st {
    CUresourcetype resType;
    union {
        struct {
            CUarray hArray;
        } array; /* CU_RESOURCE_TYPE_ARRAY */
        struct {
            CUmipmappedArray hMipmappedArray;
        } mipmap; /* CU_RESOURCE_TYPE_MIPMAPPED_ARRAY */
        struct {
            CUdeviceptr    devPtr;
            CUarray_format format;
            unsigned int   numChannels;
            size_t         sizeInBytes;
        } linear; /* CU_RESOURCE_TYPE_LINEAR */
        struct {
            CUdeviceptr    devPtr;
            CUarray_format format;
            unsigned int   numChannels;
            size_t         width;
            size_t         height;
            size_t         pitchInBytes;
        } pitch2D; /* CU_RESOURCE_TYPE_PITCH2D */
        struct {
            int reserved[32];
        } reserved;
    } res;
    unsigned int flags; /* must be zero */
} CUDA_RESOURCE_DESC_v1;
typedef CUDA_RESOURCE_DESC_v1 CUDA_RESOURCE_DESC;

/* Sampling state of a texture object. */
typedef struct CUDA_TEXTURE_DESC_st {
    CUaddress_mode addressMode[3];
    CUfilter_mode  filterMode;
    unsigned int   flags;
    unsigned int   maxAnisotropy;
    CUfilter_mode  mipmapFilterMode;
    float          mipmapLevelBias;
    float          minMipmapLevelClamp;
    float          maxMipmapLevelClamp;
    float          borderColor[4];
    int            reserved[12];
} CUDA_TEXTURE_DESC_v1;
typedef CUDA_TEXTURE_DESC_v1 CUDA_TEXTURE_DESC;

/* Reinterpretation of an array resource by a texture object. */
typedef struct CUDA_RESOURCE_VIEW_DESC_st {
    CUresourceViewFormat format;
    size_t               width;
    size_t               height;
    size_t               depth;
    unsigned int         firstMipmapLevel;
    unsigned int         lastMipmapLevel;
    unsigned int         firstLayer;
    unsigned int         lastLayer;
    unsigned int         reserved[16];
} CUDA_RESOURCE_VIEW_DESC_v1;
typedef CUDA_RESOURCE_VIEW_DESC_v1 CUDA_RESOURCE_VIEW_DESC;

/* Flag of cuTexRefSetArray (deprecated texture references). */
#define CU_TRSA_OVERRIDE_FORMAT 0x01

/* Texture read flags (CUDA_TEXTURE_DESC::flags, cuTexRefSetFlags). */
#define CU_TRSF_READ_AS_INTEGER                0x01
#define CU_TRSF_NORMALIZED_COORDINATES         0x02
#define CU_TRSF_SRGB                           0x10
#define CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION 0x20
#define CU_TRSF_SEAMLESS_CUBEMAP               0x40

/* Default texture reference for cuParamSetTexRef (deprecated). */
#define CU_PARAM_TR_DEFAULT -1

/* Number of 64-bit words in an opaque tensor map. */
#define CU_TENSOR_MAP_NUM_QWORDS 16

/* Opaque TMA tensor map descriptor; must be 128-byte aligned. */
typedef struct CUtensorMap_st {
    XCUDA_ALIGNAS(128) cuuint64_t opaque[CU_TENSOR_MAP_NUM_QWORDS];
} CUtensorMap;

/* Element types of a tensor map. */
typedef enum CUtensorMapDataType_enum {
    CU_TENSOR_MAP_DATA_TYPE_UINT8         = 0,
    CU_TENSOR_MAP_DATA_TYPE_UINT16        = 1,
    CU_TENSOR_MAP_DATA_TYPE_UINT32        = 2,
    CU_TENSOR_MAP_DATA_TYPE_INT32         = 3,
    CU_TENSOR_MAP_DATA_TYPE_UINT64        = 4,
    CU_TENSOR_MAP_DATA_TYPE_INT64         = 5,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT16       = 6,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32       = 7,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT64       = 8,
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16      = 9,
    CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ   = 10,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32      = 11,
    CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ  = 12,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B  = 13,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14,
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15,
} CUtensorMapDataType;

/* Interleave layouts of a tensor map. */
typedef enum CUtensorMapInterleave_enum {
    CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    CU_TENSOR_MAP_INTERLEAVE_16B  = 1,
    CU_TENSOR_MAP_INTERLEAVE_32B  = 2,
} CUtensorMapInterleave;

/* Shared-memory swizzle patterns of a tensor map. */
typedef enum CUtensorMapSwizzle_enum {
    CU_TENSOR_MAP_SWIZZLE_NONE                  = 0,
    CU_TENSOR_MAP_SWIZZLE_32B                   = 1,
    CU_TENSOR_MAP_SWIZZLE_64B                   = 2,
    CU_TENSOR_MAP_SWIZZLE_128B                  = 3,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B         = 4,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
    CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B         = 6,
} CUtensorMapSwizzle;

/* L2 promotion sizes of a tensor map. */
typedef enum CUtensorMapL2promotion_enum {
    CU_TENSOR_MAP_L2_PROMOTION_NONE    = 0,
    CU_TENSOR_MAP_L2_PROMOTION_L2_64B  = 1,
    CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
} CUtensorMapL2promotion;

/* Out-of-bounds fill of a tensor map. */
typedef enum CUtensorMapFloatOOBfill_enum {
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE                 = 0,
    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
} CUtensorMapFloatOOBfill;

/* im2col "wide" modes of a tensor map. */
typedef enum CUtensorMapIm2ColWideMode_enum {
    CU_TENSOR_MAP_IM2COL_WIDE_MODE_W    = 0,
    CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128 = 1,
} CUtensorMapIm2ColWideMode;

/* Flags of graphics resource registration. */
typedef enum CUgraphicsRegisterFlags_enum {
    CU_GRAPHICS_REGISTER_FLAGS_NONE           = 0x0,
    CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY      = 0x1,
    CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD  = 0x2,
    CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST   = 0x4,
    CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER = 0x8,
} CUgraphicsRegisterFlags;

/* Access hints of a mapped graphics resource. */
typedef enum CUgraphicsMapResourceFlags_enum {
    CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE          = 0x0,
    CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY     = 0x1,
    CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD = 0x2,
} CUgraphicsMapResourceFlags;

/* ---- Types 9: Modules, JIT compilation and libraries ----------------------- */

/* Options of the JIT compiler and linker (cuModuleLoadDataEx, cuLink*, cuLibrary*). */
typedef enum CUjit_option_enum {
    CU_JIT_MAX_REGISTERS                    = 0,
    CU_JIT_THREADS_PER_BLOCK                = 1,
    CU_JIT_WALL_TIME                        = 2,
    CU_JIT_INFO_LOG_BUFFER                  = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES       = 4,
    CU_JIT_ERROR_LOG_BUFFER                 = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES      = 6,
    CU_JIT_OPTIMIZATION_LEVEL               = 7,
    CU_JIT_TARGET_FROM_CUCONTEXT            = 8,
    CU_JIT_TARGET                           = 9,
    CU_JIT_FALLBACK_STRATEGY                = 10,
    CU_JIT_GENERATE_DEBUG_INFO              = 11,
    CU_JIT_LOG_VERBOSE                      = 12,
    CU_JIT_GENERATE_LINE_INFO               = 13,
    CU_JIT_CACHE_MODE                       = 14,
    CU_JIT_NEW_SM3X_OPT                     = 15,
    CU_JIT_FAST_COMPILE                     = 16,
    CU_JIT_GLOBAL_SYMBOL_NAMES              = 17,
    CU_JIT_GLOBAL_SYMBOL_ADDRESSES          = 18,
    CU_JIT_GLOBAL_SYMBOL_COUNT              = 19,
    CU_JIT_LTO                              = 20,
    CU_JIT_FTZ                              = 21,
    CU_JIT_PREC_DIV                         = 22,
    CU_JIT_PREC_SQRT                        = 23,
    CU_JIT_FMA                              = 24,
    CU_JIT_REFERENCED_KERNEL_NAMES          = 25,
    CU_JIT_REFERENCED_KERNEL_COUNT          = 26,
    CU_JIT_REFERENCED_VARIABLE_NAMES        = 27,
    CU_JIT_REFERENCED_VARIABLE_COUNT        = 28,
    CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29,
    CU_JIT_POSITION_INDEPENDENT_CODE        = 30,
    CU_JIT_MIN_CTA_PER_SM                   = 31,
    CU_JIT_MAX_THREADS_PER_BLOCK            = 32,
    CU_JIT_OVERRIDE_DIRECTIVE_VALUES        = 33,
    CU_JIT_SPLIT_COMPILE                    = 34,
    CU_JIT_NUM_OPTIONS                      = 35,
} CUjit_option;

/* Offsets added to a compute capability to name arch-accelerated / family targets. */
#define CU_COMPUTE_ACCELERATED_TARGET_BASE 0x10000
#define CU_COMPUTE_FAMILY_TARGET_BASE      0x20000

/* JIT target architectures (CU_JIT_TARGET). */
typedef enum CUjit_target_enum {
    CU_TARGET_COMPUTE_30   = 30,
    CU_TARGET_COMPUTE_32   = 32,
    CU_TARGET_COMPUTE_35   = 35,
    CU_TARGET_COMPUTE_37   = 37,
    CU_TARGET_COMPUTE_50   = 50,
    CU_TARGET_COMPUTE_52   = 52,
    CU_TARGET_COMPUTE_53   = 53,
    CU_TARGET_COMPUTE_60   = 60,
    CU_TARGET_COMPUTE_61   = 61,
    CU_TARGET_COMPUTE_62   = 62,
    CU_TARGET_COMPUTE_70   = 70,
    CU_TARGET_COMPUTE_72   = 72,
    CU_TARGET_COMPUTE_75   = 75,
    CU_TARGET_COMPUTE_80   = 80,
    CU_TARGET_COMPUTE_86   = 86,
    CU_TARGET_COMPUTE_87   = 87,
    CU_TARGET_COMPUTE_89   = 89,
    CU_TARGET_COMPUTE_90   = 90,
    CU_TARGET_COMPUTE_100  = 100,
    CU_TARGET_COMPUTE_110  = 110,
    CU_TARGET_COMPUTE_103  = 103,
    CU_TARGET_COMPUTE_120  = 120,
    CU_TARGET_COMPUTE_121  = 121,
    CU_TARGET_COMPUTE_90A  = CU_COMPUTE_ACCELERATED_TARGET_BASE + 90,
    CU_TARGET_COMPUTE_100A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 100,
    CU_TARGET_COMPUTE_110A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 110,
    CU_TARGET_COMPUTE_103A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 103,
    CU_TARGET_COMPUTE_120A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 120,
    CU_TARGET_COMPUTE_121A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 121,
    CU_TARGET_COMPUTE_100F = CU_COMPUTE_FAMILY_TARGET_BASE + 100,
    CU_TARGET_COMPUTE_110F = CU_COMPUTE_FAMILY_TARGET_BASE + 110,
    CU_TARGET_COMPUTE_103F = CU_COMPUTE_FAMILY_TARGET_BASE + 103,
    CU_TARGET_COMPUTE_120F = CU_COMPUTE_FAMILY_TARGET_BASE + 120,
    CU_TARGET_COMPUTE_121F = CU_COMPUTE_FAMILY_TARGET_BASE + 121,
} CUjit_target;

/* What to do when no exact binary match is found (CU_JIT_FALLBACK_STRATEGY). */
typedef enum CUjit_fallback_enum {
    CU_PREFER_PTX    = 0,
    CU_PREFER_BINARY = 1,
} CUjit_fallback;

/* Global-load cache modes (CU_JIT_CACHE_MODE). */
typedef enum CUjit_cacheMode_enum {
    CU_JIT_CACHE_OPTION_NONE = 0,
    CU_JIT_CACHE_OPTION_CG   = 1,
    CU_JIT_CACHE_OPTION_CA   = 2,
} CUjit_cacheMode;

/* Kinds of input to cuLinkAddData / cuLinkAddFile. */
typedef enum CUjitInputType_enum {
    CU_JIT_INPUT_CUBIN     = 0,
    CU_JIT_INPUT_PTX       = 1,
    CU_JIT_INPUT_FATBINARY = 2,
    CU_JIT_INPUT_OBJECT    = 3,
    CU_JIT_INPUT_LIBRARY   = 4,
    CU_JIT_INPUT_NVVM      = 5,
    CU_JIT_NUM_INPUT_TYPES = 6,
} CUjitInputType;

/* Lazy or eager module loading (cuModuleGetLoadingMode). */
typedef enum CUmoduleLoadingMode_enum {
    CU_MODULE_EAGER_LOADING = 1,
    CU_MODULE_LAZY_LOADING  = 2,
} CUmoduleLoadingMode;

/* Options of cuLibraryLoadData / cuLibraryLoadFromFile. */
typedef enum CUlibraryOption_enum {
    CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
    CU_LIBRARY_BINARY_IS_PRESERVED                    = 1,
    CU_LIBRARY_NUM_OPTIONS                            = 2,
} CUlibraryOption;

/* Host tables passed with CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE. */
typedef struct CUlibraryHostUniversalFunctionAndDataTable_st {
    void   *functionTable;
    size_t functionWindowSize;
    void   *dataTable;
    size_t dataWindowSize;
} CUlibraryHostUniversalFunctionAndDataTable;

/* Whether a function has been loaded (cuFuncIsLoaded). */
typedef enum CUfunctionLoadingState_enum {
    CU_FUNCTION_LOADING_STATE_UNLOADED = 0,
    CU_FUNCTION_LOADING_STATE_LOADED   = 1,
    CU_FUNCTION_LOADING_STATE_MAX      = 2,
} CUfunctionLoadingState;

/* Flags of cuGetProcAddress. */
typedef enum CUdriverProcAddress_flags_enum {
    CU_GET_PROC_ADDRESS_DEFAULT                   = 0x0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM             = 0x1,
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 0x2,
} CUdriverProcAddress_flags;

/* Outcome reported by cuGetProcAddress. */
typedef enum CUdriverProcAddressQueryResult_enum {
    CU_GET_PROC_ADDRESS_SUCCESS                = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND       = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

/* ---- Types 10: Kernel launch and occupancy --------------------------------- */

/* Attributes of a function or kernel (cuFuncGetAttribute, cuKernelGetAttribute). */
typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK                = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES                    = 1,
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES                     = 2,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES                     = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS                             = 4,
    CU_FUNC_ATTRIBUTE_PTX_VERSION                          = 5,
    CU_FUNC_ATTRIBUTE_BINARY_VERSION                       = 6,
    CU_FUNC_ATTRIBUTE_CACHE_MODE_CA                        = 7,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES        = 8,
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT     = 9,
    CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET             = 10,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH               = 11,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT              = 12,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH               = 13,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED    = 14,
    CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
    CU_FUNC_ATTRIBUTE_MAX                                  = 16,
} CUfunction_attribute;

/* Special values of CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT (percentages otherwise). */
typedef enum CUshared_carveout_enum {
    CU_SHAREDMEM_CARVEOUT_DEFAULT    = -1,
    CU_SHAREDMEM_CARVEOUT_MAX_SHARED = 100,
    CU_SHAREDMEM_CARVEOUT_MAX_L1     = 0,
} CUshared_carveout;

/* Flags of the occupancy calculators. */
typedef enum CUoccupancy_flags_enum {
    CU_OCCUPANCY_DEFAULT                  = 0x0,
    CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 0x1,
} CUoccupancy_flags;

/* Dynamic shared memory needed for a given block size (occupancy calculators). */
typedef size_t (CUDA_CB *CUoccupancyB2DSize)(int blockSize);

/* L2 cache treatment of accesses inside/outside an access policy window. */
typedef enum CUaccessProperty_enum {
    CU_ACCESS_PROPERTY_NORMAL     = 0,
    CU_ACCESS_PROPERTY_STREAMING  = 1,
    CU_ACCESS_PROPERTY_PERSISTING = 2,
} CUaccessProperty;

/* L2 persistence window (launch / stream / kernel node attribute). */
typedef struct CUaccessPolicyWindow_st {
    void             *base_ptr;
    size_t           num_bytes;
    float            hitRatio;
    CUaccessProperty hitProp;
    CUaccessProperty missProp;
} CUaccessPolicyWindow_v1;
typedef CUaccessPolicyWindow_v1 CUaccessPolicyWindow;

/* How a CPU thread waits on a stream (stream attribute). */
typedef enum CUsynchronizationPolicy_enum {
    CU_SYNC_POLICY_AUTO          = 1,
    CU_SYNC_POLICY_SPIN          = 2,
    CU_SYNC_POLICY_YIELD         = 3,
    CU_SYNC_POLICY_BLOCKING_SYNC = 4,
} CUsynchronizationPolicy;

/* Scheduling of thread block clusters. */
typedef enum CUclusterSchedulingPolicy_enum {
    CU_CLUSTER_SCHEDULING_POLICY_DEFAULT        = 0,
    CU_CLUSTER_SCHEDULING_POLICY_SPREAD         = 1,
    CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING = 2,
} CUclusterSchedulingPolicy;

/* Memory synchronization domains. */
typedef enum CUlaunchMemSyncDomain_enum {
    CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT = 0,
    CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE  = 1,
} CUlaunchMemSyncDomain;

/* Mapping of logical to physical memory synchronization domains. */
typedef struct CUlaunchMemSyncDomainMap_st {
    unsigned char default_;
    unsigned char remote;
} CUlaunchMemSyncDomainMap;

/* Identifiers of launch / stream / kernel node attributes. */
typedef enum CUlaunchAttributeID_enum {
    CU_LAUNCH_ATTRIBUTE_IGNORE                               = 0,
    CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW                 = 1,
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE                          = 2,
    CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY               = 3,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION                    = 4,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION    = 6,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT                   = 7,
    CU_LAUNCH_ATTRIBUTE_PRIORITY                             = 8,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP                  = 9,
    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN                      = 10,
    CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION          = 11,
    CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT              = 12,
    CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE         = 13,
    CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT     = 14,
    CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING       = 16,
} CUlaunchAttributeID;

/* Value of a launch attribute; the member used depends on the id. */
typedef union CUlaunchAttributeValue_union {
    char                    pad[64];            /* fixes the size of the union */
    CUaccessPolicyWindow    accessPolicyWindow; /* CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW */
    int                     cooperative;        /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE */
    CUsynchronizationPolicy syncPolicy;         /* CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY */
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } clusterDim; /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
    CUclusterSchedulingPolicy clusterSchedulingPolicyPreference;      /* CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE */
    int                       programmaticStreamSerializationAllowed; /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */
    struct {
        CUevent event;
        int     flags;
        int     triggerAtBlockStart;
    } programmaticEvent; /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT */
    struct {
        CUevent event;
        int     flags;
    } launchCompletionEvent; /* CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT */
    int                      priority;         /* CU_LAUNCH_ATTRIBUTE_PRIORITY */
    CUlaunchMemSyncDomainMap memSyncDomainMap; /* CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP */
    CUlaunchMemSyncDomain    memSyncDomain;    /* CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN */
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } preferredClusterDim; /* CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION */
    struct {
        int               deviceUpdatable;
        CUgraphDeviceNode devNode;
    } deviceUpdatableKernelNode; /* CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE */
    unsigned int sharedMemCarveout;           /* CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */
    unsigned int nvlinkUtilCentricScheduling; /* CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING */
} CUlaunchAttributeValue;

/* One launch attribute (id and value). */
typedef struct CUlaunchAttribute_st {
    CUlaunchAttributeID    id;
    char                   pad[4];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;

/* Launch configuration of cuLaunchKernelEx. */
typedef struct CUlaunchConfig_st {
    unsigned int      gridDimX;
    unsigned int      gridDimY;
    unsigned int      gridDimZ;
    unsigned int      blockDimX;
    unsigned int      blockDimY;
    unsigned int      blockDimZ;
    unsigned int      sharedMemBytes;
    CUstream          hStream;
    CUlaunchAttribute *attrs;
    unsigned int      numAttrs;
} CUlaunchConfig;

/* Kernel node and stream attributes share the launch attribute ids and values. */
typedef CUlaunchAttributeID CUkernelNodeAttrID;
typedef CUlaunchAttributeValue CUkernelNodeAttrValue_v1;
typedef CUkernelNodeAttrValue_v1 CUkernelNodeAttrValue;
typedef CUlaunchAttributeID CUstreamAttrID;
typedef CUlaunchAttributeValue CUstreamAttrValue_v1;
typedef CUstreamAttrValue_v1 CUstreamAttrValue;

#define CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW                 CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
#define CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE                          CU_LAUNCH_ATTRIBUTE_COOPERATIVE
#define CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION                    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
#define CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
#define CU_KERNEL_NODE_ATTRIBUTE_PRIORITY                             CU_LAUNCH_ATTRIBUTE_PRIORITY
#define CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP                  CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP
#define CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN                      CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN
#define CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION          CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION
#define CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE         CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE
#define CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT     CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT

#define CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW   CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
#define CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY
#define CU_STREAM_ATTRIBUTE_PRIORITY               CU_LAUNCH_ATTRIBUTE_PRIORITY
#define CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP    CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP
#define CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN

/* One launch of cuLaunchCooperativeKernelMultiDevice (deprecated). */
typedef struct CUDA_LAUNCH_PARAMS_st {
    CUfunction   function;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    CUstream     hStream;
    void         **kernelParams;
} CUDA_LAUNCH_PARAMS_v1;
typedef CUDA_LAUNCH_PARAMS_v1 CUDA_LAUNCH_PARAMS;

/* Flags of cuLaunchCooperativeKernelMultiDevice. */
#define CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC  0x01
#define CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC 0x02

/* Keys of the "extra" array of cuLaunchKernel: a packed argument buffer and its size,
 * terminated by CU_LAUNCH_PARAM_END. */
#define CU_LAUNCH_PARAM_END_AS_INT            0x00
#define CU_LAUNCH_PARAM_END                   ((void*)CU_LAUNCH_PARAM_END_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define CU_LAUNCH_PARAM_BUFFER_POINTER        ((void*)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT    0x02
#define CU_LAUNCH_PARAM_BUFFER_SIZE           ((void*)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)

/* Launch option requiring the kernel's compile-time block dimensions. */
#define CU_LAUNCH_KERNEL_REQUIRED_BLOCK_DIM 1

/* ---- Types 11: External memory and semaphores ------------------------------ */

/* OS / API handle types importable as external memory. */
typedef enum CUexternalMemoryHandleType_enum {
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD          = 1,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32       = 2,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT   = 3,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP         = 4,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE     = 5,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE     = 6,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT = 7,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF           = 8,
    CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD          = 9,
} CUexternalMemoryHandleType;

/* Bit of CUDA_EXTERNAL_MEMORY_HANDLE_DESC::flags: the handle is a dedicated allocation. */
#define CUDA_EXTERNAL_MEMORY_DEDICATED 0x1

/* Import description of cuImportExternalMemory. */
typedef struct CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st {
    CUexternalMemoryHandleType type;
    union {
        int fd;
        struct {
            void       *handle;
            const void *name;
        } win32;
        const void *nvSciBufObject;
    } handle;
    unsigned long long size;
    unsigned int       flags;
    unsigned int       reserved[16];
} CUDA_EXTERNAL_MEMORY_HANDLE_DESC_v1;
typedef CUDA_EXTERNAL_MEMORY_HANDLE_DESC_v1 CUDA_EXTERNAL_MEMORY_HANDLE_DESC;

/* Buffer mapped out of external memory. */
typedef struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC_st {
    unsigned long long offset;
    unsigned long long size;
    unsigned int       flags;
    unsigned int       reserved[16];
} CUDA_EXTERNAL_MEMORY_BUFFER_DESC_v1;
typedef CUDA_EXTERNAL_MEMORY_BUFFER_DESC_v1 CUDA_EXTERNAL_MEMORY_BUFFER_DESC;

/* Mipmapped array mapped out of external memory. */
typedef struct CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC_st {
    unsigned long long      offset;
    CUDA_ARRAY3D_DESCRIPTOR arrayDesc;
    unsigned int            numLevels;
    unsigned int            reserved[16];
} CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC_v1;
typedef CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC_v1 CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC;

/* OS / API handle types importable as external semaphores. */
typedef enum CUexternalSemaphoreHandleType_enum {
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD                = 1,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32             = 2,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT         = 3,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE              = 4,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE              = 5,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC                = 6,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX        = 7,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT    = 8,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD    = 9,
    CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32 = 10,
} CUexternalSemaphoreHandleType;

/* Import description of cuImportExternalSemaphore. */
typedef struct CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st {
    CUexternalSemaphoreHandleType type;
    union {
        int fd;
        struct {
            void       *handle;
            const void *name;
        } win32;
        const void *nvSciSyncObj;
    } handle;
    unsigned int flags;
    unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_v1;
typedef CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_v1 CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC;

/* Flags of the signal / wait parameters: skip NvSciBuf memory synchronization. */
#define CUDA_EXTERNAL_SEMAPHORE_SIGNAL_SKIP_NVSCIBUF_MEMSYNC 0x01
#define CUDA_EXTERNAL_SEMAPHORE_WAIT_SKIP_NVSCIBUF_MEMSYNC   0x02

/* Direction argument of cuDeviceGetNvSciSyncAttributes. */
#define CUDA_NVSCISYNC_ATTR_SIGNAL 0x1
#define CUDA_NVSCISYNC_ATTR_WAIT   0x2

/* Signal parameters of cuSignalExternalSemaphoresAsync. */
typedef struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st {
    struct {
        struct {
            unsigned long long value;
        } fence;
        union {
            void               *fence;
            unsigned long long reserved;
        } nvSciSync;
        struct {
            unsigned long long key;
        } keyedMutex;
        unsigned int reserved[12];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_v1;
typedef CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_v1 CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS;

/* Wait parameters of cuWaitExternalSemaphoresAsync. */
typedef struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st {
    struct {
        struct {
            unsigned long long value;
        } fence;
        union {
            void               *fence;
            unsigned long long reserved;
        } nvSciSync;
        struct {
            unsigned long long key;
            unsigned int       timeoutMs;
        } keyedMutex;
        unsigned int reserved[10];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
} CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_v1;
typedef CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_v1 CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS;

/* ---- Types 12: Graphs ------------------------------------------------------ */

/* Kernel node parameters, first revision. */
typedef struct CUDA_KERNEL_NODE_PARAMS_st {
    CUfunction   func;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    void         **kernelParams;
    void         **extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

/* Kernel node parameters (current): adds a CUkernel and its context. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
    CUfunction   func;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    void         **kernelParams;
    void         **extra;
    CUkernel     kern;
    CUcontext    ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;
typedef CUDA_KERNEL_NODE_PARAMS_v2 CUDA_KERNEL_NODE_PARAMS;

/* Kernel node parameters as embedded in CUgraphNodeParams. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v3_st {
    CUfunction   func;
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    void         **kernelParams;
    void         **extra;
    CUkernel     kern;
    CUcontext    ctx;
} CUDA_KERNEL_NODE_PARAMS_v3;

/* Memset node parameters. */
typedef struct CUDA_MEMSET_NODE_PARAMS_st {
    CUdeviceptr  dst;
    size_t       pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t       width;
    size_t       height;
} CUDA_MEMSET_NODE_PARAMS_v1;
typedef CUDA_MEMSET_NODE_PARAMS_v1 CUDA_MEMSET_NODE_PARAMS;

/* Memset node parameters with the owning context. */
typedef struct CUDA_MEMSET_NODE_PARAMS_v2_st {
    CUdeviceptr  dst;
    size_t       pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t       width;
    size_t       height;
    CUcontext    ctx;
} CUDA_MEMSET_NODE_PARAMS_v2;

/* Host node parameters. */
typedef struct CUDA_HOST_NODE_PARAMS_st {
    CUhostFn fn;
    void     *userData;
} CUDA_HOST_NODE_PARAMS_v1;
typedef CUDA_HOST_NODE_PARAMS_v1 CUDA_HOST_NODE_PARAMS;

/* Host node parameters as embedded in CUgraphNodeParams. */
typedef struct CUDA_HOST_NODE_PARAMS_v2_st {
    CUhostFn fn;
    void     *userData;
} CUDA_HOST_NODE_PARAMS_v2;

/* Kinds of conditional node. */
typedef enum CUgraphConditionalNodeType_enum {
    CU_GRAPH_COND_TYPE_IF     = 0,
    CU_GRAPH_COND_TYPE_WHILE  = 1,
    CU_GRAPH_COND_TYPE_SWITCH = 2,
} CUgraphConditionalNodeType;

/* Conditional node parameters. */
typedef struct CUDA_CONDITIONAL_NODE_PARAMS {
    CUgraphConditionalHandle   handle;
    CUgraphConditionalNodeType type;
    unsigned int               size;
    CUgraph                    *phGraph_out;
    CUcontext                  ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;

/* Flag of cuGraphConditionalHandleCreate: reset the condition at each launch. */
#define CU_GRAPH_COND_ASSIGN_DEFAULT 0x1

/* Kinds of graph node. */
typedef enum CUgraphNodeType_enum {
    CU_GRAPH_NODE_TYPE_KERNEL           = 0,
    CU_GRAPH_NODE_TYPE_MEMCPY           = 1,
    CU_GRAPH_NODE_TYPE_MEMSET           = 2,
    CU_GRAPH_NODE_TYPE_HOST             = 3,
    CU_GRAPH_NODE_TYPE_GRAPH            = 4,
    CU_GRAPH_NODE_TYPE_EMPTY            = 5,
    CU_GRAPH_NODE_TYPE_WAIT_EVENT       = 6,
    CU_GRAPH_NODE_TYPE_EVENT_RECORD     = 7,
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
    CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT   = 9,
    CU_GRAPH_NODE_TYPE_MEM_ALLOC        = 10,
    CU_GRAPH_NODE_TYPE_MEM_FREE         = 11,
    CU_GRAPH_NODE_TYPE_BATCH_MEM_OP     = 12,
    CU_GRAPH_NODE_TYPE_CONDITIONAL      = 13,
} CUgraphNodeType;

/* Kinds of graph edge. */
typedef enum CUgraphDependencyType_enum {
    CU_GRAPH_DEPENDENCY_TYPE_DEFAULT      = 0,
    CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1,
} CUgraphDependencyType;

/* Annotation of a graph edge (ports and type). */
typedef struct CUgraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} CUgraphEdgeData;

/* Output ports of a kernel node usable in CUgraphEdgeData::from_port. */
#define CU_GRAPH_KERNEL_NODE_PORT_DEFAULT      0
#define CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC 1
#define CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER 2

/* Outcome of cuGraphInstantiateWithParams. */
typedef enum CUgraphInstantiateResult_enum {
    CUDA_GRAPH_INSTANTIATE_SUCCESS                      = 0,
    CUDA_GRAPH_INSTANTIATE_ERROR                        = 1,
    CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE            = 2,
    CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED = 3,
    CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED  = 4,
    CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED    = 5,
} CUgraphInstantiateResult;

/* In/out parameters of cuGraphInstantiateWithParams. */
typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
    cuuint64_t               flags;
    CUstream                 hUploadStream;
    CUgraphNode              hErrNode_out;
    CUgraphInstantiateResult result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;

/* Graph instantiation flags. */
typedef enum CUgraphInstantiate_flags_enum {
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 0x1,
    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD              = 0x2,
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH       = 0x4,
    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY   = 0x8,
} CUgraphInstantiate_flags;

/* Outcome of cuGraphExecUpdate. */
typedef enum CUgraphExecUpdateResult_enum {
    CU_GRAPH_EXEC_UPDATE_SUCCESS                           = 0,
    CU_GRAPH_EXEC_UPDATE_ERROR                             = 1,
    CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED            = 2,
    CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED           = 3,
    CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED            = 4,
    CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED          = 5,
    CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED               = 6,
    CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE = 7,
    CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED          = 8,
} CUgraphExecUpdateResult;

/* Detailed outcome of cuGraphExecUpdate. */
typedef struct CUgraphExecUpdateResultInfo_st {
    CUgraphExecUpdateResult result;
    CUgraphNode             errorNode;
    CUgraphNode             errorFromNode;
} CUgraphExecUpdateResultInfo_v1;
typedef CUgraphExecUpdateResultInfo_v1 CUgraphExecUpdateResultInfo;

/* Memcpy node parameters. */
typedef struct CUDA_MEMCPY_NODE_PARAMS_st {
    int           flags;
    int           reserved;
    CUcontext     copyCtx;
    CUDA_MEMCPY3D copyParams;
} CUDA_MEMCPY_NODE_PARAMS;

/* External semaphore signal node parameters. */
typedef struct CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_st {
    CUexternalSemaphore                      *extSemArray;
    const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray;
    unsigned int                             numExtSems;
} CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v1;
typedef CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v1 CUDA_EXT_SEM_SIGNAL_NODE_PARAMS;

/* External semaphore signal node parameters (CUgraphNodeParams). */
typedef struct CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2_st {
    CUexternalSemaphore                      *extSemArray;
    const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray;
    unsigned int                             numExtSems;
} CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2;

/* External semaphore wait node parameters. */
typedef struct CUDA_EXT_SEM_WAIT_NODE_PARAMS_st {
    CUexternalSemaphore                      *extSemArray;
    const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray;
    unsigned int                             numExtSems;
} CUDA_EXT_SEM_WAIT_NODE_PARAMS_v1;
typedef CUDA_EXT_SEM_WAIT_NODE_PARAMS_v1 CUDA_EXT_SEM_WAIT_NODE_PARAMS;

/* External semaphore wait node parameters (CUgraphNodeParams). */
typedef struct CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2_st {
    CUexternalSemaphore                      *extSemArray;
    const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray;
    unsigned int                             numExtSems;
} CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2;

/* Memory allocation node parameters. */
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st {
    CUmemPoolProps        poolProps;
    const CUmemAccessDesc *accessDescs;
    size_t                accessDescCount;
    size_t                bytesize;
    CUdeviceptr           dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS_v1;
typedef CUDA_MEM_ALLOC_NODE_PARAMS_v1 CUDA_MEM_ALLOC_NODE_PARAMS;

/* Memory allocation node parameters (CUgraphNodeParams). */
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v2_st {
    CUmemPoolProps        poolProps;
    const CUmemAccessDesc *accessDescs;
    size_t                accessDescCount;
    size_t                bytesize;
    CUdeviceptr           dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS_v2;

/* Memory free node parameters. */
typedef struct CUDA_MEM_FREE_NODE_PARAMS_st {
    CUdeviceptr dptr;
} CUDA_MEM_FREE_NODE_PARAMS;

/* Graph memory attributes of a device (cuDeviceGetGraphMemAttribute). */
typedef enum CUgraphMem_attribute_enum {
    CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT     = 0,
    CU_GRAPH_MEM_ATTR_USED_MEM_HIGH        = 1,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH    = 3,
} CUgraphMem_attribute;

/* Whether a child graph node clones or takes its graph. */
typedef enum CUgraphChildGraphNodeOwnership_enum {
    CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE = 0,
    CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE  = 1,
} CUgraphChildGraphNodeOwnership;

/* Child graph node parameters. */
typedef struct CUDA_CHILD_GRAPH_NODE_PARAMS_st {
    CUgraph                        graph;
    CUgraphChildGraphNodeOwnership ownership;
} CUDA_CHILD_GRAPH_NODE_PARAMS;

/* Event record node parameters. */
typedef struct CUDA_EVENT_RECORD_NODE_PARAMS_st {
    CUevent event;
} CUDA_EVENT_RECORD_NODE_PARAMS;

/* Event wait node parameters. */
typedef struct CUDA_EVENT_WAIT_NODE_PARAMS_st {
    CUevent event;
} CUDA_EVENT_WAIT_NODE_PARAMS;

/* Batch memory operation node parameters. */
typedef struct CUDA_BATCH_MEM_OP_NODE_PARAMS_v1_st {
    CUcontext                ctx;
    unsigned int             count;
    CUstreamBatchMemOpParams *paramArray;
    unsigned int             flags;
} CUDA_BATCH_MEM_OP_NODE_PARAMS_v1;
typedef CUDA_BATCH_MEM_OP_NODE_PARAMS_v1 CUDA_BATCH_MEM_OP_NODE_PARAMS;

/* Batch memory operation node parameters (CUgraphNodeParams). */
typedef struct CUDA_BATCH_MEM_OP_NODE_PARAMS_v2_st {
    CUcontext                ctx;
    unsigned int             count;
    CUstreamBatchMemOpParams *paramArray;
    unsigned int             flags;
} CUDA_BATCH_MEM_OP_NODE_PARAMS_v2;

/* Generic node parameters of cuGraphAddNode (tagged by type). */
typedef struct CUgraphNodeParams_st {
    CUgraphNodeType type;
    int             reserved0[3];
    union {
        long long                          reserved1[29]; /* fixes the size of the union */
        CUDA_KERNEL_NODE_PARAMS_v3         kernel;        /* CU_GRAPH_NODE_TYPE_KERNEL */
        CUDA_MEMCPY_NODE_PARAMS            memcpy;        /* CU_GRAPH_NODE_TYPE_MEMCPY */
        CUDA_MEMSET_NODE_PARAMS_v2         memset;        /* CU_GRAPH_NODE_TYPE_MEMSET */
        CUDA_HOST_NODE_PARAMS_v2           host;          /* CU_GRAPH_NODE_TYPE_HOST */
        CUDA_CHILD_GRAPH_NODE_PARAMS       graph;         /* CU_GRAPH_NODE_TYPE_GRAPH */
        CUDA_EVENT_WAIT_NODE_PARAMS        eventWait;     /* CU_GRAPH_NODE_TYPE_WAIT_EVENT */
        CUDA_EVENT_RECORD_NODE_PARAMS      eventRecord;   /* CU_GRAPH_NODE_TYPE_EVENT_RECORD */
        CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2 extSemSignal;  /* CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL */
        CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2   extSemWait;    /* CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT */
        CUDA_MEM_ALLOC_NODE_PARAMS_v2      alloc;         /* CU_GRAPH_NODE_TYPE_MEM_ALLOC */
        CUDA_MEM_FREE_NODE_PARAMS          free;          /* CU_GRAPH_NODE_TYPE_MEM_FREE */
        CUDA_BATCH_MEM_OP_NODE_PARAMS_v2   memOp;         /* CU_GRAPH_NODE_TYPE_BATCH_MEM_OP */
        CUDA_CONDITIONAL_NODE_PARAMS       conditional;   /* CU_GRAPH_NODE_TYPE_CONDITIONAL */
    };
    long long reserved2;
} CUgraphNodeParams;

/* Detail selected by cuGraphDebugDotPrint. */
typedef enum CUgraphDebugDot_flags_enum {
    CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE                      = 0x1,
    CU_GRAPH_DEBUG_DOT_FLAGS_RUNTIME_TYPES                = 0x2,
    CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS           = 0x4,
    CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS           = 0x8,
    CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS           = 0x10,
    CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS             = 0x20,
    CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS            = 0x40,
    CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_SIGNAL_NODE_PARAMS = 0x80,
    CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_WAIT_NODE_PARAMS   = 0x100,
    CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_ATTRIBUTES       = 0x200,
    CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES                      = 0x400,
    CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS        = 0x800,
    CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS         = 0x1000,
    CU_GRAPH_DEBUG_DOT_FLAGS_BATCH_MEM_OP_NODE_PARAMS     = 0x2000,
    CU_GRAPH_DEBUG_DOT_FLAGS_EXTRA_TOPO_INFO              = 0x4000,
    CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS      = 0x8000,
} CUgraphDebugDot_flags;

/* Flags of cuUserObjectCreate. */
typedef enum CUuserObject_flags_enum {
    CU_USER_OBJECT_NO_DESTRUCTOR_SYNC = 0x1,
} CUuserObject_flags;

/* Flags of cuGraphRetainUserObject. */
typedef enum CUuserObjectRetain_flags_enum {
    CU_GRAPH_USER_OBJECT_MOVE = 0x1,
} CUuserObjectRetain_flags;

/* ---- Types 13: Coredumps, green contexts, error logs and checkpointing ----- */

/* Coredump attributes (cuCoredumpGet/SetAttribute*). */
typedef enum CUcoredumpSettings_enum {
    CU_COREDUMP_ENABLE_ON_EXCEPTION = 1,
    CU_COREDUMP_TRIGGER_HOST        = 2,
    CU_COREDUMP_LIGHTWEIGHT         = 3,
    CU_COREDUMP_ENABLE_USER_TRIGGER = 4,
    CU_COREDUMP_FILE                = 5,
    CU_COREDUMP_PIPE                = 6,
    CU_COREDUMP_GENERATION_FLAGS    = 7,
    CU_COREDUMP_MAX                 = 8,
} CUcoredumpSettings;

/* Bits of CU_COREDUMP_GENERATION_FLAGS. */
typedef enum CUCoredumpGenerationFlags {
    CU_COREDUMP_DEFAULT_FLAGS                = 0x0,
    CU_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES = 0x1,
    CU_COREDUMP_SKIP_GLOBAL_MEMORY           = 0x2,
    CU_COREDUMP_SKIP_SHARED_MEMORY           = 0x4,
    CU_COREDUMP_SKIP_LOCAL_MEMORY            = 0x8,
    CU_COREDUMP_SKIP_ABORT                   = 0x10,
    CU_COREDUMP_SKIP_CONSTBANK_MEMORY        = 0x20,
    CU_COREDUMP_LIGHTWEIGHT_FLAGS            = 0x2f,
} CUCoredumpGenerationFlags;

/* Flags of cuGreenCtxCreate. */
typedef enum {
    CU_GREEN_CTX_DEFAULT_STREAM = 0x1,
} CUgreenCtxCreate_flags;

/* Flags of cuDevSmResourceSplitByCount. */
typedef enum {
    CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING     = 0x1,
    CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE = 0x2,
} CUdevSmResourceSplit_flags;

/* Revision and reserved tail size of CUdevResource. */
#define RESOURCE_ABI_VERSION        1
#define RESOURCE_ABI_EXTERNAL_BYTES 48

/* Kinds of device resource. */
typedef enum {
    CU_DEV_RESOURCE_TYPE_INVALID = 0,
    CU_DEV_RESOURCE_TYPE_SM      = 1,
} CUdevResourceType;

/* A set of streaming multiprocessors. */
typedef struct CUdevSmResource_st {
    unsigned int smCount;
    unsigned int minSmPartitionSize;
    unsigned int smCoscheduledAlignment;
} CUdevSmResource;

/* A device resource, tagged by type; treat as read-only. */
typedef struct CUdevResource_st {
    CUdevResourceType type;
    unsigned char     _internal_padding[92];
    union {
        CUdevSmResource sm;
        unsigned char   _oversize[RESOURCE_ABI_EXTERNAL_BYTES];
    };
} CUdevResource_v1;
typedef CUdevResource_v1 CUdevResource;

/* Severity of a driver log message. */
typedef enum CUlogLevel_enum {
    CU_LOG_LEVEL_ERROR   = 0,
    CU_LOG_LEVEL_WARNING = 1,
} CUlogLevel;

/* Callback of cuLogsRegisterCallback. */
typedef void (CUDA_CB *CUlogsCallback)(void *data, CUlogLevel logLevel, char *message, size_t length);

/* Checkpoint state of a process. */
typedef enum CUprocessState_enum {
    CU_PROCESS_STATE_RUNNING      = 0,
    CU_PROCESS_STATE_LOCKED       = 1,
    CU_PROCESS_STATE_CHECKPOINTED = 2,
    CU_PROCESS_STATE_FAILED       = 3,
} CUprocessState;

/* Arguments of cuCheckpointProcessLock. */
typedef struct CUcheckpointLockArgs_st {
    unsigned int timeoutMs;
    unsigned int reserved0;
    cuuint64_t   reserved1[7];
} CUcheckpointLockArgs;

/* Arguments of cuCheckpointProcessCheckpoint. */
typedef struct CUcheckpointCheckpointArgs_st {
    cuuint64_t reserved[8];
} CUcheckpointCheckpointArgs;

/* GPU remapping applied on restore. */
typedef struct CUcheckpointGpuPair_st {
    CUuuid oldUuid;
    CUuuid newUuid;
} CUcheckpointGpuPair;

/* Arguments of cuCheckpointProcessRestore. */
typedef struct CUcheckpointRestoreArgs_st {
    CUcheckpointGpuPair *gpuPairs;
    unsigned int        gpuPairsCount;
    char                reserved[44];
    cuuint64_t          reserved1;
} CUcheckpointRestoreArgs;

/* Arguments of cuCheckpointProcessUnlock. */
typedef struct CUcheckpointUnlockArgs_st {
    cuuint64_t reserved[8];
} CUcheckpointUnlockArgs;

#if defined(XCUDA_EXPORTED_NAMES_ONLY)
/* ---- Legacy types (only needed to declare the legacy entry points) --------- */

/* 32-bit device pointer of the original (pre-3.2) API. */
typedef unsigned int CUdeviceptr_v1;

/* Original 2D copy descriptor (32-bit sizes). */
typedef struct CUDA_MEMCPY2D_v1_st {
    unsigned int   srcXInBytes;
    unsigned int   srcY;
    CUmemorytype   srcMemoryType;
    const void     *srcHost;
    CUdeviceptr_v1 srcDevice;
    CUarray        srcArray;
    unsigned int   srcPitch;
    unsigned int   dstXInBytes;
    unsigned int   dstY;
    CUmemorytype   dstMemoryType;
    void           *dstHost;
    CUdeviceptr_v1 dstDevice;
    CUarray        dstArray;
    unsigned int   dstPitch;
    unsigned int   WidthInBytes;
    unsigned int   Height;
} CUDA_MEMCPY2D_v1;

/* Original 3D copy descriptor (32-bit sizes). */
typedef struct CUDA_MEMCPY3D_v1_st {
    unsigned int   srcXInBytes;
    unsigned int   srcY;
    unsigned int   srcZ;
    unsigned int   srcLOD;
    CUmemorytype   srcMemoryType;
    const void     *srcHost;
    CUdeviceptr_v1 srcDevice;
    CUarray        srcArray;
    void           *reserved0;
    unsigned int   srcPitch;
    unsigned int   srcHeight;
    unsigned int   dstXInBytes;
    unsigned int   dstY;
    unsigned int   dstZ;
    unsigned int   dstLOD;
    CUmemorytype   dstMemoryType;
    void           *dstHost;
    CUdeviceptr_v1 dstDevice;
    CUarray        dstArray;
    void           *reserved1;
    unsigned int   dstPitch;
    unsigned int   dstHeight;
    unsigned int   WidthInBytes;
    unsigned int   Height;
    unsigned int   Depth;
} CUDA_MEMCPY3D_v1;

/* Original 1D/2D array descriptor (32-bit sizes). */
typedef struct CUDA_ARRAY_DESCRIPTOR_v1_st {
    unsigned int   Width;
    unsigned int   Height;
    CUarray_format Format;
    unsigned int   NumChannels;
} CUDA_ARRAY_DESCRIPTOR_v1;

/* Original 3D array descriptor (32-bit sizes). */
typedef struct CUDA_ARRAY3D_DESCRIPTOR_v1_st {
    unsigned int   Width;
    unsigned int   Height;
    unsigned int   Depth;
    CUarray_format Format;
    unsigned int   NumChannels;
    unsigned int   Flags;
} CUDA_ARRAY3D_DESCRIPTOR_v1;
#endif /* XCUDA_EXPORTED_NAMES_ONLY */

#ifndef XCUDA_NO_PROTOTYPES

/* Entry points, declared under the symbol names libcuda.so.1 exports. */

/* ---- Error reporting ------------------------------------------------------- */
CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr);

/* ---- Initialization and version -------------------------------------------- */
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);

/* ---- Devices --------------------------------------------------------------- */
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal);
CUresult CUDAAPI cuDeviceGetCount(int *count);
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev);
CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult CUDAAPI cuDeviceGetTexture1DLinearMaxWidth(size_t *maxWidthInElements, CUarray_format format,
                                                    unsigned int numChannels, CUdevice dev);
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult CUDAAPI cuDeviceGetHostAtomicCapabilities(unsigned int *capabilities,
                                                   const CUatomicOperation *operations, unsigned int count,
                                                   CUdevice dev);
CUresult CUDAAPI cuDeviceGetNvSciSyncAttributes(void *nvSciSyncAttrList, CUdevice dev, int flags);
CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
CUresult CUDAAPI cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type, CUdevice dev);
CUresult CUDAAPI cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
                                            CUflushGPUDirectRDMAWritesScope scope);
CUresult CUDAAPI cuDeviceGetProperties(CUdevprop *prop, CUdevice dev);
CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);

/* ---- Primary contexts ------------------------------------------------------ */
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags);
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev);

/* ---- Contexts -------------------------------------------------------------- */
CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                CUdevice dev);
CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx);
CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx);
CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx);
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxGetDevice(CUdevice *device);
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags);
CUresult CUDAAPI cuCtxSetFlags(unsigned int flags);
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
CUresult CUDAAPI cuCtxSynchronize(void);
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx);
CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value);
CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit);
CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig);
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config);
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
CUresult CUDAAPI cuCtxResetPersistingL2Cache(void);
CUresult CUDAAPI cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity, CUexecAffinityType type);
CUresult CUDAAPI cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent);
CUresult CUDAAPI cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent);
CUresult CUDAAPI cuCtxAttach(CUcontext *pctx, unsigned int flags);
CUresult CUDAAPI cuCtxDetach(CUcontext ctx);
CUresult CUDAAPI cuCtxGetSharedMemConfig(CUsharedconfig *pConfig);
CUresult CUDAAPI cuCtxSetSharedMemConfig(CUsharedconfig config);

/* ---- Modules and JIT linking ----------------------------------------------- */
CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname);
CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image);
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues);
CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
CUresult CUDAAPI cuModuleUnload(CUmodule hmod);
CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode);
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod);
CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod);
CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                 CUlinkState *stateOut);
CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                  const char *name, unsigned int numOptions, CUjit_option *options,
                                  void **optionValues);
CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                  unsigned int numOptions, CUjit_option *options, void **optionValues);
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
CUresult CUDAAPI cuLinkDestroy(CUlinkState state);
CUresult CUDAAPI cuModuleGetTexRef(CUtexref *pTexRef, CUmodule hmod, const char *name);
CUresult CUDAAPI cuModuleGetSurfRef(CUsurfref *pSurfRef, CUmodule hmod, const char *name);

/* ---- Libraries and kernels (context-independent loading) ------------------- */
CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                       void **jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                       unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryUnload(CUlibrary library);
CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib);
CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib);
CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel);
CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name);
CUresult CUDAAPI cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name);
CUresult CUDAAPI cuLibraryGetUnifiedFunction(void **fptr, CUlibrary library, const char *symbol);
CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev);
CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev);
CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev);
CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc);
CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
                                      size_t *paramSize);

/* ---- Memory: allocation, copies, memset and arrays ------------------------- */
CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total);
CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes);
CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr);
CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult CUDAAPI cuMemFreeHost(void *p);
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);
CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p);
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult CUDAAPI cuDeviceRegisterAsyncNotification(CUdevice device, CUasyncCallback callbackFunc,
                                                   void *userData, CUasyncCallbackHandle *callback);
CUresult CUDAAPI cuDeviceUnregisterAsyncNotification(CUdevice device, CUasyncCallbackHandle callback);
CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId);
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event);
CUresult CUDAAPI cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);
CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr);
CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostUnregister(void *p);
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                 size_t ByteCount);
CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy);
CUresult CUDAAPI cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy);
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                      CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost,
                                      size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                      CUstream hStream);
CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                       CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                       CUstream hStream);
CUresult CUDAAPI cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                         unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N);
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                 size_t Height);
CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                  size_t Height);
CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                  size_t Height);
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                   size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                    size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                    size_t Height, CUstream hStream);
CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
CUresult CUDAAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *sparseProperties, CUarray array);
CUresult CUDAAPI cuMipmappedArrayGetSparseProperties(CUDA_ARRAY_SPARSE_PROPERTIES *sparseProperties,
                                                     CUmipmappedArray mipmap);
CUresult CUDAAPI cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
                                              CUarray array, CUdevice device);
CUresult CUDAAPI cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
                                                       CUmipmappedArray mipmap, CUdevice device);
CUresult CUDAAPI cuArrayGetPlane(CUarray *pPlaneArray, CUarray hArray, unsigned int planeIdx);
CUresult CUDAAPI cuArrayDestroy(CUarray hArray);
CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
CUresult CUDAAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                        const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                        unsigned int numMipmapLevels);
CUresult CUDAAPI cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray hMipmappedArray,
                                          unsigned int level);
CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray);
CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
                                               CUmemRangeHandleType handleType, unsigned long long flags);
CUresult CUDAAPI cuMemBatchDecompressAsync(CUmemDecompressParams *paramsArray, size_t count,
                                           unsigned int flags, size_t *errorIndex, CUstream stream);

/* ---- Virtual memory management --------------------------------------------- */
CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags);
CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags);
CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags);
CUresult CUDAAPI cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream);
CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr);
CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                              CUmemAllocationHandleType handleType, unsigned long long flags);
CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                CUmemAllocationHandleType shHandleType);
CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option);
CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                        CUmemGenericAllocationHandle handle);
CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);

/* ---- Stream-ordered allocator and memory pools ----------------------------- */
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location);
CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool);
CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                        CUmemAllocationType type);
CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type);
CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool);
CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream);
CUresult CUDAAPI cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                  CUmemAllocationHandleType handleType,
                                                  unsigned long long flags);
CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                    CUmemAllocationHandleType handleType,
                                                    unsigned long long flags);
CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr);
CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                        CUmemPoolPtrExportData *shareData);

/* ---- Multicast objects ----------------------------------------------------- */
CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle, const CUmulticastObjectProp *prop);
CUresult CUDAAPI cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev);
CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                    CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
                                    unsigned long long flags);
CUresult CUDAAPI cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
                                     CUdeviceptr memptr, size_t size, unsigned long long flags);
CUresult CUDAAPI cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev, size_t mcOffset,
                                   size_t size);
CUresult CUDAAPI cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
                                           CUmulticastGranularity_flags option);

/* ---- Unified addressing and managed memory --------------------------------- */
CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                       unsigned int flags, CUstream hStream);
CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                CUmemLocation location);
CUresult CUDAAPI cuMemPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                         CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                         size_t numPrefetchLocs, unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemDiscardBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                        unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                                   CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                   size_t numPrefetchLocs, unsigned long long flags,
                                                   CUstream hStream);
CUresult CUDAAPI cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
                                        CUdeviceptr devPtr, size_t count);
CUresult CUDAAPI cuMemRangeGetAttributes(void **data, size_t *dataSizes, CUmem_range_attribute *attributes,
                                         size_t numAttributes, CUdeviceptr devPtr, size_t count);
CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                        void **data, CUdeviceptr ptr);

/* ---- Streams --------------------------------------------------------------- */
CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority);
CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device);
CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags);
CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId);
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags);
CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                             const CUgraphNode *dependencies,
                                             const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                             CUstreamCaptureMode mode);
CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode);
CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode *dependencies,
                                                      const CUgraphEdgeData *dependencyData,
                                                      size_t numDependencies, unsigned int flags);
CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                        unsigned int flags);
CUresult CUDAAPI cuStreamQuery(CUstream hStream);
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream);
CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream);
CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src);
CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value_out);
CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value);

/* ---- Events ---------------------------------------------------------------- */
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult CUDAAPI cuEventQuery(CUevent hEvent);
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent);
CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);

/* ---- External memory and semaphores ---------------------------------------- */
CUresult CUDAAPI cuImportExternalMemory(CUexternalMemory *extMem_out,
                                        const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc);
CUresult CUDAAPI cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
                                                 const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *bufferDesc);
CUresult CUDAAPI cuExternalMemoryGetMappedMipmappedArray(CUmipmappedArray *mipmap, CUexternalMemory extMem,
                                                         const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC *mipmapDesc);
CUresult CUDAAPI cuDestroyExternalMemory(CUexternalMemory extMem);
CUresult CUDAAPI cuImportExternalSemaphore(CUexternalSemaphore *extSem_out,
                                           const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC *semHandleDesc);
CUresult CUDAAPI cuSignalExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
                                                 const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray,
                                                 unsigned int numExtSems, CUstream stream);
CUresult CUDAAPI cuWaitExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
                                               const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray,
                                               unsigned int numExtSems, CUstream stream);
CUresult CUDAAPI cuDestroyExternalSemaphore(CUexternalSemaphore extSem);

/* ---- Stream memory operations ---------------------------------------------- */
CUresult CUDAAPI cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                        unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                        unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                         unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                         unsigned int flags);
CUresult CUDAAPI cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                                       CUstreamBatchMemOpParams *paramArray, unsigned int flags);

/* ---- Kernel launch and function attributes --------------------------------- */
CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);
CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc);
CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc);
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                    size_t *paramSize);
CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function);
CUresult CUDAAPI cuFuncLoad(CUfunction function);
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX,
                                           unsigned int blockDimY, unsigned int blockDimZ,
                                           unsigned int sharedMemBytes, CUstream hStream,
                                           void **kernelParams);
CUresult CUDAAPI cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList,
                                                      unsigned int numDevices, unsigned int flags);
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z);
CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes);
CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes);
CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value);
CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value);
CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes);
CUresult CUDAAPI cuLaunch(CUfunction f);
CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream);
CUresult CUDAAPI cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef);
CUresult CUDAAPI cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config);

/* ---- Graphs ---------------------------------------------------------------- */
CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      const CUDA_MEMCPY3D *copyParams, CUcontext ctx);
CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams);
CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams);
CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                    size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies, size_t numDependencies,
                                          CUgraph childGraph);
CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph);
CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies);
CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies, size_t numDependencies,
                                           CUevent event);
CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out);
CUresult CUDAAPI cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         CUevent event);
CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out);
CUresult CUDAAPI cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult CUDAAPI cuGraphAddExternalSemaphoresSignalNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                        const CUgraphNode *dependencies,
                                                        size_t numDependencies,
                                                        const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeGetParams(CUgraphNode hNode,
                                                              CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *params_out);
CUresult CUDAAPI cuGraphExternalSemaphoresSignalNodeSetParams(CUgraphNode hNode,
                                                              const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddExternalSemaphoresWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                      const CUgraphNode *dependencies, size_t numDependencies,
                                                      const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeGetParams(CUgraphNode hNode,
                                                            CUDA_EXT_SEM_WAIT_NODE_PARAMS *params_out);
CUresult CUDAAPI cuGraphExternalSemaphoresWaitNodeSetParams(CUgraphNode hNode,
                                                            const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddBatchMemOpNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies, size_t numDependencies,
                                          const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                                CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams_out);
CUresult CUDAAPI cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
                                                const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out);
CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       CUdeviceptr dptr);
CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out);
CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device);
CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value);
CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value);
CUresult CUDAAPI cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph);
CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph);
CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type);
CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes);
CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes);
CUresult CUDAAPI cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                    CUgraphEdgeData *edgeData, size_t *numEdges);
CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
                                               CUgraphEdgeData *edgeData, size_t *numDependencies);
CUresult CUDAAPI cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                                 CUgraphEdgeData *edgeData, size_t *numDependentNodes);
CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                           const CUgraphEdgeData *edgeData, size_t numDependencies);
CUresult CUDAAPI cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                              const CUgraphEdgeData *edgeData, size_t numDependencies);
CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode);
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             unsigned long long flags);
CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags);
CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMCPY3D *copyParams, CUcontext ctx);
CUresult CUDAAPI cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
CUresult CUDAAPI cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                              const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    CUgraph childGraph);
CUresult CUDAAPI cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult CUDAAPI cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult CUDAAPI cuGraphExecExternalSemaphoresSignalNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                                  const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphExecExternalSemaphoresWaitNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                                const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams);
CUresult CUDAAPI cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled);
CUresult CUDAAPI cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled);
CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec);
CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph);
CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                      CUgraphExecUpdateResultInfo *resultInfo);
CUresult CUDAAPI cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src);
CUresult CUDAAPI cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                               CUkernelNodeAttrValue *value_out);
CUresult CUDAAPI cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                               const CUkernelNodeAttrValue *value);
CUresult CUDAAPI cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags);
CUresult CUDAAPI cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy,
                                    unsigned int initialRefcount, unsigned int flags);
CUresult CUDAAPI cuUserObjectRetain(CUuserObject object, unsigned int count);
CUresult CUDAAPI cuUserObjectRelease(CUuserObject object, unsigned int count);
CUresult CUDAAPI cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                         unsigned int flags);
CUresult CUDAAPI cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count);
CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                   CUgraphNodeParams *nodeParams);
CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams);
CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                          CUgraphNodeParams *nodeParams);
CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph,
                                                CUcontext ctx, unsigned int defaultLaunchValue,
                                                unsigned int flags);

/* ---- Occupancy ------------------------------------------------------------- */
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize);
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                                      int blockSize, size_t dynamicSMemSize,
                                                                      unsigned int flags);
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                  size_t dynamicSMemSize, int blockSizeLimit);
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                           CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                           size_t dynamicSMemSize, int blockSizeLimit,
                                                           unsigned int flags);
CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func,
                                                         int numBlocks, int blockSize);
CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                                    const CUlaunchConfig *config);
CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                              const CUlaunchConfig *config);

/* ---- Texture and surface references (deprecated) --------------------------- */
CUresult CUDAAPI cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags);
CUresult CUDAAPI cuTexRefSetMipmappedArray(CUtexref hTexRef, CUmipmappedArray hMipmappedArray,
                                           unsigned int Flags);
CUresult CUDAAPI cuTexRefSetAddress_v2(size_t *ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes);
CUresult CUDAAPI cuTexRefSetAddress2D_v3(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc,
                                         CUdeviceptr dptr, size_t Pitch);
CUresult CUDAAPI cuTexRefSetFormat(CUtexref hTexRef, CUarray_format fmt, int NumPackedComponents);
CUresult CUDAAPI cuTexRefSetAddressMode(CUtexref hTexRef, int dim, CUaddress_mode am);
CUresult CUDAAPI cuTexRefSetFilterMode(CUtexref hTexRef, CUfilter_mode fm);
CUresult CUDAAPI cuTexRefSetMipmapFilterMode(CUtexref hTexRef, CUfilter_mode fm);
CUresult CUDAAPI cuTexRefSetMipmapLevelBias(CUtexref hTexRef, float bias);
CUresult CUDAAPI cuTexRefSetMipmapLevelClamp(CUtexref hTexRef, float minMipmapLevelClamp,
                                             float maxMipmapLevelClamp);
CUresult CUDAAPI cuTexRefSetMaxAnisotropy(CUtexref hTexRef, unsigned int maxAniso);
CUresult CUDAAPI cuTexRefSetBorderColor(CUtexref hTexRef, float *pBorderColor);
CUresult CUDAAPI cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags);
CUresult CUDAAPI cuTexRefGetAddress_v2(CUdeviceptr *pdptr, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetArray(CUarray *phArray, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetMipmappedArray(CUmipmappedArray *phMipmappedArray, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetAddressMode(CUaddress_mode *pam, CUtexref hTexRef, int dim);
CUresult CUDAAPI cuTexRefGetFilterMode(CUfilter_mode *pfm, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetFormat(CUarray_format *pFormat, int *pNumChannels, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetMipmapFilterMode(CUfilter_mode *pfm, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetMipmapLevelBias(float *pbias, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetMipmapLevelClamp(float *pminMipmapLevelClamp, float *pmaxMipmapLevelClamp,
                                             CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetMaxAnisotropy(int *pmaxAniso, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetBorderColor(float *pBorderColor, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefGetFlags(unsigned int *pFlags, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefCreate(CUtexref *pTexRef);
CUresult CUDAAPI cuTexRefDestroy(CUtexref hTexRef);
CUresult CUDAAPI cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags);
CUresult CUDAAPI cuSurfRefGetArray(CUarray *phArray, CUsurfref hSurfRef);

/* ---- Texture and surface objects ------------------------------------------- */
CUresult CUDAAPI cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                                   const CUDA_TEXTURE_DESC *pTexDesc,
                                   const CUDA_RESOURCE_VIEW_DESC *pResViewDesc);
CUresult CUDAAPI cuTexObjectDestroy(CUtexObject texObject);
CUresult CUDAAPI cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject);
CUresult CUDAAPI cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc, CUtexObject texObject);
CUresult CUDAAPI cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *pResViewDesc, CUtexObject texObject);
CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc);
CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surfObject);
CUresult CUDAAPI cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject);

/* ---- Tensor maps ----------------------------------------------------------- */
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void *globalAddress,
                                        const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                        const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                        CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill);
CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                         cuuint32_t tensorRank, void *globalAddress,
                                         const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                         const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                         cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                         const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                         CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                         CUtensorMapFloatOOBfill oobFill);
CUresult CUDAAPI cuTensorMapEncodeIm2colWide(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                             cuuint32_t tensorRank, void *globalAddress,
                                             const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                             int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth,
                                             cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
                                             const cuuint32_t *elementStrides,
                                             CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
                                             CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                             CUtensorMapFloatOOBfill oobFill);
CUresult CUDAAPI cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress);

/* ---- Peer access ----------------------------------------------------------- */
CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext);
CUresult CUDAAPI cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                         CUdevice dstDevice);
CUresult CUDAAPI cuDeviceGetP2PAtomicCapabilities(unsigned int *capabilities,
                                                  const CUatomicOperation *operations, unsigned int count,
                                                  CUdevice srcDevice, CUdevice dstDevice);

/* ---- Graphics interoperability --------------------------------------------- */
CUresult CUDAAPI cuGraphicsUnregisterResource(CUgraphicsResource resource);
CUresult CUDAAPI cuGraphicsSubResourceGetMappedArray(CUarray *pArray, CUgraphicsResource resource,
                                                     unsigned int arrayIndex, unsigned int mipLevel);
CUresult CUDAAPI cuGraphicsResourceGetMappedMipmappedArray(CUmipmappedArray *pMipmappedArray,
                                                           CUgraphicsResource resource);
CUresult CUDAAPI cuGraphicsResourceGetMappedPointer_v2(CUdeviceptr *pDevPtr, size_t *pSize,
                                                       CUgraphicsResource resource);
CUresult CUDAAPI cuGraphicsResourceSetMapFlags_v2(CUgraphicsResource resource, unsigned int flags);
CUresult CUDAAPI cuGraphicsMapResources(unsigned int count, CUgraphicsResource *resources, CUstream hStream);
CUresult CUDAAPI cuGraphicsUnmapResources(unsigned int count, CUgraphicsResource *resources,
                                          CUstream hStream);

/* ---- Entry point lookup ---------------------------------------------------- */
CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus);
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);

/* ---- Coredump control ------------------------------------------------------ */
CUresult CUDAAPI cuCoredumpGetAttribute(CUcoredumpSettings attrib, void *value, size_t *size);
CUresult CUDAAPI cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void *value, size_t *size);
CUresult CUDAAPI cuCoredumpSetAttribute(CUcoredumpSettings attrib, void *value, size_t *size);
CUresult CUDAAPI cuCoredumpSetAttributeGlobal(CUcoredumpSettings attrib, void *value, size_t *size);

/* ---- Green contexts -------------------------------------------------------- */
CUresult CUDAAPI cuGreenCtxCreate(CUgreenCtx *phCtx, CUdevResourceDesc desc, CUdevice dev,
                                  unsigned int flags);
CUresult CUDAAPI cuGreenCtxDestroy(CUgreenCtx hCtx);
CUresult CUDAAPI cuCtxFromGreenCtx(CUcontext *pContext, CUgreenCtx hCtx);
CUresult CUDAAPI cuDeviceGetDevResource(CUdevice device, CUdevResource *resource, CUdevResourceType type);
CUresult CUDAAPI cuCtxGetDevResource(CUcontext hCtx, CUdevResource *resource, CUdevResourceType type);
CUresult CUDAAPI cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource *resource, CUdevResourceType type);
CUresult CUDAAPI cuDevSmResourceSplitByCount(CUdevResource *result, unsigned int *nbGroups,
                                             const CUdevResource *input, CUdevResource *remaining,
                                             unsigned int useFlags, unsigned int minCount);
CUresult CUDAAPI cuDevResourceGenerateDesc(CUdevResourceDesc *phDesc, CUdevResource *resources,
                                           unsigned int nbResources);
CUresult CUDAAPI cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent);
CUresult CUDAAPI cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent);
CUresult CUDAAPI cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx *phCtx);
CUresult CUDAAPI cuGreenCtxStreamCreate(CUstream *phStream, CUgreenCtx greenCtx, unsigned int flags,
                                        int priority);
CUresult CUDAAPI cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long *greenCtxId);

/* ---- Driver error log ------------------------------------------------------ */
CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void *userData,
                                        CUlogsCallbackHandle *callback_out);
CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback);
CUresult CUDAAPI cuLogsCurrent(CUlogIterator *iterator_out, unsigned int flags);
CUresult CUDAAPI cuLogsDumpToFile(CUlogIterator *iterator, const char *pathToFile, unsigned int flags);
CUresult CUDAAPI cuLogsDumpToMemory(CUlogIterator *iterator, char *buffer, size_t *size, unsigned int flags);

/* ---- Checkpoint and restore ------------------------------------------------ */
CUresult CUDAAPI cuCheckpointProcessGetRestoreThreadId(int pid, int *tid);
CUresult CUDAAPI cuCheckpointProcessGetState(int pid, CUprocessState *state);
CUresult CUDAAPI cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args);
CUresult CUDAAPI cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args);
CUresult CUDAAPI cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args);
CUresult CUDAAPI cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args);

/* ---- Per-thread default stream variants ------------------------------------ */
/* Same signatures as the entry points they shadow: "_ptds" variants of synchronous
 * calls and "_ptsz" variants of stream-taking calls, which treat the NULL stream as
 * CU_STREAM_PER_THREAD. */
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                                      size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                                      size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void *srcHost,
                                      size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoH_v2_ptds(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                      size_t ByteCount);
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy);
CUresult CUDAAPI cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                           CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void *srcHost,
                                           size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyAtoHAsync_v2_ptsz(void *dstHost, CUarray srcArray, size_t srcOffset,
                                           size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                            CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                            CUstream hStream);
CUresult CUDAAPI cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                              unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N);
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                      size_t Height);
CUresult CUDAAPI cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                       size_t Width, size_t Height);
CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                       size_t Height);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                        size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                         size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                         size_t Width, size_t Height, CUstream hStream);
CUresult CUDAAPI cuMemBatchDecompressAsync_ptsz(CUmemDecompressParams *paramsArray, size_t count,
                                                unsigned int flags, size_t *errorIndex, CUstream stream);
CUresult CUDAAPI cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream);
CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream);
CUresult CUDAAPI cuMemPrefetchBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                              CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                              size_t numPrefetchLocs, unsigned long long flags,
                                              CUstream hStream);
CUresult CUDAAPI cuMemDiscardBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                             unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemDiscardAndPrefetchBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                                        CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                        size_t numPrefetchLocs, unsigned long long flags,
                                                        CUstream hStream);
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device);
CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);
CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
CUresult CUDAAPI cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                          unsigned int flags);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                  const CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData,
                                                  size_t numDependencies, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out,
                                                size_t *numDependencies_out);
CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream hStream, CUgraphNode *dependencies,
                                                           const CUgraphEdgeData *dependencyData,
                                                           size_t numDependencies, unsigned int flags);
CUresult CUDAAPI cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length,
                                             unsigned int flags);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src);
CUresult CUDAAPI cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                           CUstreamAttrValue *value_out);
CUresult CUDAAPI cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                           const CUstreamAttrValue *value);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult CUDAAPI cuSignalExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *extSemArray,
                                                      const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray,
                                                      unsigned int numExtSems, CUstream stream);
CUresult CUDAAPI cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *extSemArray,
                                                    const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray,
                                                    unsigned int numExtSems, CUstream stream);
CUresult CUDAAPI cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                             unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                             unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                              unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                              unsigned int flags);
CUresult CUDAAPI cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                            CUstreamBatchMemOpParams *paramArray, unsigned int flags);
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                       void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX,
                                                unsigned int blockDimY, unsigned int blockDimZ,
                                                unsigned int sharedMemBytes, CUstream hStream,
                                                void **kernelParams);
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuGraphicsMapResources_ptsz(unsigned int count, CUgraphicsResource *resources,
                                             CUstream hStream);
CUresult CUDAAPI cuGraphicsUnmapResources_ptsz(unsigned int count, CUgraphicsResource *resources,
                                               CUstream hStream);

#if defined(XCUDA_EXPORTED_NAMES_ONLY)
/* ---- Legacy entry points --------------------------------------------------- */
/* Older revisions that libcuda.so.1 still exports for old binaries, under the
 * unversioned (or older versioned) names. */
CUresult CUDAAPI cuArray3DCreate(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *pAllocateArray);
CUresult CUDAAPI cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *pAllocateArray);
CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR_v1 *pArrayDescriptor, CUarray hArray);
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx);
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags);
CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev);
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                        size_t numDependencies);
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUgraphNodeParams *nodeParams);
CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                   CUgraphExecUpdateResult *updateResult_out);
CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges);
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                    char *logBuffer, size_t bufferSize);
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize);
CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies,
                                            size_t *numDependencies);
CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes,
                                              size_t *numDependentNodes);
CUresult CUDAAPI cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                           size_t numDependencies);
CUresult CUDAAPI cuGraphicsResourceGetMappedPointer(CUdeviceptr_v1 *pDevPtr, unsigned int *pSize,
                                                    CUgraphicsResource resource);
CUresult CUDAAPI cuGraphicsResourceSetMapFlags(CUgraphicsResource resource, unsigned int flags);
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int numOptions, CUjit_option *options,
                               void **optionValues);
CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                               unsigned int numOptions, CUjit_option *options, void **optionValues);
CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut);
CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize);
CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize);
CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                                 unsigned int Height, unsigned int ElementSizeBytes);
CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr);
CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr);
CUresult CUDAAPI cuMemGetInfo(unsigned int *free, unsigned int *total);
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags);
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);
CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D_v1 *pCopy);
CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D_v1 *pCopy);
CUresult CUDAAPI cuMemcpy3D(const CUDA_MEMCPY3D_v1 *pCopy);
CUresult CUDAAPI cuMemcpy3DAsync(const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream);
CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                      unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemcpyAtoA(CUarray dstArray, unsigned int dstOffset, CUarray srcArray,
                              unsigned int srcOffset, unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyAtoD(CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset,
                              unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyAtoH(void *dstHost, CUarray srcArray, unsigned int srcOffset,
                              unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyAtoHAsync(void *dstHost, CUarray srcArray, unsigned int srcOffset,
                                   unsigned int ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                    CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                    size_t *failIdx, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoA(CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice,
                              unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoA(CUarray dstArray, unsigned int dstOffset, const void *srcHost,
                              unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyHtoAAsync(CUarray dstArray, unsigned int dstOffset, const void *srcHost,
                                   unsigned int ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount);
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                                   CUstream hStream);
CUresult CUDAAPI cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N);
CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us,
                               unsigned int Width, unsigned int Height);
CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui,
                               unsigned int Width, unsigned int Height);
CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc,
                              unsigned int Width, unsigned int Height);
CUresult CUDAAPI cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N);
CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N);
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes, CUmodule hmod,
                                   const char *name);
CUresult CUDAAPI cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
                                    unsigned int flags);
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream);
CUresult CUDAAPI cuStreamDestroy(CUstream hStream);
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies,
                                                   size_t numDependencies, unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                      unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                      unsigned int flags);
CUresult CUDAAPI cuTexRefGetAddress(CUdeviceptr_v1 *pdptr, CUtexref hTexRef);
CUresult CUDAAPI cuTexRefSetAddress(unsigned int *ByteOffset, CUtexref hTexRef, CUdeviceptr_v1 dptr,
                                    unsigned int bytes);
CUresult CUDAAPI cuTexRefSetAddress2D(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR_v1 *desc,
                                      CUdeviceptr_v1 dptr, unsigned int Pitch);
CUresult CUDAAPI cuTexRefSetAddress2D_v2(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc,
                                         CUdeviceptr dptr, size_t Pitch);
CUresult CUDAAPI cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                         CUstream hStream);
CUresult CUDAAPI cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                           unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                         CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                         size_t *failIdx, CUstream hStream);
CUresult CUDAAPI cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count,
                                         CUstreamBatchMemOpParams *paramArray, unsigned int flags);
CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                size_t *numDependencies_out);
CUresult CUDAAPI cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream, CUgraphNode *dependencies,
                                                        size_t numDependencies, unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue32_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                          unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                          unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                           unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                           unsigned int flags);
#endif /* XCUDA_EXPORTED_NAMES_ONLY */

#endif /* XCUDA_NO_PROTOTYPES */

#if !defined(XCUDA_EXPORTED_NAMES_ONLY)
/* ---- Plain API names ------------------------------------------------------- */
/* Map each plain API name to the symbol holding its current revision, as code
 * built against the CUDA headers expects. With CUDA_API_PER_THREAD_DEFAULT_STREAM
 * the stream-sensitive calls map to their per-thread default stream variants. */
#define cuDeviceTotalMem                   cuDeviceTotalMem_v2
#define cuCtxCreate                        cuCtxCreate_v4
#define cuModuleGetGlobal                  cuModuleGetGlobal_v2
#define cuMemGetInfo                       cuMemGetInfo_v2
#define cuMemAlloc                         cuMemAlloc_v2
#define cuMemAllocPitch                    cuMemAllocPitch_v2
#define cuMemFree                          cuMemFree_v2
#define cuMemGetAddressRange               cuMemGetAddressRange_v2
#define cuMemAllocHost                     cuMemAllocHost_v2
#define cuMemHostGetDevicePointer          cuMemHostGetDevicePointer_v2
#define cuMemAdvise                        cuMemAdvise_v2
#define cuArrayCreate                      cuArrayCreate_v2
#define cuArrayGetDescriptor               cuArrayGetDescriptor_v2
#define cuArray3DCreate                    cuArray3DCreate_v2
#define cuArray3DGetDescriptor             cuArray3DGetDescriptor_v2
#define cuTexRefSetAddress                 cuTexRefSetAddress_v2
#define cuTexRefGetAddress                 cuTexRefGetAddress_v2
#define cuGraphicsResourceGetMappedPointer cuGraphicsResourceGetMappedPointer_v2
#define cuCtxDestroy                       cuCtxDestroy_v2
#define cuCtxPopCurrent                    cuCtxPopCurrent_v2
#define cuCtxPushCurrent                   cuCtxPushCurrent_v2
#define cuStreamDestroy                    cuStreamDestroy_v2
#define cuEventDestroy                     cuEventDestroy_v2
#define cuTexRefSetAddress2D               cuTexRefSetAddress2D_v3
#define cuLinkCreate                       cuLinkCreate_v2
#define cuLinkAddData                      cuLinkAddData_v2
#define cuLinkAddFile                      cuLinkAddFile_v2
#define cuMemHostRegister                  cuMemHostRegister_v2
#define cuGraphicsResourceSetMapFlags      cuGraphicsResourceSetMapFlags_v2
#define cuDevicePrimaryCtxRelease          cuDevicePrimaryCtxRelease_v2
#define cuDevicePrimaryCtxReset            cuDevicePrimaryCtxReset_v2
#define cuDevicePrimaryCtxSetFlags         cuDevicePrimaryCtxSetFlags_v2
#define cuDeviceGetUuid                    cuDeviceGetUuid_v2
#define cuIpcOpenMemHandle                 cuIpcOpenMemHandle_v2
#define cuGraphInstantiate                 cuGraphInstantiateWithFlags
#define cuGraphExecUpdate                  cuGraphExecUpdate_v2
#define cuGetProcAddress                   cuGetProcAddress_v2
#define cuGraphAddKernelNode               cuGraphAddKernelNode_v2
#define cuGraphKernelNodeGetParams         cuGraphKernelNodeGetParams_v2
#define cuGraphKernelNodeSetParams         cuGraphKernelNodeSetParams_v2
#define cuGraphExecKernelNodeSetParams     cuGraphExecKernelNodeSetParams_v2
#define cuGraphGetEdges                    cuGraphGetEdges_v2
#define cuGraphNodeGetDependencies         cuGraphNodeGetDependencies_v2
#define cuGraphNodeGetDependentNodes       cuGraphNodeGetDependentNodes_v2
#define cuGraphAddDependencies             cuGraphAddDependencies_v2
#define cuGraphRemoveDependencies          cuGraphRemoveDependencies_v2
#define cuGraphAddNode                     cuGraphAddNode_v2
#define cuEventElapsedTime                 cuEventElapsedTime_v2
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemPrefetchAsync                 cuMemPrefetchAsync_v2_ptsz
#define cuMemPrefetchBatchAsync            cuMemPrefetchBatchAsync_ptsz
#define cuMemDiscardBatchAsync             cuMemDiscardBatchAsync_ptsz
#define cuMemDiscardAndPrefetchBatchAsync  cuMemDiscardAndPrefetchBatchAsync_ptsz
#define cuMemcpyHtoD                       cuMemcpyHtoD_v2_ptds
#define cuMemcpyDtoH                       cuMemcpyDtoH_v2_ptds
#define cuMemcpyDtoD                       cuMemcpyDtoD_v2_ptds
#define cuMemcpyDtoA                       cuMemcpyDtoA_v2_ptds
#define cuMemcpyAtoD                       cuMemcpyAtoD_v2_ptds
#define cuMemcpyHtoA                       cuMemcpyHtoA_v2_ptds
#define cuMemcpyAtoH                       cuMemcpyAtoH_v2_ptds
#define cuMemcpyAtoA                       cuMemcpyAtoA_v2_ptds
#define cuMemcpyHtoAAsync                  cuMemcpyHtoAAsync_v2_ptsz
#define cuMemcpyAtoHAsync                  cuMemcpyAtoHAsync_v2_ptsz
#define cuMemcpy2D                         cuMemcpy2D_v2_ptds
#define cuMemcpy2DUnaligned                cuMemcpy2DUnaligned_v2_ptds
#define cuMemcpy3D                         cuMemcpy3D_v2_ptds
#define cuMemcpyHtoDAsync                  cuMemcpyHtoDAsync_v2_ptsz
#define cuMemcpyDtoHAsync                  cuMemcpyDtoHAsync_v2_ptsz
#define cuMemcpyDtoDAsync                  cuMemcpyDtoDAsync_v2_ptsz
#define cuMemcpy2DAsync                    cuMemcpy2DAsync_v2_ptsz
#define cuMemcpy3DAsync                    cuMemcpy3DAsync_v2_ptsz
#define cuMemcpyBatchAsync                 cuMemcpyBatchAsync_v2_ptsz
#define cuMemcpy3DBatchAsync               cuMemcpy3DBatchAsync_v2_ptsz
#define cuMemsetD8                         cuMemsetD8_v2_ptds
#define cuMemsetD16                        cuMemsetD16_v2_ptds
#define cuMemsetD32                        cuMemsetD32_v2_ptds
#define cuMemsetD2D8                       cuMemsetD2D8_v2_ptds
#define cuMemsetD2D16                      cuMemsetD2D16_v2_ptds
#define cuMemsetD2D32                      cuMemsetD2D32_v2_ptds
#define cuStreamBeginCapture               cuStreamBeginCapture_v2_ptsz
#define cuStreamWriteValue32               cuStreamWriteValue32_v2_ptsz
#define cuStreamWaitValue32                cuStreamWaitValue32_v2_ptsz
#define cuStreamWriteValue64               cuStreamWriteValue64_v2_ptsz
#define cuStreamWaitValue64                cuStreamWaitValue64_v2_ptsz
#define cuStreamBatchMemOp                 cuStreamBatchMemOp_v2_ptsz
#define cuStreamGetCaptureInfo             cuStreamGetCaptureInfo_v3_ptsz
#define cuStreamUpdateCaptureDependencies  cuStreamUpdateCaptureDependencies_v2_ptsz
#define cuMemcpy                           cuMemcpy_ptds
#define cuMemcpyAsync                      cuMemcpyAsync_ptsz
#define cuMemcpyPeer                       cuMemcpyPeer_ptds
#define cuMemcpyPeerAsync                  cuMemcpyPeerAsync_ptsz
#define cuMemcpy3DPeer                     cuMemcpy3DPeer_ptds
#define cuMemcpy3DPeerAsync                cuMemcpy3DPeerAsync_ptsz
#define cuMemsetD8Async                    cuMemsetD8Async_ptsz
#define cuMemsetD16Async                   cuMemsetD16Async_ptsz
#define cuMemsetD32Async                   cuMemsetD32Async_ptsz
#define cuMemsetD2D8Async                  cuMemsetD2D8Async_ptsz
#define cuMemsetD2D16Async                 cuMemsetD2D16Async_ptsz
#define cuMemsetD2D32Async                 cuMemsetD2D32Async_ptsz
#define cuStreamGetPriority                cuStreamGetPriority_ptsz
#define cuStreamGetId                      cuStreamGetId_ptsz
#define cuStreamGetFlags                   cuStreamGetFlags_ptsz
#define cuStreamGetDevice                  cuStreamGetDevice_ptsz
#define cuStreamGetCtx                     cuStreamGetCtx_ptsz
#define cuStreamGetCtx_v2                  cuStreamGetCtx_v2_ptsz
#define cuStreamWaitEvent                  cuStreamWaitEvent_ptsz
#define cuStreamEndCapture                 cuStreamEndCapture_ptsz
#define cuStreamIsCapturing                cuStreamIsCapturing_ptsz
#define cuStreamAddCallback                cuStreamAddCallback_ptsz
#define cuStreamAttachMemAsync             cuStreamAttachMemAsync_ptsz
#define cuStreamQuery                      cuStreamQuery_ptsz
#define cuStreamSynchronize                cuStreamSynchronize_ptsz
#define cuEventRecord                      cuEventRecord_ptsz
#define cuEventRecordWithFlags             cuEventRecordWithFlags_ptsz
#define cuLaunchKernel                     cuLaunchKernel_ptsz
#define cuLaunchKernelEx                   cuLaunchKernelEx_ptsz
#define cuLaunchHostFunc                   cuLaunchHostFunc_ptsz
#define cuGraphicsMapResources             cuGraphicsMapResources_ptsz
#define cuGraphicsUnmapResources           cuGraphicsUnmapResources_ptsz
#define cuLaunchCooperativeKernel          cuLaunchCooperativeKernel_ptsz
#define cuSignalExternalSemaphoresAsync    cuSignalExternalSemaphoresAsync_ptsz
#define cuWaitExternalSemaphoresAsync      cuWaitExternalSemaphoresAsync_ptsz
#define cuGraphInstantiateWithParams       cuGraphInstantiateWithParams_ptsz
#define cuGraphUpload                      cuGraphUpload_ptsz
#define cuGraphLaunch                      cuGraphLaunch_ptsz
#define cuStreamCopyAttributes             cuStreamCopyAttributes_ptsz
#define cuStreamGetAttribute               cuStreamGetAttribute_ptsz
#define cuStreamSetAttribute               cuStreamSetAttribute_ptsz
#define cuMemMapArrayAsync                 cuMemMapArrayAsync_ptsz
#define cuMemFreeAsync                     cuMemFreeAsync_ptsz
#define cuMemAllocAsync                    cuMemAllocAsync_ptsz
#define cuMemAllocFromPoolAsync            cuMemAllocFromPoolAsync_ptsz
#define cuStreamBeginCaptureToGraph        cuStreamBeginCaptureToGraph_ptsz
#define cuMemBatchDecompressAsync          cuMemBatchDecompressAsync_ptsz

/* Per-thread builds resolve driver symbols to their per-thread variants unless
 * the caller asked for a specific default-stream flavour. */
#if !defined(XCUDA_NO_PROTOTYPES)
static inline CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **funcPtr, int driverVersion,
                                                cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    const cuuint64_t streamFlavour = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if ((flags & streamFlavour) == 0) {
        flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    }
    return cuGetProcAddress_v2(symbol, funcPtr, driverVersion, flags, symbolStatus);
}
#endif
#define cuGetProcAddress_v2 cuGetProcAddress_v2_ptsz
#else
#define cuMemPrefetchAsync                 cuMemPrefetchAsync_v2
#define cuMemcpyHtoD                       cuMemcpyHtoD_v2
#define cuMemcpyDtoH                       cuMemcpyDtoH_v2
#define cuMemcpyDtoD                       cuMemcpyDtoD_v2
#define cuMemcpyDtoA                       cuMemcpyDtoA_v2
#define cuMemcpyAtoD                       cuMemcpyAtoD_v2
#define cuMemcpyHtoA                       cuMemcpyHtoA_v2
#define cuMemcpyAtoH                       cuMemcpyAtoH_v2
#define cuMemcpyAtoA                       cuMemcpyAtoA_v2
#define cuMemcpyHtoAAsync                  cuMemcpyHtoAAsync_v2
#define cuMemcpyAtoHAsync                  cuMemcpyAtoHAsync_v2
#define cuMemcpy2D                         cuMemcpy2D_v2
#define cuMemcpy2DUnaligned                cuMemcpy2DUnaligned_v2
#define cuMemcpy3D                         cuMemcpy3D_v2
#define cuMemcpyHtoDAsync                  cuMemcpyHtoDAsync_v2
#define cuMemcpyDtoHAsync                  cuMemcpyDtoHAsync_v2
#define cuMemcpyDtoDAsync                  cuMemcpyDtoDAsync_v2
#define cuMemcpy2DAsync                    cuMemcpy2DAsync_v2
#define cuMemcpy3DAsync                    cuMemcpy3DAsync_v2
#define cuMemcpyBatchAsync                 cuMemcpyBatchAsync_v2
#define cuMemcpy3DBatchAsync               cuMemcpy3DBatchAsync_v2
#define cuMemsetD8                         cuMemsetD8_v2
#define cuMemsetD16                        cuMemsetD16_v2
#define cuMemsetD32                        cuMemsetD32_v2
#define cuMemsetD2D8                       cuMemsetD2D8_v2
#define cuMemsetD2D16                      cuMemsetD2D16_v2
#define cuMemsetD2D32                      cuMemsetD2D32_v2
#define cuStreamBeginCapture               cuStreamBeginCapture_v2
#define cuStreamWriteValue32               cuStreamWriteValue32_v2
#define cuStreamWaitValue32                cuStreamWaitValue32_v2
#define cuStreamWriteValue64               cuStreamWriteValue64_v2
#define cuStreamWaitValue64                cuStreamWaitValue64_v2
#define cuStreamBatchMemOp                 cuStreamBatchMemOp_v2
#define cuStreamGetCaptureInfo             cuStreamGetCaptureInfo_v3
#define cuStreamUpdateCaptureDependencies  cuStreamUpdateCaptureDependencies_v2
#endif /* CUDA_API_PER_THREAD_DEFAULT_STREAM */
#endif /* !XCUDA_EXPORTED_NAMES_ONLY */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XCUDA_CUDA_H */
