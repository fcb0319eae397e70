// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/network.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <system_error>

#include "gmb/gpu.hpp"
#include "gmb/nic_pinning.hpp"
#include "gmb/numa.hpp"

namespace gmb {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> path_components(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& p : fs::path(path)) {
    const std::string part = p.string();
    if (!part.empty() && part != "/") parts.push_back(part);
  }
  return parts;
}

// The index of the root complex component ("pci0000:17"), or npos.
std::size_t root_index(const std::vector<std::string>& parts) {
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].rfind("pci", 0) == 0) return i;
  return std::string::npos;
}

// The first line of a sysfs file, without its newline; nullopt when it cannot be read.
std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

Json text_or_null(const std::optional<std::string>& text) { return text ? Json(*text) : Json(); }

// A sysfs integer, or null: absent, unreadable or negative ("speed" reads -1 on a link that is down).
Json non_negative_or_null(const fs::path& path) {
  const auto text = read_line(path);
  if (!text) return Json();
  char* end = nullptr;
  const long long value = std::strtoll(text->c_str(), &end, 10);
  return end != text->c_str() && value >= 0 ? Json(value) : Json();
}

// The entries of a sysfs directory in name order (none when it cannot be listed, with `error` set).
std::vector<fs::path> sorted_entries(const fs::path& directory, std::error_code& error) {
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(directory, error)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The resolved device path behind a class device's "device" link; "" for a virtual device.
std::string device_path_of(const fs::path& class_device) {
  std::error_code error;
  const fs::path real = fs::canonical(class_device / "device", error);
  return error ? "" : real.string();
}

// The PCI function a device path is or sits below ("" for none): a paravirtual card's device (virtio2) is a child
// of the PCI function that carries it, and that function is its place in the PCIe tree.
std::string pci_function_of(const std::string& device_path) {
  for (fs::path p(device_path); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (!pci_address_in(p.string()).empty()) return p.string();
  return "";
}

// The PCI facts of a class device: address, NUMA node, and the PCIe distance to the rank's GPU.
void add_pci_facts(Json& out, const fs::path& class_device, const std::string& gpu_path, int gpu_numa) {
  const std::string device = pci_function_of(device_path_of(class_device));
  const std::string pci = pci_address_in(device);
  out.set("pci_address", pci.empty() ? Json() : Json(pci));
  const Json numa = pci.empty() ? Json() : non_negative_or_null(fs::path(device) / "numa_node");
  out.set("numa_node", numa);
  if (pci.empty() || gpu_path.empty()) return;
  out.set("pcie_distance_to_gpu", pcie_distance(gpu_path, gpu_numa, device, numa.is_null() ? -1 : static_cast<int>(numa.as_number())).to_json());
}

// Interface name -> its IPv4 and IPv6 addresses (getifaddrs), or the error.
struct AddressTable {
  std::map<std::string, std::vector<std::string>> ipv4, ipv6;
  std::string error;
};
AddressTable address_table() {
  AddressTable table;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    table.error = std::string("getifaddrs failed: ") + std::strerror(errno);
    return table;
  }
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {0};
    if (a->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
      table.ipv4[a->ifa_name].push_back(text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr, text, sizeof text);
      table.ipv6[a->ifa_name].push_back(text);
    }
  }
  freeifaddrs(list);
  return table;
}

Json interfaces(const fs::path& sysfs, const std::string& gpu_path, int gpu_numa) {
  const AddressTable addresses = address_table();
  Json list = Json::array();
  std::error_code error;
  for (const fs::path& entry : sorted_entries(sysfs / "class/net", error)) {
    const std::string name = entry.filename().string();
    Json nic = Json::object()
                   .set("name", name)
                   .set("operstate", text_or_null(read_line(entry / "operstate")))
                   .set("speed_Mbps", non_negative_or_null(entry / "speed"))
                   .set("mtu", non_negative_or_null(entry / "mtu"))
                   .set("mac", text_or_null(read_line(entry / "address")));
    const auto v4 = addresses.ipv4.find(name), v6 = addresses.ipv6.find(name);
    nic.set("ipv4", v4 == addresses.ipv4.end() ? Json::array() : Json::array_of(v4->second));
    nic.set("ipv6", v6 == addresses.ipv6.end() ? Json::array() : Json::array_of(v6->second));
    // A device of no hardware (veth, bridge, loopback) has no "device" link; ARPHRD_LOOPBACK is type 772.
    nic.set("virtual", device_path_of(entry).empty()).set("loopback", read_line(entry / "type") == "772");
    add_pci_facts(nic, entry, gpu_path, gpu_numa);
    list.push(nic);
  }
  Json out = Json::object().set("looked_at", (sysfs / "class/net").string() + ", getifaddrs").set("devices", list);
  if (error) out.set("error", "cannot list " + (sysfs / "class/net").string() + ": " + error.message());
  if (!addresses.error.empty()) out.set("address_error", addresses.error);
  return out;
}

