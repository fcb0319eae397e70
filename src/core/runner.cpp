// The size-sweep runner: warm-up, batching, timing, cross-rank reduction, validation, records.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "gmb/benchmark.hpp"
#include "gmb/crash_report.hpp"
#include "gmb/error.hpp"

namespace gmb {

namespace {

// Samples shorter than this are batched, so that what each sample pays once (reading the clock, and the few
// microseconds by which ranks leave the barrier before it apart) is about 1% of it or less.
constexpr double kTargetSampleSeconds = 200e-6;
// Automatic batching still leaves at least this many samples for the statistics.
constexpr int kMinSamples = 10;
// Iterations of the untimed page-fault counting pass (fewer when fewer are timed).
constexpr int kPageFaultIterations = 10;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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
      .set("memory_limit", memory_limit ? Json(memory_limit) : Json());
}

int SizeSweep::run(Context& ctx, RecordSink& sink) {
  const RunSettings& settings = *ctx.settings;

  auto emit_unsupported = [&](std::size_t bytes, const std::string& reason) {
    if (ctx.rank != 0) return;
    Json record = unsupported_record(ctx, bytes, reason);
    describe_configuration(record);
    sink.write_result(record);
  };

  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) {
    if (ctx.rank == 0) std::fprintf(stderr, "gmb-bench: unsupported: %s\n", refusal.c_str());
    for (auto bytes : settings.sizes) emit_unsupported(bytes, refusal);
    return kExitUnsupported;
  }

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
  // Sizes beyond the count or memory limits are refused before anything is allocated, so that the buffers
  // are sized for the largest size that is measured.
  const SizeVerdicts verdicts = size_verdicts(ctx, settings.sizes, [&](std::size_t bytes) { return needs(ctx, bytes); });
  reserve_buffers(ctx, verdicts.measurable, [&](std::size_t bytes) { setup(ctx, bytes); }, [&] { teardown(); });

  int exit_code = kExitOk;
  for (std::size_t index = 0; index < settings.sizes.size(); ++index) {
    const std::size_t bytes = settings.sizes[index];
    if (!verdicts.refusals[index].empty()) {
      emit_unsupported(bytes, verdicts.refusals[index]);
      exit_code = std::max<int>(exit_code, kExitUnsupported);
      continue;
    }
    Json configuration = Json::object().set("bytes", bytes);
    describe_configuration(configuration);
    set_crash_context(ctx.benchmark + ", " + std::to_string(bytes) + " bytes, " + configuration.dump());
    std::string problem;
    try {
      setup(ctx, bytes);
    } catch (const Unsupported& e) {
      problem = e.what();
    }
    problem = agree_on_reason(ctx.comm, problem);
    if (!problem.empty()) {
      teardown();
      emit_unsupported(bytes, problem);
      exit_code = std::max<int>(exit_code, kExitUnsupported);
      continue;
    }

    // A timed sample of `count` iterations, seconds per iteration. It starts after a barrier (and after the
    // untimed work before an iteration, for benchmarks that have some: then count is 1). Timed back to back
    // instead, a rank's sample would include waiting for a peer still in its previous iteration, and with two
    // ranks taking turns at that (seen: MPI_Alltoall on one GPU, each call 310 or 590 us by turns) the slowest
    // rank of every sample is the one that waited: the median of the per-sample maxima was 590 us where a call
    // takes 450 us on average.
    auto timed_sample = [&](int count) -> double {
      if (one_per_sample) pre_iteration();
      GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      const double t0 = now_seconds();
      for (int k = 0; k < count; ++k) iterate();
      complete();
      return (now_seconds() - t0) / count;
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
      const double t0 = now_seconds();
      for (int k = 0; k < warmup; ++k) iterate();
      complete();
      warm_seconds = now_seconds() - t0;
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
      GMB_MPI_CHECK(MPI_Bcast(&batch, 1, MPI_INT, 0, ctx.comm));
    }
    const int samples = std::max(1, (iterations + batch - 1) / batch);

    std::vector<double> seconds(static_cast<std::size_t>(samples));
    for (auto& s : seconds) s = timed_sample(batch);
    if (settings.validate) checked_iteration();

    // Each sample is the slowest rank's: ranks run in lockstep, sample k covers the same iterations.
    // With a launch cost to remove, each rank removes its own before the slowest is taken (a rank
    // without a device touch must not lose another rank's launch), and the raw slowest is kept too.
    const double my_launch = launch_in_my_iteration(bytes);
    double any_launch = 0;
    GMB_MPI_CHECK(MPI_Allreduce(&my_launch, &any_launch, 1, MPI_DOUBLE, MPI_MAX, ctx.comm));
    std::vector<double> slowest(seconds.size()), slowest_compensated;
    GMB_MPI_CHECK(MPI_Reduce(seconds.data(), slowest.data(), samples, MPI_DOUBLE, MPI_MAX, 0, ctx.comm));
    if (any_launch > 0) {
      std::vector<double> mine(seconds.size());
      for (std::size_t k = 0; k < seconds.size(); ++k) mine[k] = seconds[k] - my_launch;
      slowest_compensated.resize(seconds.size());
      GMB_MPI_CHECK(MPI_Reduce(mine.data(), slowest_compensated.data(), samples, MPI_DOUBLE, MPI_MAX, 0, ctx.comm));
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
      Json record = result_record(ctx, bytes);
      describe_configuration(record);
      record.set("iterations", samples * batch)
          .set("warmup", warmup)
          .set("batch", batch)
          .set("timing", "host clock; each sample after a barrier; per sample, the slowest rank's time divided by the "
                         "iterations in the sample")
          .set("buffer_allocation", to_string(ctx.buffers->allocation()));
      if (settings.validate) record.set("validated_iterations", checked);
      if (compensates_launch_cost()) {
        const Compensated compensated = compensate_per_rank(slowest, slowest_compensated);
        describe_result(record, bytes, compensated.seconds);
        Json raw = Json::object();
        describe_result(raw, bytes, slowest);  // the same figures from the raw samples
        Json compensation = compensation_json(compensated, ctx.launch_cost, compensation_formula());
        for (const char* key : {"time_us", "bandwidth_GBps", "busbw_GBps", "message_rate_Mps"})
          if (const Json* value = raw.find(key)) compensation.set(std::string("raw_") + key, *value);
        record.set("compensation", compensation);
      } else {
        describe_result(record, bytes, slowest);
      }
      if (!page_faults.is_null()) record.set("page_faults", page_faults);
      set_validation(record, settings.validate, validation_error, std::to_string(bytes) + " bytes");
      sink.write_result(record);
    }
    if (!validation_error.empty()) exit_code = std::max<int>(exit_code, kExitValidationFailed);
  }
  return exit_code;
}

}  // namespace gmb
