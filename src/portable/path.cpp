// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/path.hpp"

namespace gmb {

Json PathInfo::to_json() const {
  return Json::object()
      .set("class", path_class)
      .set("link", link)
      .set("nominal_GBps", nominal_GBps > 0 ? Json(nominal_GBps) : Json(nullptr));
}

PathInfo classify_path(const RankFacts& a, bool gpu_backed_a, const RankFacts& b, bool gpu_backed_b,
                       const LinkQuery& link) {
  if (a.host != b.host) return {"inter-node", a.host + " - " + b.host, 0};
  const auto node = [](int n) { return "NUMA node " + std::to_string(n); };
  if (!gpu_backed_a && !gpu_backed_b) {
    // Host memory is where its rank runs (first touch): ranks bound to different nodes cross sockets.
    if (a.numa >= 0 && b.numa >= 0 && a.numa != b.numa)
      return {"cross-socket", "host memory of ranks bound to " + node(a.numa) + " and " + node(b.numa), 0};
    return {"host", a.numa >= 0 && a.numa == b.numa ? "host memory on " + node(a.numa) : "host memory on one host", 0};
  }
  if (gpu_backed_a != gpu_backed_b) {
    const RankFacts& host_side = gpu_backed_a ? b : a;
    const RankFacts& gpu_side = gpu_backed_a ? a : b;
    std::string link = "host memory on one side, GPU memory on the other";
    if (host_side.numa >= 0 && gpu_side.gpu_numa >= 0)
      link = "host memory on " + node(host_side.numa) + ", GPU attached to " + node(gpu_side.gpu_numa) +
             (host_side.numa == gpu_side.gpu_numa ? "" : " (crosses sockets)");
    return {"host-device", link, 0};
  }
  if (a.gpu_uuid.empty() || b.gpu_uuid.empty()) return {"unknown", "a rank has no GPU", 0};
  if (a.gpu_uuid == b.gpu_uuid) return {"same-gpu", "both ranks on " + a.gpu_pci, 0};
  if (!link) return {"unknown", "no GPU runtime to ask about links", 0};
  const GpuLink l = link(a.gpu_pci, b.gpu_pci);
  return {l.kind, l.detail, l.nominal_GBps};
}

}  // namespace gmb
