// SPDX-License-Identifier: BSD-3-Clause
// Non-blocking collectives and overlap (METHODOLOGY "Non-blocking collectives and overlap"):
// `gmb-bench nbc OP`. Per size: pure = start + wait; then, per compute point, start (init), dummy
// compute of a fraction of the pure time with K MPI_Test calls spread through it (compute, test),
// wait. The phases do not fit the runner's one timed iterate(), so this benchmark measures each size
// itself inside the runner's sweep (sweep_sizes: limits, buffers, setup, refused sizes as records,
// exit codes), with the runner's conventions: explicit warm-up, one operation per sample after a
// barrier, slowest rank per sample, one record per size written as soon as the size is done.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gmb/coll_operands.hpp"
#include "gmb/error.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

using coll::PhaseSample;

// The memory of the dummy copies: page-locked host buffers (so that the copies are asynchronous) and
// GPU memory, one pair per direction.
struct CopyMemory {
  bool MemoryKind::*property;
  const char* what;
};
constexpr CopyMemory kCopyHostMemory{&MemoryKind::page_locked, "page-locked host memory"};
constexpr CopyMemory kCopyDeviceMemory{&MemoryKind::gpu_memory, "device memory"};

// Unmeasured operations per compute point that tune the compute to its target.
constexpr int kComputeTuningRounds = 3;
// How far the measured compute phase may be from its target before the record says it missed.
constexpr double kComputeTolerance = 0.25;

// The CPU dummy compute: a dependent chain of multiply-adds (not vectorisable, no memory traffic),
// `iterations` long. Calibrated per rank to iterations per second before measuring.
double cpu_spin_result = 0;
void cpu_work(std::uint64_t iterations) {
  double x = 1.0;
  for (std::uint64_t i = 0; i < iterations; ++i) x = x * 0.999999937 + 1e-7;
  cpu_spin_result += x;  // keeps the loop alive
}

// Cost of one host_seconds() call. Each MPI_Test is timed by two clock reads, and about one read's
// worth per test falls outside the timed window, into the compute phase: it is moved to the test time.
double calibrate_clock_read() {
  std::vector<double> per_read;
  for (int trial = 0; trial < 9; ++trial) {
    constexpr int kReads = 1000;
    const double t0 = host_seconds();
    double last = t0;
    for (int k = 0; k < kReads; ++k) last = host_seconds();
    per_read.push_back((last - t0) / kReads);
  }
  return summarize(per_read).median;
}

double calibrate_cpu_rate() {
  std::uint64_t n = 1 << 14;
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {  // n carries over: later trials time ~5 ms at once
    for (;;) {
      const double dt = host_time([&] { cpu_work(n); });
      if (dt >= 0.005 || n >= (1ull << 40)) {
        best = std::max(best, static_cast<double>(n) / dt);  // least disturbed trial
        break;
      }
      n *= 2;
    }
  }
  return best;
}

// busy_kernel(request) takes about intercept + slope * request seconds by CUDA events (the SM clock
// it counts is not the clock it runs at); inverted to ask for a wanted duration.
struct GpuModel {
  double intercept = 0, slope = 1;
  double request_for(double seconds) const { return std::max(0.0, (seconds - intercept) / slope); }
};

GpuModel calibrate_gpu(GpuRuntime& gpu, GpuStream stream) {
  EventOwner start(gpu), stop(gpu);
  auto measure = [&](double request) {
    std::vector<double> t;
    for (int k = 0; k < 7; ++k) {
      gpu.record_event(start.get(), stream);
      gpu.busy_kernel(request, stream);
      gpu.record_event(stop.get(), stream);
      gpu.event_synchronize(stop.get());
      t.push_back(gpu.elapsed_ms(start.get(), stop.get()) * 1e-3);
    }
    return summarize(t).median;
  };
  const double r1 = 100e-6, r2 = 2e-3;
  measure(r1);  // first launch: module loading
  const double m1 = measure(r1), m2 = measure(r2);
  GpuModel model;
  if (m2 > m1) {
    model.slope = (m2 - m1) / (r2 - r1);
    model.intercept = m1 - model.slope * r1;
  }
  return model;
}

