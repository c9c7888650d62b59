// The host backend without the PTX compiler: kernels are plain C++ functions, or LLVM IR written
// here and compiled to an object in the test, so the queue, the worker pool and the loader can
// be checked on their own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include "ptx/compiler.h"
#include "ptx/host_abi.h"
#include "runtime/host/device_printf.h"
#include "runtime/host/host_backend.h"
#include "runtime/host/host_kernel.h"
#include "runtime/host/worker_pool.h"

namespace xcuda::runtime {
namespace {

using host::BlockFunction;
using host::HostKernel;
using ptx::host_abi::BlockFrame;

constexpr unsigned test_workers = 4;

std::unique_ptr<Backend> make_backend() {
  HostBackendOptions options;
  options.worker_count = test_workers;
  return make_host_backend(options);
}

template <class T>
std::vector<uint8_t> pack(const T& value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

template <class T>
T unpack(const uint8_t* parameters) {
  T value;
  std::memcpy(&value, parameters, sizeof(T));
  return value;
}

HostKernel make_kernel(BlockFunction function, uint32_t parameter_bytes,
                       uint32_t static_shared_bytes = 0) {
  ptx::KernelInfo info;
  info.name = "test_kernel";
  info.parameters.push_back({0, parameter_bytes, 8});
  info.parameter_buffer_size = parameter_bytes;
  info.static_shared_bytes = static_shared_bytes;
  return HostKernel(std::move(info), function);
}

LaunchShape shape_of(uint32_t grid_x, uint32_t grid_y = 1, uint32_t grid_z = 1,
                     uint32_t block_x = 1, uint32_t dynamic_shared_bytes = 0) {
  LaunchShape shape;
  shape.grid[0] = grid_x;
  shape.grid[1] = grid_y;
  shape.grid[2] = grid_z;
  shape.block[0] = block_x;
  shape.dynamic_shared_bytes = dynamic_shared_bytes;
  return shape;
}

uint64_t linear_block(const BlockFrame& frame) {
  return frame.block_index[0] +
         uint64_t{frame.grid_dim[0]} *
             (frame.block_index[1] + uint64_t{frame.grid_dim[1]} * frame.block_index[2]);
}

// ---------------------------------------------------------------------------------------------
// Device and memory

TEST(HostBackend, DescribesTheCpu) {
  auto backend = make_backend();
  EXPECT_EQ(backend->name(), "host");
  ASSERT_EQ(backend->device_count(), 1);
  const DeviceProperties& properties = backend->properties(0);
  EXPECT_EQ(properties.name.rfind("xcuda host: ", 0), 0u) << properties.name;
  EXPECT_GT(properties.total_memory, 0u);
  EXPECT_EQ(properties.multiprocessor_count, static_cast<int>(test_workers));
  EXPECT_EQ(properties.warp_size, 32);
  EXPECT_EQ(properties.max_threads_per_block, 1024);
  EXPECT_EQ(properties.shared_memory_per_block, 48 * 1024);
  EXPECT_TRUE(properties.integrated);
  EXPECT_EQ(properties.compute_major, 8);
  EXPECT_EQ(properties.compute_minor, 6);
  EXPECT_EQ(backend->compile_target(), ptx::Target::host);

  auto again = make_backend();
  EXPECT_EQ(std::memcmp(properties.uuid, again->properties(0).uuid, 16), 0)
      << "the UUID must be stable";
  uint8_t zeros[16] = {};
  EXPECT_NE(std::memcmp(properties.uuid, zeros, 16), 0);
}

TEST(HostBackend, AllocatesAlignedMemoryAndReleasesIt) {
  auto backend = make_backend();
  std::vector<void*> pointers;
  for (size_t bytes : {1, 3, 256, 1000, 1 << 20}) {
    Expected<void*> pointer = backend->allocate(0, bytes);
    ASSERT_TRUE(pointer.ok()) << pointer.error().message;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*pointer) % 256, 0u);
    std::memset(*pointer, 0xab, bytes);
    pointers.push_back(*pointer);
  }
  for (void* pointer : pointers) EXPECT_TRUE(backend->release(0, pointer).ok());
}

TEST(HostBackend, RefusesWhatItDidNotAllocate) {
  auto backend = make_backend();
  int local = 0;
  Status unknown = backend->release(0, &local);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::invalid_value);

  Expected<void*> pointer = backend->allocate(0, 64);
  ASSERT_TRUE(pointer.ok());
  EXPECT_TRUE(backend->release(0, *pointer).ok());
  Status twice = backend->release(0, *pointer);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::invalid_value);

  Expected<void*> empty = backend->allocate(0, 0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::invalid_value);
  Expected<void*> wrong_device = backend->allocate(1, 64);
  ASSERT_FALSE(wrong_device.ok());
  EXPECT_EQ(wrong_device.error().code, ErrorCode::invalid_value);
  EXPECT_EQ(backend->create_queue(1), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Queues

TEST(HostQueue, RunsCopiesAndFillsInOrder) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  constexpr size_t words = 64;
  constexpr int steps = 500;
  std::vector<uint32_t> scratch(words);
  std::vector<uint32_t> results(words * steps);
  for (int step = 0; step < steps; ++step) {
    // Each copy must see the fill just before it and no later one.
    queue->fill(scratch.data(), static_cast<uint32_t>(step), 4, words);
    queue->copy(results.data() + step * words, scratch.data(), words * sizeof(uint32_t));
  }
  ASSERT_TRUE(queue->synchronize().ok());
  for (int step = 0; step < steps; ++step)
    for (size_t word = 0; word < words; ++word)
      ASSERT_EQ(results[step * words + word], static_cast<uint32_t>(step)) << step;
}

