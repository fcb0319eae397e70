// SPDX-License-Identifier: BSD-3-Clause
// --nic's choice and the environment it sets, on network facts written here (never the machine's).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gmb/error.hpp"
#include "gmb/nic_pinning.hpp"

using namespace gmb;

namespace {

Json distance(const std::string& level) {
  return Json::object().set("level", level).set("description", level + " in words").set("hops", Json());
}

// An interface as network_facts() records it; `level` "" for one without a PCI address (virtio, veth, bridge).
Json interface(const std::string& name, const std::string& level, const std::string& pci = "",
               const std::string& operstate = "up", bool is_virtual = false, bool loopback = false) {
  Json nic = Json::object().set("name", name).set("operstate", operstate).set("virtual", is_virtual).set("loopback", loopback);
  nic.set("pci_address", pci.empty() ? Json() : Json(pci));
  if (!level.empty()) nic.set("pcie_distance_to_gpu", distance(level));
  return nic;
}

Json infiniband(const std::string& name, const std::string& level, const std::string& pci, const std::string& state) {
  return Json::object()
      .set("name", name)
      .set("pci_address", pci)
      .set("pcie_distance_to_gpu", distance(level))
      .set("ports", Json::array().push(Json::object().set("port", "1").set("state", state)));
}

Json facts(Json interfaces, Json rdma = Json::array()) {
  return Json::object()
      .set("interfaces", Json::object().set("devices", std::move(interfaces)))
      .set("infiniband", Json::object().set("present", true).set("devices", std::move(rdma)))
      .set("cxi", Json::object().set("present", false))
      .set("gpu_pci_path", "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:18:01.0/0000:19:00.0");
}

std::string chosen(const std::string& request, const Json& host, int local_rank) {
  const NicChoice choice = choose_nic(parse_nic_request(request), nics_in(host), local_rank);
  return choice.nic.empty() ? "" : choice.nic.front().name();
}

// Four cards: two on the GPU's PCIe switch, one on its root complex, one across sockets; plus loopback and a bridge.
const Json kRails = facts(Json::array()
                              .push(interface("lo", "", "", "unknown", true, true))
                              .push(interface("br0", "", "", "up", true))
                              .push(interface("eth0", "SYS", "0000:9b:00.0"))
                              .push(interface("eth1", "PIX", "0000:1a:00.0"))
                              .push(interface("eth2", "PHB", "0000:3b:00.0"))
                              .push(interface("eth3", "PIX", "0000:1c:00.0")));

}  // namespace

TEST(NicPinning, ParsesTheRequest) {
  EXPECT_TRUE(parse_nic_request("none").none());
  EXPECT_TRUE(parse_nic_request("nearest").nearest());
  EXPECT_EQ(parse_nic_request("mlx5_0,mlx5_1").names, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_THROW(parse_nic_request(""), UsageError);
  EXPECT_THROW(parse_nic_request("eth0,"), UsageError);
  EXPECT_THROW(parse_nic_request("eth0,nearest"), UsageError);
}

TEST(NicPinning, NearestIsTheBestPcieLevelAndTiesSpreadByLocalRank) {
  EXPECT_EQ(chosen("nearest", kRails, 0), "eth1");
  EXPECT_EQ(chosen("nearest", kRails, 1), "eth3");
  EXPECT_EQ(chosen("nearest", kRails, 2), "eth1");
  const NicChoice choice = choose_nic(parse_nic_request("nearest"), nics_in(kRails), 1);
  EXPECT_NE(choice.why.find("2 cards as near (eth1, eth3): local rank 1 takes card 2"), std::string::npos) << choice.why;
}

TEST(NicPinning, UnknownDistanceAfterKnownAndVirtualLastLoopbackNever) {
  // No GPU: every card's distance is unknown; the card with hardware behind it comes before the bridge.
  const Json no_gpu = facts(Json::array()
                                .push(interface("lo", "", "", "unknown", true, true))
                                .push(interface("br0", "", "", "up", true))
                                .push(interface("eth0", "", "")));
  EXPECT_EQ(chosen("nearest", no_gpu, 0), "eth0");
  EXPECT_EQ(chosen("nearest", no_gpu, 1), "eth0");
  const Json only_virtual = facts(Json::array()
                                      .push(interface("lo", "", "", "unknown", true, true))
                                      .push(interface("veth1", "", "", "up", true)));
  EXPECT_EQ(chosen("nearest", only_virtual, 3), "veth1");
  const Json only_loopback = facts(Json::array().push(interface("lo", "", "", "unknown", true, true)));
  const NicChoice nothing = choose_nic(parse_nic_request("nearest"), nics_in(only_loopback), 0);
  EXPECT_TRUE(nothing.nic.empty());
  EXPECT_NE(nothing.why.find("nothing pinned"), std::string::npos);
  // A card that is down is never the nearest.
  const Json down = facts(Json::array().push(interface("eth0", "PIX", "0000:1a:00.0", "down")).push(interface("eth1", "SYS", "0000:9b:00.0")));
  EXPECT_EQ(chosen("nearest", down, 0), "eth1");
}

TEST(NicPinning, NamesByLocalRankModuloTheirNumber) {
  EXPECT_EQ(chosen("eth2,eth0", kRails, 0), "eth2");
  EXPECT_EQ(chosen("eth2,eth0", kRails, 1), "eth0");
  EXPECT_EQ(chosen("eth2,eth0", kRails, 2), "eth2");
  EXPECT_EQ(chosen("lo", kRails, 5), "lo");  // named: the user's word, loopback included
  try {
    chosen("eth9", kRails, 0);
    FAIL() << "an absent name was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("eth9 is not on this host"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eth0, eth1"), std::string::npos) << e.what();
  }
}

