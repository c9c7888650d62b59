// libFuzzer entry point for the fatbin reader: any bytes, treated as an image of known size,
// must give a result or an Error, never a crash, a hang, or an over-read. Seed it with the
// fatbins tests/unit builds (build/tests/unit/fatbin_data/*.fatbin).
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/fatbin_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xcuda::runtime;
  const std::span<const uint8_t> image(data, size);
  const ImageKind kind = classify_image(data, size);
  if (auto fatbins = parse_fatbin_section(image)) {
    for (const Fatbin& fatbin : *fatbins) {
      for (const FatbinEntry& entry : fatbin.entries) (void)extract_payload(entry);
      for (int arch : {75, 80, 90, 100, 120}) {
        if (auto selected = select_ptx(fatbin.entries, arch)) (void)extract_ptx(**selected);
      }
    }
  }
  // A wrapper holds a pointer, which fuzzed bytes would aim anywhere.
  if (kind != ImageKind::fatbin_wrapper)
    (void)load_ptx(data, 80, size);
  else
    (void)read_wrapper(data);
  return 0;
}