TEST(HostQueue, FillsOneTwoAndFourBytePatterns) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  std::vector<uint8_t> bytes(37, 0), halves(38, 0), words(40, 0);
  queue->fill(bytes.data() + 1, 0x1234567a, 1, 35);
  queue->fill(halves.data() + 2, 0xbeefcafe, 2, 17);
  queue->fill(words.data() + 4, 0x01020304, 4, 8);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(bytes[0], 0);
  for (size_t i = 1; i < 36; ++i) EXPECT_EQ(bytes[i], 0x7a);
  EXPECT_EQ(bytes[36], 0);
  for (size_t i = 0; i < 17; ++i) {
    uint16_t value;
    std::memcpy(&value, halves.data() + 2 + 2 * i, 2);
    EXPECT_EQ(value, 0xcafe);
  }
  EXPECT_EQ(halves[36], 0);
  for (size_t i = 0; i < 8; ++i) {
    uint32_t value;
    std::memcpy(&value, words.data() + 4 + 4 * i, 4);
    EXPECT_EQ(value, 0x01020304u);
  }
  EXPECT_EQ(words[36], 0);
}

TEST(HostQueue, CopiesOverlappingRanges) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  std::vector<uint8_t> data{0, 1, 2, 3, 4, 5, 6, 7};
  queue->copy(data.data() + 2, data.data(), 6);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(data, (std::vector<uint8_t>{0, 1, 0, 1, 2, 3, 4, 5}));
}

struct Journal {
  std::mutex mutex;
  std::vector<int> entries;
};

struct JournalEntry {
  Journal* journal;
  int value;
};

void write_journal(void* data) {
  auto* entry = static_cast<JournalEntry*>(data);
  std::lock_guard lock(entry->journal->mutex);
  entry->journal->entries.push_back(entry->value);
}

TEST(HostQueue, RunsHostFunctionsInOrderWithOtherWork) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  Journal journal;
  std::vector<JournalEntry> entries;
  entries.reserve(100);
  uint32_t word = 0;
  std::vector<uint32_t> seen(100);
  for (int i = 0; i < 100; ++i) {
    entries.push_back({&journal, i});
    queue->host_function(write_journal, &entries.back());
    queue->fill(&word, static_cast<uint32_t>(i), 4, 1);
    queue->copy(&seen[i], &word, sizeof word);
  }
  ASSERT_TRUE(queue->synchronize().ok());
  std::vector<int> expected(100);
  for (int i = 0; i < 100; ++i) expected[i] = i;
  EXPECT_EQ(journal.entries, expected);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], static_cast<uint32_t>(i));
}

// A host function that holds its queue until the test lets it go.
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> passed{false};
};

void wait_at_gate(void* data) {
  auto* gate = static_cast<Gate*>(data);
  gate->open.wait(false);
  gate->passed = true;
}

TEST(HostQueue, ReportsWhetherItIsIdle) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  EXPECT_TRUE(queue->idle());
  Gate gate;
  queue->host_function(wait_at_gate, &gate);
  EXPECT_FALSE(queue->idle());
  gate.open = true;
  gate.open.notify_all();
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_TRUE(queue->idle());
  EXPECT_TRUE(gate.passed);
}

TEST(HostQueue, WaitsForAnotherQueue) {
  auto backend = make_backend();
  auto producer = backend->create_queue(0);
  auto consumer = backend->create_queue(0);
  Gate gate;
  constexpr size_t words = 1024;
  std::vector<uint32_t> source(words, 0), destination(words, 0);
  producer->host_function(wait_at_gate, &gate);
  producer->fill(source.data(), 42, 4, words);
  consumer->wait_for(*producer);
  consumer->copy(destination.data(), source.data(), words * sizeof(uint32_t));
  // Work the producer gets after the wait is not waited for.
  Gate later;
  producer->host_function(wait_at_gate, &later);

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(consumer->idle()) << "the consumer ran ahead of the producer";
  gate.open = true;
  gate.open.notify_all();
  ASSERT_TRUE(consumer->synchronize().ok());
  for (uint32_t value : destination) ASSERT_EQ(value, 42u);
  EXPECT_FALSE(producer->idle());
  later.open = true;
  later.open.notify_all();
  ASSERT_TRUE(producer->synchronize().ok());
}

TEST(HostQueue, WaitingForItselfChangesNothing) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  uint32_t word = 0;
  queue->fill(&word, 7, 4, 1);
  queue->wait_for(*queue);
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(word, 7u);
}

TEST(HostQueue, FinishesItsWorkWhenDestroyed) {
  auto backend = make_backend();
  uint32_t word = 0;
  {
    auto queue = backend->create_queue(0);
    Gate gate;
    queue->host_function(wait_at_gate, &gate);
    queue->fill(&word, 9, 4, 1);
    gate.open = true;
    gate.open.notify_all();
  }
  EXPECT_EQ(word, 9u);
}

// ---------------------------------------------------------------------------------------------
// Launches on the worker pool

struct CountParameters {
  std::atomic<uint32_t>* counts;
  std::atomic<uint32_t>* bad_frames;
};

void count_block(const uint8_t* parameters, const BlockFrame* frame) {
  auto counters = unpack<CountParameters>(parameters);
  bool good = frame->sm_index < frame->sm_count && frame->sm_count == test_workers &&
              frame->block_dim[0] == 32 && frame->block_dim[1] == 1 && frame->grid_id > 0 &&
              host::current_block_frame() == frame;
  for (int axis = 0; axis < 3; ++axis)
    good = good && frame->block_index[axis] < frame->grid_dim[axis];
  if (!good) counters.bad_frames->fetch_add(1);
  counters.counts[linear_block(*frame)].fetch_add(1);
}

