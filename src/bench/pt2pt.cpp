// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point benchmarks (METHODOLOGY "Point to point"): latency, bw, bibw, mbw, and um (latency
// on managed memory with the host and device references in the same run), over what PointToPoint
// (pt2pt.hpp) shares; each benchmark supplies its iteration and its derived metrics.
#include "pt2pt.hpp"

#include <algorithm>
#include <cstdint>

#include "gmb/error.hpp"
#include "gmb/nccl.hpp"
#include "gmb/size_limits.hpp"
#include "gmb/sizes.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

// What the persistent form of a point-to-point benchmark calls (--persistent, records' persistent.call).
constexpr const char* kPersistentCalls = "MPI_Send_init/MPI_Recv_init";

// Every pair (rank i with rank i + size/2): its ranks, their hosts, the GPU each side's buffer is on (null for host
// memory) and its path, as records' pair_paths name them.
Json describe_pairs(const Context& ctx, bool send_gpu_backed, bool recv_gpu_backed) {
  const auto gpu = [](const RankFacts& r, bool gpu_backed) {
    return gpu_backed && !r.gpu_pci.empty() ? Json(r.gpu_pci) : Json(nullptr);
  };
  Json pairs = Json::array();
  const int half = ctx.size / 2;
  for (int sender = 0; sender < half; ++sender) {
    const RankFacts& a = ctx.ranks.at(static_cast<std::size_t>(sender));
    const RankFacts& b = ctx.ranks.at(static_cast<std::size_t>(sender + half));
    pairs.push(Json::object()
                   .set("ranks", Json::array().push(sender).push(sender + half))
                   .set("hosts", Json::array().push(a.host).push(b.host))
                   .set("gpus", Json::array().push(gpu(a, send_gpu_backed)).push(gpu(b, recv_gpu_backed)))
                   .set("path", ctx.path_between(sender, send_gpu_backed, sender + half, recv_gpu_backed).to_json()));
  }
  return pairs;
}

}  // namespace

void PointToPoint::add_options(ArgParser& p) {
  p.value({"--send"}, "KIND[:host|device]",
          "memory of the sending side (rank 0; the first half of the ranks with several pairs); managed:host / managed:device "
          "place managed memory before the send and after the receive",
          [this](const std::string& v) { send_text_ = v; });
  p.value({"--recv"}, "KIND[:host|device]", "memory of the receiving side (rank 1; the second half with several pairs)",
          [this](const std::string& v) { recv_text_ = v; });
  p.flag({"--references"}, "also measure host-host and device-device in this launch (next to managed placements)",
         &references_);
  persistent_.add_option(p, std::string(kPersistentCalls) + "; --transport mpi --strategy direct");
  p.value({"--transport"}, "mpi|nccl", "who moves the data: the MPI library (default) or NCCL (device buffers)",
          [this](const std::string& v) { transfer_.transport = v; });
  std::vector<std::string> names;
  for (const auto& s : transfer_strategies()) names.push_back(s.name);
  p.choice({"--strategy"}, names, "transfer strategy", "how device data reaches MPI (default direct)",
           [this](const std::string& v) { transfer_.strategy = v; });
  p.value({"--chunks"}, "C[,C...]", "pipelined, pipelined-gpu: chunks per message (default 4); a list sweeps them",
          [this](const std::string& v) { chunk_sweep_ = parse_chunk_list(v); });
  p.value({"--chunk-size"}, "BYTES", "pipelined, pipelined-gpu: bytes per chunk instead of a chunk count",
          [this](const std::string& v) {
            transfer_.chunk_size = parse_size(v);
            if (transfer_.chunk_size == 0) throw UsageError("chunk size must be at least 1 byte");
          });
  if (windowed()) {
    p.value({"--window", "-W", "--window-size"}, "W", "messages in flight per window (default 64)",
            [this](const std::string& v) { window_ = parse_positive_int(v, "window"); });
  }
}

