#include "ptx_object_loader.h"

#include <stdexcept>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "host_abi.h"
#include "runtime/host/fiber.h"
#include "runtime/host/host_loader.h"

namespace xcuda::ptx::testing {
namespace {

using BlockFunction = void (*)(const uint8_t* parameters, const host_abi::BlockFrame* frame);

int record_vprintf(const char* format, const void* arguments) {
  PrintfCall call{format, std::vector<uint8_t>(64)};
  if (arguments != nullptr) std::memcpy(call.arguments.data(), arguments, call.arguments.size());
  LoadedModule::printed().push_back(std::move(call));
  return 0;
}

void ignore_assert_fail(const char*, const char*, uint32_t, const char*, uint64_t) {}

[[noreturn]] void abort_trap(const host_abi::BlockFrame*) { std::abort(); }

}  // namespace

struct LoadedModule::Jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

std::vector<PrintfCall>& LoadedModule::printed() {
  static std::vector<PrintfCall> calls;
  return calls;
}

namespace {

CompileOptions options_for(int optimization_level, unsigned threads) {
  CompileOptions options;
  options.file_name = "test.ptx";
  options.optimization_level = optimization_level;
  options.threads = threads;
  return options;
}

}  // namespace

LoadedModule::LoadedModule(std::string_view ptx, int optimization_level, unsigned threads)
    : LoadedModule(ptx, options_for(optimization_level, threads)) {}

LoadedModule::LoadedModule(std::string_view ptx, const CompileOptions& options) {
  result_ = compile(ptx, options);
  if (!result_.ok()) return;
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) throw std::runtime_error(llvm::toString(jit.takeError()));
  jit_ = std::make_unique<Jit>(Jit{std::move(*jit)});
  auto& library = jit_->jit->getMainJITDylib();
  llvm::orc::SymbolMap services;
  auto provide = [&](const char* name, auto* function) {
    services[jit_->jit->mangleAndIntern(name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(function), llvm::JITSymbolFlags::Exported);
  };
  provide(host_abi::vprintf_symbol, &record_vprintf);
  provide(host_abi::assert_fail_symbol, &ignore_assert_fail);
  provide(host_abi::trap_symbol, &abort_trap);
  provide(host_abi::fiber_run_block_symbol, &runtime::host::fiber_run_block);
  provide(host_abi::fiber_barrier_symbol, &runtime::host::fiber_barrier);
  provide(host_abi::fiber_warp_exchange_symbol, &runtime::host::fiber_warp_exchange);
  provide(host_abi::fiber_warp_peer_symbol, &runtime::host::fiber_warp_peer);
  provide(host_abi::fiber_warp_exchange_words_symbol, &runtime::host::fiber_warp_exchange_words);
  provide(host_abi::fiber_warp_peer_word_symbol, &runtime::host::fiber_warp_peer_word);
  provide(host_abi::fiber_mbarrier_symbol, &runtime::host::fiber_mbarrier);
  provide(host_abi::thread_stack_contains_symbol, &runtime::host::thread_stack_contains);
  for (const host_abi::Builtin& builtin : runtime::host::builtin_library()) provide(builtin.name, builtin.address);
  if (auto error = library.define(llvm::orc::absoluteSymbols(std::move(services))))
    throw std::runtime_error(llvm::toString(std::move(error)));
  std::string_view bytes(reinterpret_cast<const char*>(result_.object.data()), result_.object.size());
  if (auto error = jit_->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, "ptx-object")))
    throw std::runtime_error(llvm::toString(std::move(error)));
  ok_ = true;
}

LoadedModule::~LoadedModule() = default;

std::vector<std::pair<std::string, bool>> LoadedModule::symbols() const {
  std::string_view bytes(reinterpret_cast<const char*>(result_.object.data()), result_.object.size());
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "ptx-object"));
  if (!file) throw std::runtime_error(llvm::toString(file.takeError()));
  std::vector<std::pair<std::string, bool>> found;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!name || !flags) throw std::runtime_error("unreadable symbol in the object");
    if (!name->empty()) found.emplace_back(name->str(), !(*flags & llvm::object::SymbolRef::SF_Undefined));
  }
  return found;
}

std::string LoadedModule::diagnostics_text() const {
  std::string text;
  for (const auto& diagnostic : result_.diagnostics) text += diagnostic.to_string() + "\n";
  return text;
}

const KernelInfo& LoadedModule::kernel(std::string_view name) const {
  for (const auto& kernel : result_.module.kernels)
    if (kernel.name == name) return kernel;
  throw std::invalid_argument("no kernel " + std::string(name));
}

void* LoadedModule::global(std::string_view name) const {
  auto address = jit_->jit->lookup(name);
  if (!address) throw std::runtime_error(llvm::toString(address.takeError()));
  return address->toPtr<void*>();
}

void LoadedModule::launch(std::string_view kernel_name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                          const ParameterBuffer& parameters, uint32_t dynamic_shared_bytes) {
  const KernelInfo& kernel = this->kernel(kernel_name);
  auto function = reinterpret_cast<BlockFunction>(global(std::string(host_abi::block_symbol_prefix) + kernel.name));
  std::vector<uint8_t> shared((kernel.static_shared_bytes + 15) / 16 * 16 + dynamic_shared_bytes + 16);
  host_abi::BlockFrame frame{};
  for (int axis = 0; axis < 3; ++axis) {
    frame.block_dim[axis] = block[axis];
    frame.grid_dim[axis] = grid[axis];
  }
  frame.dynamic_shared_bytes = dynamic_shared_bytes;
  frame.shared_memory = shared.data();
  frame.sm_count = 1;
  const uint32_t environment[host_abi::environment_register_count] = {};
  frame.environment = environment;
  frame.parameters = parameters.data();
  frame.parameter_bytes = parameters.size();
  for (uint32_t z = 0; z < grid[2]; ++z)
    for (uint32_t y = 0; y < grid[1]; ++y)
      for (uint32_t x = 0; x < grid[0]; ++x) {
        frame.block_index[0] = x;
        frame.block_index[1] = y;
        frame.block_index[2] = z;
        function(parameters.data(), &frame);
      }
}

}  // namespace xcuda::ptx::testing