TEST(WorkerPool, RunsEveryBlockExactlyOnce) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(count_block, sizeof(CountParameters));
  const uint32_t grids[][3] = {{1, 1, 1}, {7, 1, 1}, {1000, 1, 1}, {5, 4, 3}, {1, 1, 9}};
  for (const auto& grid : grids) {
    uint64_t blocks = uint64_t{grid[0]} * grid[1] * grid[2];
    std::vector<std::atomic<uint32_t>> counts(blocks);
    std::atomic<uint32_t> bad_frames{0};
    LaunchShape shape = shape_of(grid[0], grid[1], grid[2], 32);
    queue->launch(kernel, shape, pack(CountParameters{counts.data(), &bad_frames}));
    ASSERT_TRUE(queue->synchronize().ok());
    for (uint64_t block = 0; block < blocks; ++block)
      ASSERT_EQ(counts[block].load(), 1u) << "block " << block << " of " << blocks;
    EXPECT_EQ(bad_frames.load(), 0u);
  }
}

TEST(WorkerPool, RunsLaunchesFromSeveralQueues) {
  auto backend = make_backend();
  HostKernel kernel = make_kernel(count_block, sizeof(CountParameters));
  constexpr int queue_count = 3, launches = 20, blocks = 50;
  std::vector<std::unique_ptr<Queue>> queues;
  std::vector<std::atomic<uint32_t>> counts(blocks);
  std::atomic<uint32_t> bad_frames{0};
  for (int i = 0; i < queue_count; ++i) queues.push_back(backend->create_queue(0));
  for (int launch = 0; launch < launches; ++launch)
    for (auto& queue : queues)
      queue->launch(kernel, shape_of(blocks, 1, 1, 32),
                    pack(CountParameters{counts.data(), &bad_frames}));
  for (auto& queue : queues) ASSERT_TRUE(queue->synchronize().ok());
  for (auto& count : counts) EXPECT_EQ(count.load(), uint32_t{queue_count * launches});
  EXPECT_EQ(bad_frames.load(), 0u);
}

// Block b waits for block b - 1 to finish: it only completes if blocks start in order.
struct ChainParameters {
  std::atomic<uint32_t>* done;
};

void chained_block(const uint8_t* parameters, const BlockFrame* frame) {
  auto chain = unpack<ChainParameters>(parameters);
  uint32_t block = frame->block_index[0];
  if (block > 0)
    while (chain.done[block - 1].load(std::memory_order_acquire) == 0) std::this_thread::yield();
  chain.done[block].store(1, std::memory_order_release);
}

TEST(WorkerPool, StartsBlocksInIncreasingOrder) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(chained_block, sizeof(ChainParameters));
  constexpr uint32_t blocks = 300;
  std::vector<std::atomic<uint32_t>> done(blocks);
  queue->launch(kernel, shape_of(blocks), pack(ChainParameters{done.data()}));
  ASSERT_TRUE(queue->synchronize().ok());
  for (auto& flag : done) EXPECT_EQ(flag.load(), 1u);
}

struct SharedMemoryParameters {
  std::atomic<uint32_t>* failures;
};

constexpr uint32_t static_shared_bytes = 100;
constexpr uint32_t dynamic_shared_bytes = 5000;

// Each block fills its whole shared memory with its own index and checks nobody else wrote it.
void use_shared_memory(const uint8_t* parameters, const BlockFrame* frame) {
  auto shared = unpack<SharedMemoryParameters>(parameters);
  uint32_t bytes = 112 + frame->dynamic_shared_bytes;  // static part rounded up to 16
  auto value = static_cast<uint8_t>(frame->block_index[0]);
  if (frame->dynamic_shared_bytes != dynamic_shared_bytes ||
      reinterpret_cast<uintptr_t>(frame->shared_memory) % 16 != 0)
    shared.failures->fetch_add(1);
  std::memset(frame->shared_memory, value, bytes);
  std::this_thread::yield();
  for (uint32_t i = 0; i < bytes; ++i)
    if (frame->shared_memory[i] != value) {
      shared.failures->fetch_add(1);
      return;
    }
}

TEST(WorkerPool, GivesEachWorkerItsOwnSharedMemory) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel =
      make_kernel(use_shared_memory, sizeof(SharedMemoryParameters), static_shared_bytes);
  std::atomic<uint32_t> failures{0};
  queue->launch(kernel, shape_of(200, 1, 1, 64, dynamic_shared_bytes),
                pack(SharedMemoryParameters{&failures}));
  ASSERT_TRUE(queue->synchronize().ok());
  EXPECT_EQ(failures.load(), 0u);
}

TEST(WorkerPool, RejectsShapesAGpuWouldRefuse) {
  auto backend = make_backend();
  HostKernel kernel = make_kernel(count_block, sizeof(CountParameters));
  std::atomic<uint32_t> bad_frames{0};
  LaunchShape too_many_threads = shape_of(1, 1, 1, 2048);
  LaunchShape too_much_shared = shape_of(1, 1, 1, 32, 1 << 20);
  LaunchShape empty = shape_of(0);
  for (const LaunchShape& shape : {too_many_threads, too_much_shared, empty}) {
    auto queue = backend->create_queue(0);
    queue->launch(kernel, shape, pack(CountParameters{nullptr, &bad_frames}));
    Status status = queue->synchronize();
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::invalid_value);
  }
  auto queue = backend->create_queue(0);
  queue->launch(kernel, shape_of(1), {});
  Status status = queue->synchronize();
  ASSERT_FALSE(status.ok()) << "a parameter buffer shorter than the kernel's was accepted";
  EXPECT_EQ(status.error().code, ErrorCode::invalid_value);

  ptx::KernelInfo fixed_block = kernel.info();
  fixed_block.required_block[0] = 64;
  fixed_block.required_block[1] = fixed_block.required_block[2] = 1;
  HostKernel fixed(fixed_block, count_block);
  auto fixed_queue = backend->create_queue(0);
  fixed_queue->launch(fixed, shape_of(1, 1, 1, 32), pack(CountParameters{nullptr, &bad_frames}));
  Status mismatch = fixed_queue->synchronize();
  ASSERT_FALSE(mismatch.ok()) << "a block shape other than .reqntid was accepted";
  EXPECT_EQ(mismatch.error().code, ErrorCode::invalid_value);
}

