// SPDX-License-Identifier: BSD-3-Clause
// NUMA layout of this host from sysfs (no libnuma): which CPUs and memory each node has, which node a
// rank's CPU binding or a GPU belongs to, and binding memory and threads to a node. Used to classify
// host paths (same node or cross-socket) and to measure host memory bandwidth within and across nodes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gmb {

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;  // online CPUs of the node (may be empty: a memory-only node)
  bool has_memory = true;
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Throws std::invalid_argument on text that is not a CPU list.
std::vector<int> parse_cpu_list(const std::string& text);

// The nodes under `sysfs_root` (default /sys/devices/system/node), in id order. Empty when the
// directory does not exist (no NUMA information: callers treat the host as one node).
std::vector<NumaNode> numa_nodes(const std::string& sysfs_root = "/sys/devices/system/node");

// The node all of `cpus` belong to, or -1 when they span nodes, are empty or none is known.
int numa_node_of_cpus(const std::vector<NumaNode>& nodes, const std::vector<int>& cpus);

// CPUs this process may run on (sched_getaffinity).
std::vector<int> allowed_cpus();

// The NUMA node of this process's CPU binding, or -1 (unbound across nodes, or unknown).
int this_process_numa_node();

// The NUMA node of a PCI device ("0000:19:00.0", any case, 4- or 8-digit domain), or -1.
int pci_numa_node(const std::string& pci_bus_id, const std::string& sysfs_pci = "/sys/bus/pci/devices");

// Binds [data, data + bytes) to `node` before it is first touched (mbind, MPOL_BIND). Returns "" or
// why not (the system call's error).
std::string bind_memory_to_node(void* data, std::size_t bytes, int node);

// Restricts the calling thread to `cpus`. Returns "" or why not.
std::string bind_this_thread(const std::vector<int>& cpus);

}  // namespace gmb
