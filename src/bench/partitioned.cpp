// SPDX-License-Identifier: BSD-3-Clause
// MPI-4 partitioned point-to-point (METHODOLOGY "Partitioned communication"): part_latency and part_bw
// measure MPI_Psend_init/MPI_Precv_init transfers over a sweep of partition counts, partitions readied by
// the host; part_overlap measures what readying partitions as a GPU kernel's blocks finish buys against
// readying them after the kernel (kernel, then send), as an overlap measurement (gmb/overlap.hpp). Rank 0
// sends, rank 1 receives (part_latency: and back). Host-only: GPU work goes through GpuRuntime.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/gpu.hpp"
#include "gmb/managed.hpp"
#include "gmb/mpi_features.hpp"
#include "gmb/overlap.hpp"
#include "gmb/partitioned.hpp"
#include "gmb/sizes.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

constexpr int kDataTag = 300;
constexpr int kAckTag = 301;

std::uint32_t seed_of(int rank, std::uint32_t seed) { return seed * 7919u + static_cast<std::uint32_t>(rank); }

// What the three benchmarks share: the memory of each side (--send for rank 0, --recv for rank 1, or OMB's
// two letters), the partition counts swept (--partitions), and what is refused before anything runs.
class PartitionedPair {
 public:
  explicit PartitionedPair(const std::string& default_memory, std::vector<int> default_partitions)
      : send_text_(default_memory), recv_text_(default_memory), partitions_(std::move(default_partitions)) {}

  void add_options(ArgParser& p) {
    p.value({"--send"}, "KIND", "memory of the sending rank 0 (host, pinned, device, managed)",
            [this](const std::string& v) { send_text_ = v; });
    p.value({"--recv"}, "KIND", "memory of the receiving rank 1", [this](const std::string& v) { recv_text_ = v; });
    p.value({"--partitions"}, "P[,P...]", "partitions per message; a list sweeps them",
            [this](const std::string& v) { partitions_ = parse_int_list(v, "partition count"); });
  }

  void configure(const std::vector<std::string>& positionals, const Platform& platform) {
    const PairMemory memory = parse_pair_memory(positionals, send_text_, recv_text_, platform.memory);
    send_ = memory.send;
    recv_ = memory.recv;
    if (send_.placement != Placement::none || recv_.placement != Placement::none)
      throw UsageError("managed placements (managed:host, managed:device) apply to latency, bw, bibw, mbw and um; "
                       "partitioned benchmarks take managed memory where it is");
  }

  const MemorySpec& mine(int rank) const { return rank == 0 ? send_ : recv_; }
  const std::vector<int>& partition_counts() const { return partitions_; }

  Json options_json() const {
    return Json::object().set("send", send_.text()).set("recv", recv_.text()).set("partitions", Json::array_of(partitions_));
  }

  // Fields every record of the pair carries, unsupported ones included.
  void describe(Json& record, int partitions) const {
    record.set("memory", Json::object().set("send", send_.text()).set("recv", recv_.text()))
        .set("size_convention", "message")
        .set("transport", "mpi")
        .set("strategy", "direct")
        .set("partitions", partitions);
  }

  // Why this rank cannot run partitioned transfers of its memory here, or "".
  std::string unsupported_reason(const Context& ctx) const {
    if (std::string problem = mpi_feature_problem(MpiFeature::partitioned); !problem.empty()) return problem;
    const MemoryKind& kind = ctx.platform->memory.known(mine(ctx.rank).kind);
    if (!kind.available()) return "memory kind '" + kind.name + "' is not available: " + kind.unavailable_reason;
    return device_pointer_refusal(kind, *ctx.awareness);
  }

  PathInfo path(const Context& ctx) const {
    return ctx.path_between(0, ctx.platform->memory.known(send_.kind).gpu_backed, 1,
                            ctx.platform->memory.known(recv_.kind).gpu_backed);
  }

