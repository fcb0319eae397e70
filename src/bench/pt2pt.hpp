// What the point-to-point benchmarks share (METHODOLOGY "Point to point"): ranks in pairs (rank i of
// the first half with rank i + ranks/2), buffers per side and memory kind (--send, --recv), managed
// placements, the transfer strategy or transport, --references, --validate and the records' common
// fields. A point-to-point benchmark derives from PointToPoint and supplies its iteration (one of the
// patterns below), its table columns and its figures: one .cpp file in src/bench/ (multi_latency.cpp
// is the smallest example). Host-only: no CUDA headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/managed.hpp"
#include "gmb/transfer.hpp"

namespace gmb {

class PointToPoint : public SizeSweep {
 public:
  void add_options(ArgParser& p) override;
  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override;
  Json options_json() const override;
  void describe_configuration(Json& record) const override;
  std::string unsupported_reason(const Context& ctx) override;
  SizeNeeds needs(const Context& ctx, std::size_t bytes) const override;
  // The memory asked for, then with --references host-host and device-device in the same launch.
  int run(Context& ctx, RecordSink& sink) override;
  void setup(const Context& ctx, std::size_t bytes) override;
  void prepare(std::uint32_t seed) override;
  std::string verify(std::uint32_t seed) override;
  void teardown() override;

  // Managed placements: both buffers are where this rank's placement says before every iteration,
  // untimed (METHODOLOGY: the migration before the send does not count). The receive buffer is
  // placed too, so that every message lands in memory that starts where the placement says.
  bool needs_pre_iteration() const override { return placed() || one_iteration_per_sample_; }
  void pre_iteration() override;
  bool counts_page_faults() const override { return counts_faults_; }

 protected:
  static constexpr int kDataTag = 100;
  static constexpr int kAckTag = 101;

  // Whether the benchmark sends windows of messages (--window); false for ping-pongs.
  virtual bool windowed() const { return true; }
  // Whether a side's receive buffer gets data (checked by --validate; touched when placed).
  virtual bool side_receives(bool sender_side) const { return !sender_side; }
  bool receives() const { return side_receives(sender_); }
  // Who receives and who waits for whom in one iteration (which launches a rank's time contains).
  virtual PairPattern pair_pattern() const { return PairPattern::one_way_window; }

  const MemorySpec& spec_of(int rank, int size) const { return rank < size / 2 ? send_ : recv_; }
  bool placed() const { return send_.placement != Placement::none || recv_.placement != Placement::none; }
  static std::uint32_t seed_of(int rank, std::uint32_t seed) { return seed * 7919u + static_cast<std::uint32_t>(rank); }

  // Inside the timed region: after a receive completes, the data goes where this rank's placement
  // says (METHODOLOGY: the migration after the receive counts).
  void settle_received();

  // The kernel-launch time of the device touches inside this rank's timed iteration (an empty
  // message launches no kernel).
  double launch_in_my_iteration(std::size_t bytes) const override;
  bool compensates_launch_cost() const override { return placed(); }

  // The iteration patterns (pair_pattern() says which one an iteration uses):
  // one round trip with blocking calls: the first half sends then receives, its peer the reverse.
  void ping_pong();
  // W non-blocking sends from the first half, W receives on the other, then a 4-byte ack back.
  void one_way_window();
  // Both sides post W receives and W sends, then wait for all.
  void both_ways_window();

  void add_path(Json& record) const { record.set("path", path_.to_json()); }
  // time_us (each sample times `time_scale`) and, when `bytes_per_iteration` > 0, bandwidth_GBps.
  void set_figures(Json& record, const std::vector<double>& seconds, double time_scale, double bytes_per_iteration) const;

  std::string send_text_ = "host", recv_text_ = "host";  // as given; parsed by configure()
  bool references_ = false;
  int window_ = 64;
  int pairs_ = 1;
  std::size_t bytes_ = 0;
  int rank_ = 0, peer_ = 0, size_ = 2;
  bool sender_ = false;  // in the first half of the ranks (rank 0 of a pair)

 private:
  // One sweep of the sizes per chunk count (a single pass unless --chunks lists several).
  int sweep_chunks(Context& ctx, RecordSink& sink);
  static std::vector<int> parse_chunk_list(const std::string& text);

  MemorySpec send_, recv_;
  bool one_iteration_per_sample_ = false;  // references measured next to managed placements
  bool counts_faults_ = false;             // a side uses managed memory
  TransferConfig transfer_;
  std::vector<int> chunk_sweep_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Placement placement_ = Placement::none;  // this rank's
  LaunchCost launch_cost_;
  int ack_ = 0;
  std::unique_ptr<Buffer> send_buffer_, recv_buffer_;
  std::unique_ptr<Transfer> channel_;
  PathInfo path_;
};

}  // namespace gmb
