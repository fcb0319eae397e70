// SPDX-License-Identifier: BSD-3-Clause
// Blocking collectives (METHODOLOGY "Collectives (blocking)"): `gmb-bench coll OP`. One iteration is
// one call of the table row's blocking function; the runner times it (slowest rank per sample). With
// --persistent, each operation is then measured again as the row's persistent request (MPI_<op>_init, built
// once per size), started and waited for every iteration (METHODOLOGY "Persistent communication").
#include <algorithm>

#include "gmb/coll_operands.hpp"
#include "gmb/error.hpp"
#include "gmb/mpi_features.hpp"
#include "gmb/stats.hpp"
#include "persistent_form.hpp"

namespace gmb {

namespace {

// nccl-tests' calls per timing (its -n default).
constexpr int kNcclTestsCallsPerTiming = 20;

// Managed placements (coll --mem managed:device; docs/collectives.md): the operands' buffers are placed before
// every call (untimed), and ranks that receive place what arrived after the call (timed, in the operands' call).
class CollectivePlacement final : public ManagedPlacement {
 public:
  CollectivePlacement(coll::Operands& operands, const LaunchCost& launch_cost)
      : operands_(operands), launch_cost_(launch_cost) {}
  bool places_before_iteration() const override { return operands_.placed(); }
  void place() override { operands_.place_buffers(); }
  // Each receiving rank placed on the device touches what it received, at the same time as the others and
  // waiting for nobody: its own launch is in its time, no one else's.
  double launch_in_my_iteration(std::size_t) const override { return operands_.launch_in_my_call(launch_cost_); }
  bool compensates_launch_cost() const override { return operands_.placed(); }
  std::string compensation_formula() const override {
    return "per rank, call time - its own t_kernel_launch when it receives and is placed on the device (it touches what "
           "it received once, after the call), then the slowest rank";
  }

 private:
  coll::Operands& operands_;
  const LaunchCost& launch_cost_;
};

class BlockingCollective final : public SizeSweep {
 public:
  Positionals positionals() const override { return collective_operations(); }
  BlockingCollective() { hold_placement(&placement_); }

  void add_options(ArgParser& p) override {
    operands_.add_options(p);
    operands_.add_transport_option(p);
    operands_.add_rotation_option(p);
    persistent_.add_option(p, "MPI_<op>_init, MPI-4.0; --transport mpi");
  }

  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform) override {
    operands_.configure(positionals, world_size, platform, "coll");
    ranks_ = world_size;
    // The persistent form is MPI's own request; it is timed as the regular form is, which the managed placements'
    // protocol (one call per sample, launch-cost compensation) is not.
    if (persistent_.requested() && operands_.transport() != "mpi")
      throw UsageError("--persistent is accepted with --transport mpi only (MPI-4.0 persistent collectives, "
                       "MPI_<op>_init): NCCL has no persistent requests");
    if (operands_.rotates_offsets() && persistent_.requested())
      throw UsageError("--rotate-offsets with --persistent: a persistent request is bound to its buffers, so its calls "
                       "cannot move to other offsets (accepted: either option alone)");
    if (operands_.rotates_offsets() && operands_.placed())
      throw UsageError("--rotate-offsets does not measure managed placements (each call's buffers are placed before "
                       "it); accepted: kinds without a placement (host, pinned, device, managed)");
    if (persistent_.requested() && operands_.placed())
      throw UsageError("--persistent does not measure managed placements (KIND:host, KIND:device); accepted: kinds "
                       "without a placement (host, pinned, device, managed)");
  }

  Json options_json() const override {
    Json o = operands_.options_json();
    if (persistent_.requested()) o.set("persistent", true);
    return o;
  }

  std::vector<TableColumn> columns() const override {
    if (!operands_.any_data()) return {{"median_us", "time_us.median", 2}, {"min_us", "time_us.min", 2}, {"p95_us", "time_us.p95", 2}};
    return {{"median_us", "time_us.median", 2},
            {"p95_us", "time_us.p95", 2},
            {"algbw_GB/s", "bandwidth_GBps.median", 3},
            {"busbw_GB/s", "busbw_GBps.median", 3}};
  }

  // Each operation asked for in turn, at its whole sizes (Operands::plan_sizes). Barrier has no size: it runs once,
  // at 0 bytes.
  int run(Context& ctx, RecordSink& sink) override {
    int exit_code = kExitOk;
    for (std::size_t k = 0; k < operands_.operation_count(); ++k) {
      operands_.select(k);
      if (operands_.operation_count() > 1) sink.note(std::string("operation: ") + operands_.op().name);
      RunSettings once = *ctx.settings;
      once.sizes = operands_.plan_sizes(ctx.settings->sizes, ctx.size);
      if (const std::string note = operands_.rounding_note(ctx.size); !note.empty()) sink.note(note);
      Context op_ctx = ctx;
      op_ctx.settings = &once;
      exit_code = std::max(exit_code, persistent_.run(op_ctx, sink, operands_.op().persistent_name, [&] {
        operands_.set_persistent(persistent_.active());
        return SizeSweep::run(op_ctx, sink);
      }));
    }
    return exit_code;
  }

