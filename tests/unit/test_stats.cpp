// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

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
  EXPECT_FALSE(s.ci95_low.has_value());  // n < 6: no pair of order statistics covers the median with 95%
  EXPECT_FALSE(s.ci95_high.has_value());
  EXPECT_NE(s.ci_note.find("fewer than 6 samples"), std::string::npos);
}

TEST(Stats, FewerThanSixSamplesHaveNoIntervalNeverMinMaxNorZeroWidth) {
  for (std::size_t n = 1; n <= 5; ++n) {
    std::vector<double> v;
    for (std::size_t k = 0; k < n; ++k) v.push_back(static_cast<double>(k + 1));
    const Summary s = summarize(v);
    EXPECT_FALSE(s.ci95_low.has_value()) << n;
    EXPECT_FALSE(median_ci_ranks(n).has_value()) << n;
    EXPECT_TRUE(std::isinf(median_ci_relative_half_width(v))) << n;  // no target accepts it
    const std::string j = s.to_json().dump();
    EXPECT_NE(j.find("\"ci95_low\":null"), std::string::npos) << j;
    EXPECT_NE(j.find("\"ci95_high\":null"), std::string::npos) << j;
    EXPECT_NE(j.find("\"ci_note\":\"fewer than 6 samples"), std::string::npos) << j;
  }
  const Summary six = summarize({1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(six.ci95_low.has_value());
  EXPECT_DOUBLE_EQ(*six.ci95_low, 1);  // n = 6: [min, max] covers the median with 1 - 2/64 = 96.9%
  EXPECT_DOUBLE_EQ(*six.ci95_high, 6);
  EXPECT_TRUE(six.ci_note.empty());
  EXPECT_EQ(six.to_json().dump().find("ci_note"), std::string::npos);
}

namespace {
// P(l <= B <= n - l) for B ~ Binomial(n, 1/2), exactly: sum of C(n, k) over k in [l, n - l], divided by 2^n (n <= 62).
double exact_coverage(std::size_t n, std::size_t l) {
  std::uint64_t c = 1, sum = 0;  // c = C(n, k)
  for (std::size_t k = 0; k <= n; ++k) {
    if (k >= l && k <= n - l) sum += c;
    c = c * (n - k) / (k + 1);
  }
  return static_cast<double>(sum) / std::ldexp(1.0, static_cast<int>(n));
}
}  // namespace

TEST(Stats, MedianIntervalRanksAreTheNarrowestPairWithExactBinomialCoverageOf95) {
  for (std::size_t n = 6; n <= 60; ++n) {
    const auto ranks = median_ci_ranks(n);
    ASSERT_TRUE(ranks.has_value()) << n;
    const std::size_t l = ranks->first;
    EXPECT_EQ(ranks->second, n + 1 - l) << n;
    EXPECT_GE(exact_coverage(n, l), 0.95) << n;
    if (l + 1 <= n / 2) EXPECT_LT(exact_coverage(n, l + 1), 0.95) << n;  // one rank narrower falls short
  }
  // Published table values (Conover, Table A3; nonparametric CI of the median).
  EXPECT_EQ(median_ci_ranks(9)->first, 2u);
  EXPECT_EQ(median_ci_ranks(20)->first, 6u);
  EXPECT_EQ(median_ci_ranks(100)->first, 40u);
  EXPECT_EQ(median_ci_ranks(1000)->first, 469u);
  // Large counts (no underflow): close to the normal approximation n/2 - 0.98 sqrt(n).
  const auto big = median_ci_ranks(10000000);
  ASSERT_TRUE(big.has_value());
  EXPECT_NEAR(static_cast<double>(big->first), 5e6 - 0.98 * std::sqrt(1e7), 3);
}

TEST(Stats, ReportedIntervalCoversTheMedianAtLeast95PercentInSimulation) {
  std::mt19937_64 rng(12345);
  std::lognormal_distribution<double> skewed(0.0, 0.5);  // true median exp(0) = 1
  const double true_median = 1.0;
  for (std::size_t n : {6u, 7u, 9u, 10u, 12u, 20u, 50u}) {
    const int draws = 20000;
    int covered = 0;
    for (int d = 0; d < draws; ++d) {
      std::vector<double> v(n);
      for (double& x : v) x = skewed(rng);
      const Summary s = summarize(v);
      if (*s.ci95_low <= true_median && true_median <= *s.ci95_high) ++covered;
    }
    // Exact coverage >= 95%; 3 standard errors of 20000 draws below it (0.46%) would be a real shortfall.
    EXPECT_GE(static_cast<double>(covered) / draws, 0.95 - 0.0046) << n;
  }
}

TEST(Stats, EvenCountMedianInterpolates) {
  const Summary s = summarize({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
}

TEST(Stats, MedianConfidenceIntervalFromOrderStatistics) {
  std::vector<double> v;
  for (int k = 1; k <= 100; ++k) v.push_back(k);
  const Summary s = summarize(v);
  // n = 100: ranks 40 and 61 (1-based), exact coverage 96.5%.
  EXPECT_DOUBLE_EQ(*s.ci95_low, 40);
  EXPECT_DOUBLE_EQ(*s.ci95_high, 61);
  EXPECT_LE(*s.ci95_low, s.median);
  EXPECT_GE(*s.ci95_high, s.median);
}

TEST(Stats, ConstantSamplesHaveNoSpread) {
  const Summary s = summarize(std::vector<double>(50, 2.0));
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_DOUBLE_EQ(*s.ci95_low, 2);
  EXPECT_DOUBLE_EQ(*s.ci95_high, 2);
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
  skewed.back() = 3.0;  // n = 20: interval ranks 6 and 15 of the sorted samples
  const Summary s = summarize(skewed);
  EXPECT_DOUBLE_EQ(median_ci_relative_half_width(skewed),
                   std::max(s.median - *s.ci95_low, *s.ci95_high - s.median) / s.median);
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

TEST(AdaptiveStop, AFirstRoundCutShortIsToppedUpToTheMinimumWhereItFits) {
  // 3 samples taken (the warm-up overestimated them), the rest fit: 7 more reach the minimum, not 3 (doubling).
  EXPECT_EQ(next_round(std::vector<double>(3, 1.0), limits(0.03, 1000, 1.0), 0.03, 0.01).samples, 7);
  // Only 2 more fit in the time cap: 2.
  EXPECT_EQ(next_round(std::vector<double>(3, 1.0), limits(0.03, 1000, 1.0), 0.75, 0.1).samples, 2);
}

TEST(SampleMinimum, AFixedCountBelowTheMinimumIsToppedUpWithinTheTimeCap) {
  EXPECT_EQ(samples_to_minimum(5, 10, 0.005, 1.0), 5);   // 5 more of 1 ms fit in the cap
  EXPECT_EQ(samples_to_minimum(1, 10, 0.002, 1.0), 9);   // one batched sample (NCCL's 20 calls): 9 more
  EXPECT_EQ(samples_to_minimum(5, 10, 0.5, 1.0), 5);     // 0.1 s each: 5 more fill the cap exactly
  EXPECT_EQ(samples_to_minimum(5, 10, 0.75, 1.0), 1);    // 0.15 s each: one more fits
  EXPECT_EQ(samples_to_minimum(2, 10, 1.5, 1.0), 0);     // past the cap: none
  EXPECT_EQ(samples_to_minimum(10, 10, 0.01, 1.0), 0);   // already at the minimum
  EXPECT_EQ(samples_to_minimum(200, 10, 0.01, 1.0), 0);
}
