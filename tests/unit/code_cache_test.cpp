// The code cache's entry format and directory, with the damage a disk, a crash or a user can
// do: every truncation, every single-byte change, foreign files, and eviction order.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/cache_format.h"
#include "runtime/code_cache.h"
#include "runtime/module.h"
#include "runtime/tier_up.h"

namespace xcuda::runtime {
namespace {

namespace fs = std::filesystem;

// The process-wide cache reads XCUDA_CACHE_DIR once, on first use; point it away from the
// user's home before any test runs.
const fs::path process_cache_directory = [] {
  fs::path directory = fs::temp_directory_path() / ("xcuda-code-cache-test-" + std::to_string(getpid()));
  setenv("XCUDA_CACHE_DIR", directory.c_str(), 1);
  setenv("XCUDA_CACHE", "1", 1);
  return directory;
}();

ptx::CompileResult sample_result() {
  ptx::CompileResult result;
  result.object = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 42, 0, 0xff};
  ptx::KernelInfo first;
  first.name = "scale";
  first.parameters = {{0, 8, 8}, {8, 4, 4}};
  first.parameter_buffer_size = 16;
  first.static_shared_bytes = 1024;
  first.local_bytes_per_thread = 32;
  first.max_threads_per_block = 256;
  first.required_block[0] = 64;
  first.required_block[1] = 2;
  first.required_block[2] = 1;
  first.host_stack_bytes_per_thread = 12;
  ptx::KernelInfo second;
  second.name = "empty";
  result.module.kernels = {first, second};
  result.module.globals = {{"table", 400, true}, {"counter", 4, false}};
  return result;
}

void expect_same(const ptx::CompileResult& actual, const ptx::CompileResult& expected) {
  EXPECT_EQ(actual.object, expected.object);
  ASSERT_EQ(actual.module.kernels.size(), expected.module.kernels.size());
  for (size_t index = 0; index < expected.module.kernels.size(); ++index) {
    const ptx::KernelInfo& a = actual.module.kernels[index];
    const ptx::KernelInfo& e = expected.module.kernels[index];
    EXPECT_EQ(a.name, e.name);
    ASSERT_EQ(a.parameters.size(), e.parameters.size());
    for (size_t parameter = 0; parameter < e.parameters.size(); ++parameter) {
      EXPECT_EQ(a.parameters[parameter].offset, e.parameters[parameter].offset);
      EXPECT_EQ(a.parameters[parameter].size, e.parameters[parameter].size);
      EXPECT_EQ(a.parameters[parameter].alignment, e.parameters[parameter].alignment);
    }
    EXPECT_EQ(a.parameter_buffer_size, e.parameter_buffer_size);
    EXPECT_EQ(a.static_shared_bytes, e.static_shared_bytes);
    EXPECT_EQ(a.local_bytes_per_thread, e.local_bytes_per_thread);
    EXPECT_EQ(a.max_threads_per_block, e.max_threads_per_block);
    for (int axis = 0; axis < 3; ++axis) EXPECT_EQ(a.required_block[axis], e.required_block[axis]);
    EXPECT_EQ(a.host_stack_bytes_per_thread, e.host_stack_bytes_per_thread);
  }
  ASSERT_EQ(actual.module.globals.size(), expected.module.globals.size());
  for (size_t index = 0; index < expected.module.globals.size(); ++index) {
    EXPECT_EQ(actual.module.globals[index].name, expected.module.globals[index].name);
    EXPECT_EQ(actual.module.globals[index].size, expected.module.globals[index].size);
    EXPECT_EQ(actual.module.globals[index].is_constant, expected.module.globals[index].is_constant);
  }
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

const std::string key_a(64, 'a');

TEST(CacheFormat, RoundTripKeepsEveryField) {
  auto parsed = parse_entry(serialize_entry(key_a, sample_result()), key_a);
  ASSERT_TRUE(parsed) << parsed.error().message;
  expect_same(*parsed, sample_result());
}

TEST(CacheFormat, HeaderIsLaidOutAsDocumented) {
  std::vector<uint8_t> entry = serialize_entry(key_a, sample_result());
  ASSERT_GT(entry.size(), entry_header_bytes);
  EXPECT_EQ(std::string(entry.begin(), entry.begin() + 8), std::string("XCUDACC\0", 8));
  EXPECT_EQ(entry[8], entry_format_version);
  uint64_t payload = 0;
  for (int index = 0; index < 8; ++index) payload |= uint64_t(entry[16 + index]) << (8 * index);
  EXPECT_EQ(payload, entry.size() - entry_header_bytes);
}

TEST(CacheFormat, EveryTruncationIsRefused) {
  std::vector<uint8_t> entry = serialize_entry(key_a, sample_result());
  for (size_t length = 0; length < entry.size(); ++length)
    EXPECT_FALSE(parse_entry(std::span(entry).first(length), key_a)) << "length " << length;
}

TEST(CacheFormat, EverySingleByteChangeIsRefused) {
  const std::vector<uint8_t> entry = serialize_entry(key_a, sample_result());
  for (size_t offset = 0; offset < entry.size(); ++offset) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> damaged = entry;
      damaged[offset] ^= mask;
      EXPECT_FALSE(parse_entry(damaged, key_a)) << "offset " << offset << " mask " << int(mask);
    }
  }
}

