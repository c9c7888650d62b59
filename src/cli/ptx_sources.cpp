#include "src/cli/ptx_sources.h"

#include <fstream>
#include <iterator>

#include "src/cli/elf_sections.h"

namespace xcuda::cli {

Expected<InputFile> read_input(const std::string& path) {
  InputFile input;
  input.path = path;
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(ErrorCode::not_found, path + ": cannot open");
  input.bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  std::span<const uint8_t> bytes = input.bytes;
  std::span<const uint8_t> fatbin_bytes;
  if (is_elf(bytes)) {
    auto section = find_elf_section(bytes, ".nv_fatbin");
    if (!section) return make_error(section.error().code, path + ": " + section.error().message);
    fatbin_bytes = *section;
  } else {
    switch (runtime::classify_image(bytes.data(), bytes.size())) {
      case runtime::ImageKind::fatbin: fatbin_bytes = bytes; break;
      case runtime::ImageKind::ptx_text: input.is_ptx_text = true; return input;
      default:
        return make_error(ErrorCode::invalid_image,
                          path + ": neither an ELF file, a fatbin nor PTX text");
    }
  }
  auto fatbins = runtime::parse_fatbin_section(fatbin_bytes);
  if (!fatbins) return make_error(fatbins.error().code, path + ": " + fatbins.error().message);
  input.fatbins = std::move(*fatbins);
  return input;
}

Expected<std::vector<PtxModule>> modules_for_device(const InputFile& input, int arch) {
  std::vector<PtxModule> modules;
  if (input.is_ptx_text) {
    std::string_view text(reinterpret_cast<const char*>(input.bytes.data()), input.bytes.size());
    modules.push_back({input.path, std::string(text.substr(0, text.find('\0')))});
    return modules;
  }
  for (size_t index = 0; index < input.fatbins.size(); ++index) {
    auto selected = runtime::select_ptx(input.fatbins[index].entries, arch);
    if (!selected) continue;
    auto text = runtime::extract_ptx(**selected);
    if (!text) return make_error(text.error().code, input.path + ": " + text.error().message);
    modules.push_back({input.path + ": fatbin " + std::to_string(index) + " " + (*selected)->name(),
                       std::move(*text)});
  }
  return modules;
}

}  // namespace xcuda::cli
