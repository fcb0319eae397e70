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