class NonBlockingCollective final : public Benchmark {
 public:
  void add_options(ArgParser& p) override {
    operands_.add_options(p);
    p.value({"--compute", "-r", "--cuda-target"}, "cpu|gpu|both", "dummy compute: a calibrated CPU loop, a GPU kernel calibrated by elapsed time, or both at once (default cpu)",
            [this](const std::string& v) { compute_ = parse_choice(v, {"cpu", "gpu", "both"}, "compute"); });
    p.value({"--tests", "-t", "--num-test-calls"}, "K", "MPI_Test calls spread evenly through the dummy compute (default 0, as OMB)",
            [this](const std::string& v) { tests_ = parse_nonnegative_int(v, "test count"); });
    p.flag({"--dummy-copies"}, "during compute, host->device and device->host copies of the message size on their own streams (GPU)",
           &dummy_copies_);
    p.flag({"--compute-sweep"}, "measure compute of 0, 0.25, ..., 2 x the pure time: the overlap curve", &sweep_);
  }

  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override {
    operands_.configure(positionals, world_size, platform, "nbc");
    ranks_ = world_size;
  }

  Json options_json() const override {
    Json o = operands_.options_json();
    o.set("compute", compute_).set("tests", tests_).set("dummy_copies", dummy_copies_).set("compute_sweep", sweep_);
    return o;
  }

  std::vector<TableColumn> columns() const override {
    return {{"pure_us", "metrics.pure_us", 2},       {"overall_us", "time_us.median", 2},
            {"init_us", "metrics.init_us", 2},       {"compute_us", "metrics.compute_us", 2},
            {"test_us", "metrics.test_us", 2},       {"wait_us", "metrics.wait_us", 2},
            {"overhead_us", "metrics.overhead_us", 2}, {"overlap_%", "metrics.overlap_pct", 1}};
  }

  // Each operation asked for in turn.
  int run(Context& ctx, RecordSink& sink) override {
    int exit_code = kExitOk;
    for (std::size_t k = 0; k < operands_.operation_count(); ++k) {
      operands_.select(k);
      if (operands_.operation_count() > 1) sink.note(std::string("operation: ") + operands_.op().name);
      exit_code = std::max(exit_code, run_operation(ctx, sink));
    }
    compute_stream_.reset();
    h2d_stream_.reset();
    d2h_stream_.reset();
    return exit_code;
  }

 private:
  bool uses_cpu() const { return compute_ != "gpu"; }
  bool uses_gpu() const { return compute_ != "cpu"; }
  bool needs_gpu() const { return uses_gpu() || dummy_copies_; }
  bool sweeps_pooled_buffers() const override { return true; }
  std::string unsupported_reason(const Context& ctx) const;
  void describe_configuration(Json& record) const;
  double pure_once();
  PhaseSample overlapped_once(double compute_seconds);
  void compute_phase(double seconds, MPI_Request* request, double* test_seconds);
  int run_operation(Context& ctx, RecordSink& sink);
  void calibrate(const Context& ctx);
  bool calibrated_ = false;
  Json calibration_ = Json::object();

  coll::Operands operands_;
  std::string compute_ = "cpu";
  int tests_ = 0;
  bool dummy_copies_ = false, sweep_ = false;
  int ranks_ = 1;

  // Run state.
  GpuRuntime* gpu_ = nullptr;
  std::unique_ptr<StreamOwner> compute_stream_, h2d_stream_, d2h_stream_;
  std::unique_ptr<Buffer> copy_host_up_, copy_host_down_, copy_device_up_, copy_device_down_;
  std::size_t copy_bytes_ = 0;
  double cpu_rate_ = 0;  // loop iterations per second
  double clock_read_seconds_ = 0;
  GpuModel gpu_model_;
};

std::string NonBlockingCollective::unsupported_reason(const Context& ctx) const {
  if (std::string r = operands_.unsupported_reason(ctx); !r.empty()) return r;
  if (needs_gpu() && (!ctx.platform->gpu || !ctx.platform->gpu_unavailable_reason.empty()))
    return std::string(dummy_copies_ && !uses_gpu() ? "--dummy-copies" : "--compute " + compute_) +
           " needs a GPU: " + ctx.platform->gpu_unavailable_reason;
  if (dummy_copies_)
    for (const CopyMemory& memory : {kCopyHostMemory, kCopyDeviceMemory}) {
      const MemoryKind* kind = ctx.platform->memory.find_by(memory.property);
      if (!kind || !kind->available())
        return std::string("--dummy-copies needs ") + memory.what + ": " + (kind ? kind->unavailable_reason : "no such memory kind");
    }
  return "";
}

void NonBlockingCollective::describe_configuration(Json& record) const {
  operands_.describe_configuration(record, ranks_);
}

double NonBlockingCollective::pure_once() {
  MPI_Request request = MPI_REQUEST_NULL;
  return host_time([&] {
    operands_.start(&request);
    GMB_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  });
}

