// Point-to-point benchmarks (METHODOLOGY "Point to point"): latency, bw, bibw, mbw.
// One class holds what they share (buffers per rank and memory kind, the transfer strategy,
// validation); each benchmark supplies its iteration and its derived metrics.
#include <cmath>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/nccl.hpp"
#include "gmb/sizes.hpp"
#include "gmb/stats.hpp"
#include "gmb/transfer.hpp"

namespace gmb {

namespace {

constexpr int kDataTag = 100;
constexpr int kAckTag = 101;

// OMB's positional buffer letters: "D H" means rank 0 uses device memory, rank 1 host memory.
std::string kind_from_omb_letter(const std::string& letter) {
  if (letter == "H") return "host";
  if (letter == "D") return "device";
  if (letter == "M") return "managed";
  if (letter == "P") return "pinned";
  throw UsageError("unknown buffer letter '" + letter + "' (accepted: H host, P pinned, D device, M managed)");
}

class PointToPoint : public SizeSweep {
 public:
  void add_options(ArgParser& p) override {
    p.value({"--send"}, "KIND", "memory kind of the sending side (rank 0; the first half of the ranks in mbw)",
            [this](const std::string& v) { send_kind_ = v; });
    p.value({"--recv"}, "KIND", "memory kind of the receiving side (rank 1; the second half in mbw)",
            [this](const std::string& v) { recv_kind_ = v; });
    p.value({"--transport"}, "mpi|nccl", "who moves the data: the MPI library (default) or NCCL (device buffers)",
            [this](const std::string& v) { transfer_.transport = v; });
    std::string names;
    for (const auto& s : transfer_strategies()) names += (names.empty() ? "" : "|") + s.name;
    p.value({"--strategy"}, names, "how device data reaches MPI (default direct)",
            [this](const std::string& v) { transfer_.strategy = v; });
    p.value({"--chunks"}, "C[,C...]", "pipelined: chunks per message (default 4); a list sweeps them",
            [this](const std::string& v) { chunk_sweep_ = parse_chunk_list(v); });
    p.value({"--chunk-size"}, "BYTES", "pipelined: bytes per chunk instead of a chunk count",
            [this](const std::string& v) {
              transfer_.chunk_size = parse_size(v);
              if (transfer_.chunk_size == 0) throw UsageError("chunk size must be at least 1 byte");
            });
    if (windowed()) {
      p.value({"--window", "-W"}, "W", "messages in flight per window (default 64)",
              [this](const std::string& v) { window_ = parse_positive_int(v, "window"); });
    }
  }

  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override {
    if (positionals.size() == 2) {
      send_kind_ = kind_from_omb_letter(positionals[0]);
      recv_kind_ = kind_from_omb_letter(positionals[1]);
    } else if (!positionals.empty()) {
      throw UsageError("expected two buffer letters such as 'D H' or none, got " + std::to_string(positionals.size()) +
                       " positional arguments");
    }
    for (const auto* kind : {&send_kind_, &recv_kind_})
      platform.memory.known(*kind);
    parse_choice(transfer_.transport, transport_names(), "transport");
    std::vector<std::string> names;
    for (const auto& s : transfer_strategies()) names.push_back(s.name);
    parse_choice(transfer_.strategy, names, "transfer strategy");
    if (transfer_.transport == "nccl" && transfer_.strategy != "direct")
      throw UsageError("--strategy " + transfer_.strategy +
                       " applies to the MPI transport; NCCL moves device buffers itself (leave --strategy out)");
    if (transfer_.strategy != "pipelined" && (!chunk_sweep_.empty() || transfer_.chunk_size))
      throw UsageError("--chunks and --chunk-size apply to --strategy pipelined only");
    if (!chunk_sweep_.empty() && transfer_.chunk_size)
      throw UsageError("give either --chunks or --chunk-size, not both");
    if (chunk_sweep_.empty()) chunk_sweep_.push_back(transfer_.chunks);
    pairs_ = world_size / 2;
  }

  Json options_json() const override {
    Json o = Json::object()
                 .set("send", send_kind_)
                 .set("recv", recv_kind_)
                 .set("transport", transfer_.transport)
                 .set("strategy", transfer_.strategy);
    if (transfer_.strategy == "pipelined") {
      if (transfer_.chunk_size) o.set("chunk_size", transfer_.chunk_size);
      else o.set("chunks", Json::array_of(chunk_sweep_));
    }
    if (windowed()) o.set("window", window_);
    return o;
  }

  void describe_configuration(Json& record) const override {
    record.set("memory", Json::object().set("send", send_kind_).set("recv", recv_kind_))
        .set("transport", transfer_.transport)
        .set("strategy", transfer_.strategy);
    if (transfer_.strategy == "pipelined") {
      if (transfer_.chunk_size) record.set("chunk_size", transfer_.chunk_size);
      record.set("chunks", transfer_.chunks_for(static_cast<std::size_t>(record.find("bytes")->as_number())));
    }
    if (windowed()) record.set("window", window_);
    record.set("pairs", pairs_);
  }