 private:
  static std::vector<int> parse_int_list(const std::string& text, const std::string& what) {
    std::vector<int> out;
    std::size_t start = 0;
    while (true) {
      const auto comma = text.find(',', start);
      out.push_back(parse_positive_int(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start), what));
      if (comma == std::string::npos) return out;
      start = comma + 1;
    }
  }

  std::string send_text_, recv_text_;
  MemorySpec send_, recv_;
  std::vector<int> partitions_;
};

// part_latency and part_bw: a size sweep per partition count; every partition readied by the host with
// its own MPI_Pready, in order.
class PartitionedTransfer : public SizeSweep {
 public:
  Positionals positionals() const override { return pair_letters(); }
  explicit PartitionedTransfer(bool windowed) : pair_("host", {1, 4, 16, 64}), windowed_(windowed) {}

  void add_options(ArgParser& p) override {
    pair_.add_options(p);
    if (windowed_)
      p.value({"--window", "-W"}, "W", "partitioned sends in flight per window (default 64)",
              [this](const std::string& v) { window_ = parse_positive_int(v, "window"); });
  }
  void configure(const std::vector<std::string>& positionals, int, const Platform& platform) override {
    pair_.configure(positionals, platform);
  }
  Json options_json() const override {
    Json o = pair_.options_json();
    if (windowed_) o.set("window", window_);
    return o;
  }
  std::string default_sizes() const override { return "1K:4M"; }

  int run(Context& ctx, RecordSink& sink) override {
    int exit_code = kExitOk;
    for (int partitions : pair_.partition_counts()) {
      partitions_ = partitions;
      if (pair_.partition_counts().size() > 1) sink.note("partitions: " + std::to_string(partitions));
      exit_code = std::max(exit_code, SizeSweep::run(ctx, sink));
    }
    return exit_code;
  }

  std::string unsupported_reason(const Context& ctx) override { return pair_.unsupported_reason(ctx); }

  SizeNeeds needs(const Context& ctx, std::size_t bytes) const override {
    SizeNeeds n;
    const MemoryKind& kind = ctx.platform->memory.known(pair_.mine(ctx.rank).kind);
    n.add("send", bytes, kind);
    n.add("recv", bytes, kind);
    n.refuse(partition_split_problem(bytes, partitions_));
    n.add_in_flight(partitioned_operations(windowed_ ? window_ : 1, partitions_), "partitioned requests' partitions");
    return n;
  }

  void setup(const Context& ctx, std::size_t bytes) override {
    const MemoryKind& kind = ctx.platform->memory.require(pair_.mine(ctx.rank).kind);
    bytes_ = bytes;
    comm_ = ctx.comm;
    rank_ = ctx.rank;
    peer_ = 1 - ctx.rank;
    path_ = pair_.path(ctx);
    send_buffer_ = ctx.buffers->take(kind, bytes);
    recv_buffer_ = ctx.buffers->take(kind, bytes);
    send_buffer_->fill(bytes, seed_of(rank_, 0));
    // A window is as many requests over the same buffers, as bw's window of sends is.
    const int requests = windowed_ ? window_ : 1;
    const bool sends = !windowed_ || rank_ == 0;
    const bool receives = !windowed_ || rank_ == 1;
    for (int k = 0; k < requests; ++k) {
      if (sends) sends_.push_back(PartitionedRequest::send(send_buffer_->data(), bytes, partitions_, peer_, kDataTag, comm_));
      if (receives) recvs_.push_back(PartitionedRequest::recv(recv_buffer_->data(), bytes, partitions_, peer_, kDataTag, comm_));
    }
  }

  void prepare(std::uint32_t seed) override {
    send_buffer_->fill(bytes_, seed_of(rank_, seed));
    recv_buffer_->poison(bytes_, seed_of(peer_, seed));
  }

