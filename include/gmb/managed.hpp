// SPDX-License-Identifier: BSD-3-Clause
// Managed (unified) memory measurements (METHODOLOGY "Unified (managed) memory placements";
// docs/methodology.md "Managed memory placements"): where a buffer is when MPI touches it, the
// kernel-launch cost removed from timings that contain a device touch, and the page faults counted
// in an untimed pass.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gmb/json.hpp"
#include "gmb/memory.hpp"
#include "gmb/path.hpp"

namespace gmb {

struct Platform;
class UnifiedMemoryCounter;

// "none", "host", "device".
const char* placement_name(Placement placement);

// A memory kind with an optional effective location, as given on the command line:
// "host", "managed" (no placement: wherever the driver leaves it), "managed:device".
struct MemorySpec {
  std::string kind = "host";
  Placement placement = Placement::none;
  // The spelling records carry: "managed:device", or the kind alone.
  std::string text() const;
};

// Parses KIND[:host|device]. Throws UsageError naming what is accepted for an unknown kind, an
// unknown placement, or a placement on a kind that cannot be placed (only managed memory moves).
MemorySpec parse_memory_spec(const std::string& text, const MemoryKinds& kinds);

// OMB's buffer letters as a memory spec: H host, P pinned, D device, M managed, MH / MD managed
// memory placed on the host / device. Throws UsageError for anything else.
std::string memory_spec_from_omb_letters(const std::string& letters);

// The memory of a pair's two sides: OMB's two buffer letters when the positionals are two ("D H"), else
// `send_text` / `recv_text` (--send, --recv). Throws UsageError for any other count of positionals, an unknown
// letter or kind.
struct PairMemory {
  MemorySpec send, recv;
};
PairMemory parse_pair_memory(const std::vector<std::string>& positionals, const std::string& send_text,
                             const std::string& recv_text, const MemoryKinds& kinds);

// The cost of one device placement that migrates nothing: Buffer::place(device) of a one-page
// managed buffer already resident on the GPU (kernel launch + stream synchronisation). Measured
// once per rank at start; this is the `t_kernel_launch` of METHODOLOGY's compensation.
struct LaunchCost {
  std::vector<double> seconds;  // per rank, the median of `samples` placements; empty when not measured
  std::string reason;           // why it was not measured
  int samples = 0;
  bool measured() const { return !seconds.empty(); }
  Json to_json() const;  // for the context record's "calibration"
};

// Collective over `comm`: `ranks` are every rank's facts, `rank` this one. Ranks that share a GPU
// take turns so that they do not inflate each other's launches. Not measured (reason set) without a
// usable GPU or an available placeable memory kind.
LaunchCost measure_launch_cost(MPI_Comm comm, const Platform& platform, const std::vector<RankFacts>& ranks, int rank);

// Compensation arithmetic (METHODOLOGY): which launches one rank's timed iteration contains.
// Point-to-point pairs: a rank's own device touch of what it received, plus its peer's when it waits
// for it (a ping-pong's first sender waits for the reply, a bw sender for the acknowledgement, both
// sent after the peer's touch); in bibw both touch after the window at once and nobody waits.
enum class PairPattern { ping_pong, one_way_window, both_ways_window };
double pair_launch_in_iteration(PairPattern pattern, bool sender, Placement mine, Placement peer, double own_cost,
                                double peer_cost);

// Compensated samples: `raw_slowest[k]` is sample k's slowest rank, `compensated_slowest[k]` the
// slowest after each rank removed its own launch time (empty: nothing to remove). Not applied (the
// raw samples are returned, with the reason) when a compensated sample is not positive: a figure
// that would be zero or negative is noise, not a measurement.
struct Compensated {
  std::vector<double> seconds;
  bool applied = false;
  double subtracted_seconds = 0;  // median over samples of raw - compensated
  std::string note;
};
Compensated compensate_per_rank(const std::vector<double>& raw_slowest, const std::vector<double>& compensated_slowest);

// A result record's "compensation": applied, formula, every rank's launch cost, what was subtracted
// per iteration, and the note. The caller adds the raw figures (raw_time_us, ...).
Json compensation_json(const Compensated& compensated, const LaunchCost& cost, const std::string& formula);

// Collective over `comm`: runs `iterations` iterations, each `untimed` then `timed`, counting page
// faults and migrations during `timed` only (what the measurement times), and returns on rank 0 the
// per-iteration counts, summed over ranks and per rank: {"status": "counted", ...}; or
// {"status": "unsupported", "reason": ...} when any rank cannot count (`counter` null with
// `unavailable_reason`, or CUPTI refused). Other ranks get null.
Json count_page_faults(MPI_Comm comm, UnifiedMemoryCounter* counter, const std::string& unavailable_reason,
                       int iterations, const std::function<void()>& untimed, const std::function<void()>& timed);

// What managed memory adds around a size sweep's iterations (um, managed placements): the data placed
// before every iteration, the page faults counted after the timed samples, the kernel-launch cost removed
// from them. A sweep whose data is placed hands the runner one (SizeSweep::hold_placement); the defaults
// are a sweep without managed memory.
class ManagedPlacement {
 public:
  virtual ~ManagedPlacement() = default;
  // Untimed work before every iteration (placing the data before the send). When there is some, each
  // iteration is its own sample, after place() and a barrier.
  virtual bool places_before_iteration() const { return false; }
  virtual void place() {}
  // Whether to count unified-memory page faults in an untimed pass after the timed samples (see
  // count_page_faults); the result goes into the record's "page_faults".
  virtual bool counts_page_faults() const { return false; }
  // Launch-cost compensation: the kernel-launch time of the device touches inside one timed iteration of
  // *this* rank (its own touch of what it received, and a peer's touch it waits for). The runner removes
  // it from this rank's samples before taking the slowest rank, and records the raw figures next to the
  // compensated ones. 0: nothing to remove.
  virtual double launch_in_my_iteration(std::size_t bytes) const { (void)bytes; return 0; }
  // Whether records carry "compensation" (managed placements; also when there is nothing to remove).
  virtual bool compensates_launch_cost() const { return false; }
  // How the launch cost is removed, for the record's "compensation.formula".
  virtual std::string compensation_formula() const { return ""; }
};

}  // namespace gmb
