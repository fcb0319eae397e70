// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "gmb/numa.hpp"

using namespace gmb;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A recorded two-socket layout: node0 CPUs 0-15,32-47, node1 CPUs 16-31,48-63, node2 memory only
// (CXL), every node with memory.
fs::path two_socket_sysfs() {
  const fs::path root = fs::temp_directory_path() / ("gmb-numa-" + std::to_string(::getpid()));
  fs::remove_all(root);
  write_file(root / "node/node0/cpulist", "0-15,32-47\n");
  write_file(root / "node/node1/cpulist", "16-31,48-63\n");
  write_file(root / "node/node2/cpulist", "\n");
  write_file(root / "node/has_memory", "0-2\n");
  write_file(root / "node/possible", "0-2\n");
  write_file(root / "pci/0000:19:00.0/numa_node", "0\n");
  write_file(root / "pci/0000:9b:00.0/numa_node", "1\n");
  write_file(root / "pci/0000:3b:00.0/numa_node", "-1\n");
  return root;
}

}  // namespace

TEST(Numa, ParsesCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_THROW(parse_cpu_list("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_list("a-b"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_list("1,,2"), std::invalid_argument);
}

TEST(Numa, ReadsNodesFromSysfs) {
  const fs::path root = two_socket_sysfs();
  const auto nodes = numa_nodes((root / "node").string());
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[1].cpus.front(), 16);
  EXPECT_EQ(nodes[1].cpus.size(), 32u);
  EXPECT_TRUE(nodes[2].cpus.empty());
  EXPECT_TRUE(nodes[2].has_memory);
  EXPECT_TRUE(numa_nodes((root / "absent").string()).empty());
  fs::remove_all(root);
}

TEST(Numa, NodeOfACpuBinding) {
  const fs::path root = two_socket_sysfs();
  const auto nodes = numa_nodes((root / "node").string());
  EXPECT_EQ(numa_node_of_cpus(nodes, {3}), 0);
  EXPECT_EQ(numa_node_of_cpus(nodes, {16, 17, 50}), 1);
  EXPECT_EQ(numa_node_of_cpus(nodes, {15, 16}), -1);  // spans both sockets
  EXPECT_EQ(numa_node_of_cpus(nodes, {}), -1);
  EXPECT_EQ(numa_node_of_cpus(nodes, {999}), -1);
  fs::remove_all(root);
}

TEST(Numa, NodeOfAGpu) {
  const fs::path root = two_socket_sysfs();
  const std::string pci = (root / "pci").string();
  EXPECT_EQ(pci_numa_node("00000000:19:00.0", pci), 0);  // NVML/CUDA spelling: 8-digit domain
  EXPECT_EQ(pci_numa_node("0000:9B:00.0", pci), 1);
  EXPECT_EQ(pci_numa_node("0000:3b:00.0", pci), -1);  // no affinity reported
  EXPECT_EQ(pci_numa_node("0000:aa:00.0", pci), -1);  // unknown device
  EXPECT_EQ(pci_numa_node("garbage", pci), -1);
  fs::remove_all(root);
}

#include "gmb/pci_topology.hpp"

namespace {

// A recorded device tree: GPUs 19 and 1a behind one switch below root port 17:01.0, GPU 3b on its own
// root port of the same host bridge, GPU 9b on another socket's host bridge.
fs::path pci_tree() {
  const fs::path root = fs::temp_directory_path() / ("gmb-pci-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path bridge0 = root / "devices/pci0000:17";
  const std::map<std::string, fs::path> devices = {
      {"0000:19:00.0", bridge0 / "0000:17:01.0/0000:18:00.0/0000:18:01.0/0000:19:00.0"},
      {"0000:1a:00.0", bridge0 / "0000:17:01.0/0000:18:00.0/0000:18:02.0/0000:1a:00.0"},
      {"0000:3b:00.0", bridge0 / "0000:17:02.0/0000:3b:00.0"},
      {"0000:9b:00.0", root / "devices/pci0000:9a/0000:9a:01.0/0000:9b:00.0"},
  };
  fs::create_directories(root / "bus/pci/devices");
  for (const auto& [name, path] : devices) {
    fs::create_directories(path);
    fs::create_directory_symlink(path, root / "bus/pci/devices" / name);
  }
  write_file(devices.at("0000:19:00.0") / "numa_node", "0\n");
  write_file(devices.at("0000:9b:00.0") / "numa_node", "1\n");
  return root;
}

}  // namespace

TEST(PciTopology, CommonAncestorFromSysfs) {
  const fs::path root = pci_tree();
  const std::string sysfs = root.string();
  EXPECT_EQ(pcie_common_ancestor("00000000:19:00.0", "0000:1A:00.0", sysfs), "PCIe switches below one root port (PIX or PXB)");
  EXPECT_EQ(pcie_common_ancestor("0000:19:00.0", "0000:3b:00.0", sysfs), "one PCIe host bridge (PHB)");
  EXPECT_EQ(pcie_common_ancestor("0000:19:00.0", "0000:9b:00.0", sysfs),
            "the interconnect between sockets (SYS: NUMA nodes 0 and 1)");
  EXPECT_EQ(pcie_common_ancestor("0000:3b:00.0", "0000:9b:00.0", sysfs), "different PCIe host bridges (NODE or SYS: NUMA nodes unknown)");
  write_file(root / "devices/pci0000:17/0000:17:02.0/0000:3b:00.0/numa_node", "1\n");
  EXPECT_EQ(pcie_common_ancestor("0000:3b:00.0", "0000:9b:00.0", sysfs), "host bridges of one NUMA node (NODE)");
  EXPECT_EQ(pcie_common_ancestor("0000:19:00.0", "0000:ff:00.0", sysfs), "");
  fs::remove_all(root);
}

TEST(PciTopology, NvmlLevels) {
  EXPECT_EQ(pcie_level_description(10), "one PCIe switch (PIX)");
  EXPECT_EQ(pcie_level_description(50), "the interconnect between sockets (SYS)");
  EXPECT_EQ(pcie_level_description(7), "");
}