  void iterate() override {
    if (windowed_) return one_way_window();
    // A ping-pong of partitioned transfers: rank 0 sends then receives, rank 1 the reverse.
    if (rank_ == 0) {
      send_once(sends_[0]);
      receive_once(recvs_[0]);
    } else {
      receive_once(recvs_[0]);
      send_once(sends_[0]);
    }
  }

  std::string verify(std::uint32_t seed) override {
    if (windowed_ && rank_ == 0) return "";
    if (auto bad = recv_buffer_->first_mismatch(bytes_, seed_of(peer_, seed)))
      return "rank " + std::to_string(rank_) + " received wrong data from rank " + std::to_string(peer_) +
             ": first bad byte at offset " + std::to_string(*bad) + " of " + std::to_string(bytes_) + " (" +
             std::to_string(partitions_) + " partitions)";
    return "";
  }

  void teardown() override {
    sends_.clear();
    recvs_.clear();
    send_buffer_.reset();
    recv_buffer_.reset();
  }

  void describe_configuration(Json& record) const override {
    pair_.describe(record, partitions_);
    record.set("variant", "P=" + std::to_string(partitions_)).set("ready", "host");
    if (windowed_) record.set("window", window_);
  }

  std::vector<TableColumn> columns() const override {
    if (windowed_)
      return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
    return {{"median_us", "time_us.median", 2}, {"min_us", "time_us.min", 2}, {"p95_us", "time_us.p95", 2}};
  }

  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    record.set("path", path_.to_json());
    // Latency: one iteration is a round trip, one-way is half of it.
    const double scale = windowed_ ? 1.0 : 0.5;
    record.set("time_us", summarize_transformed(seconds, [&](double s) { return s * scale * 1e6; }).to_json());
    Json metrics = Json::object().set("call", "MPI_Psend_init/MPI_Precv_init, MPI_Pready per partition");
    if (windowed_) {
      const double moved = static_cast<double>(bytes) * window_;
      record.set("bandwidth_GBps", summarize_transformed(seconds, [&](double s) { return moved / s / 1e9; }).to_json());
      metrics.set("time_us", "time per window").set("bandwidth_GBps", "bytes * window / time, 1e9 bytes/s");
    } else {
      metrics.set("time_us", "one-way latency = round trip / 2");
    }
    record.set("metrics", metrics);
  }

 private:
  static void send_once(PartitionedRequest& request) {
    request.start();
    request.ready_all();
    request.wait();
  }
  static void receive_once(PartitionedRequest& request) {
    request.start();
    request.wait();
  }

  // W partitioned sends from rank 0 into W receives on rank 1, then a 4-byte acknowledgement back.
  void one_way_window() {
    if (rank_ == 0) {
      start_all(sends_);
      for (auto& request : sends_) request.ready_all();
      wait_all(sends_);
      GMB_MPI_CHECK(MPI_Recv(&ack_, 1, MPI_INT, peer_, kAckTag, comm_, MPI_STATUS_IGNORE));
    } else {
      start_all(recvs_);
      wait_all(recvs_);
      GMB_MPI_CHECK(MPI_Send(&ack_, 1, MPI_INT, peer_, kAckTag, comm_));
    }
  }

  PartitionedPair pair_;
  bool windowed_;
  int window_ = 64;
  int partitions_ = 1;
  std::size_t bytes_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, peer_ = 1, ack_ = 0;
  PathInfo path_;
  std::unique_ptr<Buffer> send_buffer_, recv_buffer_;
  std::vector<PartitionedRequest> sends_, recvs_;
};

// How the sender readies the partitions a kernel produces.
enum class Ready { after_kernel, per_block };
const char* ready_name(Ready r) { return r == Ready::after_kernel ? "after-kernel" : "per-block"; }

