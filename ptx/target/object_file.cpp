#include "target/object_file.h"

#include <memory>
#include <mutex>
#include <string>

#include <lld/Common/Driver.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

LLD_HAS_DRIVER(elf)

namespace xcuda::ptx {
namespace {

// A file that is removed when it goes out of scope: lld reads and writes only files.
class TemporaryFile {
 public:
  TemporaryFile(const char* suffix, std::error_code& error) {
    llvm::SmallString<128> path;
    if (!error) error = llvm::sys::fs::createTemporaryFile("xcuda-link", suffix, path);
    path_ = path.str().str();
  }
  ~TemporaryFile() {
    if (!path_.empty()) llvm::sys::fs::remove(path_);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

// lld keeps global state: one link at a time in the process.
std::mutex lld_mutex;

// The code generator's settings made so far (set_code_generation_option), as command-line
// options. lld's ELF driver resets every LLVM option to its default before it reads its -mllvm
// options, so each link hands them back as such: without them, every compile after a module's
// shares were linked, or after an AMDGPU code object, ran with LLVM's defaults (loop strength
// reduction among them) for the rest of the process. A compile that sets up its code generator on
// another thread in the moment between lld's reset and its reading them still sees the defaults.
std::mutex settings_mutex;
std::vector<std::string> settings;

// The instruction schedulers build a graph of a block's memory operations in which each may
// depend on every earlier one it could alias, in time that grows with the square of their number
// until it reaches LLVM's "huge region" size (1000), where the graph is cut. A warp's lanes as
// vectors make blocks of hundreds of loads and stores (a gather or scatter is 32 of each): at
// 1000, building those graphs took 1.19 of block_sum's 2.6 s of code generation in
// tests/cuda/whole_warps.cu; at 300, 0.11 s. At 300, every object of the nvcc corpus (host) and
// of whole_warps, mma_numerics and libcusparse (host, gfx90a, gfx1100) came out byte-identical.
// At 100, whole_warps' host code generation took 0.087 s instead of 0.100 (its warp atomics'
// blocks of dependent memory operations), its object changed by a few instructions, and no other
// object of the nvcc corpus's sm_80 and sm_90 modules, nor libcusparse's, changed.
void limit_scheduling_regions() {
  static std::once_flag done;
  std::call_once(done, [] { set_code_generation_option("dag-maps-huge-region", "100"); });
}

}  // namespace

void set_code_generation_option(std::string_view name, std::string_view value) {
  auto& options = llvm::cl::getRegisteredOptions();
  auto found = options.find(name);
  if (found == options.end()) return;
  found->second->addOccurrence(0, name, value);
  std::lock_guard lock(settings_mutex);
  settings.push_back("-" + std::string(name) + "=" + std::string(value));
}

std::vector<uint8_t> emit_object(llvm::Module& module, llvm::TargetMachine& target_machine, std::string_view target,
                                 DiagnosticSink& diagnostics, std::initializer_list<llvm::AnalysisID> passes_left_out) {
  // Every target that generates code has an LLVMTargetMachine.
  auto& machine = static_cast<llvm::LLVMTargetMachine&>(target_machine);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  limit_scheduling_regions();
  // What LLVMTargetMachine::addPassesToEmitFile does, with a place between making the pipeline's
  // configuration and filling it in, where passes can be left out of it for this target alone
  // (their command-line options would reach every target in the process).
  llvm::legacy::PassManager passes;
  auto* machine_code = new llvm::MachineModuleInfoWrapperPass(&machine);
  llvm::TargetPassConfig* configuration = machine.createPassConfig(passes);
  configuration->setDisableVerify(true);
  for (llvm::AnalysisID pass : passes_left_out) configuration->disablePass(pass);
  passes.add(configuration);
  passes.add(machine_code);
  const bool unsupported = configuration->addISelPasses();
  if (!unsupported) {
    configuration->addMachinePasses();
    configuration->setInitialized();
  }
  if (unsupported || machine.addAsmPrinter(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile, machine_code->getMMI().getContext())) {
    diagnostics.error(SourceLocation{0, 0}, "the " + std::string(target) + " target cannot emit object files");
    return {};
  }
  passes.add(llvm::createFreeMachineFunctionPass());
  passes.run(module);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

std::vector<uint8_t> link_objects(std::span<const std::vector<uint8_t>> objects, std::initializer_list<const char*> options,
                                  std::string_view what, DiagnosticSink& diagnostics) {
  std::error_code error;
  std::vector<std::unique_ptr<TemporaryFile>> inputs;
  for (const std::vector<uint8_t>& object : objects) {
    inputs.push_back(std::make_unique<TemporaryFile>(".o", error));
    if (error) break;
    llvm::raw_fd_ostream stream(inputs.back()->path(), error);
    if (!error) stream.write(reinterpret_cast<const char*>(object.data()), object.size());
  }
  TemporaryFile output(".o", error);
  if (error) {
    diagnostics.error(SourceLocation{0, 0}, "cannot write a temporary file to link " + std::string(what) + ": " + error.message());
    return {};
  }
  std::vector<const char*> arguments{"ld.lld"};
  arguments.insert(arguments.end(), options.begin(), options.end());
  std::lock_guard settings_lock(settings_mutex);
  for (const std::string& setting : settings) arguments.insert(arguments.end(), {"-mllvm", setting.c_str()});
  for (const auto& input : inputs) arguments.push_back(input->path());
  arguments.insert(arguments.end(), {"-o", output.path()});
  std::string messages;
  llvm::raw_string_ostream message_stream(messages);
  lld::Result result{};
  {
    std::lock_guard lock(lld_mutex);
    result = lld::lldMain(arguments, message_stream, message_stream, {{lld::Gnu, &lld::elf::link}});
  }
  if (result.retCode != 0) {
    diagnostics.error(SourceLocation{0, 0}, "internal compiler error: lld cannot link " + std::string(what) + ": " + messages);
    return {};
  }
  auto linked = llvm::MemoryBuffer::getFile(output.path());
  if (!linked) {
    diagnostics.error(SourceLocation{0, 0}, "cannot read the linked " + std::string(what) + ": " + linked.getError().message());
    return {};
  }
  return std::vector<uint8_t>((*linked)->getBufferStart(), (*linked)->getBufferEnd());
}

}  // namespace xcuda::ptx
