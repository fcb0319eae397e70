// SPDX-License-Identifier: BSD-3-Clause
// Where two PCI devices (GPUs) meet in the PCIe tree: what NVML's common-ancestor query reports, and
// the same answer read from sysfs when NVML is absent. Host-only: used by the CUDA module's link
// classification and unit-tested on recorded trees.
#pragma once

#include <string>

namespace gmb {

// NVML's nvmlGpuTopologyLevel_t (0, 10, ..., 50) in the words and short names of `nvidia-smi topo -m`;
// "" for an unknown level.
std::string pcie_level_description(int nvml_level);

// The common ancestor of two PCI devices ("0000:19:00.0", any case, 4- or 8-digit domain) from the
// sysfs device tree under `sysfs_root` (default /sys): same switch, same root complex, or different
// root complexes on one NUMA node or across sockets. "" when either device is not found.
std::string pcie_common_ancestor(const std::string& pci_a, const std::string& pci_b, const std::string& sysfs_root = "/sys");

}  // namespace gmb
