// SPDX-License-Identifier: BSD-3-Clause
// --nic: which network card each local rank's MPI library and NCCL are told to use (docs/multinode.md "NIC
// pinning"). Applied before MPI_Init, because libraries read their device-selection environment at
// initialisation: the NIC nearest the rank's GPU (or one of a list of names, by local rank), written into
// UCX_NET_DEVICES, OMPI_MCA_btl_tcp_if_include, FI_TCP_IFACE, NCCL_IB_HCA or NCCL_SOCKET_IFNAME wherever the user
// has not set them already. What was chosen, why, and what was set or left alone goes into ranks[].network.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gmb/json.hpp"

namespace gmb {

// What --nic asked for: "none" (the library's own choice, the default), "nearest", or a list of names.
struct NicRequest {
  std::string text = "none";       // as the records spell it: none, nearest, or NAME,NAME,...
  std::vector<std::string> names;  // the names of a list; empty for none and nearest
  bool none() const { return text == "none"; }
  bool nearest() const { return text == "nearest"; }
};

// Reads --nic's value; throws UsageError for an empty value or an empty name in a list.
NicRequest parse_nic_request(const std::string& text);

// One network card as the choice sees it: a network interface and the RDMA device of the same PCI function
// (eth2 and mlx5_0 of a RoCE port, ib0 and mlx5_0 of InfiniBand), or either alone.
struct Nic {
  std::string interface;    // the network interface (eth0, ib0, hsn0); "" when it has none
  std::string rdma_device;  // the InfiniBand or CXI device (mlx5_0, cxi0); "" when it has none
  std::string rdma_class;   // "infiniband" or "cxi" with an RDMA device
  std::string port;         // the first ACTIVE InfiniBand port ("1"); "" without one
  std::string level;        // PCIe distance to the rank's GPU (PIX, PXB, PHB, NODE, NODE or SYS, SYS); "" unknown
  std::string distance;     // the distance in words, as network_facts() describes it
  bool virtual_device = false;  // no hardware behind it (veth, bridge): distance unknown, chosen last
  bool loopback = false;        // never chosen by "nearest"
  bool down = false;            // interface down and no ACTIVE port: never chosen by "nearest"
  std::string name() const { return interface.empty() ? rdma_device : interface; }
};

// The network cards of network_facts(), interfaces and RDMA devices of one PCI address joined, in name order.
std::vector<Nic> nics_in(const Json& facts);

// The card --nic names for this local rank, and why; `nic` is empty when nothing is pinned ("nearest" on a
// host with no usable card: `why` says so). Throws UsageError when the request cannot be honoured (a name this
// host does not have). "nearest": the best PCIe level to the GPU; cards of equal level are tied and the local
// rank modulo their number picks one, so that the ranks of a host spread over its rails; a card of unknown
// distance (no GPU, no PCI address) comes after every known one, a virtual card after those, loopback and cards
// that are down never. A list: the name at the local rank modulo its length (an interface or an RDMA device).
struct NicChoice {
  std::vector<Nic> nic;  // none or one
  std::string why;
};
NicChoice choose_nic(const NicRequest& request, const std::vector<Nic>& nics, int local_rank);

// The environment settings that pin a library to `nic`, each set where `lookup` (getenv) finds it unset, else
// left alone with the reason: {"UCX_NET_DEVICES": {"set": "mlx5_0:1"}, "NCCL_IB_HCA": {"left_alone": "..."}}.
// `set` is called for each variable to set.
Json pin_environment(const Nic& nic, const std::function<const char*(const char*)>& lookup,
                     const std::function<void(const std::string& name, const std::string& value)>& set);

// --nic for this process, before MPI_Init: chooses from the host's network facts (the GPU at `gpu_pci`, "" for
// none) and sets the environment. Returns the record of ranks[].network.nic_pinning (null for "none"). Throws
// UsageError, naming the host and local rank, when the request cannot be honoured (no local rank known, a name
// absent on this host).
Json apply_nic_request(const NicRequest& request, int local_rank, const std::string& local_rank_source,
                       const std::string& gpu_pci, const std::string& sysfs_root = "/sys");

// One line for `gmb-bench doctor` from the record apply_nic_request() returned.
std::string nic_pinning_summary(const Json& pinning);

}  // namespace gmb
