// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/nic_pinning.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "gmb/error.hpp"
#include "gmb/network.hpp"

namespace gmb {

namespace {

// The string at `value`, "" where there is none (a missing key, another type).
std::string string_or_empty(const Json* value) {
  return value && value->as_string() ? *value->as_string() : "";
}

bool true_at(const Json& object, const std::string& key) {
  const Json* value = object.find(key);
  return value && value->dump() == "true";
}

const Json::Array& devices_of(const Json& facts, const std::string& section) {
  static const Json::Array kNone;
  const Json* part = facts.find(section);
  const Json* devices = part ? part->find("devices") : nullptr;
  return devices && devices->as_array() ? *devices->as_array() : kNone;
}

// The PCIe distance of a device of network_facts() to the GPU: level and words ("" and why when unknown).
std::pair<std::string, std::string> distance_of(const Json& device, bool gpu) {
  const Json* distance = device.find("pcie_distance_to_gpu");
  if (distance) return {string_or_empty(distance->find("level")), string_or_empty(distance->find("description"))};
  return {"", !gpu ? "unknown: no GPU in use" : string_or_empty(device.find("pci_address")).empty() ? "unknown: no PCI address"
                                                                                           : "unknown"};
}

std::string first_active_port(const Json& device) {
  const Json* ports = device.find("ports");
  if (ports && ports->as_array())
    for (const Json& p : *ports->as_array())
      if (string_or_empty(p.find("state")) == "ACTIVE") return string_or_empty(p.find("port"));
  return "";
}

// Smaller is nearer: the PCIe levels in nvidia-smi topo's order, then a card of unknown distance, then a virtual one.
int rank_of(const Nic& nic) {
  static const char* const kLevels[] = {"PIX", "PXB", "PHB", "NODE", "NODE or SYS", "SYS"};
  for (int k = 0; k < 6; ++k)
    if (nic.level == kLevels[k]) return k;
  return nic.virtual_device ? 7 : 6;
}

std::string this_host() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return host;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

NicRequest parse_nic_request(const std::string& text) {
  NicRequest request;
  request.text = text;
  if (text == "none" || text == "nearest") return request;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty() || name == "none" || name == "nearest")
      throw UsageError("bad NIC request '" + text + "' (accepted: nearest, none, or network interface or RDMA device names "
                       "separated by commas, e.g. mlx5_0,mlx5_1 or eth0)");
    request.names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return request;
}

std::vector<Nic> nics_in(const Json& facts) {
  std::vector<Nic> nics;
  std::map<std::string, std::size_t> by_pci;  // PCI address -> its card
  const bool gpu = !string_or_empty(facts.find("gpu_pci_path")).empty();
  for (const Json& device : devices_of(facts, "interfaces")) {
    Nic nic;
    nic.interface = string_or_empty(device.find("name"));
    std::tie(nic.level, nic.distance) = distance_of(device, gpu);
    nic.virtual_device = true_at(device, "virtual");
    nic.loopback = true_at(device, "loopback");
    nic.down = string_or_empty(device.find("operstate")) == "down";
    const std::string pci = string_or_empty(device.find("pci_address"));
    if (!pci.empty()) by_pci[pci] = nics.size();
    nics.push_back(nic);
  }
  for (const char* rdma_class : {"infiniband", "cxi"})
    for (const Json& device : devices_of(facts, rdma_class)) {
      const std::string pci = string_or_empty(device.find("pci_address"));
      const auto same = by_pci.find(pci);
      Nic* nic = nullptr;
      if (!pci.empty() && same != by_pci.end() && nics[same->second].rdma_device.empty()) {
        nic = &nics[same->second];
      } else {
        nics.push_back(Nic{});
        nic = &nics.back();
        std::tie(nic->level, nic->distance) = distance_of(device, gpu);
        nic->down = true;  // until a port says otherwise
      }
      nic->rdma_device = string_or_empty(device.find("name"));
      nic->rdma_class = rdma_class;
      nic->port = first_active_port(device);
      // A CXI device lists no ports; an InfiniBand device with an ACTIVE port is up whatever its interface says.
      if (!nic->port.empty() || nic->rdma_class == "cxi") nic->down = false;
    }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return a.name() < b.name(); });
  return nics;
}

