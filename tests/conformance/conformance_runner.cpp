// PTX conformance runner: runs every case under a cases directory through whichever libcuda.so.1
// the dynamic loader finds, and either records the outputs (on NVIDIA hardware) or compares them
// with the recordings (on xcuda).
//
//   conformance_runner CASES EXPECTED [--record | --list] [--jobs N] [--only SUBSTRING]
//                      [--mismatches N] [--passing FILE] [--write-passing FILE]
// --list prints each case's input count without running anything.
//
// A case is cases/<family>/<name>.ptx holding one `.entry conformance(in0, in1, in2, out, count)`
// whose leading `// key: value` comments describe it:
//   inputs     element types of in0.. (u16 s16 f16 bf16 u32 s32 f32 u64 s64 f64)
//   output     element type of out
//   skip       zero_in1: leave out inputs whose in1 is 0 (results the ISA leaves unspecified)
//   tolerance  exact (default) or terms `ulp N`, `rel L`, `abs L` (bounds N ulp, 2^L relative,
//              2^L absolute); an output passes if any term holds
//   domain     D: the tolerance applies only where |in0| <= D; elsewhere only NaN-ness must agree
//   note       free text for the reader
// Inputs are generated here, deterministically, so only outputs are stored: EXPECTED/<case>.out,
// the raw little-endian output elements. A case with one f16 or bf16 input gets all 65536
// values; any other gets every combination of its inputs' edge values (zeros, subnormals,
// infinities, NaNs with payloads, extremes, rounding ties, integer limits and shift counts)
// followed by random tuples from a generator seeded with the case's name.
//
// Each case runs in a child process with its own CUDA context, so a crash, a hang or a sticky
// error in one case is that case's failure and the run goes on.

#include <cuda.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr int kernel_inputs = 3;
constexpr std::size_t random_tuples = 1024;
// Crossing every edge value of several inputs would store thousands of outputs per case; cases
// with more than one input cross the first edges of each list, which are ordered by importance
// (unary cases, conversions mostly, get all of them).
constexpr std::size_t binary_edge_values = 40;
constexpr std::size_t ternary_edge_values = 12;
constexpr unsigned case_time_limit_seconds = 120;

enum class Kind { integer, floating };

struct ElementType {
  std::string_view name;
  std::size_t size;
  Kind kind;
  int mantissa_bits;  // explicit fraction bits, floating types only
};

constexpr std::array element_types{
    ElementType{"u16", 2, Kind::integer, 0},   ElementType{"s16", 2, Kind::integer, 0},
    ElementType{"f16", 2, Kind::floating, 10}, ElementType{"bf16", 2, Kind::floating, 7},
    ElementType{"u32", 4, Kind::integer, 0},   ElementType{"s32", 4, Kind::integer, 0},
    ElementType{"f32", 4, Kind::floating, 23}, ElementType{"u64", 8, Kind::integer, 0},
    ElementType{"s64", 8, Kind::integer, 0},   ElementType{"f64", 8, Kind::floating, 52},
};

const ElementType* find_type(std::string_view name) {
  for (const ElementType& type : element_types) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

int exponent_bits(const ElementType& type) {
  return static_cast<int>(type.size * 8) - 1 - type.mantissa_bits;
}

std::uint64_t all_ones(std::size_t size) {
  return size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (size * 8)) - 1;
}

// Builds a floating-point bit pattern from sign, unbiased exponent and fraction bits, so that
// the edge lists below read the same for every width.
std::uint64_t float_bits(const ElementType& type, bool negative, int exponent,
                         std::uint64_t fraction) {
  const int bias = (1 << (exponent_bits(type) - 1)) - 1;
  const std::uint64_t biased = static_cast<std::uint64_t>(exponent + bias);
  const std::uint64_t sign = negative ? std::uint64_t{1} << (type.size * 8 - 1) : 0;
  return sign | (biased << type.mantissa_bits) | fraction;
}

std::vector<std::uint64_t> float_edges(const ElementType& type) {
  const int bias = (1 << (exponent_bits(type) - 1)) - 1;
  const int special = bias + 1;  // the exponent of inf and NaN
  const int subnormal = -bias;   // the exponent field 0
  const std::uint64_t fraction_mask = (std::uint64_t{1} << type.mantissa_bits) - 1;
  const std::uint64_t quiet = std::uint64_t{1} << (type.mantissa_bits - 1);
  const std::uint64_t half_ulp_of_half = std::uint64_t{1} << (type.mantissa_bits - 2);
  std::vector<std::uint64_t> magnitudes{
      float_bits(type, false, subnormal, 0),                 // 0
      float_bits(type, false, 0, 0),                         // 1
      float_bits(type, false, special, 0),                   // inf
      float_bits(type, false, special, quiet),               // canonical quiet NaN
      float_bits(type, false, subnormal, 1),                 // smallest subnormal
      float_bits(type, false, 1 - bias, 0),                  // smallest normal
      float_bits(type, false, special - 1, fraction_mask),   // largest finite
      float_bits(type, false, 0, quiet),                     // 1.5: a tie for rounding to int
      float_bits(type, false, subnormal, fraction_mask),     // largest subnormal
      float_bits(type, false, special, quiet | 0x15),        // quiet NaN with payload
      float_bits(type, false, special, 1),                   // signalling NaN
      float_bits(type, false, special, quiet >> 1 | 0x3),    // signalling NaN with payload
      float_bits(type, false, 1, 0),                         // 2
      float_bits(type, false, -1, 0),                        // 0.5
      float_bits(type, false, 1, half_ulp_of_half),          // 2.5: a tie to even
      float_bits(type, false, 0, 1),                         // 1 + ulp
      float_bits(type, false, -1, fraction_mask),            // 1 - ulp/2
      float_bits(type, false, 1, quiet | half_ulp_of_half),  // 3.5
      float_bits(type, false, -2, fraction_mask),            // just under 0.5
      float_bits(type, false, special - 1, 0),               // largest power of two
  };
  // Integer conversion boundaries and narrower formats' limits, where the type can hold them.
  for (const int exponent : {15, 16, 24, 31, 32, 53, 63, 64, -14, -24, -126, -149}) {
    if (exponent < special && exponent > subnormal) {
      magnitudes.push_back(float_bits(type, false, exponent, 0));
    }
  }
  if (type.mantissa_bits >= 10) {
    magnitudes.push_back(float_bits(type, false, 15, 0x3ffULL << (type.mantissa_bits - 10)));
    magnitudes.push_back(float_bits(
        type, false, 15,
        0x3ffULL << (type.mantissa_bits - 10) | std::uint64_t{1} << (type.mantissa_bits - 11)));
  }
  const std::uint64_t sign = std::uint64_t{1} << (type.size * 8 - 1);
  std::vector<std::uint64_t> edges;
  for (const std::uint64_t magnitude : magnitudes) {
    edges.push_back(magnitude);
    edges.push_back(magnitude | sign);
  }
  return edges;
}

std::vector<std::uint64_t> integer_edges(const ElementType& type) {
  const std::uint64_t mask = all_ones(type.size);
  const std::uint64_t sign = std::uint64_t{1} << (type.size * 8 - 1);
  std::vector<std::uint64_t> edges{
      0,        1,         mask,       sign,       sign - 1,    sign + 1,
      2,        mask - 1,  31,         32,         33,          0x12345678,
      63,       64,        65,         3,          7,           8,
      15,       16,        17,         24,         0x7f,        0x80,
      0xff,     0x100,     0x7fff,     0x8000,     0xffff,      0x10000,
      0xffffff, 0x1000000, 0xdeadbeef, 0xffffffff, 0x100000000, 0xfedcba9876543210};
  std::vector<std::uint64_t> unique;
  for (const std::uint64_t value : edges) {
    const std::uint64_t fitted = value & mask;
    if (std::find(unique.begin(), unique.end(), fitted) == unique.end()) unique.push_back(fitted);
  }
  return unique;
}

std::vector<std::uint64_t> edge_values(const ElementType& type) {
  return type.kind == Kind::floating ? float_edges(type) : integer_edges(type);
}

