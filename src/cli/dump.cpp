// xcuda dump FILE [-o DIRECTORY]: what the fatbins inside a file hold, and their PTX extracted
// (decompressed) as files a user can read, diff or compile alone.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "src/cli/commands.h"
#include "src/cli/ptx_sources.h"

namespace xcuda::cli {
namespace {

std::string_view compression_name(runtime::Compression compression) {
  switch (compression) {
    case runtime::Compression::none: return "";
    case runtime::Compression::lz4: return ", lz4";
    case runtime::Compression::zstd: return ", zstd";
  }
  return "";
}

bool write_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), std::streamsize(text.size()));
  out.close();
  if (!out) std::cerr << "xcuda: cannot write " << path.string() << "\n";
  return bool(out);
}

}  // namespace

int dump(int argc, char** argv) {
  std::string input_path, output_directory;
  for (int index = 0; index < argc; ++index) {
    std::string_view argument = argv[index];
    if (argument == "-o" && index + 1 < argc) output_directory = argv[++index];
    else if (!argument.empty() && argument[0] != '-' && input_path.empty()) input_path = argument;
    else return fail_usage("unexpected argument '" + std::string(argument) + "'");
  }
  if (input_path.empty()) return fail_usage("dump needs a FILE");
  auto input = read_input(input_path);
  if (!input) {
    std::cerr << "xcuda: " << input.error().message << "\n";
    return 1;
  }
  if (!output_directory.empty()) std::filesystem::create_directories(output_directory);
  std::string stem = std::filesystem::path(input_path).filename().string();
  if (input->is_ptx_text) {
    std::cout << input_path << ": PTX text, " << input->bytes.size() << " bytes\n";
    return 0;
  }
  std::cout << input_path << ": " << input->fatbins.size() << " fatbins\n";
  int status = 0;
  for (size_t fatbin = 0; fatbin < input->fatbins.size(); ++fatbin) {
    for (const runtime::FatbinEntry& entry : input->fatbins[fatbin].entries) {
      std::cout << "fatbin " << fatbin << " entry " << entry.index << ": " << entry.name();
      if (entry.is_ptx())
        std::cout << " (PTX ISA " << entry.code_version_major << "." << entry.code_version_minor
                  << ")";
      std::cout << ", " << entry.uncompressed_size << " bytes" << compression_name(entry.compression);
      if (!entry.is_ptx() || output_directory.empty()) {
        std::cout << "\n";
        continue;
      }
      auto text = runtime::extract_ptx(entry);
      if (!text) {
        std::cout << ": " << text.error().message << "\n";
        status = 1;
        continue;
      }
      std::filesystem::path path = std::filesystem::path(output_directory) /
                                   (stem + "." + std::to_string(fatbin) + "." +
                                    std::to_string(entry.index) + "." + entry.name() + ".ptx");
      if (!write_file(path, *text)) status = 1;
      std::cout << " -> " << path.string() << "\n";
    }
  }
  return status;
}

}  // namespace xcuda::cli