  std::string unsupported_reason(const Context& ctx) override {
    if (persistent_.active() && !operands_.op().init) return mpi_feature_problem(MpiFeature::persistent_collectives);
    return operands_.unsupported_reason(ctx);
  }
  SizeNeeds needs(const Context& ctx, std::size_t bytes) const override { return operands_.needs(ctx, bytes); }
  // The persistent form's request is built here, untimed, over this size's buffers. A library that refuses it
  // (an error code) leaves the size unsupported with MPI's words, never an abort.
  void setup(const Context& ctx, std::size_t bytes) override {
    operands_.setup(ctx, bytes);
    launch_cost_ = ctx.launch_cost;
    if (!persistent_.active()) return;
    const std::string refusal = mpi_refusal(ctx.comm, operands_.op().persistent_name,
                                            [&] { return operands_.init(&request_); });
    if (!refusal.empty()) {
      request_ = MPI_REQUEST_NULL;  // what a failed call leaves there is no request to free
      throw Unsupported(refusal);
    }
  }
  void prepare(std::uint32_t seed) override { operands_.prepare(seed); }
  void iterate() override {
    if (persistent_.active()) {
      GMB_MPI_CHECK(MPI_Start(&request_));
      GMB_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
    } else {
      operands_.call();
    }
    operands_.settle_received();
  }
  void complete() override { operands_.complete(); }
  // Under NCCL a sample pays once for its first launch, the final synchronisation and the ranks leaving the barrier
  // apart (25-40 us on 2 x H200, whatever the size): as nccl-tests (-n 20), an automatic batch has 20 calls at least.
  int min_batch() const override { return operands_.transport() == "nccl" ? kNcclTestsCallsPerTiming : 1; }
  std::string verify(std::uint32_t seed) override { return operands_.verify(seed); }
  // The request goes before the buffers and counts it was built over.
  void teardown() override {
    if (request_ != MPI_REQUEST_NULL) GMB_MPI_CHECK(MPI_Request_free(&request_));
    operands_.teardown();
  }
  void describe_configuration(Json& record) const override {
    operands_.describe_configuration(record, ranks_);
    persistent_.describe(record);
  }

  void describe_result(Json& record, std::size_t, const std::vector<double>& seconds) override {
    const coll::Collective& op = operands_.op();
    record.set("time_us", summarize_transformed(seconds, [](double s) { return s * 1e6; }).to_json());
    Json metrics = Json::object().set("call", operands_.call_name());
    metrics.set("time_us", operands_.transport() == "nccl"
                               ? "time per call, slowest rank; a sample's calls (20 at least, unless --batch says "
                                 "otherwise) are stream-ordered and synchronised once at its end (as nccl-tests times "
                                 "them)"
                               : "time per call, slowest rank");
    if (op.has_data) {
      const double bytes = operands_.op_bytes();
      const double factor = operands_.busbw_factor();
      record.set("bandwidth_GBps", summarize_transformed(seconds, [&](double s) { return bytes / s / 1e9; }).to_json());
      record.set("busbw_GBps", summarize_transformed(seconds, [&](double s) { return bytes / s / 1e9 * factor; }).to_json());
      metrics.set("op_bytes", bytes)
          .set("busbw_factor", factor)
          .set("bandwidth_GBps", "algbw = op_bytes / time (docs/collectives.md: size convention)")
          .set("busbw_GBps", op.busbw.factor ? "algbw * busbw_factor (nccl-tests factors)"
                                             : "algbw * busbw_factor (unequal counts: the busiest rank's bytes to or "
                                               "from the other ranks / op_bytes)");
    }
    if (operands_.rotates_offsets()) record.set("offset_positions", operands_.offset_positions());
    record.set("metrics", metrics);
    // Called once per record: --persistent refuses the placements, whose raw figures would come through here too.
    persistent_.add_figures(record);
  }

  // Beside the slowest rank's time (the headline), the mean of the ranks' times per call: nccl-tests' figure, and with
  // it how far the ranks' times spread.
  bool gathers_every_rank() const override { return true; }
  void describe_every_rank(Json& record, std::size_t, const std::vector<std::vector<double>>& seconds_by_rank) override {
    std::vector<double> mean(seconds_by_rank.front().size(), 0.0);
    for (const auto& rank : seconds_by_rank)
      for (std::size_t k = 0; k < mean.size(); ++k) mean[k] += rank[k] / static_cast<double>(seconds_by_rank.size());
    Json metrics = record.find("metrics") ? *record.find("metrics") : Json::object();
    metrics.set("rank_mean_time_us", summarize_transformed(mean, [](double s) { return s * 1e6; }).to_json())
        .set("rank_mean", "per sample, the mean over ranks of each rank's time per call (nccl-tests reports this mean); "
                          "time_us is the slowest rank's");
    record.set("metrics", metrics);
  }

 private:
  coll::Operands operands_;
  PersistentForm persistent_;              // --persistent: which form is measured, and their comparison
  MPI_Request request_ = MPI_REQUEST_NULL;  // the persistent form's, from setup to teardown
  int ranks_ = 1;
  LaunchCost launch_cost_;
  CollectivePlacement placement_{operands_, launch_cost_};
};

const Registration coll_registration({"coll", "blocking collectives: coll OP|OP,OP|all (bcast, allreduce, alltoall(v), ...)", 1, 0,
                                      false, [] { return std::make_unique<BlockingCollective>(); },
                                      {Family::collective, {Statistic::time_us, Statistic::bandwidth_GBps, Statistic::busbw_GBps},
                                       Statistic::busbw_GBps, transport_names(), /*operations*/ true},
                                      Directions::none, false, omb_collectives("the OMB collectives")});

}  // namespace

}  // namespace gmb