void PointToPoint::configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) {
  const PairMemory memory = parse_pair_memory(positionals, send_text_, recv_text_, platform.memory);
  send_ = memory.send;
  recv_ = memory.recv;
  counts_faults_ = platform.memory.known(send_.kind).placeable || platform.memory.known(recv_.kind).placeable;
  parse_choice(transfer_.transport, transport_names(), "transport");
  if (transfer_.transport == "nccl" && transfer_.strategy != "direct")
    throw UsageError("--strategy " + transfer_.strategy +
                     " applies to the MPI transport; NCCL moves device buffers itself (leave --strategy out)");
  if (!transfer_.chunked() && (!chunk_sweep_.empty() || transfer_.chunk_size))
    throw UsageError("--chunks and --chunk-size apply to --strategy pipelined and pipelined-gpu only");
  if (!chunk_sweep_.empty() && transfer_.chunk_size)
    throw UsageError("give either --chunks or --chunk-size, not both");
  if (chunk_sweep_.empty()) chunk_sweep_.push_back(transfer_.chunks);
  // A window whose requests one MPI_Waitall can never take is bad input; one that may not fit in memory is refused
  // per size (needs).
  if (const std::string reason = request_count_reason(messages_in_flight(), "MPI_Waitall"); !reason.empty())
    throw UsageError("--window " + std::to_string(window_) + ": windows both ways keep 2 x " + std::to_string(window_) +
                     " messages in flight: " + reason + " (accepted: a window of at most " +
                     std::to_string(kMaxMpiCount / 2) + ")");
  pairs_ = world_size / 2;
  // The persistent form is MPI's own requests on the buffers themselves: staging copies and NCCL have none. Its
  // comparison is of the memory asked for, timed as the regular form is: not the references, nor the managed
  // placements' protocol (one iteration per sample, launch-cost compensation).
  if (persistent_.requested()) {
    if (transfer_.transport != "mpi" || transfer_.strategy != "direct")
      throw UsageError("--persistent is accepted with --transport mpi --strategy direct only (" + std::string(kPersistentCalls) +
                       " on the buffers themselves), not with --transport " + transfer_.transport + " --strategy " +
                       transfer_.strategy);
    if (references_)
      throw UsageError("--persistent compares the two forms of the memory asked for; it does not combine with the host "
                       "and device references (--references, which um always measures)");
    if (placed())
      throw UsageError("--persistent does not measure managed placements (--send " + send_.text() + " --recv " +
                       recv_.text() + "); accepted: kinds without a placement (host, pinned, device, managed)");
  }
}

Json PointToPoint::options_json() const {
  Json o = Json::object()
               .set("send", send_.text())
               .set("recv", recv_.text())
               .set("transport", transfer_.transport)
               .set("strategy", transfer_.strategy);
  if (references_) o.set("references", true);
  if (persistent_.requested()) o.set("persistent", true);
  if (transfer_.chunked()) {
    if (transfer_.chunk_size) o.set("chunk_size", transfer_.chunk_size);
    else o.set("chunks", Json::array_of(chunk_sweep_));
  }
  if (windowed()) o.set("window", window_);
  return o;
}

void PointToPoint::describe_configuration(Json& record) const {
  record.set("memory", Json::object().set("send", send_.text()).set("recv", recv_.text()))
      .set("size_convention", "message")
      .set("transport", transfer_.transport)
      .set("strategy", transfer_.strategy);
  if (placed())
    record.set("placement",
               Json::object().set("send", placement_name(send_.placement)).set("recv", placement_name(recv_.placement)));
  if (transfer_.chunked()) {
    if (transfer_.chunk_size) record.set("chunk_size", transfer_.chunk_size);
    record.set("chunks", transfer_.chunks_for(static_cast<std::size_t>(record.find("bytes")->as_number())));
  }
  if (windowed()) record.set("window", window_);
  record.set("pairs", pairs_);
  persistent_.describe(record);
}

