// SPDX-License-Identifier: BSD-3-Clause
// mlat: multi-pair latency, as osu_multi_lat measures it (METHODOLOGY "Point to point"). The ranks form
// ranks/2 pairs (rank i with rank i + ranks/2, as mbw pairs them) and every pair ping-pongs at the same
// time. time_us is the slowest pair's one-way latency (per sample, the slowest rank's round trip / 2, as
// every gmb figure is the slowest rank's); metrics.mean_pair_us is the mean over pairs of each pair's
// one-way latency, the figure osu_multi_lat reports.
#include "pt2pt.hpp"

#include <algorithm>

#include "gmb/nccl.hpp"
#include "gmb/stats.hpp"

namespace gmb {

namespace {

class MultiPairLatency final : public PointToPoint {
 public:
  MultiPairLatency() : PointToPoint(PairPattern::ping_pong) {}
  std::vector<TableColumn> columns() const override {
    return {{"median_us", "time_us.median", 2}, {"mean_pair_us", "metrics.mean_pair_us.median", 2}, {"p95_us", "time_us.p95", 2}};
  }
  void describe_result(Json& record, std::size_t, const std::vector<double>& seconds) override {
    add_path(record);
    set_figures(record, seconds, 0.5, 0);  // one iteration is a round trip
  }

  // Per sample, a pair's round trip is its slower rank's (rank p and rank p + pairs); the mean over pairs
  // of half of it.
  bool gathers_every_rank() const override { return true; }
  void describe_every_rank(Json& record, std::size_t, const std::vector<std::vector<double>>& seconds_by_rank) override {
    const std::size_t pairs = seconds_by_rank.size() / 2;
    std::vector<double> mean_round_trip(seconds_by_rank.front().size(), 0.0);
    for (std::size_t k = 0; k < mean_round_trip.size(); ++k) {
      for (std::size_t p = 0; p < pairs; ++p)
        mean_round_trip[k] += std::max(seconds_by_rank[p][k], seconds_by_rank[p + pairs][k]);
      mean_round_trip[k] /= static_cast<double>(pairs);
    }
    record.set("metrics",
               Json::object()
                   .set("time_us", "one-way latency of the slowest pair = its round trip / 2; mean_pair_us: the mean over "
                                   "pairs of each pair's one-way latency (osu_multi_lat's figure)")
                   .set("mean_pair_us", summarize_transformed(mean_round_trip, [](double s) { return s * 0.5 * 1e6; }).to_json()));
  }

 protected:
  std::string compensation_formula() const override {
    return "per pair as latency: (round trip - the t_kernel_launch of each rank of the pair placed on the device) / 2, "
           "each rank removing its own and its peer's before the slowest pair (time_us) and the mean over pairs";
  }
};

const Registration mlat_registration({"mlat", "multi-pair latency: ranks/2 pairs ping-pong at once (osu_multi_lat)", 2, 0,
                                      true, [] { return std::make_unique<MultiPairLatency>(); },
                                      {Family::multi_pair, {Statistic::time_us}, Statistic::time_us, transport_names()},
                                      Directions::none, false, omb_point_to_point("osu_multi_lat", true)});

}  // namespace

}  // namespace gmb
