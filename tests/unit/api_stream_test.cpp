// Streams, events and stream memory operations through the exported Driver API, with the
// semantics and error codes of NVIDIA's documentation.
#include "tests/unit/driver_api_fixture.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace xcuda::testing {
namespace {

using namespace std::chrono_literals;

class StreamApi : public DriverApiTest {
 protected:
  void SetUp() override {
    DriverApiTest::SetUp();
    ASSERT_EQ(cuMemAlloc_v2(&words_, 4 * sizeof(uint64_t)), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD8_v2(words_, 0, 4 * sizeof(uint64_t)), CUDA_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree_v2(words_), CUDA_SUCCESS);
    DriverApiTest::TearDown();
  }

  // A device pointer is a host pointer on the host backend; tests read results through it.
  uint32_t* word32(int index) { return reinterpret_cast<uint32_t*>(words_) + index; }
  CUdeviceptr address32(int index) { return words_ + index * sizeof(uint32_t); }
  CUdeviceptr address64(int index) { return words_ + index * sizeof(uint64_t); }

  CUstream stream(unsigned flags = CU_STREAM_DEFAULT) {
    CUstream created = nullptr;
    EXPECT_EQ(cuStreamCreate(&created, flags), CUDA_SUCCESS);
    return created;
  }

  CUdeviceptr words_ = 0;
};

TEST_F(StreamApi, PrioritiesOutsideTheRangeAreClampedIntoIt) {
  int least = 1, greatest = 1;
  ASSERT_EQ(cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
  EXPECT_LE(greatest, least);  // lower numbers are more urgent
  CUstream urgent = nullptr, lazy = nullptr;
  ASSERT_EQ(cuStreamCreateWithPriority(&urgent, CU_STREAM_NON_BLOCKING, greatest - 100),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreateWithPriority(&lazy, CU_STREAM_DEFAULT, least + 100), CUDA_SUCCESS);
  int priority = 1;
  EXPECT_EQ(cuStreamGetPriority(urgent, &priority), CUDA_SUCCESS);
  EXPECT_EQ(priority, greatest);
  EXPECT_EQ(cuStreamGetPriority(lazy, &priority), CUDA_SUCCESS);
  EXPECT_EQ(priority, least);
  unsigned flags = 7;
  EXPECT_EQ(cuStreamGetFlags(urgent, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned(CU_STREAM_NON_BLOCKING));
  EXPECT_EQ(cuStreamGetFlags_ptsz(lazy, &flags), CUDA_SUCCESS);
  EXPECT_EQ(flags, unsigned(CU_STREAM_DEFAULT));
  CUstream unused = nullptr;
  EXPECT_EQ(cuStreamCreate(&unused, 0x8), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy_v2(urgent), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(lazy), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(lazy), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(StreamApi, IdsAreDistinctAndDeviceAndContextAreTheStreamsOwn) {
  CUstream first = stream(), second = stream(CU_STREAM_NON_BLOCKING);
  unsigned long long ids[4] = {};
  ASSERT_EQ(cuStreamGetId(first, &ids[0]), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamGetId(second, &ids[1]), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamGetId(CU_STREAM_LEGACY, &ids[2]), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamGetId_ptsz(nullptr, &ids[3]), CUDA_SUCCESS);  // the per-thread stream
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) EXPECT_NE(ids[a], ids[b]) << a << " " << b;
  unsigned long long again = 0;
  ASSERT_EQ(cuStreamGetId(nullptr, &again), CUDA_SUCCESS);
  EXPECT_EQ(again, ids[2]) << "stream 0 is the legacy stream outside _ptsz";
  ASSERT_EQ(cuStreamGetId(CU_STREAM_PER_THREAD, &again), CUDA_SUCCESS);
  EXPECT_EQ(again, ids[3]);

  CUdevice device = -1;
  EXPECT_EQ(cuStreamGetDevice(first, &device), CUDA_SUCCESS);
  EXPECT_EQ(device, device_);
  CUcontext context = nullptr;
  CUgreenCtx green = reinterpret_cast<CUgreenCtx>(1);
  EXPECT_EQ(cuStreamGetCtx_v2(second, &context, &green), CUDA_SUCCESS);
  EXPECT_EQ(context, context_);
  EXPECT_EQ(green, nullptr);
  EXPECT_EQ(cuStreamGetCtx_ptsz(nullptr, &context), CUDA_SUCCESS);
  EXPECT_EQ(context, context_);
  EXPECT_EQ(cuStreamGetId(first, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy_v2(first), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamGetDevice(first, &device), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamDestroy_v2(second), CUDA_SUCCESS);
}

TEST_F(StreamApi, AttributesAreKeptCopiedAndValidated) {
  CUstream source = stream(), destination = stream();
  CUstreamAttrValue value{};
  ASSERT_EQ(cuStreamGetAttribute(source, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.syncPolicy, CU_SYNC_POLICY_AUTO);
  value.syncPolicy = CU_SYNC_POLICY_SPIN;
  ASSERT_EQ(cuStreamSetAttribute(source, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value),
            CUDA_SUCCESS);
  value = {};
  value.priority = -1;
  ASSERT_EQ(cuStreamSetAttribute(source, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value), CUDA_SUCCESS);
  int priority = 0;
  EXPECT_EQ(cuStreamGetPriority(source, &priority), CUDA_SUCCESS);
  EXPECT_EQ(priority, -1);

  ASSERT_EQ(cuStreamCopyAttributes(destination, source), CUDA_SUCCESS);
  value = {};
  EXPECT_EQ(cuStreamGetAttribute(destination, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.syncPolicy, CU_SYNC_POLICY_SPIN);
  EXPECT_EQ(cuStreamGetAttribute_ptsz(destination, CU_LAUNCH_ATTRIBUTE_PRIORITY, &value),
            CUDA_SUCCESS);
  EXPECT_EQ(value.priority, -1);

  EXPECT_EQ(cuStreamGetAttribute(source, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &value),
            CUDA_ERROR_INVALID_VALUE);
  value.syncPolicy = static_cast<CUsynchronizationPolicy>(99);
  EXPECT_EQ(cuStreamSetAttribute(source, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &value),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamSetAttribute(source, CU_LAUNCH_ATTRIBUTE_PRIORITY, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy_v2(source), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(destination), CUDA_SUCCESS);
}

TEST_F(StreamApi, WaitValueHoldsTheStreamUntilAnotherStreamWrites) {
  CUstream waiter = stream(CU_STREAM_NON_BLOCKING), writer = stream(CU_STREAM_NON_BLOCKING);
  ASSERT_EQ(cuStreamWaitValue32_v2(waiter, address32(0), 5, CU_STREAM_WAIT_VALUE_GEQ),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(waiter, address32(1), 7, CU_STREAM_WRITE_VALUE_DEFAULT),
            CUDA_SUCCESS);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(cuStreamQuery(waiter), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(*word32(1), 0u) << "the write after the wait ran early";
  ASSERT_EQ(cuStreamWriteValue32(writer, address32(0), 4, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(writer), CUDA_SUCCESS);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cuStreamQuery(waiter), CUDA_ERROR_NOT_READY) << "4 >= 5 does not hold";
  ASSERT_EQ(cuStreamWriteValue32_ptsz(writer, address32(0), 6, 0), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(waiter), CUDA_SUCCESS);
  EXPECT_EQ(*word32(1), 7u);
  EXPECT_EQ(cuStreamDestroy_v2(waiter), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(writer), CUDA_SUCCESS);
}

TEST_F(StreamApi, BatchedOperationsCompareAsDocumented) {
  // Each wait below holds for the value written just before it; a wrong comparison hangs the
  // stream, which wait_idle turns into a failure.
  CUstreamBatchMemOpParams operations[8] = {};
  auto write64 = [](CUstreamBatchMemOpParams& operation, CUdeviceptr address, uint64_t value) {
    operation.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    operation.writeValue.address = address;
    operation.writeValue.value64 = value;
  };
  auto wait64 = [](CUstreamBatchMemOpParams& operation, CUdeviceptr address, uint64_t value,
                   unsigned flags) {
    operation.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
    operation.waitValue.address = address;
    operation.waitValue.value64 = value;
    operation.waitValue.flags = flags;
  };
  write64(operations[0], address64(1), 0x1'0000'0000ull);
  wait64(operations[1], address64(1), 0x1'0000'0000ull, CU_STREAM_WAIT_VALUE_EQ);
  write64(operations[2], address64(1), 0b0110);
  wait64(operations[3], address64(1), 0b0100, CU_STREAM_WAIT_VALUE_AND);
  // NOR: ~(0b0110 | value) != 0 holds for any value leaving a bit clear.
  wait64(operations[4], address64(1), 0b0001, CU_STREAM_WAIT_VALUE_NOR);
  // GEQ is cyclic: 1 counts as after 0xffff...ff.
  write64(operations[5], address64(2), 1);
  wait64(operations[6], address64(2), ~0ull, CU_STREAM_WAIT_VALUE_GEQ);
  operations[7].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  CUstream worker = stream();
  ASSERT_EQ(cuStreamBatchMemOp_v2(worker, 8, operations, 0), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(worker), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint64_t*>(words_)[1], 0b0110u);
  EXPECT_EQ(reinterpret_cast<uint64_t*>(words_)[2], 1u);
  EXPECT_EQ(cuStreamDestroy_v2(worker), CUDA_SUCCESS);
}

TEST_F(StreamApi, BadMemoryOperationsAreRejectedBeforeAnythingIsQueued) {
  EXPECT_EQ(cuStreamWriteValue32_v2(nullptr, address32(0) + 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamWriteValue64_v2(nullptr, address32(1), 1, 0), CUDA_ERROR_INVALID_VALUE)
      << "4-byte aligned is not 8-byte aligned";
  uint32_t host_word = 0;
  EXPECT_EQ(cuStreamWriteValue32_v2(nullptr, reinterpret_cast<CUdeviceptr>(&host_word), 1, 0),
            CUDA_ERROR_INVALID_VALUE)
      << "memory the device cannot reach";
  EXPECT_EQ(cuStreamWaitValue32_v2(nullptr, address32(0), 1, 0x10), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamWriteValue32_v2(nullptr, address32(0), 1, 0x10), CUDA_ERROR_INVALID_VALUE);
  CUstreamBatchMemOpParams bad{};
  bad.operation = static_cast<CUstreamBatchMemOpType>(42);
  EXPECT_EQ(cuStreamBatchMemOp_v2(nullptr, 1, &bad, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamBatchMemOp_v2(nullptr, 1, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamWaitValue32_v2(reinterpret_cast<CUstream>(&host_word), address32(0), 1, 0),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(host_word, 0u);
}

TEST_F(StreamApi, CallbacksAndHostFunctionsRunInStreamOrder) {
  struct Log {
    std::mutex mutex;
    std::vector<int> order;
    void add(int value) {
      std::lock_guard lock(mutex);
      order.push_back(value);
    }
  } log;
  struct Call {
    Log* log;
    int value;
  };
  Call calls[4] = {{&log, 1}, {&log, 2}, {&log, 3}, {&log, 4}};
  CUstream worker = stream();
  auto host = [](void* data) {
    auto* call = static_cast<Call*>(data);
    call->log->add(call->value);
  };
  auto callback = [](CUstream, CUresult status, void* data) {
    auto* call = static_cast<Call*>(data);
    call->log->add(status == CUDA_SUCCESS ? call->value : -call->value);
  };
  ASSERT_EQ(cuLaunchHostFunc(worker, host, &calls[0]), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamAddCallback(worker, callback, &calls[1], 0), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(worker, host, &calls[2]), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamAddCallback(worker, callback, &calls[3], 0), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamAddCallback(worker, callback, &calls[3], 1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuStreamSynchronize(worker), CUDA_SUCCESS);
  EXPECT_EQ(log.order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(cuStreamDestroy_v2(worker), CUDA_SUCCESS);
}

TEST_F(StreamApi, BlockingStreamsWaitForTheLegacyStreamAndNonBlockingOnesDoNot) {
  CUstream blocking = stream(CU_STREAM_DEFAULT), independent = stream(CU_STREAM_NON_BLOCKING);
  ASSERT_EQ(cuStreamWaitValue32_v2(CU_STREAM_LEGACY, address32(0), 1, CU_STREAM_WAIT_VALUE_EQ),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(blocking, address32(1), 1, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(CU_STREAM_PER_THREAD, address32(2), 1, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(independent, address32(3), 1, 0), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(independent), CUDA_SUCCESS);
  EXPECT_EQ(*word32(3), 1u);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(*word32(1), 0u) << "a blocking stream ran past the legacy stream's wait";
  EXPECT_EQ(*word32(2), 0u) << "the per-thread stream ran past the legacy stream's wait";
  EXPECT_EQ(cuStreamQuery(blocking), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuStreamWriteValue32_v2(independent, address32(0), 1, 0), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(blocking), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  EXPECT_EQ(*word32(1), 1u);
  EXPECT_EQ(*word32(2), 1u);
  EXPECT_EQ(cuStreamDestroy_v2(blocking), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(independent), CUDA_SUCCESS);
}

TEST_F(StreamApi, KernelsOfDifferentStreamsRunAtTheSameTime) {
  // Every block of the first grid spins until the second grid, in another stream, sets the
  // flag: with one grid owning the workers at a time this never finishes.
  CUfunction spin = kernel("spin_until_set"), set = kernel("set_flag");
  constexpr unsigned blocks = 64;
  CUdeviceptr out = 0;
  ASSERT_EQ(cuMemAlloc_v2(&out, blocks * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32_v2(out, 0xffffffffu, blocks), CUDA_SUCCESS);
  CUstream spinner = stream(CU_STREAM_NON_BLOCKING), setter = stream(CU_STREAM_NON_BLOCKING);
  CUdeviceptr flag = address32(0);
  void* spin_arguments[] = {&flag, &out};
  ASSERT_EQ(cuLaunchKernel(spin, blocks, 1, 1, 1, 1, 1, 0, spinner, spin_arguments, nullptr),
            CUDA_SUCCESS);
  std::this_thread::sleep_for(20ms);
  uint32_t value = 9;
  void* set_arguments[] = {&flag, &value};
  ASSERT_EQ(cuLaunchKernel(set, 1, 1, 1, 1, 1, 1, 0, setter, set_arguments, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(setter), CUDA_SUCCESS);
  ASSERT_EQ(wait_idle(spinner), CUDA_SUCCESS);
  const auto* seen = reinterpret_cast<const uint32_t*>(out);
  for (unsigned block = 0; block < blocks; ++block)
    EXPECT_EQ(seen[block], 9u) << "block " << block;
  EXPECT_EQ(cuMemFree_v2(out), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(spinner), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(setter), CUDA_SUCCESS);
}

// --- Events ---

class EventApi : public StreamApi {};

TEST_F(EventApi, ElapsedTimeNeedsTwoCompletedTimingEvents) {
  CUevent start = nullptr, end = nullptr, untimed = nullptr;
  ASSERT_EQ(cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&end, CU_EVENT_BLOCKING_SYNC), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  float milliseconds = -1;
  EXPECT_EQ(cuEventQuery(start), CUDA_SUCCESS) << "an unrecorded event is complete";
  EXPECT_EQ(cuEventElapsedTime(&milliseconds, start, end), CUDA_ERROR_INVALID_HANDLE)
      << "never recorded";
  CUstream worker = stream();
  ASSERT_EQ(cuEventRecord(start, worker), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWaitValue32_v2(worker, address32(0), 1, CU_STREAM_WAIT_VALUE_EQ),
            CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecordWithFlags(end, worker, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(untimed, worker), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(end), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(cuEventElapsedTime(&milliseconds, start, end), CUDA_ERROR_NOT_READY);
  std::this_thread::sleep_for(30ms);
  *word32(0) = 1;
  ASSERT_EQ(cuEventSynchronize(end), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(end), CUDA_SUCCESS);
  ASSERT_EQ(cuEventElapsedTime(&milliseconds, start, end), CUDA_SUCCESS);
  EXPECT_GE(milliseconds, 25.0f) << "the stream waited 30 ms between the records";
  EXPECT_EQ(cuEventElapsedTime(&milliseconds, start, start), CUDA_SUCCESS);
  EXPECT_EQ(milliseconds, 0.0f);
  EXPECT_EQ(cuEventSynchronize(untimed), CUDA_SUCCESS);
  EXPECT_EQ(cuEventElapsedTime(&milliseconds, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuEventRecordWithFlags(end, worker, 0x40), CUDA_ERROR_INVALID_VALUE);
  CUevent unused = nullptr;
  EXPECT_EQ(cuEventCreate(&unused, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE)
      << "interprocess events must disable timing";
  for (CUevent event : {start, end, untimed}) EXPECT_EQ(cuEventDestroy_v2(event), CUDA_SUCCESS);
  EXPECT_EQ(cuEventQuery(start), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamDestroy_v2(worker), CUDA_SUCCESS);
}

TEST_F(EventApi, StreamWaitsForTheRecordMadeBeforeTheWaitEvenIfTheEventIsDestroyed) {
  CUstream producer = stream(CU_STREAM_NON_BLOCKING), consumer = stream(CU_STREAM_NON_BLOCKING);
  CUevent ready = nullptr;
  ASSERT_EQ(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWaitValue32_v2(producer, address32(0), 1, CU_STREAM_WAIT_VALUE_EQ),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(producer, address32(1), 1, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(ready, producer), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWaitEvent(consumer, ready, 0), CUDA_SUCCESS);
  // The consumer copies what the producer wrote; it must not run before the producer's write.
  ASSERT_EQ(cuStreamWaitValue32_v2(consumer, address32(1), 1, CU_STREAM_WAIT_VALUE_EQ),
            CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWriteValue32_v2(consumer, address32(2), 1, 0), CUDA_SUCCESS);
  // A record after the wait does not change what the consumer waits for.
  ASSERT_EQ(cuEventRecord(ready, consumer), CUDA_SUCCESS);
  ASSERT_EQ(cuEventDestroy_v2(ready), CUDA_SUCCESS);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(cuStreamQuery(consumer), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(*word32(2), 0u);
  *word32(0) = 1;
  ASSERT_EQ(wait_idle(consumer), CUDA_SUCCESS);
  EXPECT_EQ(*word32(2), 1u);
  EXPECT_EQ(cuStreamWaitEvent(consumer, ready, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamDestroy_v2(producer), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(consumer), CUDA_SUCCESS);
}

}  // namespace
}  // namespace xcuda::testing
