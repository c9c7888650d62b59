// cuGetProcAddress and the exported symbols, checked against the entry-point table and against
// what NVIDIA's static cudart 13.0 really asks for.
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

void* resolve(const char* name, int version, cuuint64_t flags,
              CUdriverProcAddressQueryResult* status = nullptr) {
  void* function = nullptr;
  CUdriverProcAddressQueryResult ignored;
  EXPECT_EQ(cuGetProcAddress_v2(name, &function, version, flags, status ? status : &ignored),
            CUDA_SUCCESS);
  return function;
}

void* exported(const char* symbol) { return dlsym(RTLD_DEFAULT, symbol); }

TEST(ProcAddress, EveryRequestOfStaticCudartResolves) {
  std::ifstream requests(XCUDA_TEST_DATA "/cudart13_proc_requests.txt");
  ASSERT_TRUE(requests) << "missing test data";
  std::string line;
  int checked = 0;
  while (std::getline(requests, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    int version = 0;
    cuuint64_t flags = 0;
    fields >> name >> version >> flags;
    CUdriverProcAddressQueryResult status;
    EXPECT_NE(resolve(name.c_str(), version, flags, &status), nullptr) << line;
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SUCCESS) << line;
    ++checked;
  }
  EXPECT_EQ(checked, 439);
}

TEST(ProcAddress, VersionSelectsTheAbi) {
  // cuMemAlloc took a 32-bit device pointer before CUDA 3.2 and a 64-bit one since.
  EXPECT_EQ(resolve("cuMemAlloc", 3010, 0), exported("cuMemAlloc"));
  EXPECT_EQ(resolve("cuMemAlloc", 3020, 0), exported("cuMemAlloc_v2"));
  EXPECT_EQ(resolve("cuMemAlloc", 13000, 0), exported("cuMemAlloc_v2"));
  EXPECT_EQ(resolve("cuCtxCreate", 11040, 0), exported("cuCtxCreate_v3"));
  EXPECT_EQ(resolve("cuCtxCreate", 12050, 0), exported("cuCtxCreate_v4"));
  EXPECT_EQ(resolve("cuStreamGetCaptureInfo", 11030, 2), exported("cuStreamGetCaptureInfo_v2_ptsz"));
}

TEST(ProcAddress, PerThreadFlagPicksThePerThreadVariant) {
  EXPECT_EQ(resolve("cuMemcpyAsync", 13000, CU_GET_PROC_ADDRESS_DEFAULT),
            exported("cuMemcpyAsync"));
  EXPECT_EQ(resolve("cuMemcpyAsync", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            exported("cuMemcpyAsync_ptsz"));
  EXPECT_EQ(resolve("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            exported("cuMemcpyHtoD_v2_ptds"));
  EXPECT_EQ(resolve("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM),
            exported("cuMemcpyHtoD_v2"));
  // Without a per-thread variant the flag changes nothing.
  EXPECT_EQ(resolve("cuMemAlloc", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM),
            exported("cuMemAlloc_v2"));
}

TEST(ProcAddress, UnknownNamesAndVersions) {
  CUdriverProcAddressQueryResult status;
  // As NVIDIA's driver answers (measured): success, a NULL function, the reason in the status.
  EXPECT_EQ(resolve("cuNoSuchFunction", 13000, 0, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(resolve("cuCtxGetDevice_v2", 13000, 0, &status), nullptr);  // exported names are not request names
  EXPECT_EQ(resolve("cuMemAllocAsync", 11010, 0, &status), nullptr);
  EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

  void* function = nullptr;
  EXPECT_EQ(cuGetProcAddress_v2("cuMemAlloc", &function, CUDA_VERSION + 1000, 0, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress_v2("cuMemAlloc", &function, 13000, 4, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress_v2(nullptr, &function, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress_v2("cuMemAlloc", nullptr, 13000, 0, nullptr),
            CUDA_ERROR_INVALID_VALUE);
}

TEST(EntryPoints, EverySymbolOfTheTableIsExportedAndCallable) {
  std::ifstream table(XCUDA_SOURCE_DIR "/src/entry_points.def");
  ASSERT_TRUE(table);
  std::regex row(R"(^ENTRY(_PER_THREAD)?\((\w+), (\d+), (\w+)\))");
  std::string line;
  int rows = 0;
  while (std::getline(table, line)) {
    std::smatch match;
    if (!std::regex_search(line, match, row)) continue;
    ++rows;
    std::string name = match[2], symbol = match[4];
    int version = std::stoi(match[3]);
    void* address = exported(symbol.c_str());
    EXPECT_NE(address, nullptr) << symbol;
    // The row is reachable through cuGetProcAddress at its own version.
    cuuint64_t flags = match[1].matched ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
    void* newest_not_newer = resolve(name.c_str(), version, flags);
    EXPECT_NE(newest_not_newer, nullptr) << name << " " << version;
  }
  EXPECT_GT(rows, 630);
}

TEST(EntryPoints, UnimplementedEntryPointsSayNotSupported) {
  // A stand-in ignores its arguments; calling with none is safe.
  // OpenGL interoperability has no meaning on devices without a display engine.
  auto register_buffer =
      reinterpret_cast<CUresult (*)()>(exported("cuGraphicsGLRegisterBuffer"));
  ASSERT_NE(register_buffer, nullptr);
  EXPECT_EQ(register_buffer(), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(register_buffer(), CUDA_ERROR_NOT_SUPPORTED);
}

TEST(ExportTables, UnknownTableIsRefused) {
  CUuuid id{};
  const void* table = reinterpret_cast<const void*>(1);
  EXPECT_EQ(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(table, nullptr);
  EXPECT_EQ(cuGetExportTable(nullptr, &id), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace
