// The xcuda command: run a CUDA program on xcuda, compile PTX ahead of time, describe devices,
// look inside fatbins.
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/compiler.h"
#include "runtime/environment.h"
#include "src/cli/commands.h"

namespace xcuda::cli {
namespace {

constexpr std::string_view usage =
    "usage:\n"
    "  xcuda run [--backend host|hip] -- PROGRAM [ARGUMENTS...]\n"
    "                                         run a CUDA program on xcuda's libcuda.so.1\n"
    "  xcuda compile --target host [-O0|-O1|-O2|-O3] [-j THREADS] [--kernel NAME]... FILE.ptx -o OUTPUT.o\n"
    "  xcuda compile --target gfx90a [--code-object 4|5] FILE.ptx -o OUTPUT.hsaco\n"
    "                                         compile PTX; report every problem as file:line:col;\n"
    "                                         -O3 by default, -O1 the runtime's quick first tier;\n"
    "                                         a large module on every hardware thread by default;\n"
    "                                         only the kernels named, as lazy loading compiles one\n"
    "        [--whole-warp-blocks]            for blocks whole warps wide only, as the runtime\n"
    "                                         compiles for launches of such blocks\n"
    "  xcuda compile --check FILE.ptx         only parse, check and lower to LLVM IR; write nothing\n"
    "        [--time-passes] [--emit-llvm PREFIX]   print each pass's time; write PREFIX.{un,}optimized.ll\n"
    "  xcuda info                             list the backend, its devices and the code cache\n"
    "  xcuda dump FILE [-o DIRECTORY]         list the fatbins in FILE; extract their PTX\n"
    "  xcuda precompile FILE...               compile every module in FILEs into the code cache\n";

}  // namespace

int fail_usage(std::string_view message) {
  std::cerr << "xcuda: " << message << "\n" << usage;
  return 2;
}

namespace {

// build/bin/xcuda finds build/lib/libcuda.so.1 beside it.
std::filesystem::path library_directory() {
  std::error_code error;
  auto executable = std::filesystem::read_symlink("/proc/self/exe", error);
  return executable.parent_path().parent_path() / "lib";
}

void prepend_to_path_variable(const char* name, const std::string& entry) {
  std::string value = entry;
  if (const char* existing = std::getenv(name); existing && *existing)
    value += ":" + std::string(existing);
  setenv(name, value.c_str(), 1);
}

int run(int argc, char** argv) {
  int first = 0;
  for (; first < argc && std::string_view(argv[first]) != "--"; ++first) {
    std::string_view argument = argv[first];
    if (argument != "--backend" || first + 1 >= argc)
      return fail_usage("unexpected argument '" + std::string(argument) + "'");
    std::string_view backend = argv[++first];
    if (backend != "host" && backend != "hip" && backend != "auto")
      return fail_usage("unknown backend '" + std::string(backend) + "' (known: host, hip, auto)");
    setenv("XCUDA_BACKEND", argv[first], 1);
  }
  if (first + 1 >= argc) return fail_usage("run needs '-- PROGRAM'");
  // LD_LIBRARY_PATH for what the program finds by name; LD_AUDIT for a program whose RPATH or
  // dlopen path names another libcuda.so.1 (see src/audit/).
  std::filesystem::path libraries = library_directory();
  prepend_to_path_variable("LD_LIBRARY_PATH", libraries.string());
  prepend_to_path_variable("LD_AUDIT", (libraries / "libxcuda_audit.so").string());
  execvp(argv[first + 1], argv + first + 1);
  std::perror(argv[first + 1]);
  return 127;
}

int compile(int argc, char** argv) {
  std::string input, output, target = "host", code_object = "5";
  bool check_only = false, time_passes = false, whole_warp_blocks = false;
  int optimization_level = 3;
  unsigned threads = runtime::usable_core_count();
  std::string ir_prefix;
  std::vector<std::string> kernels;
  for (int index = 0; index < argc; ++index) {
    std::string_view argument = argv[index];
    if (argument == "-o" && index + 1 < argc) output = argv[++index];
    else if (argument == "--check") check_only = true;
    else if (argument == "--time-passes") time_passes = true;
    else if (argument == "--whole-warp-blocks") whole_warp_blocks = true;
    else if (argument == "--emit-llvm" && index + 1 < argc) ir_prefix = argv[++index];
    else if (argument == "--target" && index + 1 < argc) target = argv[++index];
    else if (argument == "--kernel" && index + 1 < argc) kernels.push_back(argv[++index]);
    else if (argument == "--code-object" && index + 1 < argc) code_object = argv[++index];
    else if (argument == "-j" && index + 1 < argc) {
      std::string_view count = argv[++index];
      auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), threads);
      if (error != std::errc() || end != count.data() + count.size() || threads == 0 || threads > 1024)
        return fail_usage("-j takes a number of threads from 1 to 1024");
    } else if (argument.size() == 3 && argument.starts_with("-O") && argument[2] >= '0' && argument[2] <= '3')
      optimization_level = argument[2] - '0';
    else if (!argument.empty() && argument[0] != '-' && input.empty()) input = argument;
    else return fail_usage("unexpected argument '" + std::string(argument) + "'");
  }
  if (input.empty()) return fail_usage("compile needs a PTX file");
  // AMD processors go by their LLVM names; the compiler reports one it does not know.
  bool amdgpu = target.starts_with("gfx");
  if (target != "host" && !amdgpu) return fail_usage("unknown target '" + target + "' (known: host, gfx90a, gfx1100, ...)");
  if (code_object != "4" && code_object != "5") return fail_usage("--code-object takes 4 or 5");
  std::ifstream file(input, std::ios::binary);
  if (!file) {
    std::cerr << "xcuda: cannot open " << input << "\n";
    return 1;
  }
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  xcuda::ptx::CompileOptions options;
  options.target = amdgpu ? xcuda::ptx::Target::amdgpu : xcuda::ptx::Target::host;
  options.amdgpu_processor = target;
  options.code_object_version = code_object == "4" ? 4 : 5;
  options.file_name = input;
  options.ir_dump_prefix = ir_prefix;
  options.optimization_level = optimization_level;
  options.threads = threads;
  options.kernels = kernels;
  options.whole_warp_blocks = whole_warp_blocks;
  xcuda::ptx::CompileResult result =
      check_only ? xcuda::ptx::check_and_lower(text, options) : xcuda::ptx::compile(text, options);
  if (time_passes)
    for (const auto& [pass, seconds] : result.pass_times)
      std::cerr << std::fixed << std::setprecision(3) << std::setw(9) << seconds << " s  " << pass << "\n";
  for (const auto& diagnostic : result.diagnostics) std::cerr << diagnostic.to_string() << "\n";
  if (!result.ok()) return 1;
  if (check_only) return 0;
  if (output.empty()) output = std::filesystem::path(input).replace_extension(amdgpu ? ".hsaco" : ".o").string();
  std::ofstream out(output, std::ios::binary);
  out.write(reinterpret_cast<const char*>(result.object.data()),
            static_cast<std::streamsize>(result.object.size()));
  if (!out) {
    std::cerr << "xcuda: cannot write " << output << "\n";
    return 1;
  }
  for (const auto& kernel : result.module.kernels)
    std::cout << "kernel " << kernel.name << ": " << kernel.parameters.size() << " parameters, "
              << kernel.static_shared_bytes << " bytes static shared memory"
              << (kernel.whole_warps_only ? ", blocks of whole warps only" : "") << "\n";
  return 0;
}

}  // namespace
}  // namespace xcuda::cli

int main(int argc, char** argv) {
  using namespace xcuda::cli;
  if (argc < 2) return fail_usage("no command");
  std::string_view command = argv[1];
  auto is_help_option = [](std::string_view argument) { return argument == "--help" || argument == "-h"; };
  // `xcuda compile --help` too, but only right after the command, so that `xcuda run -- app
  // --help` reaches the application.
  if (command == "help" || is_help_option(command) || (argc > 2 && is_help_option(argv[2]))) {
    std::cout << usage;
    return 0;
  }
  if (command == "run") return run(argc - 2, argv + 2);
  if (command == "compile") return compile(argc - 2, argv + 2);
  if (command == "info") return info();
  if (command == "dump") return dump(argc - 2, argv + 2);
  if (command == "precompile") return precompile(argc - 2, argv + 2);
  return fail_usage("unknown command '" + std::string(command) + "'");
}
