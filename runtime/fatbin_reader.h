// Reads the device-code images an application hands to the driver (cuModuleLoadData,
// cuModuleLoadFatBinary, cuLibraryLoadData, cudart's __cudaRegisterFatBinary) and finds the
// PTX xcuda can compile for the CPU. Nothing here trusts the input: every read is
// bounds-checked against what the caller or the image's own headers say, and a damaged image
// gives an Error, never a crash.
//
// The container formats are undocumented; the layouts below were measured on CUDA 13.0
// (nvcc, fatbinary) output. See fatbin_reader.cpp for the field-by-field evidence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace xcuda::runtime {

// The Driver API passes images without a size; this says "trust only the image's headers".
inline constexpr size_t unknown_size = std::numeric_limits<size_t>::max();

// No real fatbin or decompressed image comes near this; anything larger is a corrupted size.
inline constexpr uint64_t max_image_bytes = uint64_t{1} << 30;

enum class ImageKind {
  fatbin_wrapper,  // cudart's registration struct that points at a fatbin
  fatbin,          // a fat binary container of PTX/ELF entries
  ptx_text,        // NUL-terminated PTX source
  elf,             // a cubin: SASS for one GPU architecture
  unknown,
};

// Looks only at the first bytes: the magic numbers, or leading whitespace and comments followed
// by `.version` for PTX. Stops at a NUL byte, so a NUL-terminated string is never over-read.
ImageKind classify_image(const void* image, size_t size_bound = unknown_size);

std::string_view to_string(ImageKind kind);

// What cudart keeps in .nvFatBinSegment for each translation unit.
struct FatbinWrapper {
  uint32_t version = 0;                  // 1, or 2 for code built with -rdc/device linking
  const void* fatbin = nullptr;          // the fatbin data, normally in .nv_fatbin
  const void* prelinked_list = nullptr;  // "filename_or_fatbins"; may be null; not interpreted
};

// Reads the 24-byte wrapper; does not look at what its pointers point to.
Expected<FatbinWrapper> read_wrapper(const void* image);

// Raw entry kinds; a fatbin may hold kinds not listed here, which callers should skip.
enum class FatbinEntryKind : uint16_t {
  ptx = 1,
  elf = 2,     // SASS for one sm_XX
  lto_ir = 8,  // NVVM IR for link-time optimisation (-dlto, code=lto_XX); opaque to us
};

// Bits of FatbinEntry::flags whose meaning was confirmed (see fatbin_reader.cpp).
namespace fatbin_flags {
inline constexpr uint64_t address_64 = 0x1;            // 64-bit code; absent with fatbinary --32
inline constexpr uint64_t debug = 0x2;                 // built with -G / fatbinary -g
inline constexpr uint64_t lz4 = 0x2000;                // payload is one LZ4 block
inline constexpr uint64_t zstd = 0x8000;               // payload is zstd frames
inline constexpr uint64_t arch_specific = 0x100000;    // sm_90a / compute_90a: that arch only
inline constexpr uint64_t family_specific = 0x200000;  // sm_100f / compute_100f: its family only
}  // namespace fatbin_flags

enum class Compression { none, lz4, zstd };

// Views into the caller's image: payload, identifier and options stay valid only as long as the
// bytes the entry was parsed from.
struct FatbinEntry {
  FatbinEntryKind kind = FatbinEntryKind::ptx;
  uint16_t format_version = 0;      // 0x0101 in everything CUDA 13 writes
  uint32_t arch = 0;                // 75 for sm_75 / compute_75
  uint16_t code_version_major = 0;  // PTX: the ISA version (9.0 for CUDA 13); ELF: 1.8
  uint16_t code_version_minor = 0;
  uint64_t flags = 0;
  Compression compression = Compression::none;
  // The stored bytes: exactly the compressed data when compressed, else the whole padded
  // payload (a PTX text then ends in NULs).
  std::span<const uint8_t> payload;
  uint64_t uncompressed_size = 0;    // equals payload.size() when not compressed
  std::string_view identifier;       // the source file with -G, or fatbinary --ident; often empty
  // The block the +0x14 field points at: for PTX the ptxas options nvcc recorded
  // (" -g --dont-merge-basicblocks --return-at-end"); for sm_100+ ELF an undocumented binary
  // descriptor. Empty when absent.
  std::string_view options;
  size_t offset = 0;  // of the entry header, from the start of the fatbin; for messages
  size_t index = 0;   // position in the fatbin; for messages

  bool is_ptx() const { return kind == FatbinEntryKind::ptx; }
  bool is_elf() const { return kind == FatbinEntryKind::elf; }
  bool is_64_bit() const { return (flags & fatbin_flags::address_64) != 0; }
  // "compute_90a", "sm_80", "kind 8 arch 80".
  std::string name() const;
};

struct Fatbin {
  size_t offset = 0;      // from the start of the section it was read from; 0 for a lone fatbin
  size_t total_size = 0;  // header plus payload
  std::vector<FatbinEntry> entries;
};

// Parses one fatbin starting at `data`. With unknown_size the header's payload size is
// trusted (the Driver API gives nothing better); otherwise the fatbin must fit in size_bound.
Expected<Fatbin> parse_fatbin(const void* data, size_t size_bound = unknown_size);

// Parses a whole .nv_fatbin-style section: fatbins back to back, possibly separated by the
// zero padding the linker leaves for alignment.
Expected<std::vector<Fatbin>> parse_fatbin_section(std::span<const uint8_t> section);

// The PTX entry a device of `target_arch` (e.g. 80) should JIT, as the driver picks it: the
// highest arch not above the target, honouring the arch- and family-specific flags. Fails with
// ErrorCode::no_binary_for_gpu when none fits, saying whether the image holds only SASS
// ("no PTX: only SASS for sm_75, sm_80") or only PTX for newer architectures.
Expected<const FatbinEntry*> select_ptx(std::span<const FatbinEntry> entries, int target_arch);

// The entry's payload, decompressed and checked against the declared uncompressed size.
Expected<std::string> extract_payload(const FatbinEntry& entry);

// The PTX text of a PTX entry: decompressed, cut at the first NUL (payloads carry NUL padding).
Expected<std::string> extract_ptx(const FatbinEntry& entry);

struct LoadedPtx {
  std::string text;
  uint32_t arch = 0;  // of the fatbin entry it came from; 0 when the image was plain PTX
};

// Everything cuModuleLoadData and friends need: classify `image`, follow a wrapper, parse the
// fatbin, pick and extract the PTX for `target_arch`. ELF (SASS) images give no_binary_for_gpu,
// since xcuda can only run PTX.
Expected<LoadedPtx> load_ptx(const void* image, int target_arch, size_t size_bound = unknown_size);

}  // namespace xcuda::runtime
