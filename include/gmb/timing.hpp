// SPDX-License-Identifier: BSD-3-Clause
// What every timed measurement shares (methodology.md "Timing and statistics"): one host clock, a
// rank's samples, the slowest rank per sample, and ranks agreeing on what is refused. The size sweep
// (runner), nbc, halo, peaks and the launch-cost calibration all time through these.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gmb/error.hpp"

namespace gmb {

// The host clock of every timed region: the steady clock, in seconds. Work a region starts on a GPU
// must be complete (its stream synchronised) before the region's end is read; copy ceilings are timed
// with GPU events instead (peaks), and only collected here.
inline double host_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds `body` takes on the host clock.
template <typename Body>
double host_time(Body&& body) {
  const double t0 = host_seconds();
  body();
  return host_seconds() - t0;
}

// One sample as the sweeps take it: a barrier over `comm`, then `body` timed on the host clock, divided by
// the `iterations` it runs. Timed back to back instead, a rank's sample would include waiting for a peer
// still in its previous iteration, and with two ranks taking turns at that (seen: MPI_Alltoall on one GPU,
// each call 310 or 590 us by turns) the slowest rank of every sample is the one that waited: the median of
// the per-sample maxima was 590 us where a call takes 450 us on average.
template <typename Body>
double time_after_barrier(MPI_Comm comm, Body&& body, int iterations = 1) {
  GMB_MPI_CHECK(MPI_Barrier(comm));
  return host_time(body) / iterations;
}

// A rank's samples, seconds each, in the order taken. Sample k of every rank covers the same iterations
// (ranks run in lockstep), which is what lets the ranks' samples be reduced element by element.
class Samples {
 public:
  explicit Samples(std::size_t expected = 0) { seconds_.reserve(expected); }
  void add(double seconds) { seconds_.push_back(seconds); }
  // Adds `body` timed on the host clock, divided by the `iterations` it runs.
  template <typename Body>
  void time(Body&& body, int iterations = 1) {
    add(host_time(body) / iterations);
  }
  const std::vector<double>& seconds() const { return seconds_; }
  std::size_t size() const { return seconds_.size(); }

 private:
  std::vector<double> seconds_;
};

// Collective over `comm`, every rank passing as many samples: per sample, the slowest rank's
// (MPI_Reduce MAX), on `root`; other ranks get an empty vector.
std::vector<double> slowest_rank(const std::vector<double>& mine, MPI_Comm comm, int root);
// The same on every rank (MPI_Allreduce MAX).
std::vector<double> slowest_rank_everywhere(const std::vector<double>& mine, MPI_Comm comm);
// Collective over `comm`, every rank passing as many samples: every rank's samples on `root`, by rank;
// other ranks get an empty vector. For figures that combine ranks otherwise than by the slowest.
std::vector<std::vector<double>> every_rank(const std::vector<double>& mine, MPI_Comm comm, int root);

// Collective over `comm`: the reason of the lowest rank that has one, or "" when none has.
std::string agree_on_reason(MPI_Comm comm, const std::string& local_reason);
// Collective over `comm`: runs `attempt` (which may throw Unsupported) on every rank, then every rank
// agrees whether it was refused: the lowest refusing rank's reason, or "" when every rank succeeded.
// A rank that skipped a size its peers measure would leave them waiting.
std::string agreed_refusal(MPI_Comm comm, const std::function<void()>& attempt);

}  // namespace gmb