TEST(WorkerPool, RunsOnTheLaunchingThreadAlone) {
  HostBackendOptions options;
  options.worker_count = 1;
  auto backend = make_host_backend(options);
  EXPECT_EQ(backend->properties(0).multiprocessor_count, 1);
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(chained_block, sizeof(ChainParameters));
  constexpr uint32_t blocks = 50;
  std::vector<std::atomic<uint32_t>> done(blocks);
  queue->launch(kernel, shape_of(blocks), pack(ChainParameters{done.data()}));
  ASSERT_TRUE(queue->synchronize().ok());
  for (auto& flag : done) EXPECT_EQ(flag.load(), 1u);
}

// Every block of the grid arrives and then waits until all have arrived, as grid.sync() does:
// only a grid whose blocks all run at once finishes. Each block also checks the words
// cooperative_groups reads: the workspace address in %envreg1:%envreg2 for a cooperative grid,
// and nothing in any other grid.
struct GridBarrierParameters {
  std::atomic<uint32_t>* arrived;
  std::atomic<uint32_t>* bad_environments;
  uint32_t blocks;
  bool cooperative;
};

void wait_for_whole_grid(const uint8_t* parameters, const BlockFrame* frame) {
  auto grid = unpack<GridBarrierParameters>(parameters);
  const uint32_t* environment = frame->environment;
  uint64_t address = uint64_t{environment[1]} << 32 | environment[2];
  bool good = grid.cooperative ? address != 0 : address == 0;
  if (address != 0) {
    const auto* workspace = reinterpret_cast<const ptx::host_abi::GridWorkspace*>(address);
    good = good && workspace->size == sizeof(ptx::host_abi::GridWorkspace);
  }
  for (uint32_t word = 0; word < ptx::host_abi::environment_register_count; ++word)
    good = good && (word == 1 || word == 2 || environment[word] == 0);
  if (!good) grid.bad_environments->fetch_add(1);
  if (!grid.cooperative) return;
  grid.arrived->fetch_add(1, std::memory_order_acq_rel);
  while (grid.arrived->load(std::memory_order_acquire) < grid.blocks) std::this_thread::yield();
}

TEST(WorkerPool, RunsEveryBlockOfACooperativeGridAtOnce) {
  auto backend = make_backend();
  std::vector<std::unique_ptr<Queue>> queues;
  for (int i = 0; i < 2; ++i) queues.push_back(backend->create_queue(0));
  HostKernel kernel = make_kernel(wait_for_whole_grid, sizeof(GridBarrierParameters));
  std::atomic<uint32_t> bad_environments{0};
  constexpr int launches = 10;
  std::vector<std::atomic<uint32_t>> arrived(2 * launches);
  // Two streams launch cooperative grids of every worker at once, with ordinary grids between:
  // the cooperative ones must take turns, not split the workers between them and wait forever.
  for (int launch = 0; launch < launches; ++launch)
    for (int index = 0; index < 2; ++index) {
      LaunchShape shape = shape_of(test_workers, 1, 1, 32);
      shape.cooperative = true;
      queues[index]->launch(kernel, shape,
                            pack(GridBarrierParameters{&arrived[2 * launch + index],
                                                       &bad_environments, test_workers, true}));
      queues[index]->launch(kernel, shape_of(3 * test_workers, 1, 1, 32),
                            pack(GridBarrierParameters{nullptr, &bad_environments, 0, false}));
    }
  for (auto& queue : queues) ASSERT_TRUE(queue->synchronize().ok());
  for (auto& count : arrived) EXPECT_EQ(count.load(), test_workers);
  EXPECT_EQ(bad_environments.load(), 0u);

  // More blocks than workers can never all run at once: refused, not left hanging.
  LaunchShape too_large = shape_of(test_workers + 1, 1, 1, 32);
  too_large.cooperative = true;
  std::atomic<uint32_t> never{0};
  queues[0]->launch(kernel, too_large,
                    pack(GridBarrierParameters{&never, &bad_environments, test_workers + 1, true}));
  Status status = queues[0]->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::launch_out_of_resources);
  EXPECT_EQ(never.load(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Failures inside kernels

struct FailureParameters {
  uint32_t failing_block;
  std::atomic<uint32_t>* started;
};

void trap_in_one_block(const uint8_t* parameters, const BlockFrame* frame) {
  auto failure = unpack<FailureParameters>(parameters);
  failure.started->fetch_add(1);
  if (frame->block_index[0] == failure.failing_block) host::device_trap(frame);
}

TEST(HostQueue, KeepsTheFirstErrorAndSkipsLaterWork) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(trap_in_one_block, sizeof(FailureParameters));
  std::atomic<uint32_t> started{0};
  constexpr uint32_t blocks = 100000;
  queue->launch(kernel, shape_of(blocks), pack(FailureParameters{3, &started}));
  uint32_t word = 0;
  queue->fill(&word, 5, 4, 1);
  queue->fill(&word, 6, 3, 1);  // an error of its own, which must not replace the first
  Journal journal;
  JournalEntry entry{&journal, 1};
  queue->host_function(write_journal, &entry);

  Status status = queue->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::launch_failed);
  EXPECT_NE(status.error().message.find("block [3,0,0]"), std::string::npos)
      << status.error().message;
  EXPECT_LT(started.load(), blocks) << "blocks kept starting after the trap";
  EXPECT_EQ(word, 0u) << "work after the failure ran";
  EXPECT_EQ(journal.entries, std::vector<int>{1}) << "host functions must still run";

  queue->fill(&word, 5, 4, 1);
  Status later = queue->synchronize();
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().code, ErrorCode::launch_failed);
  EXPECT_EQ(word, 0u);
  EXPECT_TRUE(queue->idle());
}

void assert_in_block_two(const uint8_t*, const BlockFrame* frame) {
  if (frame->block_index[0] == 2)
    host::device_assert_fail("value > 0", "kernel.cu", 17, "void check(int)", 1);
}