std::string PointToPoint::unsupported_reason(const Context& ctx) {
  const std::string& mine = spec_of(ctx.rank, ctx.size).kind;
  const MemoryKind* kind = ctx.platform->memory.find(mine);
  if (!kind->available()) return "memory kind '" + mine + "' is not available: " + kind->unavailable_reason;
  if (transfer_.transport == "nccl") return nccl_problem(ctx, *kind);
  // A strategy that stages neither side would measure direct under another name.
  const StrategyInfo* strategy = find_strategy(transfer_.strategy);
  const MemoryKind& send = ctx.platform->memory.known(send_.kind);
  const MemoryKind& recv = ctx.platform->memory.known(recv_.kind);
  if (strategy->staging && !strategy->stages(send) && !strategy->stages(recv))
    return "the " + transfer_.strategy + " strategy " +
           (strategy->relays_host_side ? "relays host or pinned buffers through the GPU"
                                       : "stages device or managed buffers through host memory") +
           "; here the sides use '" + send_.kind + "'/'" + recv_.kind + "' (use --strategy direct)";
  return strategy_problem(transfer_, *kind, *ctx.platform, *ctx.awareness);
}

SizeNeeds PointToPoint::needs(const Context& ctx, std::size_t bytes) const {
  SizeNeeds n;
  const MemoryKind& kind = ctx.platform->memory.known(spec_of(ctx.rank, ctx.size).kind);
  n.add("send", bytes, kind);
  n.add("recv", bytes, kind);
  if (transfer_.transport != "mpi") return n;  // NCCL counts are size_t
  const std::uint64_t requests = requests_in_flight(bytes);
  n.add_in_flight(requests, "requests");
  n.refuse(request_count_reason(requests, "MPI_Waitall"));
  const int window = windowed() ? window_ : 1;
  const StrategyInfo* strategy = find_strategy(transfer_.strategy);
  const bool staged = strategy->stages(kind);
  if (staged) {
    n.refuse(staging_limit_problem(transfer_, bytes, window));
    // Every strategy's staging memory is registered (unavailable where it cannot be allocated).
    n.add(std::to_string(2 * window) + " staging slots", 2 * static_cast<std::uint64_t>(window) * std::max<std::size_t>(bytes, 1),
          *strategy->staging_kind(ctx.platform->memory));
  }
  // Unchunked direct ping-pongs are blocking calls; everything else is started and waited for.
  const bool blocking = !windowed() && !staged && transfer_.chunks_for(bytes) == 1;
  n.check_count(transfer_.chunk_bytes(bytes), 1,
                std::string(persistent_.active() ? kPersistentCalls : blocking ? "MPI_Send/MPI_Recv" : "MPI_Isend/MPI_Irecv") +
                    " with MPI_BYTE" +
                    (transfer_.chunked() ? ", one chunk per call" : ""));
  return n;
}

std::uint64_t PointToPoint::messages_in_flight() const {
  switch (pattern_) {
    case PairPattern::ping_pong: return 1;
    case PairPattern::one_way_window: return static_cast<std::uint64_t>(window_);
    case PairPattern::both_ways_window: return 2 * static_cast<std::uint64_t>(window_);
  }
  return 1;
}

std::uint64_t PointToPoint::requests_in_flight(std::size_t bytes) const {
  if (persistent_.active()) return 2 * static_cast<std::uint64_t>(windowed() ? window_ : 1);
  const std::uint64_t chunks = transfer_.chunks_for(bytes);
  const std::uint64_t messages = messages_in_flight();
  return chunks > UINT64_MAX / messages ? UINT64_MAX : messages * chunks;
}

int PointToPoint::run(Context& ctx, RecordSink& sink) {
  int exit_code = persistent_.run(ctx, sink, kPersistentCalls, [&] { return sweep_chunks(ctx, sink); });
  if (!references_) return exit_code;
  const MemorySpec measured_send = send_, measured_recv = recv_;
  const bool measured_faults = counts_faults_;
  counts_faults_ = false;
  // The references are timed like the placements (one iteration per sample, after a barrier), so that
  // MD-MD next to DD compares memory, not timing protocols.
  one_iteration_per_sample_ = placed();
  for (const char* kind : {"host", "device"}) {
    send_ = recv_ = MemorySpec{kind, Placement::none};
    if (ctx.rank == 0) sink.note(std::string("reference: ") + kind + " - " + kind);
    // A reference this machine or library cannot run is recorded (unsupported, with the reason) and the run exits
    // 3, as any run with a refused point does.
    exit_code = std::max(exit_code, sweep_chunks(ctx, sink));
  }
  send_ = measured_send;
  recv_ = measured_recv;
  counts_faults_ = measured_faults;
  one_iteration_per_sample_ = false;
  return exit_code;
}

