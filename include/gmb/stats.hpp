// Order statistics of timing samples (METHODOLOGY "Statistics and trust").
#pragma once

#include <cstddef>
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

}  // namespace gmb
