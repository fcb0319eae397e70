// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>

#include "gmb/gpu.hpp"

namespace gmb::cuda {

// NVLink between two GPUs (by PCI bus id) from NVML, loaded at run time so that a machine without
// the NVIDIA management library still runs. Empty kind when NVML is absent or cannot tell.
GpuLink nvml_link_between(const std::string& pci_a, const std::string& pci_b);

}  // namespace gmb::cuda
