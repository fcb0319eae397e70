// SPDX-License-Identifier: BSD-3-Clause
// The size-sweep runner: warm-up, batching, timing, cross-rank reduction, validation, records.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gmb/benchmark.hpp"
#include "gmb/crash_report.hpp"
#include "gmb/error.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

// Samples shorter than this are batched, so that what each sample pays once (reading the clock, and the few
// microseconds by which ranks leave the barrier before it apart) is about 1% of it or less.
constexpr double kTargetSampleSeconds = 200e-6;
constexpr int kMinSamples = RunSettings::kMinSamples;
// Iterations of the untimed page-fault counting pass (fewer when fewer are timed).
constexpr int kPageFaultIterations = 10;

// The samples of a size held in memory, a fixed count of them: each rank's (at most one per iteration: a batch of 1)
// and, on rank 0, the slowest rank's, or every rank's where the sweep gathers them (--iters 2147483647: 16 GiB per
// rank).
void add_sample_needs(SizeNeeds& n, const Context& ctx, int iterations, bool every_rank) {
  const std::uint64_t samples = static_cast<std::uint64_t>(iterations) * sizeof(double);
  n.add_bookkeeping("timing samples", samples);
  if (ctx.rank == 0)
    n.add_bookkeeping(every_rank ? "every rank's samples" : "the slowest rank's samples",
                      samples * static_cast<std::uint64_t>(every_rank ? ctx.size : 1));
}

}  // namespace

Json RunSettings::to_json() const {
  Json sizes_json = Json::array();
  for (auto s : sizes) sizes_json.push(s);
  return Json::object()
      .set("sizes", sizes_json)
      .set("iters", iters)
      .set("warmup", warmup)
      .set("iters_large", iters_large)
      .set("warmup_large", warmup_large)
      .set("large_size", large_size)
      .set("batch", batch)
      .set("validate", validate)
      .set("fresh_buffers", fresh_buffers)
      .set("memory_limit", memory_limit ? Json(memory_limit) : Json())
      .set("nic", nic.text)
      .set("precision", adaptive() ? Json::object().set("target", precision).set("max_seconds", time_cap()) : Json());
}

int record_unsupported(const Context& ctx, RecordSink& sink, std::size_t bytes, const std::string& reason,
                       const std::function<void(Json& record)>& describe) {
  if (ctx.rank == 0) {
    Json record = unsupported_record(ctx, bytes, reason);
    describe(record);
    sink.write_result(record);
  }
  return kExitUnsupported;
}

int record_unsupported_sweep(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes,
                             const std::string& reason, const std::function<void(Json& record)>& describe) {
  if (ctx.rank == 0) sink.say_unsupported(reason);
  for (auto bytes : sizes) record_unsupported(ctx, sink, bytes, reason, describe);
  return kExitUnsupported;
}

namespace {

// The sizes a block did not begin before its deadline: each a record with status "skipped" and the reason.
void record_skipped(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes,
                    const std::function<void(Json& record)>& describe) {
  if (ctx.rank != 0) return;
  for (auto bytes : sizes) {
    Json record = skipped_record(ctx, bytes, "this size");
    describe(record);
    sink.write_result(record);
  }
}

}  // namespace

int sweep_sizes(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes, const SweepSteps& steps) {
  // Sizes beyond the count or memory limits are refused before anything is allocated, so that the buffers
  // are sized for the largest size that is measured.
  const SizeVerdicts verdicts = size_verdicts(ctx, sizes, steps.needs);
  reserve_buffers(ctx, verdicts.measurable, steps.setup, steps.teardown);
  int exit_code = kExitOk;
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    const std::size_t bytes = sizes[index];
    if (deadline_reached(ctx)) {
      record_skipped(ctx, sink, std::vector<std::uint64_t>(sizes.begin() + static_cast<std::ptrdiff_t>(index),
                                                           sizes.end()), steps.describe);
      break;
    }
    if (!verdicts.refusals[index].empty()) {
      exit_code = std::max(exit_code, record_unsupported(ctx, sink, bytes, verdicts.refusals[index], steps.describe));
      continue;
    }
    Json configuration = Json::object().set("bytes", bytes);
    steps.describe(configuration);
    set_crash_context(ctx.benchmark + ", " + std::to_string(bytes) + " bytes, " + configuration.dump());
    const std::string problem = agreed_refusal(ctx.comm, [&] { steps.setup(bytes); });
    if (!problem.empty()) {
      steps.teardown();
      exit_code = std::max(exit_code, record_unsupported(ctx, sink, bytes, problem, steps.describe));
      continue;
    }
    exit_code = std::max(exit_code, steps.measure(index, bytes));
  }
  return exit_code;
}

