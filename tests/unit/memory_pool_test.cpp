// The device memory pool below cuMemAlloc and the stream-ordered allocator: size classes, the
// cache cap (XCUDA_POOL_SIZE or a pool's release threshold), trimming and the maximum size.
#include "runtime/memory_pool.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using xcuda::runtime::MemoryPool;

TEST(MemoryPool, SizeClassesCoverTheRequestAndWasteAtMostAQuarter) {
  for (size_t bytes = 1; bytes < (size_t{1} << 22); bytes = bytes * 3 / 2 + 1) {
    size_t block = MemoryPool::size_class(bytes);
    EXPECT_GE(block, bytes);
    EXPECT_LE(block, std::max<size_t>(256, bytes + bytes / 4)) << bytes;
    EXPECT_EQ(MemoryPool::size_class(block), block) << "a class is its own class";
  }
  EXPECT_EQ(MemoryPool::size_class(SIZE_MAX), SIZE_MAX);
}

TEST(MemoryPool, FreedBlocksAreCachedUpToTheThreshold) {
  MemoryPool pool(0, 8192);
  auto first = pool.allocate(4000);
  ASSERT_TRUE(first.ok());
  pool.release(*first, 4000);
  EXPECT_EQ(pool.usage().used, 0u);
  EXPECT_EQ(pool.usage().reserved, 4096u);  // 4000 rounds up to the 4096 class, kept
  auto again = pool.allocate(3900);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);

  // A second block would take the cache past 8192 bytes: it goes back to the backend.
  auto big = pool.allocate(6000);
  ASSERT_TRUE(big.ok());
  pool.release(*again, 3900);
  pool.release(*big, 6000);
  EXPECT_EQ(pool.usage().reserved, 4096u);
  EXPECT_EQ(pool.usage().used_high, 4096u + MemoryPool::size_class(6000));

  pool.trim_to(0);
  EXPECT_EQ(pool.usage().reserved, 0u);
}

TEST(MemoryPool, ZeroThresholdCachesNothing) {
  MemoryPool pool(0, 0);
  auto block = pool.allocate(100);
  ASSERT_TRUE(block.ok());
  pool.release(*block, 100);
  EXPECT_EQ(pool.usage().reserved, 0u);
}

TEST(MemoryPool, MaximumSizeIsOutOfMemoryOnceReached) {
  MemoryPool pool(0, 1 << 20, 1 << 16);
  auto first = pool.allocate(40000);
  ASSERT_TRUE(first.ok());
  auto second = pool.allocate(40000);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, xcuda::ErrorCode::out_of_memory);
  pool.release(*first, 40000);
  auto third = pool.allocate(40000);
  ASSERT_TRUE(third.ok());
  pool.release(*third, 40000);
}

}  // namespace