void PointToPoint::setup(const Context& ctx, std::size_t bytes) {
  const MemoryKind& kind = ctx.platform->memory.require(spec_of(ctx.rank, ctx.size).kind);
  bytes_ = bytes;
  comm_ = ctx.comm;
  rank_ = ctx.rank;
  size_ = ctx.size;
  sender_ = ctx.rank < ctx.size / 2;
  peer_ = sender_ ? ctx.rank + ctx.size / 2 : ctx.rank - ctx.size / 2;
  placement_ = spec_of(ctx.rank, ctx.size).placement;
  launch_cost_ = ctx.launch_cost;
  send_buffer_ = ctx.buffers->take(kind, bytes);
  recv_buffer_ = ctx.buffers->take(kind, bytes);
  send_buffer_->fill(bytes, seed_of(rank_, 0));  // the producer's data exists before timing starts
  const MemoryKind* send = ctx.platform->memory.find(send_.kind);
  const MemoryKind* recv = ctx.platform->memory.find(recv_.kind);
  path_ = ctx.path_between(0, send->gpu_backed, ctx.size / 2, recv->gpu_backed);
  pair_paths_ = pairs_ > 1 ? describe_pairs(ctx, send->gpu_backed, recv->gpu_backed) : Json(nullptr);
  const int window = windowed() ? window_ : 1;
  channel_ = persistent_.active()
                 ? make_persistent_transfer(ctx.comm, *send_buffer_, *recv_buffer_, bytes, peer_, kDataTag, window)
                 : make_transfer(transfer_, ctx.comm, *ctx.platform, *ctx.buffers, kind, bytes, window);
}

void PointToPoint::add_path(Json& record) const {
  record.set("path", path_.to_json());
  if (pairs_ > 1) record.set("pair_paths", pair_paths_);
}

void PointToPoint::place() {
  send_buffer_->place(placement_, bytes_);
  recv_buffer_->place(placement_, bytes_);
}

void PointToPoint::prepare(std::uint32_t seed) {
  send_buffer_->fill(bytes_, seed_of(rank_, seed));
  recv_buffer_->poison(bytes_, seed_of(peer_, seed));
}

std::string PointToPoint::verify(std::uint32_t seed) {
  if (!receives()) return "";
  if (auto bad = recv_buffer_->first_mismatch(bytes_, seed_of(peer_, seed)))
    return "rank " + std::to_string(rank_) + " received wrong data from rank " + std::to_string(peer_) +
           ": first bad byte at offset " + std::to_string(*bad) + " of " + std::to_string(bytes_);
  return "";
}

void PointToPoint::teardown() {
  channel_.reset();
  send_buffer_.reset();
  recv_buffer_.reset();
}

void PointToPoint::settle_received() {
  if (placement_ != Placement::none) recv_buffer_->place(placement_, bytes_);
}

double PointToPoint::launch_in_my_iteration(std::size_t bytes) const {
  if (bytes == 0 || !launch_cost_.measured()) return 0;
  const MemorySpec& peer_spec = spec_of(peer_, size_);
  return pair_launch_in_iteration(pattern_, sender_, placement_, peer_spec.placement,
                                  launch_cost_.seconds[static_cast<std::size_t>(rank_)],
                                  launch_cost_.seconds[static_cast<std::size_t>(peer_)]);
}

void PointToPoint::iterate() {
  switch (pattern_) {
    case PairPattern::ping_pong: return ping_pong();
    case PairPattern::one_way_window: return one_way_window();
    case PairPattern::both_ways_window: return both_ways_window();
  }
}