namespace {

// The page-fault counter of a sweep, set up once before the first timed sample, so that loading CUPTI never
// falls inside a size's timing.
struct FaultCounter {
  std::unique_ptr<UnifiedMemoryCounter> counter;
  std::string unavailable_reason;
};

FaultCounter make_fault_counter(const Context& ctx, const ManagedPlacement& placement) {
  FaultCounter faults;
  if (!placement.counts_page_faults()) return faults;
  if (ctx.platform->gpu && ctx.platform->gpu_unavailable_reason.empty())
    faults.counter = ctx.platform->gpu->unified_memory_counter(&faults.unavailable_reason);
  else
    faults.unavailable_reason = "no usable GPU: " + ctx.platform->gpu_unavailable_reason;
  return faults;
}

// One size of a sweep: --validate's checked iterations around the warm-up and the timed samples, the
// reduction over ranks, the page faults, the record.
class SizeMeasurement {
 public:
  SizeMeasurement(const Context& ctx, SizeSweep& sweep, ManagedPlacement& placement, const FaultCounter& faults,
                  std::size_t index, std::size_t bytes)
      : ctx_(ctx), settings_(*ctx.settings), sweep_(sweep), placement_(placement), faults_(faults), index_(index),
        bytes_(bytes), one_per_sample_(placement.places_before_iteration()) {}

  int run(RecordSink& sink) {
    if (settings_.validate) checked_iteration();
    warm_up();
    choose_batch();
    if (settings_.adaptive()) take_adaptive_samples();
    else take_fixed_samples();
    if (settings_.validate) checked_iteration();
    reduce();
    validation_error_ = agree_on_reason(ctx_.comm, validation_error_);
    count_faults();
    sweep_.teardown();
    if (ctx_.rank == 0) write(sink);
    return validation_error_.empty() ? kExitOk : kExitValidationFailed;
  }

 private:
  // A timed sample of `count` iterations, seconds per iteration, after a barrier (and after the untimed
  // work before an iteration, for sweeps that have some: then count is 1).
  double timed_sample(int count) {
    if (one_per_sample_) placement_.place();
    return time_after_barrier(
        ctx_.comm,
        [&] {
          for (int k = 0; k < count; ++k) sweep_.iterate();
          sweep_.complete();
        },
        count);
  }

  // --validate: an untimed iteration whose data producers write and consumers check.
  void checked_iteration() {
    const std::uint32_t seed = validation_seed(index_, checked_++);
    sweep_.prepare(seed);
    placement_.place();
    GMB_MPI_CHECK(MPI_Barrier(ctx_.comm));
    sweep_.iterate();
    sweep_.complete();
    if (std::string e = sweep_.verify(seed); !e.empty() && validation_error_.empty()) validation_error_ = e;
  }

  void warm_up() {
    warmup_ = settings_.warmup_for(bytes_);
    GMB_MPI_CHECK(MPI_Barrier(ctx_.comm));
    if (one_per_sample_) {
      for (int k = 0; k < warmup_; ++k) warm_seconds_ += timed_sample(1);
    } else {
      warm_seconds_ = host_time([&] {
        for (int k = 0; k < warmup_; ++k) sweep_.iterate();
        sweep_.complete();
      });
    }
  }

  // Iterations per sample: --batch, or as many as make a sample last kTargetSampleSeconds by the warm-up.
  void choose_batch() {
    iterations_ = settings_.iterations_for(bytes_);
    batch_ = settings_.batch;
    if (one_per_sample_) {
      batch_ = 1;
    } else if (batch_ == 0) {
      batch_ = 1;
      if (warmup_ > 0 && ctx_.rank == 0) {
        const double per_iteration = warm_seconds_ / warmup_;
        const int wanted = per_iteration > 0 ? static_cast<int>(std::ceil(kTargetSampleSeconds / per_iteration)) : 1;
        batch_ = std::clamp(wanted, 1, std::max(1, iterations_ / kMinSamples));
      }
      batch_ = std::max(batch_, sweep_.min_batch());
      GMB_MPI_CHECK(MPI_Bcast(&batch_, 1, MPI_INT, 0, ctx_.comm));
    }
  }

