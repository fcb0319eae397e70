// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/overlap.hpp"

#include <algorithm>
#include <cstdio>

#include "gmb/buffer_pool.hpp"
#include "gmb/error.hpp"
#include "gmb/stats.hpp"
#include "gmb/timing.hpp"

namespace gmb::overlap {

double overhead(double overall, double pure) { return overall - pure; }

double percent(double overall, double compute, double pure) {
  if (!(pure > 0)) return 0.0;
  const double v = 100.0 - 100.0 * (overall - compute) / pure;
  return std::min(100.0, std::max(0.0, v));
}

Figures Figures::from_seconds(double pure, double compute, double overall) {
  Figures f;
  f.pure_us = pure * 1e6;
  f.compute_us = compute * 1e6;
  f.overall_us = overall * 1e6;
  f.overhead_us = overhead(overall, pure) * 1e6;
  f.overlap_pct = percent(overall, compute, pure);
  return f;
}

Json& Figures::add_to(Json& object) const {
  return object.set("pure_us", pure_us)
      .set("compute_us", compute_us)
      .set("overall_us", overall_us)
      .set("overhead_us", overhead_us)
      .set("overlap_pct", overlap_pct);
}

Json Figures::to_json() const {
  Json object = Json::object();
  add_to(object);
  return object;
}

std::vector<double> compute_fractions(bool sweep) {
  if (!sweep) return {1.0};
  std::vector<double> f;
  for (int k = 0; k <= 8; ++k) f.push_back(0.25 * k);
  return f;
}

std::string curve_note(const std::string& where, const Json& curve) {
  std::string text = "overlap curve at " + where + " (compute/pure: overlap %):";
  char item[48];
  for (const Json& point : *curve.as_array()) {
    std::snprintf(item, sizeof item, " %.2f:%.1f", point.find("compute_fraction")->as_number(),
                  point.find("overlap_pct")->as_number());
    text += item;
  }
  return text;
}

Measurement::Measurement(const Context& ctx, int warmup, int iterations)
    : ctx_(ctx), warmup_(warmup), iterations_(iterations) {}

Measurement::Measurement(const Context& ctx, std::size_t bytes)
    : Measurement(ctx, ctx.settings->warmup_for(bytes), ctx.settings->iterations_for(bytes)) {}

std::vector<double> Measurement::slowest_samples(const std::function<void()>& body) const {
  Samples mine(static_cast<std::size_t>(iterations_));
  for (int k = 0; k < iterations_; ++k) mine.add(time_after_barrier(ctx_.comm, body));
  // Sample k of every rank covers the same operation.
  return slowest_rank_everywhere(mine.seconds(), ctx_.comm);
}

double Measurement::median(const std::vector<double>& seconds) { return summarize(seconds).median; }

void Measurement::check(std::size_t size_index, const std::function<std::string(std::uint32_t seed)>& checked) {
  if (!ctx_.settings->validate) return;
  const std::string found = checked(validation_seed(size_index, checked_++));
  if (validation_error_.empty()) validation_error_ = found;
}

void Measurement::agree_on_validation(const std::string& found) {
  if (validation_error_.empty()) validation_error_ = found;
  validation_error_ = agree_on_reason(ctx_.comm, validation_error_);
}

int Measurement::exit_code() const { return validation_error_.empty() ? kExitOk : kExitValidationFailed; }

void Measurement::set_sampling(Json& record, const std::string& timing) const {
  record.set("iterations", iterations_)
      .set("warmup", warmup_)
      .set("batch", 1)
      .set("timing", timing)
      .set("buffer_allocation", to_string(ctx_.buffers->allocation()));
}

void Measurement::write(RecordSink& sink, Json& record, const std::vector<double>& overall, Json metrics,
                        const std::string& what) const {
  if (checked_ > 0) record.set("validated_iterations", checked_);
  record.set("time_us", summarize_transformed(overall, [](double s) { return s * 1e6; }).to_json());
  record.set("metrics", std::move(metrics));
  set_validation(record, ctx_.settings->validate, validation_error_, what);
  sink.write_result(record);
}

}  // namespace gmb::overlap
