#include "runtime/interprocess_event.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace xcuda::runtime {
namespace {

struct HandleContents {
  char magic[8];
  int32_t process = 0;
  int32_t descriptor = 0;
  uint64_t inode = 0;
};
static_assert(sizeof(HandleContents) <= sizeof(IpcEventHandle));

constexpr char handle_magic[8] = {'x', 'c', 'u', 'd', 'a', 'I', 'P', 'E'};
constexpr size_t shared_bytes = sizeof(Event::SharedGenerations);

// The mapped generations, and in the exporting process the file behind them.
struct SharedEventMemory {
  Event::SharedGenerations* generations = nullptr;
  int descriptor = -1;

  SharedEventMemory() = default;
  SharedEventMemory(const SharedEventMemory&) = delete;
  SharedEventMemory& operator=(const SharedEventMemory&) = delete;
  ~SharedEventMemory() {
    if (generations) munmap(generations, shared_bytes);
    if (descriptor >= 0) close(descriptor);
  }
};

Error system_error(ErrorCode code, std::string_view what) {
  return make_error(code, fmt::format("{}: {}", what, std::strerror(errno)));
}

// Maps the generations in `descriptor`, a file at least `shared_bytes` long.
Expected<std::shared_ptr<SharedEventMemory>> map_generations(int descriptor) {
  void* mapped = mmap(nullptr, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
  if (mapped == MAP_FAILED) return system_error(ErrorCode::out_of_memory, "mapping an event");
  auto memory = std::make_shared<SharedEventMemory>();
  memory->generations = static_cast<Event::SharedGenerations*>(mapped);
  return memory;
}

}  // namespace

Status make_interprocess(Event& event) {
  int descriptor = memfd_create("xcuda-ipc-event", MFD_CLOEXEC);
  if (descriptor < 0) return system_error(ErrorCode::out_of_memory, "memfd_create");
  if (ftruncate(descriptor, shared_bytes) != 0) {
    close(descriptor);
    return system_error(ErrorCode::out_of_memory, "sizing an event's memory");
  }
  auto memory = map_generations(descriptor);
  if (!memory) {
    close(descriptor);
    return memory.error();
  }
  // A new file reads as zeros: no records, nothing reached, which is the generations' start.
  (*memory)->descriptor = descriptor;
  event.share((*memory)->generations, *memory);
  return {};
}

Expected<IpcEventHandle> export_ipc_event(const Event& event) {
  auto memory = std::static_pointer_cast<SharedEventMemory>(event.shared_memory());
  if (!memory || memory->descriptor < 0)
    return make_error(ErrorCode::invalid_handle,
                      "the event was not created with CU_EVENT_INTERPROCESS here");
  struct stat status {};
  if (fstat(memory->descriptor, &status) != 0) return system_error(ErrorCode::unknown, "fstat");
  HandleContents contents{};
  std::memcpy(contents.magic, handle_magic, sizeof handle_magic);
  contents.process = static_cast<int32_t>(getpid());
  contents.descriptor = memory->descriptor;
  contents.inode = status.st_ino;
  IpcEventHandle handle{};
  std::memcpy(handle.data(), &contents, sizeof contents);
  return handle;
}

Expected<Event*> open_ipc_event(const IpcEventHandle& handle, Context& context) {
  HandleContents contents;
  std::memcpy(&contents, handle.data(), sizeof contents);
  if (std::memcmp(contents.magic, handle_magic, sizeof handle_magic) != 0)
    return make_error(ErrorCode::invalid_value, "not an event handle from cuIpcGetEventHandle");
  if (contents.process == getpid())
    return make_error(ErrorCode::invalid_context,
                      "the handle comes from this process, which cannot open its own handles");
  std::string path = fmt::format("/proc/{}/fd/{}", contents.process, contents.descriptor);
  int descriptor = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (descriptor < 0)
    return system_error(ErrorCode::invalid_value,
                        fmt::format("opening {} (has the exporting process exited?)", path));
  struct stat status {};
  bool same = fstat(descriptor, &status) == 0 && status.st_ino == contents.inode &&
              static_cast<size_t>(status.st_size) >= shared_bytes;
  auto memory = same ? map_generations(descriptor)
                     : Expected<std::shared_ptr<SharedEventMemory>>(make_error(
                           ErrorCode::invalid_value,
                           fmt::format("{} is no longer the event the handle names", path)));
  close(descriptor);
  if (!memory) return memory.error();
  // Interprocess events never time.
  auto* event = new Event(context, false);
  event->share((*memory)->generations, *memory);
  return event;
}

}  // namespace xcuda::runtime
