// libxcuda_audit.so: an LD_AUDIT library that makes the dynamic linker load xcuda's libcuda.so.1
// whenever a program asks for libcuda.so.1 or libcuda.so, whatever RPATH/RUNPATH the program was
// linked with and whichever directory it names in dlopen. LD_LIBRARY_PATH alone loses to a
// hard-coded DT_RPATH and to absolute paths; `xcuda run` sets both.
//
// Written in C: the dynamic linker loads audit libraries in a namespace of their own, before
// the program, and a C library brings nothing but libc into it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// xcuda's libcuda.so.1, beside this library; empty when it cannot be found, and then nothing is
// redirected.
static char replacement[4096];

static void find_replacement(void) {
  Dl_info self;
  if (!dladdr((void*)&find_replacement, &self) || !self.dli_fname) return;
  const char* slash = strrchr(self.dli_fname, '/');
  size_t directory_length = slash ? (size_t)(slash - self.dli_fname) + 1 : 0;
  static const char file[] = "libcuda.so.1";
  if (directory_length + sizeof file > sizeof replacement) return;
  memcpy(replacement, self.dli_fname, directory_length);
  memcpy(replacement + directory_length, file, sizeof file);
  if (access(replacement, R_OK) != 0) {
    fprintf(stderr, "xcuda audit: %s is missing; libcuda is not redirected\n", replacement);
    replacement[0] = '\0';
  }
}

unsigned int la_version(unsigned int version) {
  find_replacement();
  // Interfaces newer than the one this file was built against must not be claimed.
  return version < LAV_CURRENT ? version : LAV_CURRENT;
}

static int is_libcuda(const char* name) {
  const char* slash = strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  return strcmp(base, "libcuda.so.1") == 0 || strcmp(base, "libcuda.so") == 0;
}

// Called first with the name as the program wrote it (LA_SER_ORIG), then with each candidate
// path of the search. Answering the first call with an absolute path ends the search there.
char* la_objsearch(const char* name, uintptr_t* cookie, unsigned int flag) {
  (void)cookie;
  if (flag == LA_SER_ORIG && replacement[0] != '\0' && is_libcuda(name)) return replacement;
  return (char*)name;
}