TEST(CacheFormat, TrailingBytesAreRefused) {
  std::vector<uint8_t> entry = serialize_entry(key_a, sample_result());
  entry.push_back(0);
  EXPECT_FALSE(parse_entry(entry, key_a));
}

TEST(CacheFormat, EntryOfAnotherKeyIsRefused) {
  auto parsed = parse_entry(serialize_entry(key_a, sample_result()), std::string(64, 'b'));
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("another key"), std::string::npos);
}

TEST(CacheFormat, GarbageIsRefused) {
  std::vector<uint8_t> garbage(4096);
  uint32_t state = 12345;
  for (uint8_t& byte : garbage) byte = uint8_t((state = state * 1103515245 + 12345) >> 16);
  EXPECT_FALSE(parse_entry(garbage, key_a));
  // Garbage behind a valid header prefix still fails on size or checksum.
  std::vector<uint8_t> entry = serialize_entry(key_a, sample_result());
  std::copy(entry.begin(), entry.begin() + 24, garbage.begin());
  EXPECT_FALSE(parse_entry(garbage, key_a));
}

class CodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("xcuda-cache-" + std::to_string(getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  fs::path directory_;
};

TEST_F(CodeCacheTest, StoredEntryIsFound) {
  CodeCache cache(directory_, 1 << 20);
  EXPECT_FALSE(cache.find(key_a));
  cache.store(key_a, sample_result());
  auto found = cache.find(key_a);
  ASSERT_TRUE(found);
  expect_same(*found, sample_result());
  EXPECT_EQ(cache.usage().entries, 1u);
  EXPECT_EQ(cache.usage().bytes, fs::file_size(cache.entry_path(key_a)));
}

TEST_F(CodeCacheTest, DamagedFilesAreMissesAndStoreReplacesThem) {
  CodeCache cache(directory_, 1 << 20);
  cache.store(key_a, sample_result());
  const std::vector<uint8_t> good = read_bytes(cache.entry_path(key_a));
  std::vector<std::pair<std::string, std::vector<uint8_t>>> damage = {
      {"empty", {}},
      {"truncated header", {good.begin(), good.begin() + 20}},
      {"truncated payload", {good.begin(), good.end() - 1}},
      {"garbage", std::vector<uint8_t>(good.size(), 0x5a)},
  };
  for (size_t offset : {size_t{0}, size_t{9}, size_t{17}, size_t{30}, good.size() - 3}) {
    std::vector<uint8_t> flipped = good;
    flipped[offset] ^= 0x10;
    damage.emplace_back("byte " + std::to_string(offset) + " flipped", flipped);
  }
  for (const auto& [what, bytes] : damage) {
    write_bytes(cache.entry_path(key_a), bytes);
    EXPECT_FALSE(cache.find(key_a)) << what;
    cache.store(key_a, sample_result());
    auto found = cache.find(key_a);
    ASSERT_TRUE(found) << what;
    expect_same(*found, sample_result());
  }
}

TEST_F(CodeCacheTest, EvictsLeastRecentlyUsed) {
  std::vector<uint8_t> one_entry = serialize_entry(key_a, sample_result());
  // Room for two entries, not three.
  CodeCache cache(directory_, one_entry.size() * 2 + one_entry.size() / 2);
  const std::string key_b(64, 'b'), key_c(64, 'c');
  cache.store(key_a, sample_result());
  cache.store(key_b, sample_result());
  // Make the order unambiguous whatever the file system's time resolution: b older than a.
  auto now = fs::file_time_type::clock::now();
  fs::last_write_time(cache.entry_path(key_a), now - std::chrono::hours(2));
  fs::last_write_time(cache.entry_path(key_b), now - std::chrono::hours(1));
  ASSERT_TRUE(cache.find(key_a));  // a use makes a the most recent
  cache.store(key_c, sample_result());
  EXPECT_TRUE(fs::exists(cache.entry_path(key_a)));
  EXPECT_FALSE(fs::exists(cache.entry_path(key_b)));
  EXPECT_TRUE(fs::exists(cache.entry_path(key_c)));
  EXPECT_EQ(cache.usage().entries, 2u);
}

TEST_F(CodeCacheTest, AbandonedTemporaryFilesAreRemoved) {
  CodeCache cache(directory_, 1 << 20);
  fs::create_directories(directory_);
  fs::path abandoned = directory_ / "dead.123.0.tmp";
  write_bytes(abandoned, {1, 2, 3});
  fs::last_write_time(abandoned, fs::file_time_type::clock::now() - std::chrono::hours(1));
  cache.store(key_a, sample_result());
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_EQ(cache.usage().entries, 1u);
}

TEST(CacheKey, DependsOnTextAndOptions) {
  ptx::CompileOptions options;
  std::string key = CodeCache::key(".version 8.0", options);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, CodeCache::key(".version 8.0", options));
  EXPECT_NE(key, CodeCache::key(".version 8.1", options));
  ptx::CompileOptions other = options;
  other.optimization_level = 0;
  EXPECT_NE(key, CodeCache::key(".version 8.0", other));
  // The name in diagnostics does not change the code, so the same PTX in two programs shares.
  other = options;
  other.file_name = "another.ptx";
  EXPECT_EQ(key, CodeCache::key(".version 8.0", other));
}