  // Without --precision, a fixed number of samples: the iterations asked for, rounded up to whole samples. Where
  // those are fewer than kMinSamples (few iterations asked for, or a benchmark's minimum batch above a tenth of
  // them), more samples of the same batch follow, up to kMinSamples, as many as fit in the time cap by what the
  // samples so far took on rank 0's clock (rank 0 decides and broadcasts, between samples).
  void take_fixed_samples() {
    asked_samples_ = std::max(1, (iterations_ + batch_ - 1) / batch_);
    mine_ = Samples(static_cast<std::size_t>(std::max(asked_samples_, kMinSamples)));
    double timed_seconds = 0;
    for (int k = 0; k < asked_samples_; ++k) {
      mine_.add(timed_sample(batch_));
      timed_seconds += mine_.seconds().back() * batch_;
    }
    if (asked_samples_ >= kMinSamples) return;
    int more = ctx_.rank == 0 ? samples_to_minimum(asked_samples_, kMinSamples, timed_seconds, settings_.time_cap()) : 0;
    GMB_MPI_CHECK(MPI_Bcast(&more, 1, MPI_INT, 0, ctx_.comm));
    for (int k = 0; k < more; ++k) mine_.add(timed_sample(batch_));
  }

  // Rounds of samples until the slowest rank's median is precise enough or a cap is reached. Only rank 0
  // decides, on its clock, and broadcasts the next round's size (0: stop), so that every rank takes the same
  // samples; the reduction and the broadcast fall between samples, never inside one.
  void take_adaptive_samples() {
    RoundLimits limits;
    limits.target = settings_.precision;
    limits.min_samples = kMinSamples;
    limits.max_samples = std::max(1, iterations_ / batch_);  // whole samples within the iteration cap
    limits.max_seconds = settings_.time_cap();
    std::vector<double> slowest_so_far;
    double timed_seconds = 0;  // rank 0's: the sum of its samples' times
    // Before the first round a sample is expected to take what the warm-up's iterations took.
    double per_sample = warmup_ > 0 ? warm_seconds_ / warmup_ * batch_ : 0;
    int round = ctx_.rank == 0 ? next_round(slowest_so_far, limits, 0, per_sample).samples : 0;
    GMB_MPI_CHECK(MPI_Bcast(&round, 1, MPI_INT, 0, ctx_.comm));
    while (round > 0) {
      const std::size_t first = mine_.size();
      for (int k = 0; k < round; ++k) {
        mine_.add(timed_sample(batch_));
        timed_seconds += mine_.seconds().back() * batch_;
      }
      const std::vector<double> round_seconds(mine_.seconds().begin() + static_cast<std::ptrdiff_t>(first),
                                              mine_.seconds().end());
      const std::vector<double> round_slowest = slowest_rank(round_seconds, ctx_.comm, 0);
      if (ctx_.rank == 0) {
        slowest_so_far.insert(slowest_so_far.end(), round_slowest.begin(), round_slowest.end());
        per_sample = timed_seconds / static_cast<double>(slowest_so_far.size());
        adaptive_stop_ = next_round(slowest_so_far, limits, timed_seconds, per_sample);
        round = adaptive_stop_.samples;
      }
      GMB_MPI_CHECK(MPI_Bcast(&round, 1, MPI_INT, 0, ctx_.comm));
    }
  }

  // Each sample is the slowest rank's: ranks run in lockstep, sample k covers the same iterations.
  // With a launch cost to remove, each rank removes its own before the slowest is taken (a rank
  // without a device touch must not lose another rank's launch), and the raw slowest is kept too.
  void reduce() {
    const double my_launch = placement_.launch_in_my_iteration(bytes_);
    const double any_launch = slowest_rank_everywhere({my_launch}, ctx_.comm).front();
    slowest_ = slowest_rank(mine_.seconds(), ctx_.comm, 0);
    std::vector<double> mine_compensated;
    if (any_launch > 0) {
      for (double s : mine_.seconds()) mine_compensated.push_back(s - my_launch);
      slowest_compensated_ = slowest_rank(mine_compensated, ctx_.comm, 0);
    }
    if (sweep_.gathers_every_rank()) {
      by_rank_ = every_rank(mine_.seconds(), ctx_.comm, 0);
      if (any_launch > 0) by_rank_compensated_ = every_rank(mine_compensated, ctx_.comm, 0);
    }
  }

  // Page faults: counted after the timed samples, so that CUPTI never perturbs them.
  void count_faults() {
    if (!placement_.counts_page_faults()) return;
    page_faults_ = count_page_faults(
        ctx_.comm, faults_.counter.get(), faults_.unavailable_reason, std::min(kPageFaultIterations, iterations_),
        [&] {
          placement_.place();
          GMB_MPI_CHECK(MPI_Barrier(ctx_.comm));
        },
        [&] {
          sweep_.iterate();
          sweep_.complete();
        });
  }

  // The figures of one set of samples: the slowest rank's, then every rank's where asked for.
  void describe_samples(Json& record, const std::vector<double>& seconds,
                        const std::vector<std::vector<double>>& seconds_by_rank) {
    sweep_.describe_result(record, bytes_, seconds);
    if (sweep_.gathers_every_rank()) sweep_.describe_every_rank(record, bytes_, seconds_by_rank);
  }