// The dummy compute, `seconds` long, split into tests_+1 equal slices with an MPI_Test after each
// slice but the last. CPU: the calibrated loop runs each slice. GPU: one kernel for the whole time;
// the host waits out each slice by the clock, tests, and finally waits for the kernel (and copies).
void NonBlockingCollective::compute_phase(double seconds, MPI_Request* request, double* test_seconds) {
  const double begin = host_seconds();
  if (uses_gpu() && seconds > 0) gpu_->busy_kernel(gpu_model_.request_for(seconds), compute_stream_->get());
  if (dummy_copies_) {
    gpu_->copy_async(copy_device_up_->data(), copy_host_up_->data(), copy_bytes_, h2d_stream_->get());
    gpu_->copy_async(copy_host_down_->data(), copy_device_down_->data(), copy_bytes_, d2h_stream_->get());
  }
  const int slices = tests_ + 1;
  const std::uint64_t cpu_iterations = uses_cpu() ? static_cast<std::uint64_t>(seconds * cpu_rate_) : 0;
  for (int k = 0; k < slices; ++k) {
  if (uses_cpu()) {
      cpu_work(cpu_iterations * (k + 1) / slices - cpu_iterations * k / slices);
    } else if (k < tests_) {
      const double slice_end = begin + seconds * (k + 1) / slices;
      while (host_seconds() < slice_end) {
      }
    }
    if (k < tests_) {
      int flag = 0;
      const double t = host_seconds();
      GMB_MPI_CHECK(MPI_Test(request, &flag, MPI_STATUS_IGNORE));
      *test_seconds += host_seconds() - t;
    }
  }
  if (uses_gpu()) gpu_->stream_synchronize(compute_stream_->get());
  if (dummy_copies_) {
    gpu_->stream_synchronize(h2d_stream_->get());
    gpu_->stream_synchronize(d2h_stream_->get());
  }
}

// Calibration, once per run and per rank (untimed).
void NonBlockingCollective::calibrate(const Context& ctx) {
  if (calibrated_) return;
  calibrated_ = true;
  gpu_ = ctx.platform->gpu.get();
  clock_read_seconds_ = calibrate_clock_read();
  calibration_.set("clock_read_ns", clock_read_seconds_ * 1e9);
  if (uses_cpu()) {
    cpu_rate_ = calibrate_cpu_rate();
    calibration_.set("cpu_loop_iterations_per_us", cpu_rate_ * 1e-6);
  }
  if (needs_gpu()) {
    compute_stream_ = std::make_unique<StreamOwner>(*gpu_);
    h2d_stream_ = std::make_unique<StreamOwner>(*gpu_);
    d2h_stream_ = std::make_unique<StreamOwner>(*gpu_);
  }
  if (uses_gpu()) {
    gpu_model_ = calibrate_gpu(*gpu_, compute_stream_->get());
    calibration_.set("gpu_kernel_intercept_us", gpu_model_.intercept * 1e6).set("gpu_kernel_slope", gpu_model_.slope);
  }

}

PhaseSample NonBlockingCollective::overlapped_once(double compute_seconds) {
  PhaseSample s;
  MPI_Request request = MPI_REQUEST_NULL;
  const double t0 = host_seconds();
  operands_.start(&request);
  const double t1 = host_seconds();
  compute_phase(compute_seconds, &request, &s.test);
  const double t2 = host_seconds();
  GMB_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  const double t3 = host_seconds();
  s.test += tests_ * clock_read_seconds_;
  s.init = t1 - t0;
  s.compute = std::max(0.0, (t2 - t1) - s.test);
  s.wait = t3 - t2;
  s.overall = t3 - t0;
  return s;
}