std::uint64_t random_value(const ElementType& type, std::mt19937_64& engine) {
  const std::uint64_t bits = engine();
  const std::uint64_t mask = all_ones(type.size);
  const std::uint64_t shape = engine() % 4;
  if (type.kind == Kind::integer) {
    switch (shape) {
      case 0: return (bits % 129 - 64) & mask;                       // small, both signs
      case 1: return (bits & mask) >> (engine() % (type.size * 8));  // every magnitude
      default: return bits & mask;
    }
  }
  const bool negative = (bits >> 63) != 0;
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << type.mantissa_bits) - 1);
  // Moderate magnitudes, where most arithmetic happens, within the type's normal range.
  const int bias = (1 << (exponent_bits(type) - 1)) - 1;
  const int exponent = std::clamp(static_cast<int>(engine() % 61) - 30, 1 - bias, bias);
  switch (shape) {
    case 0: return bits & mask;  // anything, mostly huge or tiny magnitudes and NaNs
    case 1: return float_bits(type, negative, exponent, fraction);
    case 2: {
      // A tie when rounded to a narrower format: the dropped bits are exactly one half.
      const int kept = type.mantissa_bits > 23 ? 23 : (engine() % 2 ? 10 : 7);
      if (kept >= type.mantissa_bits) return bits & mask;
      const int dropped = type.mantissa_bits - kept;
      const std::uint64_t tie = (fraction >> dropped << dropped) | std::uint64_t{1}
                                                                       << (dropped - 1);
      return float_bits(type, negative, exponent, tie);
    }
    default: {
      // n + 1/2 for rounding to an integer.
      const int magnitude = static_cast<int>(engine() % 24);
      const int dropped = type.mantissa_bits - magnitude;
      if (dropped < 1 || magnitude > bias) return bits & mask;
      const std::uint64_t half = (fraction >> dropped << dropped) | std::uint64_t{1}
                                                                        << (dropped - 1);
      return float_bits(type, negative, magnitude, half);
    }
  }
}

struct Tolerance {
  double ulps = -1;  // negative: term absent
  double relative = -1;
  double absolute = -1;
  double domain = INFINITY;
  bool exact() const { return ulps < 0 && relative < 0 && absolute < 0; }
};

struct Case {
  std::string name;  // <family>/<name>
  std::string ptx;
  std::string descriptor_error;  // empty when the descriptor is valid
  std::vector<const ElementType*> inputs;
  const ElementType* output = nullptr;
  bool skip_zero_in1 = false;
  Tolerance tolerance;
};

std::string read_file(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

// Returns an empty string on success, else what is wrong with the descriptor.
std::string parse_descriptor(Case& test) {
  std::istringstream lines(test.ptx);
  std::string line;
  while (std::getline(lines, line) && line.starts_with("// ")) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(3, colon - 3);
    std::istringstream words(line.substr(colon + 1));
    std::string word;
    if (key == "inputs") {
      while (words >> word) {
        const ElementType* type = find_type(word);
        if (type == nullptr) return "unknown input type " + word;
        test.inputs.push_back(type);
      }
    } else if (key == "output") {
      words >> word;
      test.output = find_type(word);
      if (test.output == nullptr) return "unknown output type " + word;
    } else if (key == "skip") {
      words >> word;
      if (word != "zero_in1") return "unknown skip rule " + word;
      test.skip_zero_in1 = true;
    } else if (key == "tolerance") {
      double bound = 0;
      while (words >> word >> bound) {
        if (word == "ulp")
          test.tolerance.ulps = bound;
        else if (word == "rel")
          test.tolerance.relative = std::exp2(bound);
        else if (word == "abs")
          test.tolerance.absolute = std::exp2(bound);
        else
          return "unknown tolerance term " + word;
      }
    } else if (key == "domain") {
      words >> test.tolerance.domain;
    }
  }
  if (test.inputs.empty() || test.inputs.size() > kernel_inputs || test.output == nullptr) {
    return "descriptor needs 1 to 3 inputs and an output";
  }
  return {};
}

std::uint64_t name_hash(std::string_view name) {
  std::uint64_t hash = 0xcbf29ce484222325;  // FNV-1a: stable on every machine
  for (const char character : name) {
    hash = (hash ^ static_cast<unsigned char>(character)) * 0x100000001b3;
  }
  return hash;
}

// columns[i][k] is input i of tuple k.
using Columns = std::vector<std::vector<std::uint64_t>>;

Columns generate_inputs(const Case& test) {
  Columns columns(test.inputs.size());
  const auto add = [&](const std::vector<std::uint64_t>& tuple) {
    if (test.skip_zero_in1 && tuple.size() > 1 && tuple[1] == 0) return;
    for (std::size_t input = 0; input < tuple.size(); ++input)
      columns[input].push_back(tuple[input]);
  };
  // 16-bit floating-point sources are covered exhaustively; 16-bit integers, whose behaviour is
  // uniform between their edges, are not worth the 128 KiB of recording each.
  if (test.inputs.size() == 1 && test.inputs[0]->size == 2 &&
      test.inputs[0]->kind == Kind::floating) {
    for (std::uint64_t value = 0; value <= 0xffff; ++value) add({value});
    return columns;
  }
  std::vector<std::vector<std::uint64_t>> edges;
  for (const ElementType* type : test.inputs) {
    edges.push_back(edge_values(*type));
    const std::size_t limit = test.inputs.size() == kernel_inputs ? ternary_edge_values
                              : test.inputs.size() == 2           ? binary_edge_values
                                                                  : edges.back().size();
    edges.back().resize(std::min(limit, edges.back().size()));
  }
  std::vector<std::size_t> position(test.inputs.size(), 0);
  for (bool more = true; more;) {
    std::vector<std::uint64_t> tuple;
    for (std::size_t input = 0; input < position.size(); ++input) {
      tuple.push_back(edges[input][position[input]]);
    }
    add(tuple);
    more = false;
    for (std::size_t input = 0; input < position.size() && !more; ++input) {
      more = ++position[input] < edges[input].size();
      if (!more) position[input] = 0;
    }
  }
  std::mt19937_64 engine(name_hash(test.name));
  for (std::size_t count = 0; count < random_tuples; ++count) {
    std::vector<std::uint64_t> tuple;
    for (const ElementType* type : test.inputs) tuple.push_back(random_value(*type, engine));
    add(tuple);
  }
  return columns;
}

std::vector<unsigned char> pack(const std::vector<std::uint64_t>& values, std::size_t size) {
  std::vector<unsigned char> bytes(values.size() * size);
  for (std::size_t index = 0; index < values.size(); ++index) {
    std::memcpy(bytes.data() + index * size, &values[index], size);  // little-endian hosts
  }
  return bytes;
}

std::uint64_t element(const std::vector<unsigned char>& bytes, std::size_t index,
                      std::size_t size) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + index * size, size);
  return value;
}

double to_double(const ElementType& type, std::uint64_t bits) {
  if (type.size == 8) return std::bit_cast<double>(bits);
  if (type.size == 4) return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
  const int field_mask = (1 << exponent_bits(type)) - 1;
  const int bias = field_mask >> 1;
  const int exponent = static_cast<int>(bits >> type.mantissa_bits) & field_mask;
  const std::uint64_t implicit = std::uint64_t{1} << type.mantissa_bits;
  const double fraction = static_cast<double>(bits & (implicit - 1));
  const double magnitude = exponent == field_mask ? (fraction != 0 ? NAN : INFINITY)
                           : exponent == 0 ? std::ldexp(fraction, 1 - bias - type.mantissa_bits)
                                           : std::ldexp(static_cast<double>(implicit) + fraction,
                                                        exponent - bias - type.mantissa_bits);
  return (bits >> (type.size * 8 - 1)) != 0 ? -magnitude : magnitude;
}

// Position of a floating-point value on a line where adjacent representable values differ by 1.
std::int64_t ordinal(const ElementType& type, std::uint64_t bits) {
  const std::uint64_t sign = std::uint64_t{1} << (type.size * 8 - 1);
  const std::int64_t magnitude = static_cast<std::int64_t>(bits & (sign - 1));
  return (bits & sign) != 0 ? -magnitude : magnitude;
}

// The ISA bounds an approximation's distance from the exact result; the recording and xcuda are
// both within it, so they may be up to twice the bound apart.
bool within_tolerance(const Case& test, std::uint64_t input, std::uint64_t expected,
                      std::uint64_t got) {
  if (expected == got) return true;
  const Tolerance& tolerance = test.tolerance;
  if (tolerance.exact()) return false;
  const ElementType& type = *test.output;
  const double expected_value = to_double(type, expected);
  const double got_value = to_double(type, got);
  if (std::isnan(expected_value) || std::isnan(got_value)) {
    return std::isnan(expected_value) && std::isnan(got_value);
  }
  if (std::fabs(to_double(*test.inputs[0], input)) > tolerance.domain) return true;
  if (std::isinf(expected_value) || std::isinf(got_value)) return false;
  const double difference = std::fabs(expected_value - got_value);
  const double ulp_distance =
      std::fabs(static_cast<double>(ordinal(type, expected) - ordinal(type, got)));
  return (tolerance.ulps >= 0 && ulp_distance <= 2 * tolerance.ulps) ||
         (tolerance.relative >= 0 &&
          difference <= 2 * tolerance.relative * std::fabs(expected_value)) ||
         (tolerance.absolute >= 0 && difference <= 2 * tolerance.absolute);
}

std::string hex(std::uint64_t value, std::size_t size) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", static_cast<int>(size * 2),
                static_cast<unsigned long long>(value));
  return text;
}

std::string cuda_error(CUresult result) {
  const char* name = nullptr;
  if (cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

// Runs the case's kernel on the inputs; on failure returns false with the reason in `error`.
bool execute(const Case& test, const Columns& columns, std::vector<unsigned char>& outputs,
             std::string& error) {
  std::vector<CUdeviceptr> buffers;
  const auto check = [&](CUresult result, const char* what) {
    if (result != CUDA_SUCCESS) error = std::string(what) + " failed: " + cuda_error(result);
    return result == CUDA_SUCCESS;
  };
  const std::size_t count = columns[0].size();
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  if (!check(cuInit(0), "cuInit") || !check(cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !check(cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !check(cuModuleLoadData(&module, test.ptx.c_str()), "cuModuleLoadData") ||
      !check(cuModuleGetFunction(&function, module, "conformance"), "cuModuleGetFunction")) {
    return false;
  }
  std::array<CUdeviceptr, kernel_inputs + 1> pointers{};
  for (std::size_t input = 0; input < columns.size(); ++input) {
    const std::vector<unsigned char> bytes = pack(columns[input], test.inputs[input]->size);
    if (!check(cuMemAlloc(&pointers[input], bytes.size()), "cuMemAlloc") ||
        !check(cuMemcpyHtoD(pointers[input], bytes.data(), bytes.size()), "cuMemcpyHtoD")) {
      return false;
    }
  }
  outputs.assign(count * test.output->size, 0);
  CUdeviceptr& output = pointers[kernel_inputs];
  // A recognisable pattern, so that outputs the kernel never wrote show up as mismatches.
  if (!check(cuMemAlloc(&output, outputs.size()), "cuMemAlloc") ||
      !check(cuMemsetD8(output, 0xa5, outputs.size()), "cuMemsetD8")) {
    return false;
  }
  unsigned int count_parameter = static_cast<unsigned int>(count);
  std::array<void*, kernel_inputs + 2> parameters{&pointers[0], &pointers[1], &pointers[2], &output,
                                                  &count_parameter};
  constexpr unsigned int block = 256;
  const unsigned int grid = static_cast<unsigned int>((count + block - 1) / block);
  return check(cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, nullptr, parameters.data(),
                              nullptr),
               "cuLaunchKernel") &&
         check(cuCtxSynchronize(), "cuCtxSynchronize") &&
         check(cuMemcpyDtoH(outputs.data(), output, outputs.size()), "cuMemcpyDtoH");
}

// Runs one case and prints its report; the return value is the child's exit status.
int run_case(const Case& test, const fs::path& expected_dir, bool record,
             std::size_t reported_mismatches) {
  const Columns columns = generate_inputs(test);
  const std::size_t count = columns[0].size();
  std::vector<unsigned char> outputs;
  std::string error;
  if (!execute(test, columns, outputs, error)) {
    std::printf("FAIL %s: %s\n", test.name.c_str(), error.c_str());
    return 1;
  }
  const fs::path golden_path = expected_dir / (test.name + ".out");
  if (record) {
    fs::create_directories(golden_path.parent_path());
    std::ofstream(golden_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(outputs.data()),
               static_cast<std::streamsize>(outputs.size()));
    std::printf("RECORDED %s (%zu outputs)\n", test.name.c_str(), count);
    return 0;
  }
  if (!fs::exists(golden_path)) {
    std::printf("FAIL %s: no recording %s\n", test.name.c_str(), golden_path.c_str());
    return 1;
  }
  const std::string golden = read_file(golden_path);
  if (golden.size() != outputs.size()) {
    std::printf("FAIL %s: recording has %zu bytes, %zu inputs need %zu (inputs changed since?)\n",
                test.name.c_str(), golden.size(), count, outputs.size());
    return 1;
  }
  const std::vector<unsigned char> golden_bytes(golden.begin(), golden.end());
  const std::size_t size = test.output->size;
  std::vector<std::size_t> mismatches;
  for (std::size_t index = 0; index < count; ++index) {
    if (!within_tolerance(test, columns[0][index], element(golden_bytes, index, size),
                          element(outputs, index, size))) {
      mismatches.push_back(index);
    }
  }
  if (mismatches.empty()) {
    std::printf("PASS %s (%zu inputs)\n", test.name.c_str(), count);
    return 0;
  }
  std::printf("FAIL %s: %zu of %zu outputs differ\n", test.name.c_str(), mismatches.size(), count);
  for (std::size_t shown = 0; shown < std::min(mismatches.size(), reported_mismatches); ++shown) {
    const std::size_t index = mismatches[shown];
    std::string inputs;
    for (std::size_t input = 0; input < columns.size(); ++input) {
      inputs += ' ';
      inputs += hex(columns[input][index], test.inputs[input]->size);
    }
    std::printf("    in%s: expected %s got %s\n", inputs.c_str(),
                hex(element(golden_bytes, index, size), size).c_str(),
                hex(element(outputs, index, size), size).c_str());
  }
  return 1;
}

struct Options {
  fs::path cases_dir;
  fs::path expected_dir;
  bool record = false;
  bool list = false;
  unsigned jobs = 1;
  std::size_t reported_mismatches = 5;
  std::string only;
  fs::path passing_file;
  fs::path write_passing_file;
};

bool parse_options(int argc, char** argv, Options& options) {
  std::vector<std::string> positional;
  for (int index = 1; index < argc; ++index) {
    const std::string argument = argv[index];
    const bool has_value = index + 1 < argc;
    if (argument == "--record") {
      options.record = true;
    } else if (argument == "--list") {
      options.list = true;
    } else if (argument == "--jobs" && has_value) {
      options.jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[++index])));
    } else if (argument == "--mismatches" && has_value) {
      options.reported_mismatches = std::strtoull(argv[++index], nullptr, 10);
    } else if (argument == "--only" && has_value) {
      options.only = argv[++index];
    } else if (argument == "--passing" && has_value) {
      options.passing_file = argv[++index];
    } else if (argument == "--write-passing" && has_value) {
      options.write_passing_file = argv[++index];
    } else if (argument.starts_with("--")) {
      return false;
    } else {
      positional.push_back(argument);
    }
  }
  if (positional.size() != 2) return false;
  options.cases_dir = positional[0];
  options.expected_dir = positional[1];
  return true;
}

