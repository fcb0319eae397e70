// The NCCL transport's rules that need no NCCL headers: which operations NCCL has, what it can
// move, and the per-communicator cache. The calls themselves are in src/nccl/.
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

namespace {
constexpr const char* kGrouped = "ncclSend/ncclRecv (grouped)";
}  // namespace

const NcclCoverage& nccl_coverage(const coll::Collective& op) {
  // NCCL's in-place forms (sendbuff == recvbuff, or the rank's block of recvbuff for allgather)
  // mean what MPI_IN_PLACE means only for these three; elsewhere the data sits at other offsets.
  static const std::vector<NcclCoverage> table = {
      {"bcast", "ncclBroadcast", false, nullptr},
      {"reduce", "ncclReduce", true, nullptr},
      {"allreduce", "ncclAllReduce", true, nullptr},
      {"gather", kGrouped, false, nullptr},
      {"gatherv", kGrouped, false, nullptr},
      {"allgather", "ncclAllGather", true, nullptr},
      {"allgatherv", kGrouped, false, nullptr},
      {"scatter", kGrouped, false, nullptr},
      {"scatterv", kGrouped, false, nullptr},
      {"alltoall", kGrouped, false, nullptr},
      {"alltoallv", kGrouped, false, nullptr},
      {"reduce_scatter", nullptr, false,
       "NCCL has no reduce-scatter with unequal counts (ncclReduceScatter gives every rank the same count: "
       "use reduce_scatter_block)"},
      {"reduce_scatter_block", "ncclReduceScatter", false, nullptr},
      {"barrier", nullptr, false, "NCCL has no barrier"},
  };
  for (const auto& c : table)
    if (std::string(c.operation) == op.name) return c;
  static const NcclCoverage unknown = {"", nullptr, false, "the NCCL transport does not know this operation"};
  return unknown;
}

std::string nccl_collective_problem(const coll::Collective& op, bool in_place) {
  const NcclCoverage& c = nccl_coverage(op);
  if (!c.call) return std::string(op.name) + " under the NCCL transport: " + c.missing;
  if (in_place && op.in_place != coll::InPlace::never && !c.in_place)
    return std::string("--in-place with the NCCL transport is supported for reduce, allreduce and allgather only: ") +
           "NCCL has no in-place form of " + op.name + " that means what MPI_IN_PLACE means";
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
      if (ctx.ranks[a].host == ctx.ranks[b].host && !ctx.ranks[a].gpu_uuid.empty() &&
          ctx.ranks[a].gpu_uuid == ctx.ranks[b].gpu_uuid)
        return "NCCL needs a GPU of its own per rank: ranks " + std::to_string(a) + " and " + std::to_string(b) +
               " both use GPU " + ctx.ranks[a].gpu_uuid + " on " + ctx.ranks[a].host;
  return "";
}

}  // namespace gmb
