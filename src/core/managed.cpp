// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/managed.hpp"

#include <algorithm>
#include <cstdint>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/platform.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

constexpr int kLaunchWarmup = 20;
constexpr int kLaunchSamples = 200;
constexpr std::size_t kOnePage = 4096;

// The median of `kLaunchSamples` device placements of a page that is already on the device: no
// migration happens, so what is left is the launch and the synchronisation every timed touch pays.
double median_resident_placement(const MemoryKind& kind) {
  auto page = kind.allocate(kOnePage);
  for (int k = 0; k < kLaunchWarmup; ++k) page->place(Placement::device, kOnePage);
  Samples samples(kLaunchSamples);
  for (int k = 0; k < kLaunchSamples; ++k) samples.time([&] { page->place(Placement::device, kOnePage); });
  return summarize(samples.seconds()).median;
}

}  // namespace

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::host: return "host";
    case Placement::device: return "device";
    case Placement::none: break;
  }
  return "none";
}

std::string MemorySpec::text() const {
  return placement == Placement::none ? kind : kind + ":" + placement_name(placement);
}

MemorySpec parse_memory_spec(const std::string& text, const MemoryKinds& kinds) {
  const auto colon = text.find(':');
  MemorySpec spec;
  spec.kind = text.substr(0, colon);
  const MemoryKind& kind = kinds.known(spec.kind);  // UsageError naming the kinds when unknown
  if (colon == std::string::npos) return spec;
  const std::string where = text.substr(colon + 1);
  if (where == "host") spec.placement = Placement::host;
  else if (where == "device") spec.placement = Placement::device;
  else
    throw UsageError("bad placement '" + where + "' in memory '" + text + "' (accepted: " + spec.kind + ":host, " +
                     spec.kind + ":device, or " + spec.kind + " alone)");
  if (!kind.placeable) {
    std::string placeable;
    for (const auto& k : kinds.all())
      if (k.placeable) placeable += (placeable.empty() ? "" : ", ") + k.name;
    throw UsageError("memory '" + text + "': a placement (:host, :device) applies to memory that migrates (" +
                     (placeable.empty() ? std::string("none here") : placeable) + "), not to '" + spec.kind + "'");
  }
  return spec;
}

std::string memory_spec_from_omb_letters(const std::string& letters) {
  if (letters == "H") return "host";
  if (letters == "P") return "pinned";
  if (letters == "D") return "device";
  if (letters == "M") return "managed";
  if (letters == "MH") return "managed:host";
  if (letters == "MD") return "managed:device";
  throw UsageError("unknown buffer letter '" + letters +
                   "' (accepted: H host, P pinned, D device, M managed, MH managed on the host, MD managed on the device)");
}

PairMemory parse_pair_memory(const std::vector<std::string>& positionals, const std::string& send_text,
                             const std::string& recv_text, const MemoryKinds& kinds) {
  if (positionals.size() == 2)
    return {parse_memory_spec(memory_spec_from_omb_letters(positionals[0]), kinds),
            parse_memory_spec(memory_spec_from_omb_letters(positionals[1]), kinds)};
  if (!positionals.empty())
    throw UsageError("expected two buffer letters such as 'D H' or 'MD MH', or none, got " +
                     std::to_string(positionals.size()) + " positional arguments");
  return {parse_memory_spec(send_text, kinds), parse_memory_spec(recv_text, kinds)};
}

Json LaunchCost::to_json() const {
  if (!measured()) return Json::object().set("status", "unsupported").set("reason", reason);
  Json per_rank = Json::array();
  for (double s : seconds) per_rank.push(s * 1e6);
  return Json::object()
      .set("status", "measured")
      .set("method", "median of " + std::to_string(samples) +
                         " device placements (touch kernel + stream synchronize) of a one-page managed buffer "
                         "already resident on the GPU, host clock")
      .set("per_rank_us", per_rank);
}

LaunchCost measure_launch_cost(MPI_Comm comm, const Platform& platform, const std::vector<RankFacts>& ranks, int rank) {
  LaunchCost cost;
  const MemoryKind* kind = nullptr;
  for (const auto& k : platform.memory.all())
    if (k.placeable && k.available()) kind = kind ? kind : &k;
  std::string reason;
  if (!platform.gpu || !platform.gpu_unavailable_reason.empty()) reason = "no usable GPU: " + platform.gpu_unavailable_reason;
  else if (!kind) reason = "no managed memory kind is available";
  cost.reason = agree_on_reason(comm, reason);
  if (!cost.reason.empty()) return cost;

  // Ranks on one GPU (same host, same GPU) take turns; different GPUs measure at once.
  const int size = static_cast<int>(ranks.size());
  int my_turn = 0, turns = 0;
  for (int r = 0; r < size; ++r) {
    const RankFacts& facts = ranks.at(static_cast<std::size_t>(r));
    int before = 0;
    for (int q = 0; q < r; ++q) before += on_one_gpu(ranks.at(static_cast<std::size_t>(q)), facts) ? 1 : 0;
    if (r == rank) my_turn = before;
    turns = std::max(turns, before + 1);
  }
  double mine = 0;
  for (int turn = 0; turn < turns; ++turn) {
    if (turn == my_turn) mine = median_resident_placement(*kind);
    GMB_MPI_CHECK(MPI_Barrier(comm));
  }
  cost.seconds.resize(static_cast<std::size_t>(size));
  GMB_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_DOUBLE, cost.seconds.data(), 1, MPI_DOUBLE, comm));
  cost.samples = kLaunchSamples;
  return cost;
}

