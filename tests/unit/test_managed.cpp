// SPDX-License-Identifier: BSD-3-Clause
// Managed placements: parsing KIND[:placement] and OMB letters, and the launch-cost compensation.
#include <gtest/gtest.h>

#include <algorithm>

#include "gmb/error.hpp"
#include "gmb/managed.hpp"
#include "gmb/platform.hpp"

using namespace gmb;

namespace {

// The host-only table: every kind registered (GPU kinds unavailable), managed placeable.
Platform host_only_platform() {
  Platform platform;
  register_modules(platform);
  return platform;
}

std::string usage_error_of(const std::string& text) {
  const Platform platform = host_only_platform();
  try {
    parse_memory_spec(text, platform.memory);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MemorySpec, KindAloneHasNoPlacement) {
  const Platform platform = host_only_platform();
  for (const char* kind : {"host", "pinned", "device", "managed"}) {
    const MemorySpec spec = parse_memory_spec(kind, platform.memory);
    EXPECT_EQ(spec.kind, kind);
    EXPECT_EQ(spec.placement, Placement::none);
    EXPECT_EQ(spec.text(), kind);
  }
}

TEST(MemorySpec, ManagedTakesHostOrDevice) {
  const Platform platform = host_only_platform();
  const MemorySpec on_host = parse_memory_spec("managed:host", platform.memory);
  EXPECT_EQ(on_host.kind, "managed");
  EXPECT_EQ(on_host.placement, Placement::host);
  EXPECT_EQ(on_host.text(), "managed:host");
  const MemorySpec on_device = parse_memory_spec("managed:device", platform.memory);
  EXPECT_EQ(on_device.placement, Placement::device);
  EXPECT_EQ(on_device.text(), "managed:device");
  EXPECT_STREQ(placement_name(on_device.placement), "device");
  EXPECT_STREQ(placement_name(Placement::none), "none");
}

TEST(MemorySpec, RefusesWhatIsNotAPlacement) {
  EXPECT_EQ(usage_error_of("managed:gpu"),
            "bad placement 'gpu' in memory 'managed:gpu' (accepted: managed:host, managed:device, or managed alone)");
  EXPECT_EQ(usage_error_of("managed:"),
            "bad placement '' in memory 'managed:' (accepted: managed:host, managed:device, or managed alone)");
  EXPECT_EQ(usage_error_of("managed:device:host"),
            "bad placement 'device:host' in memory 'managed:device:host' (accepted: managed:host, managed:device, or "
            "managed alone)");
}

TEST(MemorySpec, PlacementOnlyForMemoryThatMigrates) {
  EXPECT_EQ(usage_error_of("host:device"),
            "memory 'host:device': a placement (:host, :device) applies to memory that migrates (managed), not to 'host'");
  EXPECT_EQ(usage_error_of("device:host"),
            "memory 'device:host': a placement (:host, :device) applies to memory that migrates (managed), not to "
            "'device'");
}

TEST(MemorySpec, UnknownKindNamesTheAccepted) {
  EXPECT_EQ(usage_error_of("gpu:device"), "unknown memory kind 'gpu' (accepted: host, pinned, device, managed)");
  EXPECT_EQ(usage_error_of(""), "unknown memory kind '' (accepted: host, pinned, device, managed)");
}

TEST(MemorySpec, OmbLetters) {
  EXPECT_EQ(memory_spec_from_omb_letters("H"), "host");
  EXPECT_EQ(memory_spec_from_omb_letters("P"), "pinned");
  EXPECT_EQ(memory_spec_from_omb_letters("D"), "device");
  EXPECT_EQ(memory_spec_from_omb_letters("M"), "managed");
  EXPECT_EQ(memory_spec_from_omb_letters("MH"), "managed:host");
  EXPECT_EQ(memory_spec_from_omb_letters("MD"), "managed:device");
  for (const char* bad : {"X", "DH", "md", "", "MM"}) EXPECT_THROW(memory_spec_from_omb_letters(bad), UsageError) << bad;
}

// Which launches one rank's timed iteration holds, for every pattern, side and placement pair.
TEST(Compensation, LaunchesInARanksIteration) {
  const Placement H = Placement::host, D = Placement::device, N = Placement::none;
  const double own = 4e-6, peer = 5e-6;
  // Ping-pong: both receive and touch; rank 0 (sender) waits for rank 1's touch before its reply.
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, true, D, D, own, peer), own + peer);  // MD-MD
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, false, D, D, own, peer), own);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, true, D, H, own, peer), own);         // MD-MH
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, false, H, D, own, peer), 0);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, true, H, D, own, peer), peer);        // MH-MD
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, false, D, H, own, peer), own);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::ping_pong, true, H, H, own, peer), 0);          // MH-MH
  // bw: only the receiver touches, before the acknowledgement its sender waits for.
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::one_way_window, true, D, D, own, peer), peer);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::one_way_window, false, D, D, own, peer), own);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::one_way_window, true, D, H, own, peer), 0);  // MD-MH: no touch timed
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::one_way_window, false, H, D, own, peer), 0);
  // bibw: each touches its own receive after the window and waits for nobody.
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::both_ways_window, true, D, D, own, peer), own);
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::both_ways_window, false, H, D, own, peer), 0);  // MD-MH's MH rank
  EXPECT_DOUBLE_EQ(pair_launch_in_iteration(PairPattern::both_ways_window, true, N, N, own, peer), 0);
}

