// SPDX-License-Identifier: BSD-3-Clause
// Overlap measurements (METHODOLOGY "Non-blocking collectives and overlap"): communication alone (pure),
// compute alone, and communication overlapped with compute (overall), one size at a time, with the overlap
// arithmetic, the checked operations of --validate and the record fields that nbc, part_overlap and halo
// share. What is posted and what the compute is stay with each benchmark.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"

namespace gmb::overlap {

// overhead = overall - pure.
double overhead(double overall, double pure);
// overlap % = max(0, 100 - 100 * (overall - compute) / pure): the share of the pure time hidden behind the
// compute. 0 when pure <= 0; capped at 100. Any unit, the same for the three.
double percent(double overall, double compute, double pure);

// The figures of one compute point, in microseconds, from the medians of the slowest-rank samples.
struct Figures {
  double pure_us = 0, compute_us = 0, overall_us = 0, overhead_us = 0, overlap_pct = 0;
  // From the medians in seconds.
  static Figures from_seconds(double pure, double compute, double overall);
  // Adds pure_us, compute_us, overall_us, overhead_us and overlap_pct to `object`, in that order.
  Json& add_to(Json& object) const;
  Json to_json() const;
};

// Compute time as fractions of the pure time: {1} for a single point, {0, 0.25, ..., 2} for a sweep.
std::vector<double> compute_fractions(bool sweep);

// The overlap curve as a note: "overlap curve at WHERE (compute/pure: overlap %): 0.00:97.1 0.25:..." from
// `curve`'s points (each with "compute_fraction" and "overlap_pct").
std::string curve_note(const std::string& where, const Json& curve);

// One size's measurement on every rank. Collective over ctx.comm wherever it takes samples or agrees.
class Measurement {
 public:
  // `warmup` unrecorded operations before the samples of a phase and `iterations` samples per phase.
  Measurement(const Context& ctx, int warmup, int iterations);
  // The settings' warm-up and iterations for `bytes`.
  Measurement(const Context& ctx, std::size_t bytes);

  int warmup() const { return warmup_; }
  int iterations() const { return iterations_; }

  // `iterations` samples of `body`, each timed on the host clock after a barrier; per sample the slowest rank's,
  // on every rank.
  std::vector<double> slowest_samples(const std::function<void()>& body) const;
  static double median(const std::vector<double>& seconds);

  // --validate: one untimed checked operation of size `size_index`, `checked(seed)` returning what it found
  // wrong or ""; the first finding is kept. Nothing without --validate. Checked operations are extra: timed ones
  // are never checked, so a validated figure is measured exactly as an unvalidated one.
  void check(std::size_t size_index, const std::function<std::string(std::uint32_t seed)>& checked);
  // Collective: every rank takes the lowest rank's finding (checked operations, or `found` for a benchmark that
  // validates otherwise).
  void agree_on_validation(const std::string& found = "");
  // kExitValidationFailed when validation found something wrong, else kExitOk.
  int exit_code() const;

  // A result record's sampling fields: iterations, warmup, batch (1: one operation per sample), `timing` and
  // the buffer allocation.
  void set_sampling(Json& record, const std::string& timing) const;
  // The rest of a result record, then writes it (rank 0): validated_iterations (when operations were checked),
  // time_us from the overall samples, `metrics`, and the validation of `what`.
  void write(RecordSink& sink, Json& record, const std::vector<double>& overall, Json metrics,
             const std::string& what) const;

 private:
  const Context& ctx_;
  int warmup_ = 0, iterations_ = 0;
  int checked_ = 0;
  std::string validation_error_;
};

}  // namespace gmb::overlap
