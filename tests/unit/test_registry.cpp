// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/benchmark.hpp"

using namespace gmb;

TEST(Registry, PointToPointBenchmarksAreRegistered) {
  for (const char* name : {"latency", "bw", "bibw", "mbw"}) {
    const BenchmarkInfo* info = Registry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_FALSE(info->summary.empty());
    EXPECT_NE(info->make(), nullptr);
  }
  EXPECT_EQ(Registry::instance().find("nope"), nullptr);
}

TEST(Registry, RankCountRules) {
  const BenchmarkInfo exactly_two{"latency", "", 2, 2, false, nullptr};
  EXPECT_EQ(rank_count_problem(exactly_two, 2), "");
  EXPECT_EQ(rank_count_problem(exactly_two, 3), "latency needs exactly 2 ranks (launched with 3)");
  const BenchmarkInfo even{"mbw", "", 2, 0, true, nullptr};
  EXPECT_EQ(rank_count_problem(even, 8), "");
  EXPECT_EQ(rank_count_problem(even, 5), "mbw needs an even number of ranks (launched with 5)");
  EXPECT_EQ(rank_count_problem(even, 1), "mbw needs at least 2 ranks (launched with 1)");
  const BenchmarkInfo bounded{"x", "", 1, 4, false, nullptr};
  EXPECT_EQ(rank_count_problem(bounded, 5), "x needs at most 4 ranks (launched with 5)");
}

// The engine's description calls these bandwidth benchmarks (directions and headline bandwidth_GBps): 0 B is no size for
// them, and only for them.
TEST(Registry, ZeroBytesHaveNoBandwidth) {
  for (const char* name : {"bw", "bibw", "mbw", "rma_bw", "rma_bibw", "part_bw"}) {
    const BenchmarkInfo* info = Registry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_TRUE(measures_bandwidth(*info)) << name;
    EXPECT_EQ(size_meaning_problem(*info, 0), "a bandwidth of 0-byte messages is not defined; latency measures 0 B");
    EXPECT_EQ(size_meaning_problem(*info, 1), "");
  }
  for (const char* name : {"latency", "mlat", "rma_latency", "coll", "nbc", "um", "peaks"}) {
    const BenchmarkInfo* info = Registry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_FALSE(measures_bandwidth(*info)) << name;
    EXPECT_EQ(size_meaning_problem(*info, 0), "") << name;
  }
}