std::vector<Case> load_cases(const Options& options) {
  std::vector<Case> cases;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(options.cases_dir)) {
    if (entry.path().extension() != ".ptx") continue;
    Case test;
    test.name = fs::relative(entry.path(), options.cases_dir).replace_extension().generic_string();
    if (!options.only.empty() && test.name.find(options.only) == std::string::npos) continue;
    test.ptx = read_file(entry.path());
    test.descriptor_error = parse_descriptor(test);
    cases.push_back(std::move(test));
  }
  std::sort(cases.begin(), cases.end(),
            [](const Case& left, const Case& right) { return left.name < right.name; });
  return cases;
}

struct Outcome {
  bool passed = false;
  std::string report;
};

// Starts the case in a child whose stdout goes to `report`; returns the child's pid.
pid_t start_case(const Case& test, const Options& options, std::FILE* report) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child != 0) return child;
  dup2(fileno(report), STDOUT_FILENO);
  alarm(case_time_limit_seconds);  // a hung kernel ends as SIGALRM, reported as a failure
  const int status =
      run_case(test, options.expected_dir, options.record, options.reported_mismatches);
  std::fflush(stdout);
  _exit(status);
}

Outcome finish_case(const Case& test, int status, std::FILE* report) {
  Outcome outcome;
  std::rewind(report);
  for (int character; (character = std::fgetc(report)) != EOF;)
    outcome.report += static_cast<char>(character);
  std::fclose(report);
  outcome.passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (WIFSIGNALED(status)) {
    outcome.report += "FAIL " + test.name + ": child killed by signal " +
                      std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")\n";
  } else if (!outcome.passed && outcome.report.empty()) {
    outcome.report = "FAIL " + test.name + ": child exited with status " +
                     std::to_string(WEXITSTATUS(status)) + " without a report\n";
  }
  return outcome;
}

