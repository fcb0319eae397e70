// SPDX-License-Identifier: BSD-3-Clause
// Order statistics of timing samples (METHODOLOGY "Statistics and trust").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmb/json.hpp"

namespace gmb {

struct Summary {
  std::size_t n = 0;
  double min = 0, median = 0, mean = 0, p5 = 0, p95 = 0, max = 0;
  double cv = 0;  // coefficient of variation: sample standard deviation / mean
  // 95% confidence interval of the median from order statistics (median_ci_ranks: no distribution assumed);
  // none below kMinSamplesForMedianCi samples, and then ci_note says why.
  std::optional<double> ci95_low, ci95_high;
  std::string ci_note;

  Json to_json() const;
};

// The fewest samples for which a pair of order statistics covers the median with probability >= 95%: with 5,
// even [min, max] covers it with 1 - 2/32 = 93.75%.
constexpr std::size_t kMinSamplesForMedianCi = 6;

// The 1-based ranks (l, n + 1 - l) of the narrowest symmetric pair of order statistics whose interval
// [X(l), X(n+1-l)] covers the median of any continuous distribution with probability >= 95%: the largest l
// with P(l <= B <= n - l) >= 0.95 for B ~ Binomial(n, 1/2) (Conover, "Practical Nonparametric Statistics",
// 3.2). The exact binomial sum, no normal approximation. None when n < kMinSamplesForMedianCi.
std::optional<std::pair<std::size_t, std::size_t>> median_ci_ranks(std::size_t n);

// Quantile q in [0, 1] of sorted data by linear interpolation between closest ranks.
double quantile_sorted(const std::vector<double>& sorted, double q);

// Summary of the samples; throws std::invalid_argument when empty.
Summary summarize(std::vector<double> samples);

// Applies f to every sample and summarises the result. Used for derived quantities
// (bandwidth = bytes / time): the median of f(x) is f(median x) for monotone f.
template <typename F>
Summary summarize_transformed(const std::vector<double>& samples, F f) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (double s : samples) out.push_back(f(s));
  return summarize(std::move(out));
}

// Adaptive repetitions (--precision, methodology.md "Timing and statistics"): how far the median's 95%
// confidence interval reaches from the median, relative to it, on its wider side:
// max(median - ci95_low, ci95_high - median) / median. 0 for samples that are all 0; infinity for a median
// of 0 (or below) with some spread, or for samples too few for an interval, which no target accepts. Throws
// std::invalid_argument when empty.
double median_ci_relative_half_width(const std::vector<double>& samples);

// The stop rule of adaptive repetitions, as a pure function so that it is tested apart from MPI. The runner
// takes samples in rounds and, after each, asks next_round with the slowest rank's samples so far (empty
// before the first round).
struct RoundLimits {
  double target = 0;           // the relative half-width wanted (0.03: +-3%)
  int min_samples = 10;        // never "converged" on fewer; rounds reach it where the caps allow
  int max_samples = 1;         // the iteration cap, in samples
  double max_seconds = 1.0;    // the time cap: timed seconds per size
};
struct RoundDecision {
  int samples = 0;      // samples of the next round; 0 when done
  std::string stopped;  // when done: "converged", "iteration cap" or "time cap"
};
// `seconds_so_far`: the timed seconds taken (one rank's clock); `seconds_per_sample`: what a sample is
// expected to take (0: unknown). The first round takes min_samples (fewer when a cap leaves less room);
// later rounds double the samples so far, bounded by both caps.
RoundDecision next_round(const std::vector<double>& samples, const RoundLimits& limits, double seconds_so_far,
                         double seconds_per_sample);

// A fixed count of samples (without --precision) that is below `minimum`: how many more to take, up to the
// minimum, as many as fit in the time cap by what the `taken` samples took on average (`seconds_so_far`).
int samples_to_minimum(int taken, int minimum, double seconds_so_far, double max_seconds);

}  // namespace gmb