int NonBlockingCollective::run_operation(Context& ctx, RecordSink& sink) {
  const RunSettings& settings = *ctx.settings;
  const coll::Collective& op = operands_.op();
  const std::vector<std::uint64_t> sizes = op.has_data ? settings.sizes : std::vector<std::uint64_t>{0};
  auto describe = [this](Json& record) { describe_configuration(record); };

  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) return record_unsupported_sweep(ctx, sink, sizes, refusal, describe);

  calibrate(ctx);
  const std::vector<double> fractions = coll::compute_fractions(sweep_);
  SweepSteps steps;
  steps.describe = describe;
  steps.setup = [&](std::size_t bytes) {
    operands_.setup(ctx, bytes);
    if (dummy_copies_) {
      copy_bytes_ = std::max<std::size_t>(bytes, 1);
      const MemoryKind& pinned = ctx.platform->memory.require_by(kCopyHostMemory.property, kCopyHostMemory.what);
      const MemoryKind& device = ctx.platform->memory.require_by(kCopyDeviceMemory.property, kCopyDeviceMemory.what);
      copy_host_up_ = ctx.buffers->take(pinned, copy_bytes_);
      copy_host_down_ = ctx.buffers->take(pinned, copy_bytes_);
      copy_device_up_ = ctx.buffers->take(device, copy_bytes_);
      copy_device_down_ = ctx.buffers->take(device, copy_bytes_);
    }
  };
  steps.teardown = [&] {
    operands_.teardown();
    copy_host_up_.reset();
    copy_host_down_.reset();
    copy_device_up_.reset();
    copy_device_down_.reset();
  };
  steps.needs = [&](std::size_t bytes) {
    SizeNeeds needs = operands_.needs(ctx, bytes);
    if (dummy_copies_) {
      const std::uint64_t copy_bytes = 2 * std::max<std::uint64_t>(bytes, 1);
      needs.add("dummy copies", copy_bytes, MemorySide::host);
      needs.add("dummy copies", copy_bytes, MemorySide::device);
    }
    return needs;
  };
  steps.measure = [&](std::size_t index, std::size_t bytes) {
    // --validate: untimed operations (start + wait) whose inputs are written and outputs checked, one
    // before the warm-up and one after the last compute point; timed operations are never checked.
    std::string validation_error;
    int checked = 0;
    auto checked_operation = [&] {
      const std::uint32_t seed = validation_seed(index, checked++);
      operands_.prepare(seed);
      GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      pure_once();
      if (std::string e = operands_.verify(seed); !e.empty() && validation_error.empty()) validation_error = e;
    };
    auto after_barrier = [&](auto&& body) {
      GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      return body();
    };
    if (settings.validate) checked_operation();

    // Warm-up and pure: start + wait, one operation per sample after a barrier.
    const int warmup = settings.warmup_for(bytes);
    const int iterations = settings.iterations_for(bytes);
    for (int k = 0; k < warmup; ++k) after_barrier([&] { return pure_once(); });
    Samples pure(static_cast<std::size_t>(iterations));
    for (int k = 0; k < iterations; ++k) pure.add(after_barrier([&] { return pure_once(); }));
    const std::vector<double> pure_slowest = slowest_rank_everywhere(pure.seconds(), ctx.comm);
    const double pure_median = summarize(pure_slowest).median;  // the same on every rank

    Json curve = Json::array();
    std::vector<double> curve_overlaps;
    coll::OverlapFigures headline;
    std::vector<double> headline_overall;
    double headline_target = 0;
    bool headline_on_target = true;
    for (std::size_t point = 0; point < fractions.size(); ++point) {
      const double target = fractions[point] * pure_median;
      std::vector<PhaseSample> mine(static_cast<std::size_t>(iterations));
      // Unmeasured operations first: the point does not start cold, and each rank scales its compute so
      // that the measured compute phase meets the target (the calibrated rate drifts with clocks, and
      // the MPI_Test calls and slicing cost time of their own).
      double scale = 1.0;
      for (int k = 0; k < kComputeTuningRounds; ++k) {
        const PhaseSample tuning = after_barrier([&] { return overlapped_once(target * scale); });
        if (target > 0 && tuning.compute > 0) scale = std::clamp(scale * target / tuning.compute, 0.01, 100.0);
      }
      for (int k = 0; k < iterations; ++k) mine[k] = after_barrier([&] { return overlapped_once(target * scale); });

      // Per sample, the slowest rank by overall time, and that rank's phases.
      struct {
        double value;
        int rank;
      } local[1], slowest[1];
      std::vector<int> winner(mine.size());
      for (std::size_t k = 0; k < mine.size(); ++k) {
        local[0] = {mine[k].overall, ctx.rank};
        GMB_MPI_CHECK(MPI_Allreduce(local, slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, ctx.comm));
        winner[k] = slowest[0].rank;
      }
      std::vector<double> phases(mine.size() * 5, 0.0), phases_slowest(mine.size() * 5, 0.0);
      for (std::size_t k = 0; k < mine.size(); ++k) {
        if (winner[k] != ctx.rank) continue;
        const PhaseSample& s = mine[k];
        double* p = &phases[k * 5];
        p[0] = s.overall, p[1] = s.init, p[2] = s.compute, p[3] = s.test, p[4] = s.wait;
      }
      GMB_MPI_CHECK(MPI_Reduce(phases.data(), phases_slowest.data(), static_cast<int>(phases.size()), MPI_DOUBLE, MPI_SUM,
                               0, ctx.comm));
      if (ctx.rank != 0) continue;
      std::vector<PhaseSample> samples(mine.size());
      std::vector<double> overall(mine.size());
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const double* p = &phases_slowest[k * 5];
        samples[k] = {p[0], p[1], p[2], p[3], p[4]};
        overall[k] = p[0];
      }
      const coll::OverlapFigures figures = coll::overlap_figures(pure_median, samples);
      curve_overlaps.push_back(figures.overlap_pct);
      const bool on_target = target <= 0 || std::abs(figures.compute_us * 1e-6 / target - 1) <= kComputeTolerance;
      if (!on_target) {
        char text[200];
        std::snprintf(text, sizeof text, "%zu B: the compute phase took %.2f us for a target of %.2f us%s", bytes,
                      figures.compute_us, target * 1e6, tests_ > 0 ? " (the MPI_Test calls alone may take longer)" : "");
        sink.note(text);
      }
      curve.push(figures.to_json()
                     .set("compute_fraction", fractions[point])
                     .set("compute_target_us", target * 1e6)
                     .set("compute_on_target", on_target));
      if (fractions[point] == 1.0) {
        headline = figures;
        headline_overall = overall;
        headline_target = target;
        headline_on_target = on_target;
      }
    }

    if (settings.validate) checked_operation();
    validation_error = agree_on_reason(ctx.comm, validation_error);
    steps.teardown();

    if (ctx.rank == 0) {
      Json record = result_record(ctx, bytes);
      describe_configuration(record);
      record.set("iterations", iterations)
          .set("warmup", warmup)
          .set("batch", 1)
          .set("timing",
               "host clock; one operation per sample after a barrier; per sample, the slowest rank's overall time "
               "(time_us) with that rank's init/compute/test/wait; pure per sample is the slowest rank's")
          .set("buffer_allocation", to_string(ctx.buffers->allocation()));
      if (settings.validate) record.set("validated_iterations", checked);
      record.set("time_us", summarize_transformed(headline_overall, [](double s) { return s * 1e6; }).to_json());
      Json metrics = headline.to_json();
      metrics.set("call", op.nonblocking_name)
          .set("compute", compute_)
          .set("tests", tests_)
          .set("dummy_copies", dummy_copies_)
          .set("compute_fraction", 1.0)
          .set("compute_target_us", headline_target * 1e6)
          .set("compute_on_target", headline_on_target)
          .set("pure_time_us", summarize_transformed(pure_slowest, [](double s) { return s * 1e6; }).to_json())
          .set("calibration", calibration_);
      if (op.has_data) {
        const double op_bytes = operands_.op_bytes();
        metrics.set("op_bytes", op_bytes)
            .set("busbw_factor", op.busbw.factor(ranks_))
            .set("pure_algbw_GBps", pure_median > 0 ? op_bytes / pure_median / 1e9 : 0.0)
            .set("pure_busbw_GBps", pure_median > 0 ? op_bytes / pure_median / 1e9 * op.busbw.factor(ranks_) : 0.0);
      }
      if (sweep_) metrics.set("curve", curve);
      record.set("metrics", metrics);
      set_validation(record, settings.validate, validation_error, std::to_string(bytes) + " bytes");
      sink.write_result(record);
      if (sweep_) {
        char line[160];
        std::string text = "overlap curve at " + std::to_string(bytes) + " B (compute/pure: overlap %):";
        for (std::size_t p = 0; p < fractions.size(); ++p) {
          std::snprintf(line, sizeof line, " %.2f:%.1f", fractions[p], curve_overlaps[p]);
          text += line;
        }
        sink.note(text);
      }
    }
    return validation_error.empty() ? kExitOk : kExitValidationFailed;
  };
  return sweep_sizes(ctx, sink, sizes, steps);
}

const Registration nbc_registration({"nbc", "non-blocking collectives and overlap: nbc OP|OP,OP|all (MPI_Iallreduce, ...)", 1, 0,
                                     false, [] { return std::make_unique<NonBlockingCollective>(); },
                                     {Family::nbc, {Statistic::time_us}, Statistic::time_us, {"mpi"}, /*operations*/ true},
                                     Directions::none, /*overlap*/ true, omb_collectives("the OMB non-blocking collectives")});

}  // namespace

}  // namespace gmb