TEST(CompileWithCache, SecondCompileIsAHitWithTheSameResult) {
  std::ifstream in(XCUDA_SAXPY_PTX);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  ptx::CompileOptions options;
  ASSERT_NE(code_cache(), nullptr);
  EXPECT_EQ(code_cache()->directory(), process_cache_directory);
  CachedCompile first = compile_with_cache(text, options);
  ASSERT_TRUE(first.compiled.ok());
  EXPECT_FALSE(first.from_cache);
  CachedCompile second = compile_with_cache(text, options);
  EXPECT_TRUE(second.from_cache);
  expect_same(second.compiled, first.compiled);
  ASSERT_EQ(second.compiled.module.kernels.size(), 1u);
  EXPECT_EQ(second.compiled.module.kernels[0].name, "saxpy");
  fs::remove_all(process_cache_directory);
}

TEST(CompileWithCache, FailedCompilesAreNotStored) {
  CachedCompile result = compile_with_cache("this is not PTX", ptx::CompileOptions{});
  EXPECT_FALSE(result.compiled.ok());
  ASSERT_NE(code_cache(), nullptr);
  EXPECT_FALSE(fs::exists(code_cache()->entry_path(result.key)));
}

// A compile cancelled before it starts fails saying so, and nothing is stored; one cancelled while
// it emits code may have skipped optimisations and is not stored either.
TEST(CompileWithCache, CancelledCompilesFailAndAreNotStored) {
  std::ifstream in(XCUDA_SAXPY_PTX);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::atomic<bool> cancelled{true};
  ptx::CompileOptions options;
  options.cancelled = &cancelled;
  CachedCompile result = compile_with_cache(text, options);
  ASSERT_FALSE(result.compiled.ok());
  EXPECT_NE(result.compiled.diagnostics.front().message.find("compile cancelled"), std::string::npos);
  ASSERT_NE(code_cache(), nullptr);
  EXPECT_FALSE(fs::exists(code_cache()->entry_path(result.key)));
  EXPECT_FALSE(find_cached(text, options).has_value());
  cancelled = false;
  CachedCompile uncancelled = compile_with_cache(text, options);
  EXPECT_TRUE(uncancelled.compiled.ok());
  EXPECT_TRUE(find_cached(text, options).has_value());
  fs::remove_all(process_cache_directory);
}