void PointToPoint::ping_pong() {
  if (sender_) {
    channel_->send(*send_buffer_, bytes_, peer_, kDataTag);
    channel_->recv(*recv_buffer_, bytes_, peer_, kDataTag);
    settle_received();
  } else {
    channel_->recv(*recv_buffer_, bytes_, peer_, kDataTag);
    settle_received();
    channel_->send(*send_buffer_, bytes_, peer_, kDataTag);
  }
}

void PointToPoint::one_way_window() {
  if (sender_) {
    for (int w = 0; w < window_; ++w) channel_->start_send(*send_buffer_, bytes_, peer_, kDataTag);
    channel_->complete_all();
    GMB_MPI_CHECK(MPI_Recv(&ack_, 1, MPI_INT, peer_, kAckTag, comm_, MPI_STATUS_IGNORE));
  } else {
    for (int w = 0; w < window_; ++w) channel_->start_recv(*recv_buffer_, bytes_, peer_, kDataTag);
    channel_->complete_all();
    settle_received();
    GMB_MPI_CHECK(MPI_Send(&ack_, 1, MPI_INT, peer_, kAckTag, comm_));
  }
}

void PointToPoint::both_ways_window() {
  for (int w = 0; w < window_; ++w) channel_->start_recv(*recv_buffer_, bytes_, peer_, kDataTag);
  for (int w = 0; w < window_; ++w) channel_->start_send(*send_buffer_, bytes_, peer_, kDataTag);
  channel_->complete_all();
  settle_received();
}

void PointToPoint::set_figures(Json& record, const std::vector<double>& seconds, double time_scale,
                               double bytes_per_iteration) {
  record.set("time_us", summarize_transformed(seconds, [&](double s) { return s * time_scale * 1e6; }).to_json());
  if (bytes_per_iteration > 0)
    record.set("bandwidth_GBps",
               summarize_transformed(seconds, [&](double s) { return bytes_per_iteration / s / 1e9; }).to_json());
  // Called once per record: --persistent refuses the placements, whose raw figures would come through here too.
  persistent_.add_figures(record);
}

int PointToPoint::sweep_chunks(Context& ctx, RecordSink& sink) {
  int exit_code = kExitOk;
  for (int chunks : chunk_sweep_) {
    transfer_.chunks = chunks;
    exit_code = std::max(exit_code, SizeSweep::run(ctx, sink));
  }
  return exit_code;
}

std::vector<int> PointToPoint::parse_chunk_list(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(parse_positive_int(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start),
                                     "chunk count"));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

namespace {

class Latency : public PointToPoint {
 public:
  Latency() : PointToPoint(PairPattern::ping_pong) {}
  std::vector<TableColumn> columns() const override {
    return {{"median_us", "time_us.median", 2}, {"min_us", "time_us.min", 2}, {"p95_us", "time_us.p95", 2}};
  }
  void describe_result(Json& record, std::size_t, const std::vector<double>& seconds) override {
    add_path(record);
    // One iteration is a round trip: one-way latency is half of it.
    set_figures(record, seconds, 0.5, 0);
    record.set("metrics", Json::object().set("time_us", "one-way latency = round trip / 2"));
  }

 protected:
  // Rank 1 touches after its receive, then replies; rank 0 touches after the reply arrives.
  std::string compensation_formula() const override {
    return "time_us = (round trip - the t_kernel_launch of each rank placed on the device, both touch after their "
           "receive; rank 0 waits for rank 1's touch) / 2; MD-MD: (round trip - 2 t_kernel_launch) / 2";
  }
};

// Latency on managed memory (default managed:device both sides) with the host-host and
// device-device references measured in the same launch.
class UnifiedMemoryLatency final : public Latency {
 public:
  UnifiedMemoryLatency() {
    send_text_ = recv_text_ = "managed:device";
    references_ = true;
  }
};

class Bandwidth final : public PointToPoint {
 public:
  Bandwidth() : PointToPoint(PairPattern::one_way_window) {}
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 1, static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object().set("time_us", "time per window").set("bandwidth_GBps", "bytes * window / time, 1e9 bytes/s"));
  }

 protected:
  std::string compensation_formula() const override {
    return "time_us = window time - t_kernel_launch of the receiver when placed on the device (it touches once, after "
           "the window, before the acknowledgement the sender waits for); bandwidth_GBps = bytes * window / time_us";
  }
};