// part_overlap: rank 0's kernel produces the message, one block per partition, finishing in order over the
// compute time; rank 1 receives it. Per size and partition count: pure (the partitioned transfer alone,
// every partition readied at once), compute (the kernel alone), and overall for each ready mode:
//   after-kernel: MPI_Start, kernel, cudaStreamSynchronize, MPI_Pready of every partition, MPI_Wait;
//   per-block: MPI_Start, kernel, MPI_Pready of each partition as soon as its block's flag is seen, MPI_Wait.
// overlap % = max(0, 100 - 100 * (overall - compute) / pure) (overlap::percent).
class PartitionedOverlap final : public Benchmark {
 public:
  Positionals positionals() const override { return pair_letters(); }
  PartitionedOverlap() : pair_("device", {8}) {}

  void add_options(ArgParser& p) override {
    pair_.add_options(p);
    p.value({"--ready"}, "after-kernel|per-block|both", "how rank 0 readies the partitions its kernel produces (default both)",
            [this](const std::string& v) { ready_text_ = parse_choice(v, {"after-kernel", "per-block", "both"}, "ready mode"); });
    p.flag({"--compute-sweep"}, "kernel time of 0, 0.25, ..., 2 x the pure transfer time: the overlap curve", &sweep_);
  }
  void configure(const std::vector<std::string>& positionals, int, const Platform& platform) override {
    pair_.configure(positionals, platform);
    modes_.clear();
    if (ready_text_ != "per-block") modes_.push_back(Ready::after_kernel);
    if (ready_text_ != "after-kernel") modes_.push_back(Ready::per_block);
  }
  Json options_json() const override {
    return pair_.options_json().set("ready", ready_text_).set("compute_sweep", sweep_);
  }
  std::string default_sizes() const override { return "64K:16M"; }
  bool sweeps_pooled_buffers() const override { return true; }

  std::vector<TableColumn> columns() const override {
    return {{"P", "partitions", 0},
            {"ready", "ready", 0},
            {"pure_us", "metrics.pure_us", 2},
            {"compute_us", "metrics.compute_us", 2},
            {"overall_us", "time_us.median", 2},
            {"overhead_us", "metrics.overhead_us", 2},
            {"overlap_%", "metrics.overlap_pct", 1}};
  }

  // One sweep of the sizes per partition count; each size measures pure and compute once and every ready mode
  // against them, so that the modes are compared on the same pure and compute times.
  int run(Context& ctx, RecordSink& sink) override {
    int exit_code = kExitOk;
    for (int partitions : pair_.partition_counts()) {
      partitions_ = partitions;
      mode_ = modes_.front();
      exit_code = std::max(exit_code, run_partitions(ctx, sink));
    }
    stream_.reset();
    return exit_code;
  }

 private:
  std::string unsupported_reason(const Context& ctx) const {
    if (std::string r = pair_.unsupported_reason(ctx); !r.empty()) return r;
    if (ctx.rank != 0) return "";  // the receiver needs nothing more than its memory
    if (!ctx.platform->gpu || !ctx.platform->gpu_unavailable_reason.empty())
      return "part_overlap runs a producer kernel on rank 0's GPU, and there is none: " + ctx.platform->gpu_unavailable_reason;
    const MemoryKind& send = ctx.platform->memory.known(pair_.mine(0).kind);
    if (!send.gpu_backed && !send.page_locked)
      return "the producer kernel writes rank 0's send buffer, so it must be memory the GPU can write (device, managed "
             "or pinned), not '" + send.name + "'";
    const MemoryKind* flags = ctx.platform->memory.find_by(&MemoryKind::page_locked);
    if (!flags || !flags->available())
      return "the kernel's per-partition flags need page-locked host memory: " +
             (flags ? flags->unavailable_reason : std::string("no such memory kind"));
    return "";
  }

  void describe(Json& record) const {
    pair_.describe(record, partitions_);
    record.set("variant", "P=" + std::to_string(partitions_) + " " + ready_name(mode_)).set("ready", ready_name(mode_));
  }

  // The transfer alone, every partition readied at once.
  void transfer() {
    if (sender_) {
      send_->start();
      send_->ready_all();
      send_->wait();
    } else {
      recv_->start();
      recv_->wait();
    }
  }

