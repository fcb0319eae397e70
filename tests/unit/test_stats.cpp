// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <algorithm>
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

// ---- Adaptive repetitions (--precision): the stop rule -------------------------------------------------

TEST(AdaptiveStop, RelativeHalfWidthIsTheWiderSideOverTheMedian) {
  std::vector<double> v;
  for (int k = 1; k <= 100; ++k) v.push_back(k);
  // n = 100: median 50.5, interval [40, 61]: sides 10.5 and 10.5.
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(v), 10.5 / 50.5);
  // The wider side counts: a long upper tail widens only the upper side.
  std::vector<double> skewed(20, 1.0);
  for (int k = 0; k < 10; ++k) skewed[static_cast<std::size_t>(k)] = 1.0 + 0.001 * k;
  skewed.back() = 3.0;  // n = 20: interval ranks 5 and 16 of the sorted samples
  const Summary s = summarize(skewed);
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(skewed),
                   std::max(s.median - s.ci95_low, s.ci95_high - s.median) / s.median);
  // Unsorted input is the same as sorted.
  std::vector<double> shuffled = {5, 1, 4, 2, 3, 9, 8, 7, 6, 10, 12, 11};
  std::vector<double> sorted = shuffled;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(shuffled), median_ci_relative_half_width(sorted));
}

TEST(AdaptiveStop, DegenerateSamples) {
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(std::vector<double>(12, 3.0)), 0);
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(std::vector<double>(12, 0.0)), 0);
  EXPECT_TRUE(std::isinf(median_ci_relative_half_width({0, 0, 0, 0, 0, 0, 0, 1})));
  EXPECT_THROW(median_ci_relative_half_width({}), std::invalid_argument);
}

namespace {
RoundLimits limits(double target, int max_samples, double max_seconds) {
  RoundLimits l;
  l.target = target;
  l.max_samples = max_samples;
  l.max_seconds = max_seconds;
  return l;
}
// n samples around 1.0, every one within +-spread of it.
std::vector<double> around_one(int n, double spread) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(1.0 + spread * (k % 2 ? 1 : -1) * (k % 5) / 4.0);
  return v;
}
}  // namespace

TEST(AdaptiveStop, FirstRoundIsTheMinimumBoundedByTheCaps) {
  EXPECT_EQ(next_round({}, limits(0.03, 1000, 1.0), 0, 0).samples, 10);       // duration unknown
  EXPECT_EQ(next_round({}, limits(0.03, 1000, 1.0), 0, 1e-3).samples, 10);
  EXPECT_EQ(next_round({}, limits(0.03, 4, 1.0), 0, 1e-3).samples, 4);        // the iteration cap leaves 4
  EXPECT_EQ(next_round({}, limits(0.03, 1000, 1.0), 0, 0.3).samples, 3);      // 3 fit in the time cap
  EXPECT_EQ(next_round({}, limits(0.03, 1000, 1.0), 0, 5.0).samples, 1);      // none fits: one all the same
  EXPECT_TRUE(next_round({}, limits(0.03, 1000, 1.0), 0, 0).stopped.empty());
}

TEST(AdaptiveStop, ATightPointConvergesAtTheFirstCheck) {
  const RoundDecision d = next_round(around_one(10, 0.01), limits(0.03, 1000, 1.0), 0.01, 1e-3);
  EXPECT_EQ(d.samples, 0);
  EXPECT_EQ(d.stopped, "converged");
}

TEST(AdaptiveStop, NeverConvergedOnFewerThanTheMinimum) {
  // Identical samples, but only 5 (the time cap cut the first round): not converged; more are taken.
  const RoundDecision d = next_round(std::vector<double>(5, 1.0), limits(0.03, 1000, 1.0), 0.5, 0.125);
  EXPECT_EQ(d.samples, 4);  // 5 would double, 4 more fit in the 0.5 s left
  EXPECT_TRUE(d.stopped.empty());
  // With an iteration cap under the minimum, the cap stops it.
  EXPECT_EQ(next_round(std::vector<double>(5, 1.0), limits(0.03, 5, 1.0), 0.005, 1e-3).stopped, "iteration cap");
}

TEST(AdaptiveStop, ANoisyPointDoublesWithinTheCaps) {
  const std::vector<double> noisy = around_one(10, 0.5);
  ASSERT_GT(median_ci_relative_half_width(noisy), 0.03);
  EXPECT_EQ(next_round(noisy, limits(0.03, 1000, 1.0), 0.01, 1e-3).samples, 10);   // doubles
  EXPECT_EQ(next_round(noisy, limits(0.03, 16, 1.0), 0.01, 1e-3).samples, 6);      // up to the iteration cap
  EXPECT_EQ(next_round(noisy, limits(0.03, 1000, 1.0), 0.625, 0.125).samples, 3);  // what fits in 0.375 s
  EXPECT_EQ(next_round(around_one(40, 0.5), limits(0.03, 1000, 1.0), 0.04, 1e-3).samples, 40);
}

TEST(AdaptiveStop, CapsStopANoisyPoint) {
  const std::vector<double> noisy = around_one(20, 0.5);
  EXPECT_EQ(next_round(noisy, limits(0.03, 20, 1.0), 0.02, 1e-3).stopped, "iteration cap");
  EXPECT_EQ(next_round(noisy, limits(0.03, 1000, 1.0), 1.2, 0.06).stopped, "time cap");   // over the cap
  EXPECT_EQ(next_round(noisy, limits(0.03, 1000, 1.0), 0.95, 0.06).stopped, "time cap");  // no sample fits
  EXPECT_EQ(next_round(noisy, limits(0.03, 1000, 1.0), 1.2, 0.06).samples, 0);
  // Both caps at once: the iteration cap is named.
  EXPECT_EQ(next_round(noisy, limits(0.03, 20, 1.0), 1.2, 0.06).stopped, "iteration cap");
  // Precise enough at a cap: converged.
  EXPECT_EQ(next_round(around_one(20, 0.01), limits(0.03, 20, 1.0), 1.2, 0.06).stopped, "converged");
}