// Both ranks post W receives and W sends, then wait for all, then place what they received.
class BiBandwidth final : public PointToPoint {
 public:
  BiBandwidth() : PointToPoint(PairPattern::both_ways_window) {}
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 1, 2.0 * static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object().set("time_us", "time per window").set("bandwidth_GBps", "2 * bytes * window / time, 1e9 bytes/s"));
  }

 protected:
  std::string compensation_formula() const override {
    return "per rank, window time - its own t_kernel_launch when placed on the device (each touches once after the "
           "window, at the same time, waiting for nobody), then the slowest rank; bandwidth_GBps = 2 * bytes * window / "
           "time_us";
  }
};

class MultiPairBandwidth final : public PointToPoint {
 public:
  MultiPairBandwidth() : PointToPoint(PairPattern::one_way_window) {}
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"Mmsg/s", "message_rate_Mps.median", 3}, {"window_us", "time_us.median", 2}};
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 1, static_cast<double>(bytes) * window_ * pairs_);
    const double messages = static_cast<double>(window_) * pairs_;
    record.set("message_rate_Mps", summarize_transformed(seconds, [&](double s) { return messages / s / 1e6; }).to_json());
    record.set("metrics", Json::object()
                              .set("time_us", "time per window, slowest pair")
                              .set("bandwidth_GBps", "pairs * bytes * window / time, aggregate")
                              .set("message_rate_Mps", "pairs * window / time"));
  }

 protected:
  std::string compensation_formula() const override {
    return "per pair, window time - t_kernel_launch of the receiver when placed on the device (before the "
           "acknowledgement its sender waits for), then the slowest rank; bandwidth_GBps = pairs * bytes * window / time_us";
  }
};

// Every point-to-point benchmark takes --transport mpi|nccl (PointToPoint's options).
const Registration latency_registration({"latency", "ping-pong one-way latency between 2 ranks", 2, 2, false,
                                         [] { return std::make_unique<Latency>(); },
                                         {Family::pt2pt, {Statistic::time_us}, Statistic::time_us, transport_names()},
                                         Directions::none, false, omb_point_to_point("osu_latency", true)});
const Registration bw_registration({"bw", "uni-directional bandwidth, a window of non-blocking sends", 2, 2, false,
                                    [] { return std::make_unique<Bandwidth>(); },
                                    {Family::pt2pt, {Statistic::time_us, Statistic::bandwidth_GBps},
                                     Statistic::bandwidth_GBps, transport_names()},
                                    Directions::uni, false, omb_point_to_point("osu_bw", false)});
const Registration bibw_registration({"bibw", "bi-directional bandwidth, windows both ways at once", 2, 2, false,
                                      [] { return std::make_unique<BiBandwidth>(); },
                                      {Family::pt2pt, {Statistic::time_us, Statistic::bandwidth_GBps},
                                       Statistic::bandwidth_GBps, transport_names()},
                                      Directions::bi, false, omb_point_to_point("osu_bibw", false)});
const Registration mbw_registration({"mbw", "multi-pair aggregate bandwidth and message rate (ranks/2 pairs)", 2, 0,
                                     true, [] { return std::make_unique<MultiPairBandwidth>(); },
                                     {Family::multi_pair,
                                      {Statistic::time_us, Statistic::bandwidth_GBps, Statistic::message_rate_Mps},
                                      Statistic::bandwidth_GBps, transport_names()},
                                     Directions::uni, false, omb_point_to_point("osu_mbw_mr", false)});
const Registration um_registration({"um", "managed-memory latency per placement (default managed:device both sides), "
                                          "with host-host and device-device references in the same run",
                                    2, 2, false, [] { return std::make_unique<UnifiedMemoryLatency>(); },
                                    {Family::managed, {Statistic::time_us}, Statistic::time_us, transport_names()},
                                    Directions::none, false, omb_point_to_point("osu_latency", true, /*host_by_default*/ false)});

}  // namespace

}  // namespace gmb
