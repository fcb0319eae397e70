// SPDX-License-Identifier: BSD-3-Clause
// What the point-to-point benchmarks share (METHODOLOGY "Point to point"): ranks in pairs (rank i of
// the first half with rank i + ranks/2), buffers per side and memory kind (--send, --recv), managed
// placements, the transfer strategy or transport, --references, --persistent, --validate and the records'
// common fields. A point-to-point benchmark derives from PointToPoint, names its iteration pattern (a
// ping-pong, a one-way window or windows both ways) and supplies its table columns and its figures: one
// .cpp file in src/bench/ (multi_latency.cpp is the smallest example). Host-only: no CUDA headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/managed.hpp"
#include "gmb/transfer.hpp"
#include "persistent_form.hpp"

namespace gmb {

// A pair's managed placements are its own placement: they act on the pair's buffers, its pattern and each
// benchmark's compensation formula, so the sweep is its own ManagedPlacement.
class PointToPoint : public SizeSweep, protected ManagedPlacement {
 public:
  // One iteration is `pattern`: what is timed, who receives, who waits for whom.
  explicit PointToPoint(PairPattern pattern) : pattern_(pattern) { hold_placement(this); }

  void add_options(ArgParser& p) override;
  Positionals positionals() const override { return pair_letters(); }
  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override;
  Json options_json() const override;
  void describe_configuration(Json& record) const override;
  std::string unsupported_reason(const Context& ctx) override;
  SizeNeeds needs(const Context& ctx, std::size_t bytes) const override;
  // The memory asked for, then with --references host-host and device-device, or with --persistent its
  // persistent form, in the same launch.
  int run(Context& ctx, RecordSink& sink) override;
  void setup(const Context& ctx, std::size_t bytes) override;
  void iterate() override;
  void prepare(std::uint32_t seed) override;
  std::string verify(std::uint32_t seed) override;
  void teardown() override;

  // Managed placements: both buffers are where this rank's placement says before every iteration,
  // untimed (METHODOLOGY: the migration before the send does not count). The receive buffer is
  // placed too, so that every message lands in memory that starts where the placement says.
  bool places_before_iteration() const override { return placed() || one_iteration_per_sample_; }
  void place() override;
  bool counts_page_faults() const override { return counts_faults_; }

 protected:
  static constexpr int kDataTag = 100;
  static constexpr int kAckTag = 101;

  // Whether the benchmark sends windows of messages (--window); false for ping-pongs.
  bool windowed() const { return pattern_ != PairPattern::ping_pong; }
  // Whether this rank's receive buffer gets data (checked by --validate; touched when placed): every
  // rank but the sender of a one-way window.
  bool receives() const { return pattern_ != PairPattern::one_way_window || !sender_; }

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

  // The record's path (pair 0's) and, with several pairs, every pair's: what tells pairs that share a network link,
  // a GPU or a host's memory from pairs that do not (the ceiling of an aggregate figure).
  void add_path(Json& record) const;
  // time_us (each sample times `time_scale`) and, when `bytes_per_iteration` > 0, bandwidth_GBps; with
  // --persistent, the persistent form's comparison with the regular form.
  void set_figures(Json& record, const std::vector<double>& seconds, double time_scale, double bytes_per_iteration);

  std::string send_text_ = "host", recv_text_ = "host";  // as given; parsed by configure()
  bool references_ = false;
  int window_ = RunSettings::kDefaultWindow;
  int pairs_ = 1;
  std::size_t bytes_ = 0;
  int rank_ = 0, peer_ = 0, size_ = 2;
  bool sender_ = false;  // in the first half of the ranks (rank 0 of a pair)

 private:
  // The iteration patterns:
  // ping_pong: one round trip with blocking calls: the first half sends then receives, its peer the reverse.
  void ping_pong();
  // one_way_window: W non-blocking sends from the first half, W receives on the other, then a 4-byte ack back.
  void one_way_window();
  // both_ways_window: both sides post W receives and W sends, then wait for all.
  void both_ways_window();
  // Messages this rank has in flight at once: one, a window (one way) or two (both ways).
  std::uint64_t messages_in_flight() const;
  // Requests this rank holds at once for messages of `bytes`: a request per chunk of each message in flight; with
  // --persistent, the window's persistent sends and receives, which all exist from setup on.
  std::uint64_t requests_in_flight(std::size_t bytes) const;
  // One sweep of the sizes per chunk count (a single pass unless --chunks lists several).
  int sweep_chunks(Context& ctx, RecordSink& sink);
  static std::vector<int> parse_chunk_list(const std::string& text);

  PairPattern pattern_;
  MemorySpec send_, recv_;
  bool one_iteration_per_sample_ = false;  // references measured next to managed placements
  bool counts_faults_ = false;             // a side uses managed memory
  TransferConfig transfer_;
  PersistentForm persistent_;  // --persistent: which form is measured, and their comparison
  std::vector<int> chunk_sweep_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Placement placement_ = Placement::none;  // this rank's
  LaunchCost launch_cost_;
  int ack_ = 0;
  std::unique_ptr<Buffer> send_buffer_, recv_buffer_;
  std::unique_ptr<Transfer> channel_;
  PathInfo path_;
  Json pair_paths_;  // with several pairs: each pair's ranks, hosts, GPUs and path (pair_paths)
};

}  // namespace gmb
