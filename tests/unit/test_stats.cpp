#include <gtest/gtest.h>

#include <cmath>

#include "gmb/stats.hpp"

using namespace gmb;

TEST(Stats, KnownData) {
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);    // 1 + 0.05 * 4 * (2 - 1)
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 3, 1e-12);  // sample standard deviation / mean
  EXPECT_DOUBLE_EQ(s.ci95_low, 1);               // n < 6: [min, max]
  EXPECT_DOUBLE_EQ(s.ci95_high, 5);
}

TEST(Stats, EvenCountMedianInterpolates) {
  const Summary s = summarize({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
}

TEST(Stats, MedianConfidenceIntervalFromOrderStatistics) {
  std::vector<double> v;
  for (int k = 1; k <= 100; ++k) v.push_back(k);
  const Summary s = summarize(v);
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61 (1-based).
  EXPECT_DOUBLE_EQ(s.ci95_low, 40);
  EXPECT_DOUBLE_EQ(s.ci95_high, 61);
  EXPECT_LE(s.ci95_low, s.median);
  EXPECT_GE(s.ci95_high, s.median);
}

TEST(Stats, ConstantSamplesHaveNoSpread) {
  const Summary s = summarize(std::vector<double>(50, 2.0));
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_DOUBLE_EQ(s.ci95_low, 2);
  EXPECT_DOUBLE_EQ(s.ci95_high, 2);
}

TEST(Stats, EmptyThrows) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(Stats, TransformedMedianOfMonotoneFunction) {
  const Summary s = summarize_transformed({1.0, 2.0, 4.0}, [](double t) { return 8.0 / t; });
  EXPECT_DOUBLE_EQ(s.median, 4.0);
  EXPECT_DOUBLE_EQ(s.max, 8.0);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
}

TEST(Stats, JsonHasEveryField) {
  const std::string j = summarize({1, 2, 3}).to_json().dump();
  for (const char* key : {"n", "min", "median", "mean", "p5", "p95", "max", "cv", "ci95_low", "ci95_high"})
    EXPECT_NE(j.find(std::string("\"") + key + "\""), std::string::npos) << key;
}