TEST(HostQueue, ReportsAFailedAssertion) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(assert_in_block_two, 0);
  testing::internal::CaptureStderr();
  queue->launch(kernel, shape_of(4), {});
  Status status = queue->synchronize();
  std::string printed = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::assertion_failed);
  EXPECT_NE(printed.find("kernel.cu:17: void check(int): block: [2,0,0] Assertion `value > 0` "
                         "failed.\n"),
            std::string::npos)
      << printed;
}

void write_through_wild_pointer(const uint8_t* parameters, const BlockFrame*) {
  auto* address = reinterpret_cast<volatile uint32_t*>(unpack<uintptr_t>(parameters));
  *address = 1;
}

TEST(HostQueue, TurnsAWildAccessIntoAnIllegalAddress) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(write_through_wild_pointer, sizeof(uintptr_t));
  queue->launch(kernel, shape_of(8), pack(uintptr_t{64}));
  Status status = queue->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::illegal_address);

  // The workers survive: a fresh queue runs kernels again.
  auto fresh = backend->create_queue(0);
  HostKernel counting = make_kernel(count_block, sizeof(CountParameters));
  std::vector<std::atomic<uint32_t>> counts(16);
  std::atomic<uint32_t> bad_frames{0};
  fresh->launch(counting, shape_of(16, 1, 1, 32),
                pack(CountParameters{counts.data(), &bad_frames}));
  ASSERT_TRUE(fresh->synchronize().ok());
  for (auto& count : counts) EXPECT_EQ(count.load(), 1u);
}

TEST(HostQueueDeathTest, LeavesFaultsOutsideKernelsFatal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto backend = make_backend();  // installs the fault handlers
  EXPECT_DEATH(std::raise(SIGSEGV), "");
  volatile uintptr_t wild = 64;
  EXPECT_DEATH(*reinterpret_cast<volatile int*>(wild) = 1, "");
}

// ---------------------------------------------------------------------------------------------
// Device printf

// CUDA's argument buffer: each value at its natural alignment, one after the other.
class ArgumentBuffer {
 public:
  template <class T>
  ArgumentBuffer& add(T value) {
    size_ = (size_ + alignof(T) - 1) / alignof(T) * alignof(T);
    std::memcpy(storage_ + size_, &value, sizeof(T));
    size_ += sizeof(T);
    return *this;
  }
  const void* data() const { return storage_; }

 private:
  alignas(8) unsigned char storage_[1024] = {};
  size_t size_ = 0;
};

template <class... Values>
std::string host_format(const char* format, Values... values) {
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer, format, values...);
  return buffer;
}

std::string device_format(const char* format, const ArgumentBuffer& arguments,
                          int* count = nullptr) {
  std::string output;
  int result = host::format_device_printf(format, arguments.data(), output);
  if (count) *count = result;
  return output;
}

TEST(DevicePrintf, FormatsIntegersLikeTheHost) {
  const char* format = "%d %i %u %x %X %o|%5d|%-5d|%05d|%+d|% d|%hd|%hhd|%hu|%hhx|%c";
  ArgumentBuffer arguments;
  arguments.add(-42).add(17).add(4000000000u).add(0xbeefu).add(0xcafeu).add(8u);
  arguments.add(12).add(12).add(12).add(12).add(12).add(70000).add(300).add(70000u).add(0x1ffu);
  arguments.add(int{'Q'});
  int count = 0;
  EXPECT_EQ(device_format(format, arguments, &count),
            host_format(format, -42, 17, 4000000000u, 0xbeefu, 0xcafeu, 8u, 12, 12, 12, 12, 12,
                        70000, 300, 70000u, 0x1ffu, 'Q'));
  EXPECT_EQ(count, 16);
}

TEST(DevicePrintf, FormatsEightByteIntegersAtTheirAlignment) {
  const char* format = "%d %ld %d %lld %llu %lx %zu %jd %td %d";
  ArgumentBuffer arguments;
  arguments.add(1).add(-5000000000L).add(2).add(-7LL).add(18446744073709551615ULL);
  arguments.add(0xdeadbeefcafeUL).add(size_t{123456789012}).add(intmax_t{-9}).add(ptrdiff_t{-3});
  arguments.add(3);
  EXPECT_EQ(device_format(format, arguments),
            host_format(format, 1, -5000000000L, 2, -7LL, 18446744073709551615ULL, 0xdeadbeefcafeUL,
                        size_t{123456789012}, intmax_t{-9}, ptrdiff_t{-3}, 3));
}

TEST(DevicePrintf, FormatsFloatingPointLikeTheHost) {
  const char* format = "%f %e %g %a %.3f|%10.2f|%-10.1e|%+g %#g %E %G %F %Lf";
  const double values[] = {3.14159265358979,
                           -1.5e-300,
                           1e20,
                           0.1,
                           2.0 / 3,
                           -7.25,
                           12345.678,
                           0.5,
                           1.0,
                           6.02e23,
                           1e-5,
                           std::numeric_limits<double>::infinity(),
                           2.5};
  ArgumentBuffer arguments;
  for (double value : values) arguments.add(value);
  EXPECT_EQ(device_format(format, arguments),
            host_format(format, values[0], values[1], values[2], values[3], values[4], values[5],
                        values[6], values[7], values[8], values[9], values[10], values[11],
                        static_cast<long double>(values[12])));
}

TEST(DevicePrintf, FormatsStringsPointersAndPercent) {
  const char* format = "%s|%.2s|%8s|%-8s|%p|100%%|%s";
  const char* word = "device";
  const char* null_string = nullptr;
  const void* pointer = reinterpret_cast<const void*>(uintptr_t{0x7f00deadbeef});
  ArgumentBuffer arguments;
  arguments.add(word).add(word).add("ab").add("cd").add(pointer).add(null_string);
  EXPECT_EQ(device_format(format, arguments),
            host_format("%s|%.2s|%8s|%-8s|%p|100%%|", word, word, "ab", "cd", pointer) + "(null)");
}

