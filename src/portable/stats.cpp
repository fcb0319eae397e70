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

std::optional<std::pair<std::size_t, std::size_t>> median_ci_ranks(std::size_t n) {
  if (n < kMinSamplesForMedianCi) return std::nullopt;
  // Walk outwards from the middle, adding the binomial probabilities of the ranks the interval gains, until
  // the central mass reaches 95%. pmf(k - 1) = pmf(k) * k / (n - k + 1), from the middle's pmf by lgamma:
  // about sqrt(n) steps, no underflow for large n.
  const double nd = static_cast<double>(n);
  std::size_t low = n / 2;  // the pair (low, n + 1 - low) covers B in [low, n - low]
  double pmf = std::exp(std::lgamma(nd + 1) - std::lgamma(static_cast<double>(low) + 1) -
                        std::lgamma(static_cast<double>(n - low) + 1) - nd * std::log(2.0));
  double covered = n % 2 == 0 ? pmf : 2 * pmf;
  while (covered < 0.95 && low > 1) {
    pmf *= static_cast<double>(low) / static_cast<double>(n - low + 1);
    --low;
    covered += 2 * pmf;
  }
  return std::make_pair(low, n + 1 - low);
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
  if (const auto ranks = median_ci_ranks(s.n)) {
    s.ci95_low = samples[ranks->first - 1];
    s.ci95_high = samples[ranks->second - 1];
  } else {
    s.ci_note = "fewer than " + std::to_string(kMinSamplesForMedianCi) +
                " samples: no 95% order-statistic interval of the median";
  }
  return s;
}

Json Summary::to_json() const {
  Json json = Json::object();
  json
      .set("n", n)
      .set("min", min)
      .set("median", median)
      .set("mean", mean)
      .set("p5", p5)
      .set("p95", p95)
      .set("max", max)
      .set("cv", cv)
      .set("ci95_low", ci95_low ? Json(*ci95_low) : Json())
      .set("ci95_high", ci95_high ? Json(*ci95_high) : Json());
  if (!ci_note.empty()) json.set("ci_note", ci_note);
  return json;
}

double median_ci_relative_half_width(const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  if (!s.ci95_low) return std::numeric_limits<double>::infinity();
  const double half_width = std::max(s.median - *s.ci95_low, *s.ci95_high - s.median);
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
  // A few samples that happen to agree do not count as converged: at least as many as a fixed-count size has.
  if (taken >= limits.min_samples && median_ci_relative_half_width(samples) <= limits.target) return {0, "converged"};
  if (taken >= max_samples) return {0, "iteration cap"};
  if (left <= 0 || fits < 1) return {0, "time cap"};
  // Doubling: a point that needs many samples gets them in few rounds (each round costs a reduction and a
  // broadcast), while one that converges early stops at most twice past where it could have. A first round
  // that the warm-up's estimate cut short is topped up to the minimum where the caps allow.
  const long wanted = std::max(taken, static_cast<long>(limits.min_samples) - taken);
  return {static_cast<int>(std::min({wanted, max_samples - taken, fits})), ""};
}

int samples_to_minimum(int taken, int minimum, double seconds_so_far, double max_seconds) {
  if (taken <= 0 || taken >= minimum) return 0;
  const double per_sample = seconds_so_far / taken;
  const double left = max_seconds - seconds_so_far;
  if (per_sample <= 0) return minimum - taken;
  if (left <= 0) return 0;
  return static_cast<int>(std::min(static_cast<double>(minimum - taken), std::floor(left / per_sample)));
}

}  // namespace gmb
