// The fatbins inside whatever file a user points the xcuda command at: an executable or shared
// library (its .nv_fatbin section), a .fatbin file, or plain PTX text (.ptx, or PTX saved
// under a .cubin name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/fatbin_reader.h"

namespace xcuda::cli {

struct InputFile {
  std::string path;
  std::vector<uint8_t> bytes;
  // Views into `bytes`; empty for plain PTX.
  std::vector<runtime::Fatbin> fatbins;
  bool is_ptx_text = false;
};

Expected<InputFile> read_input(const std::string& path);

// What a device of `arch` would compile from the file, as the driver chooses: the selected PTX
// of each fatbin, or the whole text of a PTX file. Fatbins with nothing for `arch` are skipped.
struct PtxModule {
  std::string name;  // "path", or "path: fatbin 2 compute_86"
  std::string text;
};
Expected<std::vector<PtxModule>> modules_for_device(const InputFile& input, int arch);

}  // namespace xcuda::cli
