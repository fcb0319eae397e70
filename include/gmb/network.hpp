// SPDX-License-Identifier: BSD-3-Clause
// A host's network facts for the context record: its network interfaces and InfiniBand/CXI devices (sysfs,
// getifaddrs), how far each is from the rank's GPU in the PCIe tree, which devices the MPI library and NCCL
// were told to use (environment), and the evidence for GPUDirect RDMA. Nothing missing fails a run: an
// absent fact is recorded as absent, with what was looked at.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gmb/json.hpp"

namespace gmb {

class GpuRuntime;

// Where two PCI devices meet, from their sysfs device paths (the resolved /sys/bus/pci/devices/<address>,
// e.g. /sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0) and NUMA nodes (-1: unknown), in
// the short names of `nvidia-smi topo -m`: PIX (one PCIe switch), PXB (several switches), PHB (one root
// complex), NODE (root complexes of one NUMA node), SYS (across sockets); "NODE or SYS" when a node is unknown.
struct PcieDistance {
  std::string level;
  std::string description;
  int hops = -1;  // PCIe devices between each device and the common ancestor, both sides together; -1: none shared
  Json to_json() const;
};
PcieDistance pcie_distance(const std::string& device_path_a, int numa_a, const std::string& device_path_b, int numa_b);

// The PCI address a sysfs device path ends in ("0000:19:00.0"); "" for a virtual device.
std::string pci_address_in(const std::string& device_path);

// sysfs text of an InfiniBand port: "4: ACTIVE" -> "ACTIVE"; "100 Gb/sec (4X EDR)" -> 100.
std::string infiniband_port_state(const std::string& text);
std::optional<double> infiniband_rate_gbps(const std::string& text);

// This rank's network facts (the context record's ranks[].network): interfaces, InfiniBand and CXI devices
// under `sysfs_root`, the PCIe distance of each to the GPU at `gpu_pci` ("" without one), the environment
// that chooses devices, and GPUDirect RDMA evidence. `gpu` (nullptr without CUDA) answers the dma-buf question.
Json network_facts(const std::string& gpu_pci, const GpuRuntime* gpu, int gpu_index, const std::string& sysfs_root = "/sys");

// A few lines for `gmb-bench doctor` from network_facts(): the interfaces that are up with their addresses,
// the RDMA devices, the device-selection environment and the GPUDirect RDMA evidence.
std::vector<std::string> network_summary(const Json& facts);

// The IPv4 addresses of the interfaces that are up, loopback last; empty with `error` set when getifaddrs fails.
struct InterfaceAddress {
  std::string interface, address;
  bool loopback = false;
};
std::vector<InterfaceAddress> ipv4_addresses(std::string* error);

}  // namespace gmb
