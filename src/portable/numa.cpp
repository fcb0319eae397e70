// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/numa.hpp"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

namespace gmb {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// Non-negative decimal number, or -1.
int to_index(const std::string& text) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(text);
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::string trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
  if (trimmed.empty()) return cpus;
  std::size_t start = 0;
  while (start <= trimmed.size()) {
    const std::size_t comma = std::min(trimmed.find(',', start), trimmed.size());
    const std::string item = trimmed.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const int first = to_index(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : to_index(item.substr(dash + 1));
    if (first < 0 || last < first) throw std::invalid_argument("not a CPU list: '" + text + "'");
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  return cpus;
}

std::vector<NumaNode> numa_nodes(const std::string& sysfs_root) {
  std::vector<NumaNode> nodes;
  DIR* dir = opendir(sysfs_root.c_str());
  if (!dir) return nodes;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("node", 0) != 0) continue;
    const int id = to_index(name.substr(4));
    if (id < 0) continue;
    NumaNode node;
    node.id = id;
    try {
      node.cpus = parse_cpu_list(read_first_line(sysfs_root + "/" + name + "/cpulist"));
    } catch (const std::invalid_argument&) {
      node.cpus.clear();
    }
    nodes.push_back(std::move(node));
  }
  closedir(dir);
  std::sort(nodes.begin(), nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  // Nodes with memory are listed in has_memory (absent on old kernels: then every node counts).
  const std::string with_memory = read_first_line(sysfs_root + "/has_memory");
  if (!with_memory.empty()) {
    try {
      const std::vector<int> ids = parse_cpu_list(with_memory);
      for (auto& n : nodes) n.has_memory = std::find(ids.begin(), ids.end(), n.id) != ids.end();
    } catch (const std::invalid_argument&) {
    }
  }
  return nodes;
}

int numa_node_of_cpus(const std::vector<NumaNode>& nodes, const std::vector<int>& cpus) {
  if (cpus.empty()) return -1;
  int found = -1;
  for (int cpu : cpus) {
    int node_of_cpu = -1;
    for (const auto& n : nodes)
      if (std::find(n.cpus.begin(), n.cpus.end(), cpu) != n.cpus.end()) node_of_cpu = n.id;
    if (node_of_cpu < 0 || (found >= 0 && node_of_cpu != found)) return -1;
    found = node_of_cpu;
  }
  return found;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

int this_process_numa_node() { return numa_node_of_cpus(numa_nodes(), allowed_cpus()); }

int pci_numa_node(const std::string& pci_bus_id, const std::string& sysfs_pci) {
  // sysfs names devices with a 4-digit lower-case domain: 0000:19:00.0.
  std::string id = pci_bus_id;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t colon = id.find(':');
  if (colon == std::string::npos) return -1;
  if (colon > 4) id = id.substr(colon - 4);
  const std::string value = read_first_line(sysfs_pci + "/" + id + "/numa_node");
  return to_index(value);  // "-1" (no affinity) and absent files both give -1
}

std::string bind_memory_to_node(void* data, std::size_t bytes, int node) {
  // mbind(2) through syscall(2): no libnuma needed. MPOL_BIND = 2; the node mask has one bit.
  constexpr int kMpolBind = 2;
  constexpr std::size_t kBitsPerWord = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(static_cast<std::size_t>(node) / kBitsPerWord + 1, 0);
  mask[static_cast<std::size_t>(node) / kBitsPerWord] = 1ul << (static_cast<std::size_t>(node) % kBitsPerWord);
  const long rc = syscall(SYS_mbind, data, bytes, kMpolBind, mask.data(), mask.size() * kBitsPerWord + 1, 0u);
  if (rc == 0) return "";
  return std::string("mbind to NUMA node ") + std::to_string(node) + " failed: " + std::strerror(errno);
}

std::string bind_this_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  return rc == 0 ? "" : std::string("binding a thread to CPUs failed: ") + std::strerror(rc);
}

}  // namespace gmb