TEST(DevicePrintf, TakesWidthAndPrecisionFromArguments) {
  const char* format = "[%*d] [%.*f] [%*.*e] [%-*s]";
  ArgumentBuffer arguments;
  arguments.add(6).add(42).add(2).add(3.14159).add(12).add(3).add(-0.000123).add(5).add("x");
  int count = 0;
  EXPECT_EQ(device_format(format, arguments, &count),
            host_format(format, 6, 42, 2, 3.14159, 12, 3, -0.000123, 5, "x"));
  EXPECT_EQ(count, 9);
}

TEST(DevicePrintf, CountsArgumentsAsCudaDoes) {
  ArgumentBuffer none;
  int count = -5;
  EXPECT_EQ(device_format("no conversions\n", none, &count), "no conversions\n");
  EXPECT_EQ(count, 0);
  std::string output;
  EXPECT_EQ(host::format_device_printf(nullptr, none.data(), output), -1);
  EXPECT_EQ(host::format_device_printf("plain %%\n", nullptr, output), 0);
  EXPECT_EQ(output, "plain %\n");
}

TEST(DevicePrintf, CopiesWhatItCannotFormat) {
  ArgumentBuffer arguments;
  arguments.add(1);
  EXPECT_EQ(device_format("%y %d %", arguments), "%y 1 %");
  std::string output;
  host::format_device_printf("%d and %s", nullptr, output);
  EXPECT_EQ(output, "%d and %s");
}

TEST(DevicePrintf, StopsAfterThirtyTwoArguments) {
  ArgumentBuffer arguments;
  std::string format, expected;
  for (int i = 0; i < 34; ++i) {
    arguments.add(i);
    format += "%d,";
    expected += i < 32 ? std::to_string(i) + "," : std::string("%d,");
  }
  int count = 0;
  EXPECT_EQ(device_format(format.c_str(), arguments, &count), expected);
  EXPECT_EQ(count, 32);
}

void print_block_index(const uint8_t*, const BlockFrame* frame) {
  ArgumentBuffer arguments;
  arguments.add(frame->block_index[0]);
  host::device_vprintf("block %u\n", arguments.data());
}

TEST(DevicePrintf, ReachesStdoutWhenTheLaunchEnds) {
  auto backend = make_backend();
  auto queue = backend->create_queue(0);
  HostKernel kernel = make_kernel(print_block_index, 0);
  testing::internal::CaptureStdout();
  queue->launch(kernel, shape_of(3), {});
  ASSERT_TRUE(queue->synchronize().ok());
  std::string printed = testing::internal::GetCapturedStdout();
  for (const char* line : {"block 0\n", "block 1\n", "block 2\n"})
    EXPECT_NE(printed.find(line), std::string::npos) << printed;
  EXPECT_EQ(printed.size(), 24u) << printed;
}

// ---------------------------------------------------------------------------------------------
// Loading objects with ORC

// Stores 100 + its block index into out[block], counts blocks in a global, prints, and clears
// `clear_bytes` bytes after the output with the C library's memset, which the loader must find
// in the process.
constexpr const char* test_module_ir = R"(
%frame = type { [3 x i32], [3 x i32], [3 x i32], i32, ptr, i32, i32, i64 }

@xcuda_blocks_run = global i32 0, align 4
@format = private constant [12 x i8] c"block %u Q\0A\00"

declare i32 @__xcuda_vprintf(ptr, ptr)
declare void @__xcuda_trap(ptr)
declare ptr @memset(ptr, i32, i64)

define void @__xcuda_block_record(ptr %parameters, ptr %frame) {
  %out = load ptr, ptr %parameters, align 8
  %clear_at = getelementptr i8, ptr %parameters, i64 8
  %clear_bytes = load i64, ptr %clear_at, align 8
  %index_at = getelementptr %frame, ptr %frame, i32 0, i32 2, i32 0
  %index = load i32, ptr %index_at, align 4
  %slot = getelementptr i32, ptr %out, i32 %index
  %value = add i32 %index, 100
  store i32 %value, ptr %slot, align 4
  %old = atomicrmw add ptr @xcuda_blocks_run, i32 1 seq_cst
  %arguments = alloca i32, align 4
  store i32 %index, ptr %arguments, align 4
  %printed = call i32 @__xcuda_vprintf(ptr @format, ptr %arguments)
  %is_first = icmp eq i32 %index, 0
  br i1 %is_first, label %clear, label %done
clear:
  %grid_at = getelementptr %frame, ptr %frame, i32 0, i32 1, i32 0
  %grid = load i32, ptr %grid_at, align 4
  %tail = getelementptr i32, ptr %out, i32 %grid
  %ignored = call ptr @memset(ptr %tail, i32 0, i64 %clear_bytes)
  br label %done
done:
  ret void
}

define void @__xcuda_block_trap(ptr %parameters, ptr %frame) {
  call void @__xcuda_trap(ptr %frame)
  unreachable
}
)";

// Compiles LLVM IR to a relocatable object for this machine, as the PTX compiler would.
std::vector<uint8_t> compile_ir(const char* ir) {
  static const bool ready = [] {
    return !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter();
  }();
  EXPECT_TRUE(ready);
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, diagnostic, context);
  if (!module) {
    ADD_FAILURE() << diagnostic.getMessage().str() << " at line " << diagnostic.getLineNo();
    return {};
  }
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    ADD_FAILURE() << error;
    return {};
  }
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    ADD_FAILURE() << "this machine cannot emit an object file";
    return {};
  }
  passes.run(*module);
  return std::vector<uint8_t>(object.begin(), object.end());
}

