// SPDX-License-Identifier: BSD-3-Clause
// Non-blocking collectives and overlap (METHODOLOGY "Non-blocking collectives and overlap"):
// `gmb-bench nbc OP`. Per size: pure = start + wait; then, per compute point, start (init), dummy
// compute of a fraction of the pure time with K MPI_Test calls spread through it (compute, test),
// wait. The phases do not fit the runner's one timed iterate(), so this benchmark measures each size
// as an overlap measurement (gmb/overlap.hpp) inside the runner's sweep (sweep_sizes: limits, buffers,
// setup, refused sizes as records, exit codes), with the runner's conventions: explicit warm-up, one
// operation per sample after a barrier, slowest rank per sample, one record per size written as soon as
// the size is done.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gmb/coll_operands.hpp"
#include "gmb/error.hpp"
#include "gmb/overlap.hpp"
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

// One compute point of a size: rank 0's figures from the slowest rank's phases, that rank's overall samples,
// the compute it aimed at and whether the measured compute met it.
struct ComputePoint {
  coll::OverlapFigures figures;
  std::vector<double> overall;
  double target = 0;
  bool on_target = true;
};

// Per sample, the phases of the rank slowest by overall time, on rank 0 (the others get nothing). The phases
// are one rank's, not each phase's slowest: they add up to the overall time of that rank. This is why nbc
// reduces its overlapped samples here rather than through overlap::Measurement::slowest_samples.
std::vector<PhaseSample> slowest_rank_phases(const std::vector<PhaseSample>& mine, const Context& ctx) {
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
  if (ctx.rank != 0) return {};
  std::vector<PhaseSample> samples(mine.size());
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const double* p = &phases_slowest[k * 5];
    samples[k] = {p[0], p[1], p[2], p[3], p[4]};
  }
  return samples;
}

class NonBlockingCollective final : public Benchmark {
 public:
  Positionals positionals() const override { return collective_operations(); }
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
  void communicate();
  PhaseSample overlapped_once(double compute_seconds);
  void compute_phase(double seconds, MPI_Request* request, double* test_seconds);
  int run_operation(Context& ctx, RecordSink& sink);
  SizeNeeds size_needs(const Context& ctx, std::size_t bytes) const;
  void setup_size(const Context& ctx, std::size_t bytes);
  void teardown_size();
  int measure_size(const Context& ctx, RecordSink& sink, std::size_t index, std::size_t bytes);
  ComputePoint measure_point(const Context& ctx, const overlap::Measurement& m, double fraction, double pure);
  void write_record(const Context& ctx, RecordSink& sink, const overlap::Measurement& m, std::size_t bytes,
                    const ComputePoint& headline, const std::vector<double>& pure_slowest, const Json& curve) const;
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

// Pure communication: start + wait.
void NonBlockingCollective::communicate() {
  MPI_Request request = MPI_REQUEST_NULL;
  operands_.start(&request);
  GMB_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
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
  const std::vector<std::uint64_t> sizes = operands_.plan_sizes(ctx.settings->sizes, ctx.size);
  if (const std::string note = operands_.rounding_note(ctx.size); !note.empty()) sink.note(note);
  auto describe = [this](Json& record) { describe_configuration(record); };

  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) return record_unsupported_sweep(ctx, sink, sizes, refusal, describe);

  calibrate(ctx);
  SweepSteps steps;
  steps.describe = describe;
  steps.setup = [&](std::size_t bytes) { setup_size(ctx, bytes); };
  steps.teardown = [&] { teardown_size(); };
  steps.needs = [&](std::size_t bytes) { return size_needs(ctx, bytes); };
  steps.measure = [&](std::size_t index, std::size_t bytes) { return measure_size(ctx, sink, index, bytes); };
  return sweep_sizes(ctx, sink, sizes, steps);
}

SizeNeeds NonBlockingCollective::size_needs(const Context& ctx, std::size_t bytes) const {
  SizeNeeds needs = operands_.needs(ctx, bytes);
  if (dummy_copies_) {
    const std::uint64_t copy_bytes = 2 * std::max<std::uint64_t>(bytes, 1);
    needs.add("dummy copies", copy_bytes, MemorySide::host);
    needs.add("dummy copies", copy_bytes, MemorySide::device);
  }
  return needs;
}

void NonBlockingCollective::setup_size(const Context& ctx, std::size_t bytes) {
  operands_.setup(ctx, bytes);
  if (!dummy_copies_) return;
  copy_bytes_ = std::max<std::size_t>(bytes, 1);
  const MemoryKind& pinned = ctx.platform->memory.require_by(kCopyHostMemory.property, kCopyHostMemory.what);
  const MemoryKind& device = ctx.platform->memory.require_by(kCopyDeviceMemory.property, kCopyDeviceMemory.what);
  copy_host_up_ = ctx.buffers->take(pinned, copy_bytes_);
  copy_host_down_ = ctx.buffers->take(pinned, copy_bytes_);
  copy_device_up_ = ctx.buffers->take(device, copy_bytes_);
  copy_device_down_ = ctx.buffers->take(device, copy_bytes_);
}

void NonBlockingCollective::teardown_size() {
  operands_.teardown();
  copy_host_up_.reset();
  copy_host_down_.reset();
  copy_device_up_.reset();
  copy_device_down_.reset();
}