NicChoice choose_nic(const NicRequest& request, const std::vector<Nic>& nics, int local_rank) {
  if (!request.names.empty()) {
    const std::string& wanted = request.names[static_cast<std::size_t>(local_rank) % request.names.size()];
    for (const Nic& nic : nics)
      if (nic.interface == wanted || nic.rdma_device == wanted)
        return {{nic}, "named: local rank " + std::to_string(local_rank) + " takes name " +
                           std::to_string(local_rank % static_cast<int>(request.names.size()) + 1) + " of --nic " +
                           request.text + " (PCIe distance to the GPU: " + (nic.level.empty() ? nic.distance : nic.level) + ")"};
    std::vector<std::string> present;
    for (const Nic& nic : nics) {
      if (!nic.interface.empty()) present.push_back(nic.interface);
      if (!nic.rdma_device.empty()) present.push_back(nic.rdma_device);
    }
    throw UsageError(wanted + " is not on this host (its network interfaces and RDMA devices: " +
                     (present.empty() ? "none" : joined(present)) + ")");
  }
  std::vector<Nic> usable;
  for (const Nic& nic : nics)
    if (!nic.loopback && !nic.down) usable.push_back(nic);
  if (usable.empty()) return {{}, "no network card other than loopback is up on this host: nothing pinned"};
  const int best = rank_of(*std::min_element(usable.begin(), usable.end(),
                                             [](const Nic& a, const Nic& b) { return rank_of(a) < rank_of(b); }));
  std::vector<Nic> tied;
  for (const Nic& nic : usable)
    if (rank_of(nic) == best) tied.push_back(nic);
  const Nic& chosen = tied[static_cast<std::size_t>(local_rank) % tied.size()];
  std::vector<std::string> names;
  for (const Nic& nic : tied) names.push_back(nic.name());
  std::string why = chosen.level.empty() ? "PCIe distance to the GPU " + chosen.distance + "; no card is known to be nearer"
                                         : "nearest to the GPU: " + chosen.level + " (" + chosen.distance + ")";
  if (chosen.virtual_device) why = "a virtual device (distance unknown): no card with hardware behind it is up";
  if (tied.size() > 1)
    why += "; " + std::to_string(tied.size()) + " cards as near (" + joined(names) + "): local rank " +
           std::to_string(local_rank) + " takes card " + std::to_string(local_rank % static_cast<int>(tied.size()) + 1);
  return {{chosen}, why};
}

