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
// Automatic batching still leaves at least this many samples for the statistics.
constexpr int kMinSamples = 10;
// Iterations of the untimed page-fault counting pass (fewer when fewer are timed).
constexpr int kPageFaultIterations = 10;

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
  if (ctx.rank == 0) std::fprintf(stderr, "gmb-bench: unsupported: %s\n", reason.c_str());
  for (auto bytes : sizes) record_unsupported(ctx, sink, bytes, reason, describe);
  return kExitUnsupported;
}

int sweep_sizes(const Context& ctx, RecordSink& sink, const std::vector<std::uint64_t>& sizes, const SweepSteps& steps) {
  // Sizes beyond the count or memory limits are refused before anything is allocated, so that the buffers
  // are sized for the largest size that is measured.
  const SizeVerdicts verdicts = size_verdicts(ctx, sizes, steps.needs);
  reserve_buffers(ctx, verdicts.measurable, steps.setup, steps.teardown);
  int exit_code = kExitOk;
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    const std::size_t bytes = sizes[index];
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

int SizeSweep::run(Context& ctx, RecordSink& sink) {
  const RunSettings& settings = *ctx.settings;
  auto describe = [this](Json& record) { describe_configuration(record); };

  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) return record_unsupported_sweep(ctx, sink, settings.sizes, refusal, describe);

  // Set up once, before the first timed sample, so that loading CUPTI never falls inside a size's timing.
  std::unique_ptr<UnifiedMemoryCounter> fault_counter;
  std::string fault_counter_reason;
  if (counts_page_faults()) {
    if (ctx.platform->gpu && ctx.platform->gpu_unavailable_reason.empty())
      fault_counter = ctx.platform->gpu->unified_memory_counter(&fault_counter_reason);
    else
      fault_counter_reason = "no usable GPU: " + ctx.platform->gpu_unavailable_reason;
  }
  // Each iteration its own sample, after untimed work before it (managed memory: placing the data).
  const bool one_per_sample = needs_pre_iteration();

  SweepSteps steps;
  steps.describe = describe;
  steps.needs = [&](std::size_t bytes) { return needs(ctx, bytes); };
  steps.setup = [&](std::size_t bytes) { setup(ctx, bytes); };
  steps.teardown = [&] { teardown(); };
  steps.measure = [&](std::size_t index, std::size_t bytes) {
    // A timed sample of `count` iterations, seconds per iteration, after a barrier (and after the untimed
    // work before an iteration, for benchmarks that have some: then count is 1).
    auto timed_sample = [&](int count) -> double {
      if (one_per_sample) pre_iteration();
      return time_after_barrier(
          ctx.comm,
          [&] {
            for (int k = 0; k < count; ++k) iterate();
            complete();
          },
          count);
    };
    // --validate: an untimed iteration whose data producers write and consumers check.
    std::string validation_error;
    int checked = 0;
    auto checked_iteration = [&] {
      const std::uint32_t seed = validation_seed(index, checked++);
      prepare(seed);
      pre_iteration();
      GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      iterate();
      complete();
      if (std::string e = verify(seed); !e.empty() && validation_error.empty()) validation_error = e;
    };
    if (settings.validate) checked_iteration();

    const int warmup = settings.warmup_for(bytes);
    GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
    double warm_seconds = 0;
    if (one_per_sample) {
      for (int k = 0; k < warmup; ++k) warm_seconds += timed_sample(1);
    } else {
      warm_seconds = host_time([&] {
        for (int k = 0; k < warmup; ++k) iterate();
        complete();
      });
    }

    const int iterations = settings.iterations_for(bytes);
    int batch = settings.batch;
    if (one_per_sample) {
      batch = 1;
    } else if (batch == 0) {
      batch = 1;
      if (warmup > 0 && ctx.rank == 0) {
        const double per_iteration = warm_seconds / warmup;
        const int wanted = per_iteration > 0 ? static_cast<int>(std::ceil(kTargetSampleSeconds / per_iteration)) : 1;
        batch = std::clamp(wanted, 1, std::max(1, iterations / kMinSamples));
      }
      batch = std::max(batch, min_batch());
      GMB_MPI_CHECK(MPI_Bcast(&batch, 1, MPI_INT, 0, ctx.comm));
    }
    // Without --precision, a fixed number of samples: the iterations asked for, rounded up to whole samples.
    const int fixed_samples = std::max(1, (iterations + batch - 1) / batch);
    Samples mine(settings.adaptive() ? 0 : static_cast<std::size_t>(fixed_samples));
    RoundDecision adaptive_stop;  // rank 0's, with --precision
    if (!settings.adaptive()) {
      for (int k = 0; k < fixed_samples; ++k) mine.add(timed_sample(batch));
    } else {
      // Rounds of samples until the slowest rank's median is precise enough or a cap is reached. Only rank 0
      // decides, on its clock, and broadcasts the next round's size (0: stop), so that every rank takes the same
      // samples; the reduction and the broadcast fall between samples, never inside one.
      RoundLimits limits;
      limits.target = settings.precision;
      limits.min_samples = kMinSamples;
      limits.max_samples = std::max(1, iterations / batch);  // whole samples within the iteration cap
      limits.max_seconds = settings.time_cap();
      std::vector<double> slowest_so_far;
      double timed_seconds = 0;  // rank 0's: the sum of its samples' times
      // Before the first round a sample is expected to take what the warm-up's iterations took.
      double per_sample = warmup > 0 ? warm_seconds / warmup * batch : 0;
      int round = ctx.rank == 0 ? next_round(slowest_so_far, limits, 0, per_sample).samples : 0;
      GMB_MPI_CHECK(MPI_Bcast(&round, 1, MPI_INT, 0, ctx.comm));
      while (round > 0) {
        const std::size_t first = mine.size();
        for (int k = 0; k < round; ++k) {
          mine.add(timed_sample(batch));
          timed_seconds += mine.seconds().back() * batch;
        }
        const std::vector<double> round_seconds(mine.seconds().begin() + static_cast<std::ptrdiff_t>(first),
                                                mine.seconds().end());
        const std::vector<double> round_slowest = slowest_rank(round_seconds, ctx.comm, 0);
        if (ctx.rank == 0) {
          slowest_so_far.insert(slowest_so_far.end(), round_slowest.begin(), round_slowest.end());
          per_sample = timed_seconds / static_cast<double>(slowest_so_far.size());
          adaptive_stop = next_round(slowest_so_far, limits, timed_seconds, per_sample);
          round = adaptive_stop.samples;
        }
        GMB_MPI_CHECK(MPI_Bcast(&round, 1, MPI_INT, 0, ctx.comm));
      }
    }
    const int samples = static_cast<int>(mine.size());
    if (settings.validate) checked_iteration();

    // Each sample is the slowest rank's: ranks run in lockstep, sample k covers the same iterations.
    // With a launch cost to remove, each rank removes its own before the slowest is taken (a rank
    // without a device touch must not lose another rank's launch), and the raw slowest is kept too.
    const double my_launch = launch_in_my_iteration(bytes);
    const double any_launch = slowest_rank_everywhere({my_launch}, ctx.comm).front();
    const std::vector<double> slowest = slowest_rank(mine.seconds(), ctx.comm, 0);
    std::vector<double> slowest_compensated, mine_compensated;
    if (any_launch > 0) {
      for (double s : mine.seconds()) mine_compensated.push_back(s - my_launch);
      slowest_compensated = slowest_rank(mine_compensated, ctx.comm, 0);
    }
    std::vector<std::vector<double>> by_rank, by_rank_compensated;
    if (gathers_every_rank()) {
      by_rank = every_rank(mine.seconds(), ctx.comm, 0);
      if (any_launch > 0) by_rank_compensated = every_rank(mine_compensated, ctx.comm, 0);
    }
    validation_error = agree_on_reason(ctx.comm, validation_error);

    // Page faults: counted after the timed samples, so that CUPTI never perturbs them.
    Json page_faults;
    if (counts_page_faults()) {
      page_faults = count_page_faults(
          ctx.comm, fault_counter.get(), fault_counter_reason, std::min(kPageFaultIterations, iterations),
          [&] {
            pre_iteration();
            GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
          },
          [&] {
            iterate();
            complete();
          });
    }
    teardown();

    if (ctx.rank == 0) {
      // The figures of one set of samples: the slowest rank's, then every rank's where asked for.
      auto describe_samples = [&](Json& record, const std::vector<double>& seconds,
                                  const std::vector<std::vector<double>>& seconds_by_rank) {
        describe_result(record, bytes, seconds);
        if (gathers_every_rank()) describe_every_rank(record, bytes, seconds_by_rank);
      };
      Json record = result_record(ctx, bytes);
      describe_configuration(record);
      record.set("iterations", samples * batch)
          .set("warmup", warmup)
          .set("batch", batch)
          .set("timing", "host clock; each sample after a barrier; per sample, the slowest rank's time divided by the "
                         "iterations in the sample")
          .set("buffer_allocation", to_string(ctx.buffers->allocation()));
      if (settings.validate) record.set("validated_iterations", checked);
      if (settings.adaptive()) {
        record.set("precision", Json::object()
                                    .set("target", settings.precision)
                                    .set("achieved", median_ci_relative_half_width(slowest))
                                    .set("stopped", adaptive_stop.stopped)
                                    .set("max_seconds", settings.time_cap()));
      }
      if (compensates_launch_cost()) {
        const Compensated compensated = compensate_per_rank(slowest, slowest_compensated);
        describe_samples(record, compensated.seconds, compensated.applied ? by_rank_compensated : by_rank);
        Json raw = Json::object();
        describe_samples(raw, slowest, by_rank);  // the same figures from the raw samples
        Json compensation = compensation_json(compensated, ctx.launch_cost, compensation_formula());
        for (const Statistic statistic : all_statistics())
          if (const Json* value = raw.find(statistic_name(statistic)))
            compensation.set(std::string("raw_") + statistic_name(statistic), *value);
        record.set("compensation", compensation);
      } else {
        describe_samples(record, slowest, by_rank);
      }
      if (!page_faults.is_null()) record.set("page_faults", page_faults);
      set_validation(record, settings.validate, validation_error, std::to_string(bytes) + " bytes");
      sink.write_result(record);
    }
    return validation_error.empty() ? kExitOk : kExitValidationFailed;
  };
  return sweep_sizes(ctx, sink, settings.sizes, steps);
}

}  // namespace gmb