  void produce(double seconds, std::uint32_t seed) {
    gpu_->partition_producer(send_buffer_->data(), bytes_, partitions_, seconds, seed,
                             static_cast<std::uint32_t*>(flags_->data()), ++epoch_, stream_->get());
  }

  void wait_for_flag(int partition) const {
    const volatile std::uint32_t* flags = static_cast<const volatile std::uint32_t*>(flags_->data());
    while (flags[partition] != epoch_) {
    }
  }

  // The kernel alone.
  void compute(double seconds) {
    if (!sender_) return;
    produce(seconds, 0);
    gpu_->stream_synchronize(stream_->get());
  }

  // The transfer of what the kernel produces, readied as mode_ says.
  void overlapped(double seconds, std::uint32_t seed = 0) {
    if (!sender_) {
      recv_->start();
      recv_->wait();
      return;
    }
    send_->start();
    produce(seconds, seed);
    if (mode_ == Ready::after_kernel) {
      gpu_->stream_synchronize(stream_->get());
      send_->ready_all();
    } else {
      for (int p = 0; p < partitions_; ++p) {
        wait_for_flag(p);
        send_->ready(p);
      }
    }
    send_->wait();
    gpu_->stream_synchronize(stream_->get());
  }

  // Per ready mode: the curve, and the figures and overall samples at compute = pure.
  struct ModeFigures {
    Json curve = Json::array();
    overlap::Figures headline;
    std::vector<double> headline_overall;
  };

  int run_partitions(Context& ctx, RecordSink& sink);
  SizeNeeds size_needs(const Context& ctx, std::size_t bytes) const;
  void setup_size(const Context& ctx, std::size_t bytes);
  void teardown_size();
  std::string checked_transfer(std::size_t bytes, std::uint32_t seed);
  int measure_size(const Context& ctx, RecordSink& sink, std::size_t index, std::size_t bytes);
  void write_record(const Context& ctx, RecordSink& sink, const overlap::Measurement& m, std::size_t bytes,
                    const ModeFigures& figures, const std::vector<double>& pure_slowest) const;

  PartitionedPair pair_;
  std::string ready_text_ = "both";
  std::vector<Ready> modes_;
  bool sweep_ = false;

  // Run state.
  const Context* ctx_ = nullptr;
  GpuRuntime* gpu_ = nullptr;
  std::unique_ptr<StreamOwner> stream_;
  int partitions_ = 1;
  Ready mode_ = Ready::per_block;
  bool sender_ = false;
  PathInfo path_;
  std::size_t bytes_ = 0;
  std::uint32_t epoch_ = 0;
  std::unique_ptr<Buffer> send_buffer_, recv_buffer_, flags_;
  std::optional<PartitionedRequest> send_, recv_;
};

int PartitionedOverlap::run_partitions(Context& ctx, RecordSink& sink) {
  auto describe_record = [this](Json& record) { describe(record); };
  const std::string refusal = agree_on_reason(ctx.comm, unsupported_reason(ctx));
  if (!refusal.empty()) {
    for (Ready mode : modes_) {
      mode_ = mode;
      record_unsupported_sweep(ctx, sink, ctx.settings->sizes, refusal, describe_record);
    }
    return kExitUnsupported;
  }

  ctx_ = &ctx;
  sender_ = ctx.rank == 0;
  gpu_ = ctx.platform->gpu.get();
  if (sender_ && !stream_) stream_ = std::make_unique<StreamOwner>(*gpu_);
  path_ = pair_.path(ctx);
  SweepSteps steps;
  steps.describe = describe_record;
  steps.needs = [&](std::size_t bytes) { return size_needs(ctx, bytes); };
  steps.setup = [&](std::size_t bytes) { setup_size(ctx, bytes); };
  steps.teardown = [&] { teardown_size(); };
  steps.measure = [&](std::size_t index, std::size_t bytes) { return measure_size(ctx, sink, index, bytes); };
  return sweep_sizes(ctx, sink, ctx.settings->sizes, steps);
}

