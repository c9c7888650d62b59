#include "runtime/interprocess_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "runtime/backend.h"
#include "runtime/context.h"

namespace xcuda::runtime {
namespace {

// What the 64 bytes hold; the magic tells an xcuda handle from anything else.
struct HandleContents {
  char magic[8];
  int32_t process = 0;
  int32_t descriptor = 0;
  uint64_t inode = 0;
  uint64_t size = 0;          // of the allocation, what the importer's queries report
  uint64_t mapped_bytes = 0;  // of the file
  int32_t device = 0;
};
static_assert(sizeof(HandleContents) <= sizeof(IpcMemoryHandle));

constexpr char handle_magic[8] = {'x', 'c', 'u', 'd', 'a', 'I', 'P', 'M'};

}  // namespace

Expected<IpcMemoryHandle> export_ipc_memory(const Allocation& allocation) {
  if (allocation.kind != MemoryKind::device || !allocation.owned)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("{:#x} is not memory from cuMemAlloc", allocation.base));
  int device = allocation.context->device();
  // The pages move into a file: no queued work may touch them meanwhile.
  if (Status status = allocation.context->synchronize(); !status) return status.error();
  Expected<Backend::SharedMemory> shared =
      backend().share(device, reinterpret_cast<void*>(allocation.base));
  if (!shared) return shared.error();
  struct stat status {};
  if (fstat(shared->descriptor, &status) != 0)
    return make_error(ErrorCode::unknown, fmt::format("fstat: {}", std::strerror(errno)));
  HandleContents contents{};
  std::memcpy(contents.magic, handle_magic, sizeof handle_magic);
  contents.process = static_cast<int32_t>(getpid());
  contents.descriptor = shared->descriptor;
  contents.inode = status.st_ino;
  contents.size = allocation.size;
  contents.mapped_bytes = shared->size;
  contents.device = device;
  IpcMemoryHandle handle{};
  std::memcpy(handle.data(), &contents, sizeof contents);
  return handle;
}

Expected<uintptr_t> OpenedIpcMemory::open(const IpcMemoryHandle& handle, Context* context) {
  HandleContents contents;
  std::memcpy(&contents, handle.data(), sizeof contents);
  if (std::memcmp(contents.magic, handle_magic, sizeof handle_magic) != 0 ||
      contents.size > contents.mapped_bytes)
    return make_error(ErrorCode::invalid_value, "not a memory handle from cuIpcGetMemHandle");
  if (contents.process == getpid())
    return make_error(ErrorCode::invalid_context,
                      "the handle comes from this process, which cannot open its own handles");
  std::pair<int, uint64_t> source{contents.process, contents.inode};
  std::lock_guard lock(mutex_);
  for (auto& [address, opened] : opened_)
    if (opened.source == source) {
      ++opened.references;
      return address;
    }
  std::string path = fmt::format("/proc/{}/fd/{}", contents.process, contents.descriptor);
  int descriptor = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (descriptor < 0)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("opening {}: {} (has the exporting process exited?)", path,
                                  std::strerror(errno)));
  struct stat status {};
  bool same = fstat(descriptor, &status) == 0 && status.st_ino == contents.inode &&
              static_cast<uint64_t>(status.st_size) == contents.mapped_bytes;
  void* mapped = same ? mmap(nullptr, contents.mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                             descriptor, 0)
                      : MAP_FAILED;
  std::string reason = std::strerror(errno);
  ::close(descriptor);
  if (!same)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("{} is no longer the memory the handle names", path));
  if (mapped == MAP_FAILED)
    return make_error(ErrorCode::out_of_memory, fmt::format("mapping {}: {}", path, reason));
  uintptr_t address = reinterpret_cast<uintptr_t>(mapped);
  memory_registry().add(Allocation{address, contents.size, MemoryKind::device, context, false});
  opened_[address] = {source, contents.mapped_bytes, 1};
  return address;
}

Status OpenedIpcMemory::close(uintptr_t address) {
  std::lock_guard lock(mutex_);
  auto found = opened_.find(address);
  if (found == opened_.end())
    return make_error(ErrorCode::invalid_value,
                      fmt::format("{:#x} was not returned by cuIpcOpenMemHandle", address));
  if (--found->second.references) return {};
  memory_registry().remove(address);
  munmap(reinterpret_cast<void*>(address), found->second.mapped_bytes);
  opened_.erase(found);
  return {};
}

OpenedIpcMemory& opened_ipc_memory() {
  static auto& instance = *new OpenedIpcMemory;
  return instance;
}

}  // namespace xcuda::runtime