ptx::CompileResult test_module() {
  ptx::CompileResult compiled;
  compiled.object = compile_ir(test_module_ir);
  for (const char* name : {"record", "trap"}) {
    ptx::KernelInfo kernel;
    kernel.name = name;
    kernel.parameters = {{0, 8, 8}, {8, 8, 8}};
    kernel.parameter_buffer_size = 16;
    compiled.module.kernels.push_back(kernel);
  }
  compiled.module.globals.push_back({"xcuda_blocks_run", 4, false});
  return compiled;
}

struct RecordParameters {
  uint32_t* out;
  uint64_t clear_bytes;
};

TEST(HostLoader, LoadsAndRunsAnObject) {
  auto backend = make_backend();
  Expected<std::unique_ptr<LoadedModule>> module = backend->load_module(0, test_module());
  ASSERT_TRUE(module.ok()) << module.error().message;
  Expected<LoadedKernel*> kernel = (*module)->kernel("record");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ((*kernel)->info().parameter_buffer_size, 16u);
  Expected<void*> blocks_run = (*module)->global("xcuda_blocks_run");
  ASSERT_TRUE(blocks_run.ok()) << blocks_run.error().message;

  constexpr uint32_t blocks = 10;
  std::vector<uint32_t> out(blocks + 4, 0xffffffff);
  auto queue = backend->create_queue(0);
  testing::internal::CaptureStdout();
  queue->launch(**kernel, shape_of(blocks),
                pack(RecordParameters{out.data(), 4 * sizeof(uint32_t)}));
  Status status = queue->synchronize();
  std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(status.ok()) << status.error().message;
  for (uint32_t block = 0; block < blocks; ++block) EXPECT_EQ(out[block], 100 + block);
  for (uint32_t tail = blocks; tail < blocks + 4; ++tail) EXPECT_EQ(out[tail], 0u);
  EXPECT_EQ(*static_cast<uint32_t*>(*blocks_run), blocks);
  EXPECT_NE(printed.find("block 9 Q\n"), std::string::npos) << printed;

  Expected<LoadedKernel*> missing = (*module)->kernel("absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  Expected<void*> missing_global = (*module)->global("absent");
  ASSERT_FALSE(missing_global.ok());
  EXPECT_EQ(missing_global.error().code, ErrorCode::not_found);
}

TEST(HostLoader, GivesEachModuleItsOwnGlobals) {
  auto backend = make_backend();
  auto first = backend->load_module(0, test_module());
  auto second = backend->load_module(0, test_module());
  ASSERT_TRUE(first.ok() && second.ok());
  auto first_global = (*first)->global("xcuda_blocks_run");
  auto second_global = (*second)->global("xcuda_blocks_run");
  ASSERT_TRUE(first_global.ok() && second_global.ok());
  EXPECT_NE(*first_global, *second_global);

  // Unloading one leaves the other working.
  first->reset();
  auto kernel = (*second)->kernel("record");
  ASSERT_TRUE(kernel.ok());
  std::vector<uint32_t> out(2);
  auto queue = backend->create_queue(0);
  testing::internal::CaptureStdout();
  queue->launch(**kernel, shape_of(2), pack(RecordParameters{out.data(), 0}));
  ASSERT_TRUE(queue->synchronize().ok());
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, (std::vector<uint32_t>{100, 101}));
  EXPECT_EQ(*static_cast<uint32_t*>(*second_global), 2u);
}

TEST(HostLoader, ReportsATrapFromGeneratedCode) {
  auto backend = make_backend();
  auto module = backend->load_module(0, test_module());
  ASSERT_TRUE(module.ok()) << module.error().message;
  auto kernel = (*module)->kernel("trap");
  ASSERT_TRUE(kernel.ok());
  auto queue = backend->create_queue(0);
  queue->launch(**kernel, shape_of(5), pack(RecordParameters{nullptr, 0}));
  Status status = queue->synchronize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::launch_failed);
}

TEST(HostLoader, RefusesBrokenObjects) {
  auto backend = make_backend();
  ptx::CompileResult garbage;
  garbage.object = {0x7f, 'E', 'L', 'F', 1, 2, 3};
  auto loaded = backend->load_module(0, std::move(garbage));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_image);

  ptx::CompileResult no_such_kernel = test_module();
  no_such_kernel.module.kernels[0].name = "not_in_the_object";
  loaded = backend->load_module(0, std::move(no_such_kernel));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_image);

  ptx::CompileResult unresolved;
  unresolved.object = compile_ir(R"(
declare void @xcuda_no_such_function()
define void @__xcuda_block_k(ptr %parameters, ptr %frame) {
  call void @xcuda_no_such_function()
  ret void
}
)");
  ptx::KernelInfo kernel;
  kernel.name = "k";
  unresolved.module.kernels.push_back(kernel);
  loaded = backend->load_module(0, std::move(unresolved));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_image);
  EXPECT_NE(loaded.error().message.find("xcuda_no_such_function"), std::string::npos)
      << loaded.error().message;

  ptx::CompileResult diagnosed;
  diagnosed.diagnostics.push_back({"kernel.ptx", 3, 7, "unknown instruction"});
  loaded = backend->load_module(0, std::move(diagnosed));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::invalid_ptx);
}

// ---------------------------------------------------------------------------------------------
// Real PTX through the compiler

constexpr const char* vector_add_ptx = R"(
.version 7.5
.target sm_75
.address_size 64

.visible .entry vector_add(
    .param .u64 vector_add_param_a,
    .param .u64 vector_add_param_b,
    .param .u64 vector_add_param_c,
    .param .u32 vector_add_param_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<11>;

    ld.param.u64 %rd1, [vector_add_param_a];
    ld.param.u64 %rd2, [vector_add_param_b];
    ld.param.u64 %rd3, [vector_add_param_c];
    ld.param.u32 %r1, [vector_add_param_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd9];
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd10], %f3;
DONE:
    ret;
}
)";