// Runs the cases, up to `jobs` children at once, printing reports in case order.
std::vector<Outcome> run_cases(const std::vector<Case>& cases, const Options& options) {
  std::vector<Outcome> outcomes(cases.size());
  std::map<pid_t, std::pair<std::size_t, std::FILE*>> running;
  std::vector<bool> finished(cases.size(), false);
  std::size_t next_to_start = 0;
  std::size_t next_to_print = 0;
  while (next_to_print < cases.size()) {
    while (next_to_start < cases.size() && running.size() < options.jobs) {
      const Case& test = cases[next_to_start];
      std::FILE* report = test.descriptor_error.empty() ? std::tmpfile() : nullptr;
      if (report == nullptr) {
        const std::string error =
            test.descriptor_error.empty() ? "no temporary file" : test.descriptor_error;
        outcomes[next_to_start].report = "FAIL " + test.name + ": " + error + "\n";
        finished[next_to_start++] = true;
        continue;
      }
      running[start_case(test, options, report)] = {next_to_start++, report};
    }
    if (!running.empty()) {
      int status = 0;
      const pid_t child = wait(&status);
      const auto found = running.find(child);
      if (found != running.end()) {
        const auto [index, report] = found->second;
        outcomes[index] = finish_case(cases[index], status, report);
        finished[index] = true;
        running.erase(found);
      }
    }
    for (; next_to_print < cases.size() && finished[next_to_print]; ++next_to_print) {
      std::fputs(outcomes[next_to_print].report.c_str(), stdout);
      std::fflush(stdout);
    }
  }
  return outcomes;
}

std::set<std::string> read_names(const fs::path& path) {
  std::set<std::string> names;
  std::ifstream stream(path);
  for (std::string line; std::getline(stream, line);) {
    if (!line.empty() && !line.starts_with('#')) names.insert(line);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, options)) {
    std::fprintf(
        stderr,
        "usage: %s CASES_DIR EXPECTED_DIR [--record | --list] [--jobs N] [--only SUBSTRING]\n"
        "       [--mismatches N] [--passing FILE] [--write-passing FILE]\n",
        argv[0]);
    return 2;
  }
  std::vector<Case> cases = load_cases(options);
  if (cases.empty()) {
    std::fprintf(stderr, "no cases under %s\n", options.cases_dir.c_str());
    return 2;
  }
  if (options.list) {
    for (const Case& test : cases) {
      std::printf("%s %s\n", test.name.c_str(),
                  test.descriptor_error.empty()
                      ? std::to_string(generate_inputs(test)[0].size()).c_str()
                      : test.descriptor_error.c_str());
    }
    return 0;
  }
  const std::vector<Outcome> outcomes = run_cases(cases, options);
  std::size_t passed = 0;
  std::vector<std::string> passing_names;
  for (std::size_t index = 0; index < cases.size(); ++index) {
    if (outcomes[index].passed) {
      ++passed;
      passing_names.push_back(cases[index].name);
    }
  }
  std::printf("%zu passed, %zu failed\n", passed, cases.size() - passed);
  if (!options.write_passing_file.empty()) {
    std::ofstream stream(options.write_passing_file);
    stream << "# Cases xcuda passes; conformance.ptx fails if one of these fails.\n"
              "# Regenerate with conformance_runner ... --write-passing FILE.\n";
    for (const std::string& name : passing_names) stream << name << '\n';
  }
  if (options.passing_file.empty()) return passed == cases.size() ? 0 : 1;
  // Only the allow-listed cases decide the exit status: the others are not implemented yet.
  std::size_t regressions = 0;
  const std::set<std::string> allowed = read_names(options.passing_file);
  for (std::size_t index = 0; index < cases.size(); ++index) {
    if (allowed.contains(cases[index].name) && !outcomes[index].passed) {
      std::printf("REGRESSION %s (listed in %s)\n", cases[index].name.c_str(),
                  options.passing_file.c_str());
      ++regressions;
    }
  }
  std::printf("%zu of %zu allow-listed cases regressed\n", regressions, allowed.size());
  return regressions == 0 ? 0 : 1;
}