  // The compensated figures, the raw ones and how they differ.
  void describe_compensated(Json& record) {
    const Compensated compensated = compensate_per_rank(slowest_, slowest_compensated_);
    describe_samples(record, compensated.seconds, compensated.applied ? by_rank_compensated_ : by_rank_);
    Json raw = Json::object();
    describe_samples(raw, slowest_, by_rank_);  // the same figures from the raw samples
    Json compensation = compensation_json(compensated, ctx_.launch_cost, placement_.compensation_formula());
    for (const Statistic statistic : all_statistics())
      if (const Json* value = raw.find(statistic_name(statistic)))
        compensation.set(std::string("raw_") + statistic_name(statistic), *value);
    record.set("compensation", compensation);
  }

  void write(RecordSink& sink) {
    Json record = result_record(ctx_, bytes_);
    sweep_.describe_configuration(record);
    record.set("iterations", static_cast<int>(mine_.size()) * batch_)
        .set("warmup", warmup_)
        .set("batch", batch_)
        .set("timing", "host clock; each sample after a barrier; per sample, the slowest rank's time divided by the "
                       "iterations in the sample")
        .set("buffer_allocation", to_string(ctx_.buffers->allocation()));
    if (settings_.validate) record.set("validated_iterations", checked_);
    if (settings_.adaptive()) {
      record.set("precision", Json::object()
                                  .set("target", settings_.precision)
                                  .set("achieved", median_ci_relative_half_width(slowest_))
                                  .set("stopped", adaptive_stop_.stopped)
                                  .set("max_seconds", settings_.time_cap()));
    }
    if (!settings_.adaptive() && asked_samples_ < kMinSamples) {
      const int taken = static_cast<int>(mine_.size());
      record.set("sample_minimum", Json::object()
                                       .set("minimum", kMinSamples)
                                       .set("asked", asked_samples_)
                                       .set("taken", taken)
                                       .set("max_seconds", settings_.time_cap())
                                       .set("stopped", taken >= kMinSamples ? "minimum reached" : "time cap"));
    }
    if (placement_.compensates_launch_cost()) describe_compensated(record);
    else describe_samples(record, slowest_, by_rank_);
    if (!page_faults_.is_null()) record.set("page_faults", page_faults_);
    set_validation(record, settings_.validate, validation_error_, std::to_string(bytes_) + " bytes");
    sink.write_result(record);
  }

  const Context& ctx_;
  const RunSettings& settings_;
  SizeSweep& sweep_;
  ManagedPlacement& placement_;
  const FaultCounter& faults_;
  std::size_t index_, bytes_;
  bool one_per_sample_;  // each iteration its own sample, after untimed work before it (placing the data)
  int checked_ = 0;
  std::string validation_error_;
  int warmup_ = 0, iterations_ = 0, batch_ = 1;
  int asked_samples_ = 0;  // without --precision: the samples the iterations asked for make
  double warm_seconds_ = 0;
  Samples mine_;
  RoundDecision adaptive_stop_;  // rank 0's, with --precision
  std::vector<double> slowest_, slowest_compensated_;
  std::vector<std::vector<double>> by_rank_, by_rank_compensated_;
  Json page_faults_;
};

}  // namespace

int SizeSweep::run(Context& ctx, RecordSink& sink) {
  auto describe = [this](Json& record) { describe_configuration(record); };
  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) return record_unsupported_sweep(ctx, sink, ctx.settings->sizes, refusal, describe);

  ManagedPlacement no_placement;
  ManagedPlacement& placement = managed_placement_ ? *managed_placement_ : no_placement;
  const FaultCounter faults = make_fault_counter(ctx, placement);
  SweepSteps steps;
  steps.describe = describe;
  steps.needs = [&](std::size_t bytes) {
    SizeNeeds n = needs(ctx, bytes);
    // Under --precision the time cap ends a size long before a large iteration cap could be reached.
    if (!ctx.settings->adaptive()) add_sample_needs(n, ctx, ctx.settings->iterations_for(bytes), gathers_every_rank());
    return n;
  };
  steps.setup = [&](std::size_t bytes) { setup(ctx, bytes); };
  steps.teardown = [&] { teardown(); };
  steps.measure = [&](std::size_t index, std::size_t bytes) {
    return SizeMeasurement(ctx, *this, placement, faults, index, bytes).run(sink);
  };
  return sweep_sizes(ctx, sink, ctx.settings->sizes, steps);
}

}  // namespace gmb