SizeNeeds PartitionedOverlap::size_needs(const Context& ctx, std::size_t bytes) const {
  SizeNeeds n;
  const MemoryKind& kind = ctx.platform->memory.known(pair_.mine(ctx.rank).kind);
  n.add(sender_ ? "send" : "recv", bytes, kind);
  n.refuse(partition_split_problem(bytes, partitions_));
  n.add_in_flight(partitioned_operations(1, partitions_), "partitioned requests' partitions");
  if (sender_) n.add_bookkeeping("ready flags", sizeof(std::uint32_t) * static_cast<std::uint64_t>(partitions_));
  return n;
}

void PartitionedOverlap::setup_size(const Context& ctx, std::size_t bytes) {
  bytes_ = bytes;
  const MemoryKind& kind = ctx.platform->memory.require(pair_.mine(ctx.rank).kind);
  if (!sender_) {
    recv_buffer_ = ctx.buffers->take(kind, bytes);
    recv_.emplace(PartitionedRequest::recv(recv_buffer_->data(), bytes, partitions_, 0, kDataTag, ctx.comm));
    return;
  }
  send_buffer_ = ctx.buffers->take(kind, bytes);
  flags_ = ctx.buffers->take(ctx.platform->memory.require_by(&MemoryKind::page_locked, "page-locked host memory"),
                             sizeof(std::uint32_t) * static_cast<std::size_t>(partitions_));
  send_buffer_->fill(bytes, seed_of(0, 0));
  // Flags start from a value no epoch takes before it wraps, so that none reads as set.
  std::fill_n(static_cast<std::uint32_t*>(flags_->data()), partitions_, 0u);
  epoch_ = 0;
  send_.emplace(PartitionedRequest::send(send_buffer_->data(), bytes, partitions_, 1, kDataTag, ctx.comm));
}

void PartitionedOverlap::teardown_size() {
  send_.reset();
  recv_.reset();
  send_buffer_.reset();
  recv_buffer_.reset();
  flags_.reset();
}

// --validate: an untimed transfer in the current mode whose partitions the kernel writes for `seed` and rank 1
// checks.
std::string PartitionedOverlap::checked_transfer(std::size_t bytes, std::uint32_t seed) {
  if (!sender_) recv_buffer_->poison(bytes, seed);
  time_after_barrier(ctx_->comm, [&] { overlapped(0, seed); });
  if (sender_) return "";
  const auto bad = recv_buffer_->first_mismatch(bytes, seed);
  if (!bad) return "";
  return "rank 1 received wrong data from rank 0's kernel: first bad byte at offset " + std::to_string(*bad) + " of " +
         std::to_string(bytes) + " (" + std::to_string(partitions_) + " partitions, " + ready_name(mode_) + ")";
}

