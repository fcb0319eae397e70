// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <cstring>

#include "gmb/error.hpp"
#include "gmb/platform.hpp"

using namespace gmb;

TEST(Memory, HostBufferPatternRoundTrip) {
  MemoryKinds kinds;
  register_host_memory(kinds);
  auto buf = kinds.require("host").allocate(4096);
  buf->fill(4096, 7);
  EXPECT_FALSE(buf->first_mismatch(4096, 7).has_value());
  // Another seed's pattern differs somewhere early.
  ASSERT_TRUE(buf->first_mismatch(4096, 8).has_value());
  static_cast<unsigned char*>(buf->data())[1000] ^= 1;
  EXPECT_EQ(buf->first_mismatch(4096, 7), std::optional<std::size_t>(1000));
}

TEST(Memory, PoisonMakesEveryByteWrong) {
  MemoryKinds kinds;
  register_host_memory(kinds);
  auto buf = kinds.require("host").allocate(1);
  for (std::uint32_t seed = 0; seed < 300; ++seed) {
    buf->poison(1, seed);
    EXPECT_EQ(buf->first_mismatch(1, seed), std::optional<std::size_t>(0)) << seed;
  }
}

TEST(Memory, ZeroBytesAlwaysMatch) {
  MemoryKinds kinds;
  register_host_memory(kinds);
  auto buf = kinds.require("host").allocate(1);
  EXPECT_FALSE(buf->first_mismatch(0, 3).has_value());
}

TEST(Memory, PlatformTableNamesEveryKind) {
  Platform platform;
  register_modules(platform);
  EXPECT_EQ(platform.memory.names(), (std::vector<std::string>{"host", "pinned", "device", "managed"}));
  EXPECT_TRUE(platform.memory.find("host")->available());
  EXPECT_TRUE(platform.memory.find("device")->gpu_memory);
  EXPECT_FALSE(platform.memory.find("managed")->gpu_memory);
}

// Code asks for memory by what it is: these properties, set where the kinds are registered.
TEST(Memory, KindsDeclareWhatTheyAre) {
  Platform platform;
  register_modules(platform);
  const MemoryKinds& m = platform.memory;
  for (const char* name : {"host", "pinned", "managed"}) EXPECT_TRUE(m.known(name).host_accessible) << name;
  EXPECT_FALSE(m.known("device").host_accessible);
  EXPECT_TRUE(m.known("device").gpu_backed);
  EXPECT_TRUE(m.known("managed").gpu_backed);
  EXPECT_FALSE(m.known("pinned").gpu_backed);
  EXPECT_TRUE(m.known("managed").placeable);
  EXPECT_FALSE(m.known("device").placeable);
  EXPECT_EQ(m.find_by(&MemoryKind::page_locked)->name, "pinned");
  EXPECT_EQ(m.find_by(&MemoryKind::gpu_memory)->name, "device");
  EXPECT_EQ(m.find_by(&MemoryKind::placeable)->name, "managed");
  MemoryKinds host_only;
  register_host_memory(host_only);
  EXPECT_EQ(host_only.find_by(&MemoryKind::page_locked), nullptr);
  EXPECT_THROW(host_only.require_by(&MemoryKind::page_locked, "page-locked host memory"), Unsupported);
}

TEST(Memory, UnknownKindIsUsageErrorUnavailableIsUnsupported) {
  Platform platform;
  register_modules(platform);
  try {
    platform.memory.require("gpu");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown memory kind 'gpu' (accepted: host, pinned, device, managed)");
  }
  EXPECT_THROW(platform.memory.known("gpu"), UsageError);
  EXPECT_EQ(platform.memory.known("device").name, "device");  // known even where unavailable
  if (!platform.memory.find("device")->available()) {
    try {
      platform.memory.require("device");
      FAIL();
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("memory kind 'device' is not available: "), std::string::npos);
    }
  }
}