// METHODOLOGY: latency_MD-MD = (t_end - t_start - 2 t_kernel_launch) / 2: rank 0's round trip holds both
// launches and is the slowest; the runner removes each rank's own launches before taking the slowest.
TEST(Compensation, LatencyMdMd) {
  const double launch = 4e-6;
  const std::vector<double> rank0 = {30e-6, 32e-6, 40e-6}, rank1 = {29e-6, 31e-6, 39e-6};
  std::vector<double> raw(3), compensated(3);
  for (int k = 0; k < 3; ++k) {
    raw[k] = std::max(rank0[k], rank1[k]);
    compensated[k] = std::max(rank0[k] - 2 * launch, rank1[k] - launch);
  }
  const Compensated c = compensate_per_rank(raw, compensated);
  ASSERT_TRUE(c.applied);
  EXPECT_TRUE(c.note.empty());
  ASSERT_EQ(c.seconds.size(), 3u);
  EXPECT_NEAR(c.seconds[0] / 2, 12.5e-6, 1e-15);  // rank 1's 25 us is now the slowest
  EXPECT_NEAR(c.seconds[2] / 2, 17.5e-6, 1e-15);
  EXPECT_NEAR(c.subtracted_seconds, 5e-6, 1e-15);
}

// METHODOLOGY: bw_MD-MD = bytes * W / (t_bw - t_kernel_launch).
TEST(Compensation, BandwidthWindow) {
  const double bytes = 1 << 20, window = 64, t_bw = 3e-3, launch = 5e-6;
  const Compensated c = compensate_per_rank({t_bw}, {t_bw - launch});
  ASSERT_TRUE(c.applied);
  EXPECT_NEAR(bytes * window / c.seconds[0], bytes * window / (t_bw - launch), 1e-3);
}

// bibw MD-MH: the MH rank has no launch to lose. Its 50 us stays; the MD rank's 48 us becomes 44.
TEST(Compensation, ARankWithoutATouchKeepsItsTime) {
  const Compensated c = compensate_per_rank({50e-6}, {std::max(50e-6 - 0, 48e-6 - 4e-6)});
  ASSERT_TRUE(c.applied);
  EXPECT_DOUBLE_EQ(c.seconds[0], 50e-6);
  EXPECT_DOUBLE_EQ(c.subtracted_seconds, 0);
}

TEST(Compensation, NothingToRemove) {
  const Compensated c = compensate_per_rank({1e-6, 2e-6}, {});
  EXPECT_FALSE(c.applied);
  EXPECT_EQ(c.seconds, (std::vector<double>{1e-6, 2e-6}));
  EXPECT_EQ(c.note, "no kernel launch in the timed region: nothing removed");
}

// A sample not longer than the launch cost would become zero or negative: kept raw, with the reason.
TEST(Compensation, NotAppliedWhenASampleIsShorterThanTheLaunch) {
  const Compensated c = compensate_per_rank({10e-6, 3e-6}, {6e-6, -1e-6});
  EXPECT_FALSE(c.applied);
  EXPECT_EQ(c.seconds, (std::vector<double>{10e-6, 3e-6}));
  EXPECT_NE(c.note.find("not applied"), std::string::npos);
}

TEST(Compensation, RecordSaysWhatWasRemoved) {
  LaunchCost cost;
  cost.seconds = {4e-6, 6e-6};
  cost.samples = 200;
  const Compensated c = compensate_per_rank({30e-6}, {20e-6});
  const Json j = compensation_json(c, cost, "formula text");
  EXPECT_EQ(j.dump(),
            R"({"applied":true,"formula":"formula text","launch_cost_us":[4,6],"subtracted_us":10})");
  const Json not_measured = compensation_json(compensate_per_rank({30e-6}, {}), LaunchCost{}, "f");
  EXPECT_EQ(not_measured.dump(),
            R"({"applied":false,"formula":"f","launch_cost_us":null,"subtracted_us":0,"note":"no kernel launch in the timed region: nothing removed"})");
}

TEST(LaunchCost, RecordsPerRankOrWhyNot) {
  LaunchCost missing;
  missing.reason = "no usable GPU: none";
  EXPECT_EQ(missing.to_json().dump(), R"({"status":"unsupported","reason":"no usable GPU: none"})");
  LaunchCost cost;
  cost.seconds = {5e-6};
  cost.samples = 200;
  const Json j = cost.to_json();
  EXPECT_EQ(*j.find("status")->as_string(), "measured");
  EXPECT_NE(j.find("method"), nullptr);
  EXPECT_EQ(j.find("per_rank_us")->dump(), "[5]");
}