TEST(NicPinning, InfinibandDeviceJoinsItsInterfaceAndPinsItsActivePort) {
  const Json host = facts(Json::array().push(interface("ib0", "PIX", "0000:1a:00.0", "down")).push(interface("eth0", "SYS", "0000:9b:00.0")),
                          Json::array().push(infiniband("mlx5_0", "PIX", "0000:1a:00.0", "ACTIVE")));
  const std::vector<Nic> nics = nics_in(host);
  ASSERT_EQ(nics.size(), 2u);
  const NicChoice choice = choose_nic(parse_nic_request("nearest"), nics, 0);
  ASSERT_EQ(choice.nic.size(), 1u);
  EXPECT_EQ(choice.nic.front().interface, "ib0");
  EXPECT_EQ(choice.nic.front().rdma_device, "mlx5_0");
  EXPECT_EQ(chosen("mlx5_0", host, 0), "ib0");  // an RDMA device's name names its card
  std::map<std::string, std::string> set;
  const Json record = pin_environment(choice.nic.front(), [](const char*) -> const char* { return nullptr; },
                                      [&](const std::string& name, const std::string& value) { set[name] = value; });
  EXPECT_EQ(set["UCX_NET_DEVICES"], "mlx5_0:1");
  EXPECT_EQ(set["NCCL_IB_HCA"], "=mlx5_0:1");
  EXPECT_EQ(set["OMPI_MCA_btl_tcp_if_include"], "ib0");
  EXPECT_EQ(set.count("NCCL_SOCKET_IFNAME"), 0u);  // NCCL's sockets only bootstrap beside InfiniBand
  EXPECT_EQ(record.find("UCX_NET_DEVICES")->find("set")->dump(), "\"mlx5_0:1\"");
}

TEST(NicPinning, TheUsersSettingsStay) {
  const NicChoice choice = choose_nic(parse_nic_request("eth1"), nics_in(kRails), 0);
  const std::map<std::string, std::string> user = {{"UCX_NET_DEVICES", "mlx5_3:1"}, {"OMPI_MCA_btl_tcp_if_exclude", "docker0"}};
  std::map<std::string, std::string> set;
  const Json record = pin_environment(
      choice.nic.front(),
      [&](const char* name) -> const char* {
        const auto found = user.find(name);
        return found == user.end() ? nullptr : found->second.c_str();
      },
      [&](const std::string& name, const std::string& value) { set[name] = value; });
  EXPECT_EQ(set, (std::map<std::string, std::string>{{"FI_TCP_IFACE", "eth1"}, {"NCCL_SOCKET_IFNAME", "=eth1"}}));
  EXPECT_EQ(*record.find("UCX_NET_DEVICES")->find("left_alone")->as_string(), "set by the user (mlx5_3:1)");
  EXPECT_NE(record.find("OMPI_MCA_btl_tcp_if_include")->find("left_alone")->as_string()->find("Open MPI refuses both"),
            std::string::npos);
}

TEST(NicPinning, NoneLeavesEverythingAndNoLocalRankFails) {
  EXPECT_TRUE(apply_nic_request(parse_nic_request("none"), -1, "", "", "/nonexistent-sysfs").is_null());
  try {
    apply_nic_request(parse_nic_request("nearest"), -1, "", "", "/nonexistent-sysfs");
    FAIL() << "no local rank was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no local rank is known before MPI_Init"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("on host "), std::string::npos) << e.what();
  }
}
