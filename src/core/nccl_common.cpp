// SPDX-License-Identifier: BSD-3-Clause
// The NCCL transport's rules that need no NCCL headers: which operations it runs (the collectives
// table's NCCL mapping), what it can move, and the per-communicator cache. The calls themselves are in
// src/nccl/.
#include <algorithm>

#include "gmb/benchmark.hpp"
#include "gmb/collectives.hpp"
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"

namespace gmb {

std::shared_ptr<NcclComm> NcclSupport::connect(MPI_Comm comm) const {
  auto& slot = communicators_[comm];
  if (!slot) slot = create(comm);
  return slot;
}

void NcclSupport::disconnect_all() const {
  // Communicators are created in the same order on every rank, and std::map orders them the same way.
  communicators_.clear();
}

const std::vector<std::string>& transport_names() {
  static const std::vector<std::string> names = {"mpi", "nccl"};
  return names;
}

std::string nccl_collective_problem(const coll::Collective& op, bool in_place) {
  if (!op.nccl.call) return std::string(op.name) + " under the NCCL transport: " + op.nccl.missing;
  if (in_place && op.in_place != coll::InPlace::never && !op.nccl.in_place) {
    std::vector<std::string> names;
    for (const auto& c : coll::collectives())
      if (c.nccl.call && c.nccl.in_place) names.push_back(c.name);
    std::string listed;
    for (std::size_t k = 0; k < names.size(); ++k)
      listed += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
    return "--in-place with the NCCL transport is supported for " + listed + " only: NCCL has no in-place form of " +
           op.name + " that means what MPI_IN_PLACE means";
  }
  return "";
}

std::string nccl_problem(const Context& ctx, const MemoryKind& kind) {
  const NcclSupport& nccl = ctx.platform->nccl;
  if (!nccl.available()) return "the NCCL transport is not available: " + nccl.unavailable_reason;
  if (!kind.gpu_memory) {
    const MemoryKind* device = ctx.platform->memory.find_by(&MemoryKind::gpu_memory);
    return "the NCCL transport moves device memory only; this rank's buffers are '" + kind.name + "' (use " +
           (device ? device->name : std::string("device memory")) + ")";
  }
  for (std::size_t a = 0; a < ctx.ranks.size(); ++a)
    for (std::size_t b = a + 1; b < ctx.ranks.size(); ++b)
      if (!ctx.ranks[a].gpu_uuid.empty() && on_one_gpu(ctx.ranks[a], ctx.ranks[b]))
        return "NCCL needs a GPU of its own per rank: ranks " + std::to_string(a) + " and " + std::to_string(b) +
               " both use GPU " + ctx.ranks[a].gpu_uuid + " on " + ctx.ranks[a].host;
  return "";
}

}  // namespace gmb
