// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/pci_topology.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>
#include <vector>

#include "gmb/numa.hpp"

namespace gmb {

namespace {

// sysfs spells a device with a 4-digit lower-case domain.
std::string sysfs_name(std::string pci) {
  for (auto& c : pci) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t colon = pci.find(':');
  if (colon != std::string::npos && colon > 4) pci = pci.substr(colon - 4);
  return pci;
}

// The device's path in the device tree, split into components: e.g. devices, pci0000:17, 0000:17:01.0,
// 0000:18:00.0, 0000:19:00.0. Empty when the device is not there.
std::vector<std::string> device_tree_path(const std::string& sysfs_root, const std::string& pci) {
  std::error_code error;
  const auto real = std::filesystem::canonical(std::filesystem::path(sysfs_root) / "bus/pci/devices" / sysfs_name(pci), error);
  std::vector<std::string> parts;
  if (error) return parts;
  for (const auto& p : real) parts.push_back(p.string());
  return parts;
}

}  // namespace

std::string pcie_level_description(int nvml_level) {
  switch (nvml_level) {
    case 0: return "the same board (internal)";
    case 10: return "one PCIe switch (PIX)";
    case 20: return "several PCIe switches (PXB)";
    case 30: return "one PCIe host bridge (PHB)";
    case 40: return "host bridges of one NUMA node (NODE)";
    case 50: return "the interconnect between sockets (SYS)";
    default: return "";
  }
}

std::string pcie_common_ancestor(const std::string& pci_a, const std::string& pci_b, const std::string& sysfs_root) {
  const auto a = device_tree_path(sysfs_root, pci_a);
  const auto b = device_tree_path(sysfs_root, pci_b);
  if (a.empty() || b.empty()) return "";
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  // Components below the shared root "pciDDDD:BB" are bridges and switch ports.
  std::size_t root = 0;
  while (root < a.size() && a[root].rfind("pci", 0) != 0) ++root;
  if (root < a.size() && common > root) {
    if (common == root + 1) return "one PCIe host bridge (PHB)";
    return "PCIe switches below one root port (PIX or PXB)";
  }
  const int node_a = pci_numa_node(pci_a, sysfs_root + "/bus/pci/devices");
  const int node_b = pci_numa_node(pci_b, sysfs_root + "/bus/pci/devices");
  if (node_a < 0 || node_b < 0) return "different PCIe host bridges (NODE or SYS: NUMA nodes unknown)";
  if (node_a != node_b)
    return "the interconnect between sockets (SYS: NUMA nodes " + std::to_string(node_a) + " and " + std::to_string(node_b) + ")";
  return "host bridges of one NUMA node (NODE)";
}

}  // namespace gmb