// The quick first tier and the optimised tier are separate entries of the same kernels.
TEST(CompileWithCache, TiersAreSeparateEntries) {
  std::ifstream in(XCUDA_SAXPY_PTX);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ptx::CompileOptions optimised, quick;
  quick.optimization_level = 1;
  EXPECT_NE(CodeCache::key(text, optimised), CodeCache::key(text, quick));
  CachedCompile first = compile_with_cache(text, quick);
  ASSERT_TRUE(first.compiled.ok());
  EXPECT_FALSE(find_cached(text, optimised).has_value());
  EXPECT_EQ(first.compiled.module.kernels.size(), 1u);
  fs::remove_all(process_cache_directory);
}

// Two kernels: `uses_helper` calls a .func that calls a function no target provides, so it
// cannot be compiled; `alone` reaches neither and must compile without them.
constexpr std::string_view two_kernels = R"(
.version 8.0
.target sm_80
.address_size 64

.extern .func provided_by_nobody();

.func helper()
{
	call.uni provided_by_nobody, ();
	ret;
}

.visible .entry uses_helper(.param .u64 out)
{
	call.uni helper, ();
	ret;
}

.visible .entry alone(.param .u64 out, .param .u32 value)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [value];
	st.global.u32 [%rd1], %r1;
	ret;
}
)";

std::vector<std::string> kernel_names(const ptx::ModuleInfo& info) {
  std::vector<std::string> names;
  for (const ptx::KernelInfo& kernel : info.kernels) names.push_back(kernel.name);
  return names;
}

TEST(CacheKey, DependsOnTheKernelsAUnitHolds) {
  ptx::CompileOptions whole, first, second;
  first.kernels = {"uses_helper"};
  second.kernels = {"alone"};
  std::string key = CodeCache::key(two_kernels, whole);
  EXPECT_NE(key, CodeCache::key(two_kernels, first));
  EXPECT_NE(key, CodeCache::key(two_kernels, second));
  EXPECT_NE(CodeCache::key(two_kernels, first), CodeCache::key(two_kernels, second));
  // Where the IR is dumped does not change the code.
  ptx::CompileOptions dumped = second;
  dumped.ir_dump_prefix = "/tmp/somewhere";
  EXPECT_EQ(CodeCache::key(two_kernels, second), CodeCache::key(two_kernels, dumped));
}

TEST(KernelSelection, CompilesOnlyWhatTheChosenKernelReaches) {
  ptx::CompileOptions options;
  EXPECT_FALSE(ptx::compile(two_kernels, options).ok());
  options.kernels = {"uses_helper"};
  ptx::CompileResult failed = ptx::compile(two_kernels, options);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.diagnostics.front().message.find("provided_by_nobody"), std::string::npos)
      << failed.diagnostics.front().to_string();
  options.kernels = {"alone"};
  ptx::CompileResult alone = ptx::compile(two_kernels, options);
  ASSERT_TRUE(alone.ok()) << alone.diagnostics.front().to_string();
  EXPECT_FALSE(alone.object.empty());
  EXPECT_EQ(kernel_names(alone.module), std::vector<std::string>{"alone"});
  // .u64 then .u32, each at its natural alignment.
  ASSERT_EQ(alone.module.kernels[0].parameters.size(), 2u);
  EXPECT_EQ(alone.module.kernels[0].parameters[1].offset, 8u);
}

TEST(KernelSelection, UnknownKernelIsReported) {
  ptx::CompileOptions options;
  options.kernels = {"no_such_kernel"};
  ptx::CompileResult result = ptx::compile(two_kernels, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.diagnostics.front().message.find("no kernel named 'no_such_kernel'"),
            std::string::npos);
}

TEST(Scan, DescribesEveryKernelWithoutCompiling) {
  ptx::CompileResult scanned = ptx::scan(two_kernels, ptx::CompileOptions{});
  ASSERT_TRUE(scanned.ok()) << scanned.diagnostics.front().to_string();
  EXPECT_TRUE(scanned.object.empty());
  EXPECT_EQ(kernel_names(scanned.module), (std::vector<std::string>{"uses_helper", "alone"}));
  ASSERT_EQ(scanned.module.kernels[1].parameters.size(), 2u);
  EXPECT_EQ(scanned.module.kernels[1].parameters[1].offset, 8u);
  // Syntax errors are found at load, as before lazy compilation.
  ptx::CompileResult broken = ptx::scan(".version 8.0\n.target sm_80\nfrobnicate;", {});
  EXPECT_FALSE(broken.ok());
}

