// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/stats.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace gmb {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of no samples");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summary of no samples");
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile_sorted(samples, 0.5);
  s.p5 = quantile_sorted(samples, 0.05);
  s.p95 = quantile_sorted(samples, 0.95);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.n);
  if (s.n > 1 && s.mean != 0.0) {
    double ss = 0;
    for (double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.cv = std::sqrt(ss / static_cast<double>(s.n - 1)) / std::fabs(s.mean);
  }
  if (s.n < 6) {
    s.ci95_low = s.min;
    s.ci95_high = s.max;
  } else {
    const double n = static_cast<double>(s.n);
    const double half_width = 0.98 * std::sqrt(n);  // 1.96 * sqrt(n) / 2
    auto lo = static_cast<long>(std::floor(n / 2.0 - half_width));
    auto hi = static_cast<long>(std::ceil(1.0 + n / 2.0 + half_width));
    lo = std::clamp(lo, 1L, static_cast<long>(s.n));
    hi = std::clamp(hi, 1L, static_cast<long>(s.n));
    s.ci95_low = samples[static_cast<std::size_t>(lo - 1)];
    s.ci95_high = samples[static_cast<std::size_t>(hi - 1)];
  }
  return s;
}

Json Summary::to_json() const {
  return Json::object()
      .set("n", n)
      .set("min", min)
      .set("median", median)
      .set("mean", mean)
      .set("p5", p5)
      .set("p95", p95)
      .set("max", max)
      .set("cv", cv)
      .set("ci95_low", ci95_low)
      .set("ci95_high", ci95_high);
}

double median_ci_relative_half_width(const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  const double half_width = std::max(s.median - s.ci95_low, s.ci95_high - s.median);
  if (half_width <= 0) return 0;
  if (s.median <= 0) return std::numeric_limits<double>::infinity();
  return half_width / s.median;
}

RoundDecision next_round(const std::vector<double>& samples, const RoundLimits& limits, double seconds_so_far,
                         double seconds_per_sample) {
  const long taken = static_cast<long>(samples.size());
  const long max_samples = std::max(1, limits.max_samples);
  // The samples that still fit in the time cap, by what one is expected to take (no bound when unknown).
  const double left = limits.max_seconds - seconds_so_far;
  long fits = INT_MAX;
  if (seconds_per_sample > 0)
    fits = static_cast<long>(std::clamp(std::floor(left / seconds_per_sample), 0.0, static_cast<double>(INT_MAX)));
  if (taken == 0) {
    // The first round: a point whose every sample overruns the time cap still takes one.
    return {static_cast<int>(std::max(1L, std::min({static_cast<long>(limits.min_samples), max_samples, fits}))), ""};
  }
  // Up to 10 samples the interval is [min, max], which for fewer than 6 covers the median with less than 95%
  // probability (3 samples: 75%): a few samples that happen to agree do not count as converged; at least as
  // many as a fixed-count size has.
  if (taken >= limits.min_samples && median_ci_relative_half_width(samples) <= limits.target) return {0, "converged"};
  if (taken >= max_samples) return {0, "iteration cap"};
  if (left <= 0 || fits < 1) return {0, "time cap"};
  // Doubling: a point that needs many samples gets them in few rounds (each round costs a reduction and a
  // broadcast), while one that converges early stops at most twice past where it could have.
  return {static_cast<int>(std::min({taken, max_samples - taken, fits})), ""};
}

}  // namespace gmb