double pair_launch_in_iteration(PairPattern pattern, bool sender, Placement mine, Placement peer, double own_cost,
                                double peer_cost) {
  auto receives = [&](bool is_sender) { return pattern != PairPattern::one_way_window || !is_sender; };
  const bool own_touch = mine == Placement::device && receives(sender);
  const bool peer_touch = peer == Placement::device && receives(!sender);
  const bool waits_for_peer = sender && pattern != PairPattern::both_ways_window;
  return (own_touch ? own_cost : 0) + (peer_touch && waits_for_peer ? peer_cost : 0);
}

Compensated compensate_per_rank(const std::vector<double>& raw_slowest, const std::vector<double>& compensated_slowest) {
  Compensated out;
  out.seconds = raw_slowest;
  if (compensated_slowest.empty()) {
    out.note = "no kernel launch in the timed region: nothing removed";
    return out;
  }
  const double shortest = *std::min_element(compensated_slowest.begin(), compensated_slowest.end());
  if (shortest <= 0) {
    out.note = "not applied: a sample is not longer than the launch cost to remove (" + std::to_string(shortest * 1e6) +
               " us left); figures are raw";
    return out;
  }
  std::vector<double> removed(raw_slowest.size());
  for (std::size_t k = 0; k < raw_slowest.size(); ++k) removed[k] = raw_slowest[k] - compensated_slowest[k];
  out.subtracted_seconds = summarize(removed).median;
  out.seconds = compensated_slowest;
  out.applied = true;
  return out;
}

Json compensation_json(const Compensated& compensated, const LaunchCost& cost, const std::string& formula) {
  Json per_rank = nullptr;
  if (cost.measured()) {
    per_rank = Json::array();
    for (double s : cost.seconds) per_rank.push(s * 1e6);
  }
  Json out = Json::object()
                 .set("applied", compensated.applied)
                 .set("formula", formula)
                 .set("launch_cost_us", per_rank)
                 .set("subtracted_us", compensated.applied ? compensated.subtracted_seconds * 1e6 : 0.0);
  if (!compensated.note.empty()) out.set("note", compensated.note);
  return out;
}

Json count_page_faults(MPI_Comm comm, UnifiedMemoryCounter* counter, const std::string& unavailable_reason,
                       int iterations, const std::function<void()>& untimed, const std::function<void()>& timed) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  auto unsupported = [&](const std::string& why) {
    return rank == 0 ? Json::object().set("status", "unsupported").set("reason", why) : Json();
  };
  std::string why = counter ? "" : unavailable_reason;
  if (!counter && why.empty()) why = "no unified-memory counter";
  why = agree_on_reason(comm, why);
  if (!why.empty()) return unsupported(why);

  // One counting window per iteration, around its timed part only: the placement before the send
  // (untimed in the measurement) is not counted either.
  UnifiedMemoryCounts counts;
  for (int k = 0; k < iterations; ++k) {
    untimed();
    std::string error = counter->start();
    error = agree_on_reason(comm, error);
    if (!error.empty()) return unsupported("counting failed: " + error);
    timed();
    const UnifiedMemoryCounts window = counter->stop(&error);
    error = agree_on_reason(comm, error);
    if (!error.empty()) return unsupported("counting failed: " + error);
    counts.gpu_page_faults += window.gpu_page_faults;
    counts.cpu_page_faults += window.cpu_page_faults;
    counts.htod_bytes += window.htod_bytes;
    counts.dtoh_bytes += window.dtoh_bytes;
    counts.dropped_records += window.dropped_records;
  }

  const std::uint64_t mine[5] = {counts.gpu_page_faults, counts.cpu_page_faults, counts.htod_bytes, counts.dtoh_bytes,
                                 counts.dropped_records};
  std::vector<std::uint64_t> all(rank == 0 ? 5 * static_cast<std::size_t>(size) : 0);
  GMB_MPI_CHECK(MPI_Gather(mine, 5, MPI_UINT64_T, all.data(), 5, MPI_UINT64_T, 0, comm));
  if (rank != 0) return Json();

  const double n = iterations;
  auto figures = [&](const std::uint64_t* c) {
    return Json::object()
        .set("gpu_per_iter", static_cast<double>(c[0]) / n)
        .set("cpu_per_iter", static_cast<double>(c[1]) / n)
        .set("htod_bytes_per_iter", static_cast<double>(c[2]) / n)
        .set("dtoh_bytes_per_iter", static_cast<double>(c[3]) / n);
  };
  std::uint64_t total[5] = {0, 0, 0, 0, 0};
  Json per_rank = Json::array();
  for (int r = 0; r < size; ++r) {
    const std::uint64_t* c = &all[5 * static_cast<std::size_t>(r)];
    for (int k = 0; k < 5; ++k) total[k] += c[k];
    per_rank.push(figures(c));
  }
  Json out = Json::object().set("status", "counted").set("iterations", iterations);
  const Json totals = figures(total);  // named: a temporary would die before the loop reads it
  for (const auto& [key, value] : *totals.as_object()) out.set(key, value);
  return out.set("dropped_records", total[4]).set("per_rank", per_rank);
}

}  // namespace gmb