  std::string unsupported_reason(const Context& ctx) override {
    const std::string& mine = my_kind(ctx);
    const MemoryKind* kind = ctx.platform->memory.find(mine);
    if (!kind->available()) return "memory kind '" + mine + "' is not available: " + kind->unavailable_reason;
    if (transfer_.transport == "nccl") return nccl_problem(ctx, mine);
    if (transfer_.strategy != "direct") {
      const MemoryKind* send = ctx.platform->memory.find(send_kind_);
      const MemoryKind* recv = ctx.platform->memory.find(recv_kind_);
      if (!send->gpu_backed && !recv->gpu_backed)
        return "the " + transfer_.strategy + " strategy stages device or managed buffers through host memory; here both sides use '" +
               send_kind_ + "'/'" + recv_kind_ + "' (use --strategy direct)";
    }
    return strategy_problem(transfer_, *kind, *ctx.platform, *ctx.awareness);
  }

  // One sweep of the sizes per chunk count (a single pass unless --chunks lists several).
  int run(Context& ctx, RecordSink& sink) override {
    int exit_code = kExitOk;
    for (int chunks : chunk_sweep_) {
      transfer_.chunks = chunks;
      exit_code = std::max(exit_code, SizeSweep::run(ctx, sink));
    }
    return exit_code;
  }

  void setup(const Context& ctx, std::size_t bytes) override {
    const MemoryKind& kind = ctx.platform->memory.require(my_kind(ctx));
    bytes_ = bytes;
    comm_ = ctx.comm;
    rank_ = ctx.rank;
    sender_ = ctx.rank < ctx.size / 2;
    peer_ = sender_ ? ctx.rank + ctx.size / 2 : ctx.rank - ctx.size / 2;
    send_buffer_ = kind.allocate(std::max<std::size_t>(bytes, 1));
    recv_buffer_ = kind.allocate(std::max<std::size_t>(bytes, 1));
    send_buffer_->fill(bytes, seed_of(rank_, 0));  // the producer's data exists before timing starts
    const MemoryKind* send = ctx.platform->memory.find(send_kind_);
    const MemoryKind* recv = ctx.platform->memory.find(recv_kind_);
    path_ = ctx.path_between(0, send->gpu_backed, ctx.size / 2, recv->gpu_backed);
    channel_ = make_transfer(transfer_, ctx.comm, *ctx.platform, kind, bytes, windowed() ? window_ : 1);
  }

  void prepare(std::uint32_t seed) override {
    send_buffer_->fill(bytes_, seed_of(rank_, seed));
    recv_buffer_->poison(bytes_, seed_of(peer_, seed));
  }

  std::string verify(std::uint32_t seed) override {
    if (!receives()) return "";
    if (auto bad = recv_buffer_->first_mismatch(bytes_, seed_of(peer_, seed)))
      return "rank " + std::to_string(rank_) + " received wrong data from rank " + std::to_string(peer_) +
             ": first bad byte at offset " + std::to_string(*bad) + " of " + std::to_string(bytes_);
    return "";
  }

  void teardown() override {
    channel_.reset();
    send_buffer_.reset();
    recv_buffer_.reset();
  }

 protected:
  virtual bool windowed() const { return true; }
  // Whether this rank's receive buffer gets data (checked by --validate).
  virtual bool receives() const { return !sender_; }
  const std::string& my_kind(const Context& ctx) const { return ctx.rank < ctx.size / 2 ? send_kind_ : recv_kind_; }
  static std::uint32_t seed_of(int rank, std::uint32_t seed) { return seed * 7919u + static_cast<std::uint32_t>(rank); }

  // W non-blocking sends from the sender side, W receives on the other, then a 4-byte ack back.
  void one_way_window() {
    if (sender_) {
      for (int w = 0; w < window_; ++w) channel_->start_send(*send_buffer_, bytes_, peer_, kDataTag);
      channel_->complete_all();
      GMB_MPI_CHECK(MPI_Recv(&ack_, 1, MPI_INT, peer_, kAckTag, comm_, MPI_STATUS_IGNORE));
    } else {
      for (int w = 0; w < window_; ++w) channel_->start_recv(*recv_buffer_, bytes_, peer_, kDataTag);
      channel_->complete_all();
      GMB_MPI_CHECK(MPI_Send(&ack_, 1, MPI_INT, peer_, kAckTag, comm_));
    }
  }

  void add_path(Json& record) const { record.set("path", path_.to_json()); }