Json pin_environment(const Nic& nic, const std::function<const char*(const char*)>& lookup,
                     const std::function<void(const std::string& name, const std::string& value)>& set) {
  const bool infiniband = nic.rdma_class == "infiniband" && !nic.port.empty();
  std::vector<std::pair<std::string, std::string>> wanted;  // name, value ("" : nothing to set for this card)
  // UCX names an InfiniBand/RoCE port device:port, any other card by its interface.
  wanted.emplace_back("UCX_NET_DEVICES", infiniband ? nic.rdma_device + ":" + nic.port : nic.interface);
  wanted.emplace_back("OMPI_MCA_btl_tcp_if_include", nic.interface);
  wanted.emplace_back("FI_TCP_IFACE", nic.interface);  // libfabric's tcp provider (MPICH's ch4:ofi over TCP)
  // NCCL's data goes over the RDMA device where there is one (its sockets then only bootstrap: left alone), else
  // over sockets; "=" asks NCCL for this exact name, not every name it starts.
  wanted.emplace_back("NCCL_IB_HCA", infiniband ? "=" + nic.rdma_device + ":" + nic.port : "");
  wanted.emplace_back("NCCL_SOCKET_IFNAME", nic.rdma_device.empty() && !nic.interface.empty() ? "=" + nic.interface : "");
  Json out = Json::object();
  for (const auto& [name, value] : wanted) {
    if (value.empty()) continue;
    const char* given = lookup(name.c_str());
    const char* exclude = name == "OMPI_MCA_btl_tcp_if_include" ? lookup("OMPI_MCA_btl_tcp_if_exclude") : nullptr;
    if (given) {
      out.set(name, Json::object().set("left_alone", "set by the user (" + std::string(given) + ")"));
    } else if (exclude) {
      out.set(name, Json::object().set("left_alone", "OMPI_MCA_btl_tcp_if_exclude is set by the user (" +
                                                         std::string(exclude) + ") and Open MPI refuses both"));
    } else {
      set(name, value);
      out.set(name, Json::object().set("set", value));
    }
  }
  if (nic.rdma_class == "cxi")
    out.set("MPICH_OFI_NIC_POLICY", Json::object().set("left_alone", "Cray MPICH chooses among CXI cards by its own "
                                                                     "policy (MPICH_OFI_NIC_POLICY), which gmb does not set"));
  return out;
}

Json apply_nic_request(const NicRequest& request, int local_rank, const std::string& local_rank_source,
                       const std::string& gpu_pci, const std::string& sysfs_root) {
  if (request.none()) return Json();
  const std::string where = "host " + this_host() + (local_rank >= 0 ? " local rank " + std::to_string(local_rank) : "");
  if (local_rank < 0)
    throw UsageError("--nic " + request.text + " on " + where + ": no local rank is known before MPI_Init (none of "
                     "OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, "
                     "PMI_LOCAL_RANK, PALS_LOCAL_RANKID, FLUX_TASK_LOCAL_ID is set), so no card can be chosen per rank");
  NicChoice choice;
  try {
    choice = choose_nic(request, nics_in(network_facts(gpu_pci, nullptr, -1, sysfs_root)), local_rank);
  } catch (const UsageError& e) {
    throw UsageError("--nic " + request.text + " on " + where + ": " + e.what());
  }
  Json record = Json::object()
                    .set("asked", request.text)
                    .set("local_rank", local_rank)
                    .set("local_rank_source", local_rank_source)
                    .set("gpu_pci", gpu_pci.empty() ? Json() : Json(gpu_pci))
                    .set("why", choice.why);
  if (choice.nic.empty()) return record.set("chosen", Json()).set("variables", Json::object());
  const Nic& nic = choice.nic.front();
  return record.set("chosen", nic.name())
      .set("interface", nic.interface.empty() ? Json() : Json(nic.interface))
      .set("rdma_device", nic.rdma_device.empty() ? Json() : Json(nic.rdma_device + (nic.port.empty() ? "" : ":" + nic.port)))
      .set("pcie_distance", nic.level.empty() ? Json(nic.distance) : Json(nic.level))
      .set("variables", pin_environment(nic, [](const char* name) { return std::getenv(name); },
                                        [](const std::string& name, const std::string& value) {
                                          setenv(name.c_str(), value.c_str(), 1);
                                        }));
}

std::string nic_pinning_summary(const Json& pinning) {
  std::string line = "NIC pinning (--nic " + string_or_empty(pinning.find("asked")) + "): ";
  const std::string chosen = string_or_empty(pinning.find("chosen"));
  line += chosen.empty() ? "none chosen" : chosen;
  line += " (" + string_or_empty(pinning.find("why")) + ")";
  const Json* variables = pinning.find("variables");
  if (variables && variables->as_object())
    for (const auto& [name, decision] : *variables->as_object()) {
      const std::string set = string_or_empty(decision.find("set"));
      line += "; " + name + (set.empty() ? " left alone: " + string_or_empty(decision.find("left_alone")) : "=" + set);
    }
  return line;
}

}  // namespace gmb