TEST(CompileUnits, OnePerKernelUnlessTheModuleHasGlobals) {
  ptx::ModuleInfo info;
  info.kernels.resize(3);
  info.kernels[0].name = "a";
  info.kernels[1].name = "b";
  info.kernels[2].name = "c";
  ptx::CompileOptions base;
  base.optimization_level = 2;
  std::vector<ptx::CompileOptions> units = compile_units(info, base);
  ASSERT_EQ(units.size(), 3u);
  for (size_t index = 0; index < units.size(); ++index) {
    EXPECT_EQ(units[index].kernels, std::vector<std::string>{info.kernels[index].name});
    EXPECT_EQ(units[index].optimization_level, 2);
  }
  // Kernels share a module's globals, so each unit would need to link against the others.
  info.globals.push_back({"counter", 4, false});
  units = compile_units(info, base);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_TRUE(units[0].kernels.empty());
}

// The last queued runs first; the first job holds the thread while the others are queued.
TEST(RunInBackground, RunsTheLastQueuedFirstOnOneOtherThread) {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<int> order;
  std::set<std::thread::id> threads;
  std::promise<void> queued;
  std::shared_future<void> all_queued = queued.get_future().share();
  run_in_background([all_queued](const std::atomic<bool>&) { all_queued.wait(); });
  for (int job = 0; job < 20; ++job)
    run_in_background([&, job](const std::atomic<bool>& stopping) {
      EXPECT_FALSE(stopping.load());
      std::lock_guard lock(mutex);
      order.push_back(job);
      threads.insert(std::this_thread::get_id());
      done.notify_all();
    });
  queued.set_value();
  std::unique_lock lock(mutex);
  ASSERT_TRUE(done.wait_for(lock, std::chrono::seconds(30), [&] { return order.size() == 20; }));
  for (int job = 0; job < 20; ++job) EXPECT_EQ(order[job], 19 - job);
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

// The thread that queued a job ends: the running job sees `stopping` and is waited for, the
// queued ones run on the ending thread knowing they were stopped, and a later job starts the
// compile thread again.
TEST(RunInBackground, AThreadThatEndsStopsItsJobs) {
  std::atomic<bool> running{false}, saw_stopping{false}, queued_saw_stopping{false};
  std::thread::id queued_ran_on;
  std::thread queuer([&] {
    run_in_background([&](const std::atomic<bool>& stopping) {
      running = true;
      while (!stopping.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      saw_stopping = true;
    });
    while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    run_in_background([&](const std::atomic<bool>& stopping) {
      queued_saw_stopping = stopping.load();
      queued_ran_on = std::this_thread::get_id();
    });
  });
  const std::thread::id queuer_id = queuer.get_id();
  queuer.join();
  EXPECT_TRUE(saw_stopping);
  EXPECT_TRUE(queued_saw_stopping);
  EXPECT_EQ(queued_ran_on, queuer_id);
  std::atomic<bool> later_ran{false};
  std::thread again([&] { run_in_background([&](const std::atomic<bool>&) { later_ran = true; }); });
  again.join();  // stops the compile thread once more, after the job or before it started
  std::promise<void> finished;
  run_in_background([&](const std::atomic<bool>&) { finished.set_value(); });
  EXPECT_EQ(finished.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
}

// A forked child that exits stops no thread it does not have, and can queue jobs of its own.
TEST(RunInBackground, AForkedChildStartsAfresh) {
  std::promise<void> started;
  run_in_background([&](const std::atomic<bool>&) { started.set_value(); });
  started.get_future().wait();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::promise<void> ran;
    run_in_background([&](const std::atomic<bool>&) { ran.set_value(); });
    bool ready = ran.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    std::exit(ready ? 0 : 1);  // runs this thread's stop, as a program's exit() does
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RunInParallel, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> runs(1000);
  size_t threads = run_in_parallel(runs.size(), [&](size_t index) { ++runs[index]; });
  EXPECT_GE(threads, 1u);
  for (const std::atomic<int>& count : runs) EXPECT_EQ(count.load(), 1);
  EXPECT_EQ(run_in_parallel(0, [](size_t) { FAIL() << "work for an empty range"; }), 1u);
}

}  // namespace
}  // namespace xcuda::runtime
