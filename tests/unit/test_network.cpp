// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../src/bench/network_ceiling.hpp"
#include "gmb/network.hpp"

using namespace gmb;
namespace fs = std::filesystem;

namespace {

// A recorded device tree: GPU 19 and NIC 1a behind one switch below root port 17:01.0; NIC 1c behind a
// second switch below that one; NIC 3b on another root port of the same root complex; NIC 9b on another socket.
const std::string kGpu = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:18:01.0/0000:19:00.0";
const std::string kSameSwitch = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:18:02.0/0000:1a:00.0";
const std::string kNextSwitch = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:18:03.0/0000:1b:00.0/0000:1b:01.0/0000:1c:00.0";
const std::string kSameRoot = "/sys/devices/pci0000:17/0000:17:02.0/0000:3b:00.0";
const std::string kOtherSocket = "/sys/devices/pci0000:9a/0000:9a:01.0/0000:9b:00.0";

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST(PcieDistance, LevelsLikeNvidiaSmiTopo) {
  const PcieDistance pix = pcie_distance(kGpu, 0, kSameSwitch, 0);
  EXPECT_EQ(pix.level, "PIX");
  EXPECT_EQ(pix.hops, 4);
  EXPECT_EQ(pix.description, "same PCIe switch (0000:18:00.0)");
  EXPECT_EQ(pcie_distance(kGpu, 0, kNextSwitch, 0).level, "PXB");
  const PcieDistance phb = pcie_distance(kGpu, 0, kSameRoot, 0);
  EXPECT_EQ(phb.level, "PHB");
  EXPECT_EQ(phb.hops, 6);
  EXPECT_EQ(pcie_distance(kGpu, 0, kOtherSocket, 1).level, "SYS");
  EXPECT_EQ(pcie_distance(kGpu, 0, kOtherSocket, 1).hops, -1);
  EXPECT_EQ(pcie_distance(kGpu, 1, kOtherSocket, 1).level, "NODE");
  EXPECT_EQ(pcie_distance(kGpu, -1, kOtherSocket, 1).level, "NODE or SYS");
  EXPECT_EQ(pcie_distance(kGpu, 0, "/sys/devices/virtual/net/lo", -1).level, "");
}

TEST(PcieDistance, PciAddressOfADevicePath) {
  EXPECT_EQ(pci_address_in(kSameRoot), "0000:3b:00.0");
  EXPECT_EQ(pci_address_in("/sys/devices/virtual/net/veth0"), "");
  EXPECT_EQ(pci_address_in(""), "");
}

TEST(Network, InfinibandPortText) {
  EXPECT_EQ(infiniband_port_state("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(infiniband_port_state("1: DOWN"), "DOWN");
  EXPECT_EQ(infiniband_rate_gbps("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_EQ(infiniband_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(infiniband_rate_gbps("unknown").has_value());
}

TEST(Network, AParavirtualCardSitsAtThePciFunctionCarryingIt) {
  const fs::path root = fs::temp_directory_path() / ("gmb-virtio-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path gpu = root / "devices/pci0000:00/0000:00:06.0", function = root / "devices/pci0000:00/0000:00:03.0";
  for (const auto& d : {gpu, function}) write_file(d / "numa_node", "0\n");
  fs::create_directories(function / "virtio2");
  fs::create_directories(root / "bus/pci/devices");
  fs::create_directory_symlink(gpu, root / "bus/pci/devices/0000:00:06.0");
  write_file(root / "class/net/eth0/operstate", "up\n");
  fs::create_directory_symlink(function / "virtio2", root / "class/net/eth0/device");
  const Json facts = network_facts("00000000:00:06.0", nullptr, -1, root.string());
  const Json& eth0 = (*facts.find("interfaces")->find("devices")->as_array())[0];
  EXPECT_EQ(*eth0.find("pci_address")->as_string(), "0000:00:03.0");
  EXPECT_EQ(eth0.find("numa_node")->dump(), "0");
  EXPECT_EQ(eth0.find("pcie_distance_to_gpu")->find("level")->dump(), "\"PHB\"");
  EXPECT_EQ(eth0.find("virtual")->dump(), "false");
  fs::remove_all(root);
}

TEST(Network, FactsFromARecordedSysfs) {
  const fs::path root = fs::temp_directory_path() / ("gmb-net-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path gpu = root / kGpu.substr(5), nic = root / kSameSwitch.substr(5), hca = root / kSameRoot.substr(5);
  for (const auto& d : {gpu, nic, hca}) write_file(d / "numa_node", "0\n");
  fs::create_directories(root / "bus/pci/devices");
  fs::create_directory_symlink(gpu, root / "bus/pci/devices/0000:19:00.0");
  write_file(root / "class/net/ens1/operstate", "up\n");
  write_file(root / "class/net/ens1/speed", "100000\n");
  write_file(root / "class/net/ens1/mtu", "9000\n");
  fs::create_directory_symlink(nic, root / "class/net/ens1/device");
  write_file(root / "class/net/veth0/operstate", "down\n");
  write_file(root / "class/net/veth0/speed", "-1\n");  // a link that is down reads -1
  write_file(root / "class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  write_file(root / "class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  fs::create_directory_symlink(hca, root / "class/infiniband/mlx5_0/device");

  const Json facts = network_facts("00000000:19:00.0", nullptr, -1, root.string());
  const auto& devices = *facts.find("interfaces")->find("devices")->as_array();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(*devices[0].find("name")->as_string(), "ens1");
  EXPECT_EQ(devices[0].find("speed_Mbps")->dump(), "100000");
  EXPECT_EQ(devices[0].find("mtu")->dump(), "9000");
  EXPECT_EQ(*devices[0].find("pci_address")->as_string(), "0000:1a:00.0");
  EXPECT_EQ(devices[0].find("pcie_distance_to_gpu")->find("level")->dump(), "\"PIX\"");
  EXPECT_TRUE(devices[1].find("speed_Mbps")->is_null());
  EXPECT_TRUE(devices[1].find("mtu")->is_null());  // absent from the recording: absent in the facts, no failure
  EXPECT_TRUE(devices[1].find("pci_address")->is_null());
  EXPECT_EQ(devices[1].find("pcie_distance_to_gpu"), nullptr);
  const Json& hcas = *facts.find("infiniband");
  EXPECT_EQ(hcas.find("present")->dump(), "true");
  const Json& mlx = (*hcas.find("devices")->as_array())[0];
  EXPECT_EQ(mlx.find("pcie_distance_to_gpu")->find("level")->dump(), "\"PHB\"");
  EXPECT_EQ(mlx.find("ports")->dump(),
            R"j([{"port":"1","state":"ACTIVE","rate":"200 Gb/sec (4X HDR)","rate_Gbps":200,"link_layer":null}])j");
  EXPECT_EQ(facts.find("cxi")->dump(), R"({"looked_at":")" + (root / "class/cxi").string() + R"(","present":false})");
  EXPECT_EQ(facts.find("gpudirect_rdma")->find("nvidia_peermem")->find("loaded")->dump(), "false");
  EXPECT_TRUE(facts.find("gpudirect_rdma")->find("dma_buf")->find("supported")->is_null());
  fs::remove_all(root);
}

TEST(Network, FactsWithoutSysfs) {
  const Json facts = network_facts("", nullptr, -1, "/nonexistent-sysfs");
  EXPECT_EQ(facts.find("interfaces")->find("devices")->dump(), "[]");
  EXPECT_NE(facts.find("interfaces")->find("error"), nullptr);
  EXPECT_EQ(facts.find("infiniband")->find("present")->dump(), "false");
  EXPECT_TRUE(facts.find("gpu_pci_path")->is_null());
}

TEST(Network, DeviceSelectionEnvironmentHoldsThePresentOnes) {
  ::setenv("UCX_NET_DEVICES", "mlx5_0:1", 1);
  ::unsetenv("NCCL_IB_HCA");
  const Json facts = network_facts("", nullptr, -1, "/nonexistent-sysfs");
  EXPECT_EQ(*facts.find("device_selection")->find("UCX_NET_DEVICES")->as_string(), "mlx5_0:1");
  EXPECT_EQ(facts.find("device_selection")->find("NCCL_IB_HCA"), nullptr);
  ::unsetenv("UCX_NET_DEVICES");
}

TEST(Network, SummaryForDoctor) {
  const Json facts = network_facts("", nullptr, -1, "/nonexistent-sysfs");
  const std::vector<std::string> lines = network_summary(facts);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "InfiniBand: none (/nonexistent-sysfs/class/infiniband)");
  EXPECT_EQ(lines[3], "GPUDirect RDMA: nvidia_peermem loaded: no, dma-buf supported: unknown, gdrcopy (/dev/gdrdrv): " +
                          std::string(fs::exists("/dev/gdrdrv") ? "yes" : "no"));
}

TEST(NetworkCeiling, PairsTheFirstRanksOfEveryTwoHosts) {
  std::vector<RankFacts> ranks(5);
  const char* hosts[] = {"a", "a", "b", "c", "b"};
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].host = hosts[r];
  const auto pairs = network_pairs(ranks);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(std::make_pair(pairs[0].sender, pairs[0].receiver), std::make_pair(0, 2));
  EXPECT_EQ(std::make_pair(pairs[1].sender, pairs[1].receiver), std::make_pair(0, 3));
  EXPECT_EQ(std::make_pair(pairs[2].sender, pairs[2].receiver), std::make_pair(2, 3));
  ranks[2].host = ranks[3].host = ranks[4].host = "a";
  EXPECT_TRUE(network_pairs(ranks).empty());
}
