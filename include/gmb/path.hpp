// SPDX-License-Identifier: BSD-3-Clause
// Which path a pair of ranks' buffers communicate over (METHODOLOGY "Native ceilings"): every
// result is classified so it can be put next to the ceiling of the same path.
#pragma once

#include <functional>
#include <string>

#include "gmb/gpu.hpp"
#include "gmb/json.hpp"

namespace gmb {

// What a rank is: gathered at start-up (see build_context).
struct RankFacts {
  std::string host;
  std::string gpu_uuid, gpu_pci;  // empty without a GPU
  int numa = -1;                  // NUMA node of the rank's CPU binding; -1: spans nodes or unknown
  int gpu_numa = -1;              // NUMA node the GPU is attached to; -1: unknown
};

// Two ranks on one GPU (same host, same GPU; two ranks without a GPU on one host count as one GPU too).
inline bool on_one_gpu(const RankFacts& a, const RankFacts& b) { return a.host == b.host && a.gpu_uuid == b.gpu_uuid; }

struct PathInfo {
  std::string path_class;  // same-gpu, nvlink, pcie, peer, host-device, host, cross-socket, inter-node
  std::string link;        // detail, e.g. "NV18 (NVLink 4)"
  double nominal_GBps = 0; // per direction; 0 when unknown
  Json to_json() const;
};

using LinkQuery = std::function<GpuLink(const std::string& pci_a, const std::string& pci_b)>;

// Pure classification: `gpu_backed_*` says whether that side's buffer is device or managed memory.
PathInfo classify_path(const RankFacts& a, bool gpu_backed_a, const RankFacts& b, bool gpu_backed_b,
                       const LinkQuery& link);

}  // namespace gmb