  void set_bandwidth(Json& record, const std::vector<double>& seconds, double bytes_per_iteration) const {
    record.set("time_us", summarize_transformed(seconds, [](double s) { return s * 1e6; }).to_json());
    record.set("bandwidth_GBps",
               summarize_transformed(seconds, [&](double s) { return bytes_per_iteration / s / 1e9; }).to_json());
  }

  static std::vector<int> parse_chunk_list(const std::string& text) {
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

  std::string send_kind_ = "host", recv_kind_ = "host";
  TransferConfig transfer_;
  std::vector<int> chunk_sweep_;
  int window_ = 64;
  int pairs_ = 1;
  std::size_t bytes_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, peer_ = 0;
  bool sender_ = false;
  int ack_ = 0;
  std::unique_ptr<Buffer> send_buffer_, recv_buffer_;
  std::unique_ptr<Transfer> channel_;
  PathInfo path_;
};

class Latency final : public PointToPoint {
 public:
  std::vector<TableColumn> columns() const override {
    return {{"median_us", "time_us.median", 2}, {"min_us", "time_us.min", 2}, {"p95_us", "time_us.p95", 2}};
  }
  void iterate() override {
    if (sender_) {
      channel_->send(*send_buffer_, bytes_, peer_, kDataTag);
      channel_->recv(*recv_buffer_, bytes_, peer_, kDataTag);
    } else {
      channel_->recv(*recv_buffer_, bytes_, peer_, kDataTag);
      channel_->send(*send_buffer_, bytes_, peer_, kDataTag);
    }
  }
  void describe_result(Json& record, std::size_t, const std::vector<double>& seconds) override {
    add_path(record);
    // One iteration is a round trip: one-way latency is half of it.
    record.set("time_us", summarize_transformed(seconds, [](double s) { return s * 1e6 / 2; }).to_json());
    record.set("metrics", Json::object().set("time_us", "one-way latency = round trip / 2"));
  }

 protected:
  bool windowed() const override { return false; }
  bool receives() const override { return true; }
};

class Bandwidth final : public PointToPoint {
 public:
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  void iterate() override { one_way_window(); }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_bandwidth(record, seconds, static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object().set("time_us", "time per window").set("bandwidth_GBps", "bytes * window / time, 1e9 bytes/s"));
  }
};

class BiBandwidth final : public PointToPoint {
 public:
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"p5_GB/s", "bandwidth_GBps.p5", 3}, {"window_us", "time_us.median", 2}};
  }
  // Both ranks post W receives and W sends, then wait for all.
  void iterate() override {
    for (int w = 0; w < window_; ++w) channel_->start_recv(*recv_buffer_, bytes_, peer_, kDataTag);
    for (int w = 0; w < window_; ++w) channel_->start_send(*send_buffer_, bytes_, peer_, kDataTag);
    channel_->complete_all();
  }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_bandwidth(record, seconds, 2.0 * static_cast<double>(bytes) * window_);
    record.set("metrics", Json::object().set("time_us", "time per window").set("bandwidth_GBps", "2 * bytes * window / time, 1e9 bytes/s"));
  }

 protected:
  bool receives() const override { return true; }
};

class MultiPairBandwidth final : public PointToPoint {
 public:
  std::vector<TableColumn> columns() const override {
    return {{"GB/s", "bandwidth_GBps.median", 3}, {"Mmsg/s", "message_rate_Mps.median", 3}, {"window_us", "time_us.median", 2}};
  }
  void iterate() override { one_way_window(); }
  void describe_result(Json& record, std::size_t bytes, const std::vector<double>& seconds) override {
    add_path(record);
    set_bandwidth(record, seconds, static_cast<double>(bytes) * window_ * pairs_);
    const double messages = static_cast<double>(window_) * pairs_;
    record.set("message_rate_Mps", summarize_transformed(seconds, [&](double s) { return messages / s / 1e6; }).to_json());
    record.set("metrics", Json::object()
                              .set("time_us", "time per window, slowest pair")
                              .set("bandwidth_GBps", "pairs * bytes * window / time, aggregate")
                              .set("message_rate_Mps", "pairs * window / time"));
  }
};

const Registration latency_registration({"latency", "ping-pong one-way latency between 2 ranks", 2, 2, false,
                                         [] { return std::make_unique<Latency>(); }});
const Registration bw_registration({"bw", "uni-directional bandwidth, a window of non-blocking sends", 2, 2, false,
                                    [] { return std::make_unique<Bandwidth>(); }});
const Registration bibw_registration({"bibw", "bi-directional bandwidth, windows both ways at once", 2, 2, false,
                                      [] { return std::make_unique<BiBandwidth>(); }});
const Registration mbw_registration({"mbw", "multi-pair aggregate bandwidth and message rate (ranks/2 pairs)", 2, 0,
                                     true, [] { return std::make_unique<MultiPairBandwidth>(); }});

}  // namespace

}  // namespace gmb
