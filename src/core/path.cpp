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
  if (!gpu_backed_a && !gpu_backed_b) return {"host", "host memory on one host", 0};
  if (gpu_backed_a != gpu_backed_b) return {"host-device", "host memory on one side, GPU memory on the other", 0};
  if (a.gpu_uuid.empty() || b.gpu_uuid.empty()) return {"unknown", "a rank has no GPU", 0};
  if (a.gpu_uuid == b.gpu_uuid) return {"same-gpu", "both ranks on " + a.gpu_pci, 0};
  if (!link) return {"unknown", "no GPU runtime to ask about links", 0};
  const GpuLink l = link(a.gpu_pci, b.gpu_pci);
  return {l.kind, l.detail, l.nominal_GBps};
}

}  // namespace gmb
