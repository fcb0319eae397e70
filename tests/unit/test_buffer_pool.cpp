// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/buffer_pool.hpp"
#include "gmb/error.hpp"

using namespace gmb;

namespace {

// Host memory that counts its allocations and frees.
struct CountingKind {
  int allocations = 0, live = 0;
  MemoryKind kind(const std::string& name = "counted") {
    MemoryKinds host;
    register_host_memory(host);
    const MemoryKind base = host.require("host");
    MemoryKind k = base;
    k.name = name;
    k.allocate = [this, base](std::size_t bytes) -> std::unique_ptr<Buffer> {
      ++allocations;
      ++live;
      struct Counted final : Buffer {
        Counted(std::unique_ptr<Buffer> inner, int* live) : Buffer(inner->data(), inner->bytes()), inner(std::move(inner)), live(live) {}
        ~Counted() override { --*live; }
        void fill(std::size_t b, std::uint32_t s) override { inner->fill(b, s); }
        void poison(std::size_t b, std::uint32_t s) override { inner->poison(b, s); }
        std::optional<std::size_t> first_mismatch(std::size_t b, std::uint32_t s) const override { return inner->first_mismatch(b, s); }
        std::unique_ptr<Buffer> inner;
        int* live;
      };
      return std::make_unique<Counted>(base.allocate(bytes), &live);
    };
    return k;
  }
};

}  // namespace

TEST(BufferPool, OncePerLaunchReusesTheLargestAllocationForSmallerSizes) {
  CountingKind counted;
  const MemoryKind kind = counted.kind();
  BufferPool pool;
  void* first = nullptr;
  {
    auto big = pool.take(kind, 1 << 20);
    first = big->data();
    EXPECT_EQ(big->bytes(), std::size_t{1} << 20);
  }
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{1} << 20}) {
    auto view = pool.take(kind, bytes);
    EXPECT_EQ(view->data(), first) << bytes;  // the same memory, every size
    EXPECT_EQ(view->bytes(), bytes);
  }
  EXPECT_EQ(counted.allocations, 1);
  EXPECT_EQ(counted.live, 1);  // the pool holds that one allocation, and nothing else
}

TEST(BufferPool, BuffersInUseAreNeverShared) {
  CountingKind counted;
  const MemoryKind kind = counted.kind();
  BufferPool pool;
  auto a = pool.take(kind, 64);
  auto b = pool.take(kind, 64);
  EXPECT_NE(a->data(), b->data());
  EXPECT_EQ(counted.allocations, 2);
}

TEST(BufferPool, NeverFreesBeforeItIsDestroyedAndPicksTheSmallestThatFits) {
  CountingKind counted;
  const MemoryKind kind = counted.kind();
  {
    BufferPool pool;
    void* small = pool.take(kind, 100)->data();
    void* large = pool.take(kind, 10000)->data();  // the small one is free but too small: a second allocation
    EXPECT_EQ(counted.live, 2);                     // nothing given back mid-launch
    EXPECT_EQ(pool.take(kind, 50)->data(), small);
    EXPECT_EQ(pool.take(kind, 5000)->data(), large);
    EXPECT_EQ(pool.free_bytes(MemorySide::host), 10100u);  // what a sweep can take without allocating
    auto in_use = pool.take(kind, 50);
    EXPECT_EQ(pool.free_bytes(MemorySide::host), 10000u);  // memory in use is not free
    EXPECT_EQ(pool.free_bytes(MemorySide::device), 0u);
  }
  EXPECT_EQ(counted.live, 0);
}

TEST(BufferPool, ViewsFillAndCheckWithinTheirLength) {
  CountingKind counted;
  BufferPool pool;
  const MemoryKind kind = counted.kind();
  pool.take(kind, 4096);
  auto view = pool.take(kind, 10);
  view->fill(10, 3);
  EXPECT_FALSE(view->first_mismatch(10, 3).has_value());
  view->poison(10, 3);
  EXPECT_EQ(view->first_mismatch(10, 3), std::optional<std::size_t>(0));
}

TEST(BufferPool, FreshPerSizeAllocatesEveryTimeAndFreesOnRelease) {
  CountingKind counted;
  const MemoryKind kind = counted.kind();
  BufferPool pool(BufferAllocation::fresh_per_size);
  pool.take(kind, 1 << 20);
  EXPECT_EQ(counted.live, 0);
  auto view = pool.take(kind, 8);
  EXPECT_EQ(counted.allocations, 2);
  EXPECT_EQ(counted.live, 1);
  EXPECT_EQ(pool.free_bytes(MemorySide::host), 0u);
  view.reset();
  EXPECT_EQ(counted.live, 0);  // the pool keeps nothing
  EXPECT_STREQ(to_string(pool.allocation()), "fresh-per-size");
}
