// SPDX-License-Identifier: BSD-3-Clause
#include "nvml_links.hpp"

#include "gmb/pci_topology.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>

namespace gmb::cuda {

namespace {

// The few NVML declarations used, as in NVML's nvml.h (which not every CUDA installation ships):
// the library is opened at run time, so only the ABI matters.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr int NVML_FEATURE_ENABLED = 1;
constexpr int NVML_P2P_STATUS_OK = 0;
constexpr int NVML_P2P_CAPS_INDEX_NVLINK = 2;
constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*link_version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static const Nvml lib = [] {
    Nvml n;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return n;
    n.init = reinterpret_cast<decltype(n.init)>(dlsym(h, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<decltype(n.by_pci)>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.link_state = reinterpret_cast<decltype(n.link_state)>(dlsym(h, "nvmlDeviceGetNvLinkState"));
    n.remote_pci = reinterpret_cast<decltype(n.remote_pci)>(dlsym(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    n.link_version = reinterpret_cast<decltype(n.link_version)>(dlsym(h, "nvmlDeviceGetNvLinkVersion"));
    n.p2p_status = reinterpret_cast<decltype(n.p2p_status)>(dlsym(h, "nvmlDeviceGetP2PStatus"));
    n.common_ancestor = reinterpret_cast<decltype(n.common_ancestor)>(dlsym(h, "nvmlDeviceGetTopologyCommonAncestor"));
    n.ok = n.init && n.by_pci && n.link_state && n.remote_pci && n.init() == NVML_SUCCESS;
    return n;
  }();
  return lib;
}

std::string normalise(std::string pci) {
  for (auto& c : pci) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // NVML writes an 8-digit domain, CUDA sometimes 4: compare bus:device.function with the domain value.
  const auto colon = pci.find(':');
  if (colon != std::string::npos) {
    const unsigned long domain = std::stoul(pci.substr(0, colon), nullptr, 16);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08lx", domain);
    pci = buf + pci.substr(colon);
  }
  return pci;
}

// Nominal bandwidth per link and direction, GB/s, by NVLink version (NVLink 4: 18 links give
// the 450-478 GB/s quoted for H100/H200, depending on encoding overhead; we use the signalling rate).
// NVML reports an enum (nvmlNvlinkVersion_t), not the NVLink generation: 1 = 1.0, 2 = 2.0,
// 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0. Seen on H200: 6.
unsigned nvlink_generation(unsigned nvml_version) {
  static const unsigned generation[] = {0, 1, 2, 2, 3, 3, 4, 5};
  return nvml_version < 8 ? generation[nvml_version] : 0;
}

double per_link_GBps(unsigned generation) {
  switch (generation) {
    case 1: return 20.0;
    case 2: return 25.0;
    case 3: return 25.0;
    case 4: return 26.5625;
    case 5: return 50.0;
    default: return 0.0;
  }
}

}  // namespace

GpuLink nvml_link_between(const std::string& pci_a, const std::string& pci_b) {
  const Nvml& n = nvml();
  if (!n.ok) return {};
  nvmlDevice_t a;
  if (n.by_pci(pci_a.c_str(), &a) != NVML_SUCCESS) return {};
  const std::string target = normalise(pci_b);
  int direct_links = 0, active_links = 0;
  unsigned version = 0;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    int active = 0;
    if (n.link_state(a, link, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
    ++active_links;
    if (n.link_version && n.link_version(a, link, &version) == NVML_SUCCESS) version = nvlink_generation(version);
    nvmlPciInfo_t remote;
    if (n.remote_pci(a, link, &remote) != NVML_SUCCESS) continue;
    char id[32];
    std::snprintf(id, sizeof id, "%08x:%02x:%02x.0", remote.domain, remote.bus, remote.device);
    if (normalise(id) == target) ++direct_links;
  }
  const std::string nvlink = " (NVLink " + std::to_string(version) + ")";
  if (direct_links > 0)
    return {"nvlink", "NV" + std::to_string(direct_links) + nvlink, direct_links * per_link_GBps(version)};
  // Through NVSwitch the links end at the switch: NVML's P2P status says whether the pair talks over
  // NVLink, and all of the GPU's active links carry the traffic.
  nvmlDevice_t b;
  const bool have_b = n.by_pci(pci_b.c_str(), &b) == NVML_SUCCESS;
  int status = -1;
  if (active_links > 0 && n.p2p_status && have_b &&
      n.p2p_status(a, b, NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS && status == NVML_P2P_STATUS_OK)
    return {"nvlink", "NV" + std::to_string(active_links) + nvlink + " through NVSwitch", active_links * per_link_GBps(version)};
  // PCIe: where the two meet in the tree (nvidia-smi topo's PIX, PXB, PHB, NODE, SYS).
  int level = -1;
  std::string where;
  if (have_b && n.common_ancestor && n.common_ancestor(a, b, &level) == NVML_SUCCESS) where = pcie_level_description(level);
  return {"pcie", "no NVLink between the pair (NVML)" + (where.empty() ? "" : "; PCIe common ancestor: " + where), 0};
}

}  // namespace gmb::cuda
