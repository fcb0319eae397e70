// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/ceilings.hpp"

namespace gmb {

const std::vector<CopyCeiling>& copy_ceilings() {
  static const std::vector<const char*> gpu_pairs = {"nvlink", "pcie", "peer"};
  static const std::vector<CopyCeiling> ceilings = {
      {"h2d-pinned", {"host-device"}, "h2d", "page_locked"},
      {"d2h-pinned", {"host-device"}, "d2h", "page_locked"},
      {"h2d-pageable", {"host-device"}, "h2d", "pageable"},
      {"d2h-pageable", {"host-device"}, "d2h", "pageable"},
      {"d2d", {"same-gpu"}},
      {"d2d-sm", {"same-gpu"}},  // an SM copy kernel, as NCCL and some libraries move data inside one GPU
      {"p2p-ipc", gpu_pairs},  // across processes, as MPI ranks copy
      {"p2p-ce", gpu_pairs},
      {"p2p-sm", gpu_pairs},
      {"host-copy", {"host"}},
      {"host-copy-remote", {"cross-socket"}},
      {"network", {"inter-node"}},  // plain TCP sockets: what the hosts' network gives without an MPI library
  };
  return ceilings;
}

}  // namespace gmb
