#include "src/cli/elf_sections.h"

#include <elf.h>

#include <cstring>
#include <string>

namespace xcuda::cli {
namespace {

Error damaged(const std::string& what) {
  return make_error(ErrorCode::invalid_image, "damaged ELF file: " + what);
}

// Copies rather than casts: the file's bytes need not be aligned for the header structs.
template <class T>
bool read_at(std::span<const uint8_t> file, uint64_t offset, T& result) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) return false;
  std::memcpy(&result, file.data() + offset, sizeof(T));
  return true;
}

}  // namespace

bool is_elf(std::span<const uint8_t> file) {
  return file.size() >= SELFMAG && std::memcmp(file.data(), ELFMAG, SELFMAG) == 0;
}

Expected<std::span<const uint8_t>> find_elf_section(std::span<const uint8_t> file,
                                                    std::string_view name) {
  Elf64_Ehdr header;
  if (!is_elf(file) || !read_at(file, 0, header)) return damaged("no ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return make_error(ErrorCode::not_supported, "only 64-bit little-endian ELF files are read");
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return damaged("unexpected section header size");
  auto section = [&](uint64_t index, Elf64_Shdr& result) {
    return index < header.e_shnum &&
           read_at(file, header.e_shoff + index * sizeof(Elf64_Shdr), result);
  };
  Elf64_Shdr names;
  if (!section(header.e_shstrndx, names)) return damaged("section name table out of bounds");
  if (names.sh_offset > file.size() || file.size() - names.sh_offset < names.sh_size)
    return damaged("section name table out of bounds");
  std::string_view name_table(reinterpret_cast<const char*>(file.data() + names.sh_offset),
                              names.sh_size);
  for (uint64_t index = 0; index < header.e_shnum; ++index) {
    Elf64_Shdr candidate;
    if (!section(index, candidate)) return damaged("section header " + std::to_string(index));
    if (candidate.sh_name >= name_table.size()) continue;
    std::string_view candidate_name = name_table.substr(candidate.sh_name);
    candidate_name = candidate_name.substr(0, candidate_name.find('\0'));
    if (candidate_name != name) continue;
    if (candidate.sh_type == SHT_NOBITS) return std::span<const uint8_t>();
    if (candidate.sh_offset > file.size() || file.size() - candidate.sh_offset < candidate.sh_size)
      return damaged("section " + std::string(name) + " runs past the end of the file");
    return file.subspan(candidate.sh_offset, candidate.sh_size);
  }
  return make_error(ErrorCode::not_found, "no section " + std::string(name));
}

}  // namespace xcuda::cli