// One size: pure and, per compute point, compute once for every ready mode and overall per mode.
int PartitionedOverlap::measure_size(const Context& ctx, RecordSink& sink, std::size_t index, std::size_t bytes) {
  overlap::Measurement m(ctx, bytes);
  // Checked transfers in every mode, before the warm-up and after the last compute point.
  auto checked_transfers = [&] {
    for (Ready mode : modes_) {
      mode_ = mode;
      m.check(index, [&](std::uint32_t seed) { return checked_transfer(bytes, seed_of(0, seed)); });
    }
  };
  checked_transfers();
  // The warm-up runs every ready mode too, interleaved with the pure transfer.
  for (int k = 0; k < m.warmup(); ++k) {
    time_after_barrier(ctx.comm, [&] { transfer(); });
    for (Ready mode : modes_) mode_ = mode, time_after_barrier(ctx.comm, [&] { overlapped(0); });
  }
  const std::vector<double> pure_slowest = m.slowest_samples([&] { transfer(); });
  const double pure = overlap::Measurement::median(pure_slowest);

  std::vector<ModeFigures> by_mode(modes_.size());
  for (double fraction : overlap::compute_fractions(sweep_)) {
    const double target = fraction * pure;
    const double compute_median = overlap::Measurement::median(m.slowest_samples([&] { compute(target); }));
    for (std::size_t k = 0; k < modes_.size(); ++k) {
      mode_ = modes_[k];
      std::vector<double> overall = m.slowest_samples([&] { overlapped(target); });
      const overlap::Figures f =
          overlap::Figures::from_seconds(pure, compute_median, overlap::Measurement::median(overall));
      Json point = Json::object().set("compute_fraction", fraction).set("compute_target_us", target * 1e6);
      by_mode[k].curve.push(f.add_to(point));
      if (fraction == 1.0) {
        by_mode[k].headline = f;
        by_mode[k].headline_overall = std::move(overall);
      }
    }
  }
  checked_transfers();
  m.agree_on_validation();
  teardown_size();

  for (std::size_t k = 0; k < modes_.size() && ctx.rank == 0; ++k) {
    mode_ = modes_[k];
    write_record(ctx, sink, m, bytes, by_mode[k], pure_slowest);
    if (sweep_)
      sink.note(overlap::curve_note(std::to_string(bytes) + " B, P=" + std::to_string(partitions_) + " " +
                                        ready_name(mode_),
                                    by_mode[k].curve));
  }
  mode_ = modes_.front();  // refused sizes are recorded under the first mode
  return m.exit_code();
}

void PartitionedOverlap::write_record(const Context& ctx, RecordSink& sink, const overlap::Measurement& m,
                                      std::size_t bytes, const ModeFigures& figures,
                                      const std::vector<double>& pure_slowest) const {
  Json record = result_record(ctx, bytes);
  describe(record);
  m.set_sampling(record,
                 "host clock; one transfer per sample after a barrier; per sample the slowest rank; pure and compute "
                 "measured once per size and partition count for every ready mode; each figure the median of its own "
                 "samples");
  record.set("path", path_.to_json());
  Json metrics = figures.headline.to_json();
  metrics.set("compute_fraction", 1.0)
      .set("ready", ready_name(mode_))
      .set("call", mode_ == Ready::per_block ? "MPI_Pready of each partition as its kernel block's flag is seen"
                                              : "cudaStreamSynchronize, then MPI_Pready of every partition")
      .set("pure_time_us", summarize_transformed(pure_slowest, [](double s) { return s * 1e6; }).to_json())
      .set("formula", "overlap % = max(0, 100 - 100 * (overall - compute) / pure); overhead = overall - pure");
  if (sweep_) metrics.set("curve", figures.curve);
  m.write(sink, record, figures.headline_overall, metrics, std::to_string(bytes) + " bytes");
}

const Registration part_latency_registration(
    {"part_latency", "MPI-4 partitioned ping-pong one-way latency over a partition-count sweep (--partitions)", 2, 2, false,
     [] { return std::make_unique<PartitionedTransfer>(false); },
     {Family::partitioned, {Statistic::time_us}, Statistic::time_us}});
const Registration part_bw_registration(
    {"part_bw", "MPI-4 partitioned bandwidth, a window of partitioned sends, over a partition-count sweep", 2, 2, false,
     [] { return std::make_unique<PartitionedTransfer>(true); },
     {Family::partitioned, {Statistic::time_us, Statistic::bandwidth_GBps}, Statistic::bandwidth_GBps}, Directions::uni});
const Registration part_overlap_registration(
    {"part_overlap", "partitions readied as a GPU kernel's blocks finish vs after the kernel: overlap (nbc arithmetic)", 2, 2,
     false, [] { return std::make_unique<PartitionedOverlap>(); },
     {Family::partitioned, {Statistic::time_us}, Statistic::time_us}, Directions::none, /*overlap*/ true});

}  // namespace

}  // namespace gmb
