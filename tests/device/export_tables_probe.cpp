// What NVIDIA's driver answers for the private export tables and cuGetProcAddress corner cases,
// and whether our integrity digest equals the driver's. Runs only on a machine with an NVIDIA
// GPU and driver, so it is not part of the test suite; build it there with
//   g++ -std=c++20 -I. -I/usr/local/cuda/include tests/device/export_tables_probe.cpp \
//       src/cudart_integrity.cpp -L/usr/local/cuda/lib64/stubs -lcuda -ldl -lpthread
// Its output on driver 580.159.04 (H200) is recorded in export_tables_probe.txt; the facts it
// established are cited in src/export_tables.cpp.
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include "src/cudart_integrity.h"

struct Named { const char* name; unsigned char id[16]; };
static const Named tables[] = {
  {"skip-init f8cff951", {0xf8,0xcf,0xf9,0x51,0x21,0x46,0x8b,0x4e,0xb9,0xe2,0xfb,0x46,0x9e,0x7c,0x0d,0xd9}},
  {"cudart 6bd5fb6c", {0x6b,0xd5,0xfb,0x6c,0x5b,0xf4,0xe7,0x4a,0x89,0x87,0xd9,0x39,0x12,0xfd,0x9d,0xf9}},
  {"tools hooks a094798c", {0xa0,0x94,0x79,0x8c,0x2e,0x74,0x2e,0x74,0x93,0xf2,0x08,0x00,0x20,0x0c,0x0a,0x66}},
  {"tools tls 42d85a81", {0x42,0xd8,0x5a,0x81,0x23,0xf6,0xcb,0x47,0x82,0x98,0xf6,0xe7,0x8a,0x3a,0xec,0xdc}},
  {"ctx local c693336e", {0xc6,0x93,0x33,0x6e,0x11,0x21,0xdf,0x11,0xa8,0xc3,0x68,0xf3,0x55,0xd8,0x95,0x93}},
  {"integrity d4082055", {0xd4,0x08,0x20,0x55,0xbd,0xe6,0x70,0x4b,0x8d,0x34,0xba,0x12,0x3c,0x66,0xe1,0xf2}},
  {"ctx checks 263e8860", {0x26,0x3e,0x88,0x60,0x7c,0xd2,0x61,0x43,0x92,0xf6,0xbb,0xd5,0x00,0x6d,0xfa,0x7e}},
};

int main() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto getTable = (CUresult(*)(const void**, const CUuuid*))dlsym(lib, "cuGetExportTable");
  auto init = (CUresult(*)(unsigned))dlsym(lib, "cuInit");
  // Before cuInit, as cudart asks.
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) printf("cuInit -> %d\n", init(0));
    for (const Named& t : tables) {
      const void* table = nullptr; CUuuid id; memcpy(id.bytes, t.id, 16);
      CUresult r = getTable(&table, &id);
      printf("[%s] %s -> %d", pass ? "after init" : "before init", t.name, r);
      if (r == 0 && table) {
        const uintptr_t* slots = (const uintptr_t*)table;
        for (int i = 0; i < 12; ++i) {
          Dl_info info{}; bool code = dladdr((void*)slots[i], &info) && info.dli_fname;
          printf(" [%d]=%s%lx", i, code ? "fn:" : "", (unsigned long)slots[i]);
        }
      }
      printf("\n");
    }
  }
  const void* cudart = nullptr; const void* integrity = nullptr; CUuuid id;
  memcpy(id.bytes, tables[1].id, 16); getTable(&cudart, &id);
  memcpy(id.bytes, tables[5].id, 16); getTable(&integrity, &id);
  auto check = (CUresult(*)(unsigned, uint64_t, xcuda::api::Digest*))((const uintptr_t*)integrity)[1];
  int driver = 0; cuDriverGetVersion(&driver);
  int count = 0; cuDeviceGetCount(&count);
  std::vector<xcuda::api::IntegrityDeviceRecord> devices(count);
  for (int d = 0; d < count; ++d) {
    CUuuid u; cuDeviceGetUuid_v2(&u, d); memcpy(devices[d].uuid, u.bytes, 16);
    int a, b, c;
    cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
    cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    cuDeviceGetAttribute(&c, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
    devices[d].pci_domain = a; devices[d].pci_bus = b; devices[d].pci_device = c;
  }
  for (unsigned version : {13000u, 13001u, 13002u, 12080u, 12093u}) {
    xcuda::api::Digest real{};
    CUresult r = check(version, 1796213376ull, &real);
    xcuda::api::IntegrityRecord record{(uint32_t)driver, version, (uint32_t)getpid(),
        (uint32_t)(uintptr_t)pthread_self(), cudart, integrity, (const void*)check, 1796213376ull};
    xcuda::api::Digest ours = xcuda::api::integrity_digest(record, devices);
    printf("integrity version %u -> %d, driver %d, devices %d, match %s\n", version, r, driver, count,
           memcmp(real.bytes, ours.bytes, 16) == 0 ? "YES" : "NO");
  }
  // Tools hooks slots 2 and 6: what sizes the driver hands out.
  memcpy(id.bytes, tables[2].id, 16); const void* hooks = nullptr; getTable(&hooks, &id);
  if (hooks) {
    void* block = nullptr; size_t size = 0;
    ((void(*)(void**, size_t*))((const uintptr_t*)hooks)[2])(&block, &size);
    printf("tools hooks slot 2: size %zu\n", size);
    block = nullptr; size = 0;
    ((void(*)(void**, size_t*))((const uintptr_t*)hooks)[6])(&block, &size);
    printf("tools hooks slot 6: size %zu\n", size);
  }
  memcpy(id.bytes, tables[6].id, 16); const void* checks = nullptr; getTable(&checks, &id);
  if (checks) printf("context checks slot 3 -> %u\n", ((unsigned(*)())((const uintptr_t*)checks)[3])());
  // cuGetProcAddress probe: the empty name and a version-too-old request.
  void* fn = (void*)1; CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)7;
  CUresult r = cuGetProcAddress_v2("", &fn, 0, 0, &st);
  printf("cuGetProcAddress_v2(\"\", 0) -> %d fn %p status %d\n", r, fn, (int)st);
  fn = (void*)1; st = (CUdriverProcAddressQueryResult)7;
  r = cuGetProcAddress_v2("cuMemAllocAsync", &fn, 11010, 0, &st);
  printf("cuGetProcAddress_v2(cuMemAllocAsync, 11010) -> %d fn %p status %d\n", r, fn, (int)st);
  fn = (void*)1; st = (CUdriverProcAddressQueryResult)7;
  r = cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 4, &st);
  printf("cuGetProcAddress_v2(cuMemAlloc, flags 4) -> %d\n", r);
  return 0;
}