// One size: pure (start + wait), then each compute point, one operation per sample after a barrier.
int NonBlockingCollective::measure_size(const Context& ctx, RecordSink& sink, std::size_t index, std::size_t bytes) {
  overlap::Measurement m(ctx, bytes);
  // --validate: operations whose inputs are written and outputs checked, one before the warm-up and one after
  // the last compute point.
  auto checked_operation = [&](std::uint32_t seed) {
    operands_.prepare(seed);
    GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
    communicate();
    return operands_.verify(seed);
  };
  m.check(index, checked_operation);
  for (int k = 0; k < m.warmup(); ++k) time_after_barrier(ctx.comm, [&] { communicate(); });
  const std::vector<double> pure_slowest = m.slowest_samples([&] { communicate(); });
  const double pure = overlap::Measurement::median(pure_slowest);  // the same on every rank

  Json curve = Json::array();
  ComputePoint headline;
  for (double fraction : overlap::compute_fractions(sweep_)) {
    ComputePoint point = measure_point(ctx, m, fraction, pure);
    if (ctx.rank != 0) continue;
    if (!point.on_target) {
      char text[200];
      std::snprintf(text, sizeof text, "%zu B: the compute phase took %.2f us for a target of %.2f us%s", bytes,
                    point.figures.compute_us, point.target * 1e6,
                    tests_ > 0 ? " (the MPI_Test calls alone may take longer)" : "");
      sink.note(text);
    }
    curve.push(point.figures.to_json()
                   .set("compute_fraction", fraction)
                   .set("compute_target_us", point.target * 1e6)
                   .set("compute_on_target", point.on_target));
    if (fraction == 1.0) headline = std::move(point);
  }

  m.check(index, checked_operation);
  m.agree_on_validation();
  teardown_size();
  if (ctx.rank == 0) {
    write_record(ctx, sink, m, bytes, headline, pure_slowest, curve);
    if (sweep_) sink.note(overlap::curve_note(std::to_string(bytes) + " B", curve));
  }
  return m.exit_code();
}

// Compute of `fraction` x the pure time overlapped with the operation: per sample start, compute, wait.
ComputePoint NonBlockingCollective::measure_point(const Context& ctx, const overlap::Measurement& m, double fraction,
                                                  double pure) {
  ComputePoint point;
  point.target = fraction * pure;
  const double target = point.target;
  auto after_barrier = [&](double compute_seconds) {
    GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
    return overlapped_once(compute_seconds);
  };
  // Unmeasured operations first: the point does not start cold, and each rank scales its compute so that the
  // measured compute phase meets the target (the calibrated rate drifts with clocks, and the MPI_Test calls and
  // slicing cost time of their own).
  double scale = 1.0;
  for (int k = 0; k < kComputeTuningRounds; ++k) {
    const PhaseSample tuning = after_barrier(target * scale);
    if (target > 0 && tuning.compute > 0) scale = std::clamp(scale * target / tuning.compute, 0.01, 100.0);
  }
  std::vector<PhaseSample> mine(static_cast<std::size_t>(m.iterations()));
  for (PhaseSample& sample : mine) sample = after_barrier(target * scale);

  const std::vector<PhaseSample> samples = slowest_rank_phases(mine, ctx);
  if (ctx.rank != 0) return point;
  for (const PhaseSample& s : samples) point.overall.push_back(s.overall);
  point.figures = coll::overlap_figures(pure, samples);
  point.on_target = target <= 0 || std::abs(point.figures.compute_us * 1e-6 / target - 1) <= kComputeTolerance;
  return point;
}

void NonBlockingCollective::write_record(const Context& ctx, RecordSink& sink, const overlap::Measurement& m,
                                         std::size_t bytes, const ComputePoint& headline,
                                         const std::vector<double>& pure_slowest, const Json& curve) const {
  const coll::Collective& op = operands_.op();
  const double pure = overlap::Measurement::median(pure_slowest);
  Json record = result_record(ctx, bytes);
  describe_configuration(record);
  m.set_sampling(record,
                 "host clock; one operation per sample after a barrier; per sample, the slowest rank's overall time "
                 "(time_us) with that rank's init/compute/test/wait; pure per sample is the slowest rank's");
  Json metrics = headline.figures.to_json();
  metrics.set("call", op.nonblocking_name)
      .set("compute", compute_)
      .set("tests", tests_)
      .set("dummy_copies", dummy_copies_)
      .set("compute_fraction", 1.0)
      .set("compute_target_us", headline.target * 1e6)
      .set("compute_on_target", headline.on_target)
      .set("pure_time_us", summarize_transformed(pure_slowest, [](double s) { return s * 1e6; }).to_json())
      .set("calibration", calibration_);
  if (op.has_data) {
    const double op_bytes = operands_.op_bytes();
    const double factor = operands_.busbw_factor();
    metrics.set("op_bytes", op_bytes)
        .set("busbw_factor", factor)
        .set("pure_algbw_GBps", pure > 0 ? op_bytes / pure / 1e9 : 0.0)
        .set("pure_busbw_GBps", pure > 0 ? op_bytes / pure / 1e9 * factor : 0.0);
  }
  if (sweep_) metrics.set("curve", curve);
  m.write(sink, record, headline.overall, metrics, std::to_string(bytes) + " bytes");
}

const Registration nbc_registration({"nbc", "non-blocking collectives and overlap: nbc OP|OP,OP|all (MPI_Iallreduce, ...)", 1, 0,
                                     false, [] { return std::make_unique<NonBlockingCollective>(); },
                                     {Family::nbc, {Statistic::time_us}, Statistic::time_us, {"mpi"}, /*operations*/ true},
                                     Directions::none, /*overlap*/ true, omb_collectives("the OMB non-blocking collectives")});

}  // namespace

}  // namespace gmb
