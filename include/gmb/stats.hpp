// SPDX-License-Identifier: BSD-3-Clause
// Order statistics of timing samples (METHODOLOGY "Statistics and trust").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gmb/json.hpp"

namespace gmb {

struct Summary {
  std::size_t n = 0;
  double min = 0, median = 0, mean = 0, p5 = 0, p95 = 0, max = 0;
  double cv = 0;  // coefficient of variation: sample standard deviation / mean
  // 95% confidence interval of the median from order statistics (no distribution assumed):
  // ranks floor(n/2 - 0.98 sqrt(n)) and ceil(1 + n/2 + 0.98 sqrt(n)), 1-based (Le Boudec,
  // "Performance Evaluation of Computer and Communication Systems", Thm 2.1). [min, max] when n < 6.
  double ci95_low = 0, ci95_high = 0;

  Json to_json() const;
};

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
// of 0 (or below) with some spread, which no target accepts. Throws std::invalid_argument when empty.
double median_ci_relative_half_width(const std::vector<double>& samples);

// The stop rule of adaptive repetitions, as a pure function so that it is tested apart from MPI. The runner
// takes samples in rounds and, after each, asks next_round with the slowest rank's samples so far (empty
// before the first round).
struct RoundLimits {
  double target = 0;           // the relative half-width wanted (0.03: +-3%)
  int min_samples = 10;        // never "converged" on fewer (the interval of up to 10 samples is [min, max])
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

}  // namespace gmb
