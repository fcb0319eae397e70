// SPDX-License-Identifier: BSD-3-Clause
// The copies `gmb-bench peaks` measures and which MPI transfers each one bounds (its "achievable peak"), as
// `gmb-bench list --format json` describes them: the harness compares a figure with the copy this table names
// for the figure's path class, and keeps no table of its own.
#pragma once

#include <vector>

namespace gmb {

struct CopyCeiling {
  const char* operation;  // as peaks' records name it: "h2d-pinned", "p2p-ipc" ...
  // The path classes (path.hpp) of the MPI transfers it bounds; empty: measured for comparison only.
  std::vector<const char*> bounds;
  // Host<->device copies: "h2d" or "d2h", and the memory kind property of the host side ("page_locked",
  // "pageable"); nullptr for the others.
  const char* direction = nullptr;
  const char* host_memory = nullptr;
};

// Every copy peaks measures. Where several bound one path class (a GPU pair: an IPC copy between processes, as MPI
// ranks are, an in-process copy-engine one and an SM copy), the harness takes the largest measured at a size: a bound
// is the fastest way the hardware was measured to move that data without MPI.
const std::vector<CopyCeiling>& copy_ceilings();

}  // namespace gmb