TEST(HostBackendWithCompiler, RunsAVectorAddWrittenInPtx) {
  ptx::CompileOptions options;
  options.file_name = "vector_add.ptx";
  ptx::CompileResult compiled = ptx::compile(vector_add_ptx, options);
  for (const ptx::Diagnostic& diagnostic : compiled.diagnostics)
    ADD_FAILURE() << diagnostic.to_string();
  ASSERT_TRUE(compiled.ok());
  ASSERT_EQ(compiled.module.kernels.size(), 1u);
  const ptx::KernelInfo info = compiled.module.kernels[0];
  ASSERT_EQ(info.parameters.size(), 4u);

  auto backend = make_backend();
  auto module = backend->load_module(0, std::move(compiled));
  ASSERT_TRUE(module.ok()) << module.error().message;
  auto kernel = (*module)->kernel("vector_add");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;

  constexpr uint32_t count = 1000;
  auto a = static_cast<float*>(*backend->allocate(0, count * sizeof(float)));
  auto b = static_cast<float*>(*backend->allocate(0, count * sizeof(float)));
  auto c = static_cast<float*>(*backend->allocate(0, (count + 1) * sizeof(float)));
  for (uint32_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = 1000.0f - static_cast<float>(i);
  }
  c[count] = -1.0f;

  std::vector<uint8_t> parameters(info.parameter_buffer_size);
  auto place = [&](size_t index, const auto& value) {
    ASSERT_EQ(info.parameters[index].size, sizeof(value));
    std::memcpy(parameters.data() + info.parameters[index].offset, &value, sizeof(value));
  };
  place(0, a);
  place(1, b);
  place(2, c);
  place(3, count);

  auto queue = backend->create_queue(0);
  queue->launch(**kernel, shape_of((count + 127) / 128, 1, 1, 128), std::move(parameters));
  Status status = queue->synchronize();
  ASSERT_TRUE(status.ok()) << status.error().message;
  for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  EXPECT_EQ(c[count], -1.0f) << "a thread past n wrote";
  for (void* pointer : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c)})
    EXPECT_TRUE(backend->release(0, pointer).ok());
}

// Each block of 256 threads sums its thread indices in shared memory, and thread 0 prints the
// sum: the compiler's shared-memory layout and vprintf argument buffer meet the runtime's here.
constexpr const char* reduce_and_print_ptx = R"(
.version 7.5
.target sm_75
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf
(
    .param .b64 vprintf_param_0,
    .param .b64 vprintf_param_1
);
// "block %d sum %d %f\n"
.global .align 1 .b8 fmt[20] = {98, 108, 111, 99, 107, 32, 37, 100, 32, 115,
                                117, 109, 32, 37, 100, 32, 37, 102, 10, 0};
.shared .align 4 .b8 partial[1024];

.visible .entry reduce(.param .u64 out)
{
    .local .align 8 .b8 buffer[16];
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    .reg .f64 %fd<2>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, partial;
    shl.b32 %r4, %r1, 2;
    add.s32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r1;
    bar.sync 0;
    mov.u32 %r6, 128;
LOOP:
    setp.ge.u32 %p1, %r1, %r6;
    @%p1 bra SKIP;
    shl.b32 %r7, %r6, 2;
    add.s32 %r8, %r5, %r7;
    ld.shared.u32 %r9, [%r8];
    ld.shared.u32 %r10, [%r5];
    add.s32 %r10, %r10, %r9;
    st.shared.u32 [%r5], %r10;
SKIP:
    bar.sync 0;
    shr.u32 %r6, %r6, 1;
    setp.ne.u32 %p2, %r6, 0;
    @%p2 bra LOOP;
    setp.ne.u32 %p3, %r1, 0;
    @%p3 bra DONE;
    ld.shared.u32 %r11, [partial];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r11;
    mov.u64 %rd4, buffer;
    cvta.local.u64 %rd5, %rd4;
    st.local.u32 [%rd4], %r2;
    st.local.u32 [%rd4+4], %r11;
    cvt.rn.f64.u32 %fd1, %r11;
    st.local.f64 [%rd4+8], %fd1;
    mov.u64 %rd6, fmt;
    cvta.global.u64 %rd7, %rd6;
    {
    .reg .b32 temp_param_reg;
    .param .b64 param0;
    st.param.b64 [param0], %rd7;
    .param .b64 param1;
    st.param.b64 [param1], %rd5;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r0, [retval0];
    }
DONE:
    ret;
}
)";

TEST(HostBackendWithCompiler, RunsASharedMemoryReductionThatPrints) {
  ptx::CompileOptions options;
  options.file_name = "reduce.ptx";
  ptx::CompileResult compiled = ptx::compile(reduce_and_print_ptx, options);
  for (const ptx::Diagnostic& diagnostic : compiled.diagnostics)
    ADD_FAILURE() << diagnostic.to_string();
  ASSERT_TRUE(compiled.ok());
  EXPECT_EQ(compiled.module.kernels.at(0).static_shared_bytes, 1024u);

  auto backend = make_backend();
  auto module = backend->load_module(0, std::move(compiled));
  ASSERT_TRUE(module.ok()) << module.error().message;
  auto kernel = (*module)->kernel("reduce");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;

  constexpr uint32_t blocks = 4;
  std::vector<uint32_t> sums(blocks);
  auto queue = backend->create_queue(0);
  testing::internal::CaptureStdout();
  queue->launch(**kernel, shape_of(blocks, 1, 1, 256), pack(sums.data()));
  Status status = queue->synchronize();
  std::string printed = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(status.ok()) << status.error().message;
  for (uint32_t block = 0; block < blocks; ++block) {
    EXPECT_EQ(sums[block], 255u * 256 / 2);
    std::string line = "block " + std::to_string(block) + " sum 32640 32640.000000\n";
    EXPECT_NE(printed.find(line), std::string::npos) << printed;
  }
}

}  // namespace
}  // namespace xcuda::runtime
