// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/benchmark.hpp"
#include "gmb/path.hpp"

using namespace gmb;

namespace {
// Recorded facts of a 2 x H200 NV18 machine, as NVML reported them.
GpuLink recorded_links(const std::string& a, const std::string& b) {
  if (a == b) return {"same-gpu", "one GPU", 0};
  if ((a == "00000000:19:00.0" && b == "00000000:3b:00.0") || (a == "00000000:3b:00.0" && b == "00000000:19:00.0"))
    return {"nvlink", "NV18 (NVLink 4)", 478.125};
  return {"pcie", "no NVLink between the pair (NVML)", 0};
}
const RankFacts gpu0{"node1", "GPU-aaaa", "00000000:19:00.0"};
const RankFacts gpu1{"node1", "GPU-bbbb", "00000000:3b:00.0"};
const RankFacts gpu2{"node1", "GPU-cccc", "00000000:5d:00.0"};
const RankFacts other_host{"node2", "GPU-dddd", "00000000:19:00.0"};
}  // namespace

TEST(Path, DeviceToDeviceOverNvlink) {
  const PathInfo p = classify_path(gpu0, true, gpu1, true, recorded_links);
  EXPECT_EQ(p.path_class, "nvlink");
  EXPECT_EQ(p.link, "NV18 (NVLink 4)");
  EXPECT_DOUBLE_EQ(p.nominal_GBps, 478.125);
}

TEST(Path, PcieWhenNoNvlink) { EXPECT_EQ(classify_path(gpu0, true, gpu2, true, recorded_links).path_class, "pcie"); }

TEST(Path, SameGpu) { EXPECT_EQ(classify_path(gpu0, true, gpu0, true, recorded_links).path_class, "same-gpu"); }

TEST(Path, HostSidesAndNodes) {
  EXPECT_EQ(classify_path(gpu0, false, gpu1, true, recorded_links).path_class, "host-device");
  EXPECT_EQ(classify_path(gpu0, true, gpu1, false, recorded_links).path_class, "host-device");
  EXPECT_EQ(classify_path(gpu0, false, gpu1, false, recorded_links).path_class, "host");
  EXPECT_EQ(classify_path(gpu0, true, other_host, true, recorded_links).path_class, "inter-node");
}

// Host memory follows its rank's CPU binding: ranks on different NUMA nodes cross sockets.
TEST(Path, CrossSocketFromNumaNodes) {
  RankFacts socket0 = gpu0, socket1 = gpu1;
  socket0.numa = 0;
  socket1.numa = 1;
  socket0.gpu_numa = 0;
  socket1.gpu_numa = 1;
  const PathInfo cross = classify_path(socket0, false, socket1, false, recorded_links);
  EXPECT_EQ(cross.path_class, "cross-socket");
  EXPECT_EQ(cross.link, "host memory of ranks bound to NUMA node 0 and NUMA node 1");
  EXPECT_EQ(classify_path(socket0, false, socket0, false, recorded_links).link, "host memory on NUMA node 0");
  // Unbound ranks (numa -1) stay "host": nothing says they cross.
  EXPECT_EQ(classify_path(gpu0, false, socket1, false, recorded_links).path_class, "host");
  // Host to device keeps its class; the link says whether the GPU sits on the other socket.
  const PathInfo far = classify_path(socket0, false, socket1, true, recorded_links);
  EXPECT_EQ(far.path_class, "host-device");
  EXPECT_EQ(far.link, "host memory on NUMA node 0, GPU attached to NUMA node 1 (crosses sockets)");
  EXPECT_EQ(classify_path(socket1, true, socket1, false, recorded_links).link,
            "host memory on NUMA node 1, GPU attached to NUMA node 1");
}

TEST(Path, NoGpuRuntimeOrNoGpu) {
  EXPECT_EQ(classify_path(gpu0, true, gpu1, true, nullptr).path_class, "unknown");
  EXPECT_EQ(classify_path(RankFacts{"node1", "", ""}, true, gpu1, true, recorded_links).path_class, "unknown");
}

TEST(Path, JsonNullNominalWhenUnknown) {
  EXPECT_EQ(classify_path(gpu0, false, gpu1, false, recorded_links).to_json().dump(),
            R"({"class":"host","link":"host memory on one host","nominal_GBps":null})");
}

// A collective's path: the class all pairs share, or "mixed" with the pair counts.
TEST(PathAmong, OneClassOrMixed) {
  gmb::Context ctx;
  ctx.size = 3;
  ctx.ranks = {{"n1", "", ""}, {"n1", "", ""}, {"n1", "", ""}};
  EXPECT_EQ(ctx.path_among({false, false, false}).path_class, "host");
  ctx.ranks[2].host = "n2";
  const gmb::PathInfo mixed = ctx.path_among({false, false, false});
  EXPECT_EQ(mixed.path_class, "mixed");
  EXPECT_EQ(mixed.link, "host x1, inter-node x2");
  ctx.size = 1;
  ctx.ranks.resize(1);
  EXPECT_EQ(ctx.path_among({false}).path_class, "");
}
