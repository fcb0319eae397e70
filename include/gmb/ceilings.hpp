// SPDX-License-Identifier: BSD-3-Clause
// The copies `gmb-bench peaks` measures and which MPI transfers each one bounds (its "achievable peak"), as
// `gmb-bench list --format json` describes them: the harness compares a figure with the copy this table names
// for the figure's path class, and keeps no table of its own.
#pragma once

#include <cstddef>
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
  // A stream's rate (the network tools'): it does not depend on the message size the way a copy's does, so at every
  // message size from this one up the best figure measured at any such size bounds the transfer; 0: per size.
  std::size_t stream_from_bytes = 0;
  // The memory property both sides of a transfer it bounds have ("gpu_memory": device buffers); nullptr: any.
  const char* buffers = nullptr;
};

// Every copy peaks measures. Where several bound one path class (a GPU pair: an IPC copy between processes, as MPI
// ranks are, an in-process copy-engine one and an SM copy), the harness takes the largest measured at a size: a bound
// is the fastest way the hardware was measured to move that data without MPI.
const std::vector<CopyCeiling>& copy_ceilings();

}  // namespace gmb