Json infiniband_ports(const fs::path& device) {
  Json ports = Json::array();
  std::error_code error;
  for (const fs::path& port : sorted_entries(device / "ports", error)) {
    const auto state = read_line(port / "state");
    const auto rate = read_line(port / "rate");
    const auto gbps = rate ? infiniband_rate_gbps(*rate) : std::nullopt;
    ports.push(Json::object()
                   .set("port", port.filename().string())
                   .set("state", state ? Json(infiniband_port_state(*state)) : Json())
                   .set("rate", text_or_null(rate))
                   .set("rate_Gbps", gbps ? Json(*gbps) : Json())
                   .set("link_layer", text_or_null(read_line(port / "link_layer"))));
  }
  return ports;
}

// RDMA devices of one sysfs class (infiniband, cxi): name, PCI facts, and InfiniBand ports.
Json class_devices(const fs::path& sysfs, const std::string& class_name, const std::string& gpu_path, int gpu_numa) {
  const fs::path directory = sysfs / "class" / class_name;
  Json out = Json::object().set("looked_at", directory.string());
  std::error_code error;
  if (!fs::exists(directory, error)) return out.set("present", false);
  Json list = Json::array();
  for (const fs::path& entry : sorted_entries(directory, error)) {
    Json device = Json::object().set("name", entry.filename().string());
    add_pci_facts(device, entry, gpu_path, gpu_numa);
    if (class_name == "infiniband") device.set("ports", infiniband_ports(entry));
    list.push(device);
  }
  return out.set("present", true).set("devices", list);
}

// The environment variables that tell MPI libraries and NCCL which network device or transport to use.
Json device_selection_environment() {
  static const char* const kNames[] = {"UCX_NET_DEVICES",        "UCX_TLS",           "OMPI_MCA_btl_tcp_if_include",
                                       "OMPI_MCA_btl_tcp_if_exclude", "FI_PROVIDER",   "FI_TCP_IFACE",
                                       "MPICH_OFI_NIC_POLICY",   "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA"};
  Json out = Json::object();
  for (const char* name : kNames)
    if (const char* value = std::getenv(name)) out.set(name, value);
  return out;
}

Json gpudirect(const fs::path& sysfs, const GpuRuntime* gpu, int gpu_index) {
  std::error_code error;
  const fs::path peermem = sysfs / "module/nvidia_peermem";
  Json dma_buf = Json::object().set("looked_at", "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)");
  if (!gpu || gpu_index < 0) {
    dma_buf.set("supported", Json()).set("reason", "no GPU in use (or a build without CUDA)");
  } else {
    std::string problem;
    const bool supported = gpu->dma_buf_supported(gpu_index, &problem);
    dma_buf.set("supported", problem.empty() ? Json(supported) : Json());
    if (!problem.empty()) dma_buf.set("reason", problem);
  }
  return Json::object()
      .set("nvidia_peermem", Json::object().set("loaded", fs::exists(peermem, error)).set("looked_at", peermem.string()))
      .set("dma_buf", dma_buf)
      .set("gdrcopy", Json::object().set("present", fs::exists("/dev/gdrdrv", error)).set("looked_at", "/dev/gdrdrv"));
}

}  // namespace

Json PcieDistance::to_json() const {
  return Json::object().set("level", level).set("description", description).set("hops", hops >= 0 ? Json(hops) : Json());
}

PcieDistance pcie_distance(const std::string& device_path_a, int numa_a, const std::string& device_path_b, int numa_b) {
  const auto a = path_components(device_path_a), b = path_components(device_path_b);
  const std::size_t root_a = root_index(a), root_b = root_index(b);
  if (root_a == std::string::npos || root_b == std::string::npos) return {"", "not both PCI devices", -1};
  if (root_a != root_b || a[root_a] != b[root_b]) {
    if (numa_a < 0 || numa_b < 0) return {"NODE or SYS", "different root complexes (NUMA nodes unknown)", -1};
    if (numa_a != numa_b)
      return {"SYS", "across sockets (NUMA nodes " + std::to_string(numa_a) + " and " + std::to_string(numa_b) + ")", -1};
    return {"NODE", "different root complexes of NUMA node " + std::to_string(numa_a), -1};
  }
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  const int below_a = static_cast<int>(a.size() - common), below_b = static_cast<int>(b.size() - common);
  if (common == root_a + 1) return {"PHB", "same root complex (" + a[root_a] + ")", below_a + below_b};
  if (std::max(below_a, below_b) <= 2) return {"PIX", "same PCIe switch (" + a[common - 1] + ")", below_a + below_b};
  return {"PXB", "several PCIe switches below " + a[common - 1], below_a + below_b};
}

std::string pci_address_in(const std::string& device_path) {
  static const std::regex kPci("[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");
  const std::string last = fs::path(device_path).filename().string();
  return std::regex_match(last, kPci) ? last : "";
}

std::string infiniband_port_state(const std::string& text) {
  const std::size_t colon = text.find(':');
  std::string state = colon == std::string::npos ? text : text.substr(colon + 1);
  while (!state.empty() && std::isspace(static_cast<unsigned char>(state.front()))) state.erase(state.begin());
  while (!state.empty() && std::isspace(static_cast<unsigned char>(state.back()))) state.pop_back();
  return state;
}

std::optional<double> infiniband_rate_gbps(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || std::string(end).rfind(" Gb/sec", 0) != 0) return std::nullopt;
  return value;
}

Json network_facts(const std::string& gpu_pci, const GpuRuntime* gpu, int gpu_index, const std::string& sysfs_root) {
  const fs::path sysfs(sysfs_root);
  std::string gpu_path;
  int gpu_numa = -1;
  if (!gpu_pci.empty()) {
    std::string name = gpu_pci;  // sysfs spells the domain with 4 lower-case digits
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name.find(':') > 4) name = name.substr(name.find(':') - 4);
    std::error_code error;
    const fs::path real = fs::canonical(sysfs / "bus/pci/devices" / name, error);
    if (!error) gpu_path = real.string();
    gpu_numa = pci_numa_node(gpu_pci, (sysfs / "bus/pci/devices").string());
  }
  return Json::object()
      .set("interfaces", interfaces(sysfs, gpu_path, gpu_numa))
      .set("infiniband", class_devices(sysfs, "infiniband", gpu_path, gpu_numa))
      .set("cxi", class_devices(sysfs, "cxi", gpu_path, gpu_numa))
      .set("gpu_pci_path", gpu_path.empty() ? Json() : Json(gpu_path))
      .set("device_selection", device_selection_environment())
      .set("gpudirect_rdma", gpudirect(sysfs, gpu, gpu_index));
}

namespace {

std::string text_of(const Json* value) {
  if (!value || value->is_null()) return "?";
  if (const std::string* s = value->as_string()) return *s;
  return value->dump();
}

std::string interface_line(const Json& nic) {
  std::string line = text_of(nic.find("name")) + " " + text_of(nic.find("operstate"));
  if (const Json* speed = nic.find("speed_Mbps"); speed && !speed->is_null()) line += " " + speed->dump() + " Mb/s";
  if (const Json* v4 = nic.find("ipv4"); v4 && v4->as_array())
    for (const Json& a : *v4->as_array()) line += " " + text_of(&a);
  if (const Json* pci = nic.find("pci_address"); pci && !pci->is_null()) line += " PCI " + text_of(pci);
  if (const Json* d = nic.find("pcie_distance_to_gpu")) line += " (" + text_of(d->find("level")) + " from the GPU)";
  return line;
}

std::string rdma_line(const Json& devices, const std::string& label) {
  const Json* list = devices.find("devices");
  if (!list || !list->as_array() || list->as_array()->empty()) return label + ": none (" + text_of(devices.find("looked_at")) + ")";
  std::string line = label + ":";
  for (const Json& d : *list->as_array()) {
    line += " " + text_of(d.find("name"));
    if (const Json* ports = d.find("ports"); ports && ports->as_array())
      for (const Json& p : *ports->as_array())
        line += " [port " + text_of(p.find("port")) + " " + text_of(p.find("state")) + " " + text_of(p.find("rate")) + "]";
  }
  return line;
}

}  // namespace

std::vector<std::string> network_summary(const Json& facts) {
  std::vector<std::string> lines;
  if (const Json* interfaces = facts.find("interfaces"); interfaces && interfaces->find("devices"))
    for (const Json& nic : *interfaces->find("devices")->as_array())
      if (text_of(nic.find("operstate")) != "down") lines.push_back("interface " + interface_line(nic));
  lines.push_back(rdma_line(*facts.find("infiniband"), "InfiniBand"));
  lines.push_back(rdma_line(*facts.find("cxi"), "CXI"));
  const Json* selection = facts.find("device_selection");
  lines.push_back("device selection: " + (selection->as_object()->empty() ? std::string("none in the environment") : selection->dump()));
  if (const Json* pinning = facts.find("nic_pinning")) lines.push_back(nic_pinning_summary(*pinning));
  const Json* rdma = facts.find("gpudirect_rdma");
  auto answer = [](const Json* value) { return !value || value->is_null() ? "unknown" : value->dump() == "true" ? "yes" : "no"; };
  lines.push_back(std::string("GPUDirect RDMA: nvidia_peermem loaded: ") + answer(rdma->find("nvidia_peermem")->find("loaded")) +
                  ", dma-buf supported: " + answer(rdma->find("dma_buf")->find("supported")) +
                  ", gdrcopy (/dev/gdrdrv): " + answer(rdma->find("gdrcopy")->find("present")));
  return lines;
}

std::vector<InterfaceAddress> ipv4_addresses(std::string* error) {
  std::vector<InterfaceAddress> found, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    *error = std::string("getifaddrs failed: ") + std::strerror(errno);
    return found;
  }
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP)) continue;
    char text[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    const bool is_loopback = (a->ifa_flags & IFF_LOOPBACK) != 0;
    (is_loopback ? loopback : found).push_back({a->ifa_name, text, is_loopback});
  }
  freeifaddrs(list);
  found.insert(found.end(), loopback.begin(), loopback.end());
  return found;
}

}  // namespace gmb
