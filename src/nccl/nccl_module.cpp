// SPDX-License-Identifier: BSD-3-Clause
// The NCCL module: NcclComm over the NCCL library, built when CMake finds NCCL (cmake/GmbNccl.cmake).
// Point-to-point calls map to ncclSend/ncclRecv; collectives to NCCL's own calls where it has them
// and to grouped ncclSend/ncclRecv otherwise (as nccl-tests does for alltoall), as each row of the
// collectives table says (Collective::nccl).
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "../cuda/cuda_check.hpp"
#include "gmb/collectives.hpp"
#include "gmb/error.hpp"
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"

#define GMB_NCCL_CHECK(call)                                                                              \
  do {                                                                                                    \
    const ncclResult_t gmb_nccl_status_ = (call);                                                         \
    if (gmb_nccl_status_ != ncclSuccess)                                                                  \
      ::gmb::fatal(__FILE__, __LINE__, std::string(#call) + " failed: " + ncclGetErrorString(gmb_nccl_status_) + \
                                           nccl_last_error());                                            \
  } while (0)

namespace gmb {

namespace {

std::string nccl_last_error() {
  const char* last = ncclGetLastError(nullptr);
  return last && *last ? std::string(" (") + last + ")" : std::string();
}

ncclDataType_t nccl_type(coll::Dtype t) {
  switch (t) {
    case coll::Dtype::byte: return ncclUint8;
    case coll::Dtype::int32: return ncclInt32;
    case coll::Dtype::float32: return ncclFloat32;
    case coll::Dtype::float64: return ncclFloat64;
  }
  GMB_FATAL("unknown element type for NCCL");
}

class Communicator final : public NcclComm {
 public:
  explicit Communicator(MPI_Comm mpi) {
    GMB_MPI_CHECK(MPI_Comm_rank(mpi, &rank_));
    GMB_MPI_CHECK(MPI_Comm_size(mpi, &size_));
    ncclUniqueId id{};
    if (rank_ == 0) GMB_NCCL_CHECK(ncclGetUniqueId(&id));
    GMB_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi));
    GMB_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
    GMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  // Before MPI_Finalize (NcclSupport::disconnect_all): every operation was synchronised; finalize
  // flushes what NCCL still holds on every rank, then the communicator and stream are released.
  ~Communicator() override {
    GMB_NCCL_CHECK(ncclCommFinalize(comm_));
    GMB_NCCL_CHECK(ncclCommDestroy(comm_));
    GMB_CUDA_CHECK(cudaStreamDestroy(stream_));
  }

  void group_start() override { GMB_NCCL_CHECK(ncclGroupStart()); }
  void group_end() override { GMB_NCCL_CHECK(ncclGroupEnd()); }
  void send(const void* data, std::size_t bytes, int peer) override {
    GMB_NCCL_CHECK(ncclSend(data, bytes, ncclUint8, peer, comm_, stream_));
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    GMB_NCCL_CHECK(ncclRecv(data, bytes, ncclUint8, peer, comm_, stream_));
  }

  // Polls instead of cudaStreamSynchronize so that an NCCL failure on any rank (which leaves the
  // stream waiting forever) is reported instead of hanging the job (as nccl-tests does).
  void synchronize() override {
    for (;;) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) GMB_CUDA_CHECK(state);
      ncclResult_t async = ncclSuccess;
      GMB_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        GMB_FATAL(std::string("NCCL operation failed: ") + ncclGetErrorString(async) + nccl_last_error());
    }
  }

  void collective(const coll::Collective& op, const coll::CallArgs& a, coll::Dtype dtype) override {
    const coll::Layout& l = *a.layout;
    const ncclDataType_t type = nccl_type(dtype);
    const std::size_t es = coll::dtype_size(dtype);
    const auto* in = static_cast<const char*>(a.send);
    auto* out = static_cast<char*>(a.recv);
    const std::string name = op.name;
    // Byte offsets and lengths of grouped sends and receives.
    auto at = [es](std::uint64_t elems) { return static_cast<std::size_t>(elems) * es; };

    if (name == "bcast") {
      // MPI_Bcast has one buffer: the root's data is in it, everyone else receives into it.
      GMB_NCCL_CHECK(ncclBroadcast(out, out, static_cast<std::size_t>(l.recv_count), type, a.root, comm_, stream_));
    } else if (name == "reduce") {
      GMB_NCCL_CHECK(ncclReduce(a.in_place ? out : in, out, static_cast<std::size_t>(l.send_count), type, ncclSum,
                                a.root, comm_, stream_));
    } else if (name == "allreduce") {
      GMB_NCCL_CHECK(ncclAllReduce(a.in_place ? out : in, out, static_cast<std::size_t>(l.recv_count), type, ncclSum,
                                   comm_, stream_));
    } else if (name == "allgather") {
      // NCCL's in-place allgather reads this rank's block where MPI_IN_PLACE leaves it.
      const char* mine = a.in_place ? out + at(static_cast<std::uint64_t>(rank_) * l.send_count) : in;
      GMB_NCCL_CHECK(ncclAllGather(mine, out, static_cast<std::size_t>(l.send_count), type, comm_, stream_));
    } else if (name == "reduce_scatter_block" || name == "reduce_scatter_equal") {
      GMB_NCCL_CHECK(ncclReduceScatter(in, out, static_cast<std::size_t>(l.recv_count), type, ncclSum, comm_, stream_));
    } else {
      grouped(name, l, in, out, a.root, at);
    }
  }

 private:
  // Operations NCCL has no call for, as one group of sends and receives (self included, as
  // nccl-tests' alltoall does).
  template <typename At>
  void grouped(const std::string& name, const coll::Layout& l, const char* in, char* out, int root, At at) {
    auto count = [&](const std::vector<int>& v, int k) { return static_cast<std::uint64_t>(v[k]); };
    group_start();
    if (name == "gather" || name == "gatherv") {
      send(in, at(l.send_count), root);
      if (rank_ == root)
        for (int k = 0; k < size_; ++k) {
          const bool v = name == "gatherv";
          const std::uint64_t n = v ? count(l.recv_counts, k) : l.recv_count;
          const std::uint64_t off = v ? count(l.recv_displs, k) : static_cast<std::uint64_t>(k) * l.recv_count;
          recv(out + at(off), at(n), k);
        }
    } else if (name == "scatter" || name == "scatterv") {
      if (rank_ == root)
        for (int k = 0; k < size_; ++k) {
          const bool v = name == "scatterv";
          const std::uint64_t n = v ? count(l.send_counts, k) : l.send_count;
          const std::uint64_t off = v ? count(l.send_displs, k) : static_cast<std::uint64_t>(k) * l.send_count;
          send(in + at(off), at(n), k);
        }
      recv(out, at(l.recv_count), root);
    } else if (name == "allgatherv") {
      for (int k = 0; k < size_; ++k) {
        send(in, at(l.send_count), k);
        recv(out + at(count(l.recv_displs, k)), at(count(l.recv_counts, k)), k);
      }
    } else if (name == "alltoall") {
      for (int k = 0; k < size_; ++k) {
        send(in + at(static_cast<std::uint64_t>(k) * l.send_count), at(l.send_count), k);
        recv(out + at(static_cast<std::uint64_t>(k) * l.recv_count), at(l.recv_count), k);
      }
    } else if (name == "alltoallv") {
      for (int k = 0; k < size_; ++k) {
        send(in + at(count(l.send_displs, k)), at(count(l.send_counts, k)), k);
        recv(out + at(count(l.recv_displs, k)), at(count(l.recv_counts, k)), k);
      }
    } else {
      group_end();
      // nccl_collective_problem refuses these before any buffer exists; reaching here is a bug.
      GMB_FATAL("the NCCL transport has no implementation of " + name);
    }
    group_end();
  }

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0, size_ = 1;
};

std::string version_text(int v) {
  // NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace

void register_nccl(Platform& platform) {
  NcclSupport& nccl = platform.nccl;
  if (!platform.gpu_unavailable_reason.empty()) {
    nccl.unavailable_reason = "NCCL needs a GPU: " + platform.gpu_unavailable_reason;
    return;
  }
  int version = 0;
  if (const ncclResult_t r = ncclGetVersion(&version); r != ncclSuccess) {
    nccl.unavailable_reason = std::string("ncclGetVersion failed: ") + ncclGetErrorString(r);
    return;
  }
  nccl.unavailable_reason.clear();
  nccl.version = version_text(version);
  nccl.create = [](MPI_Comm comm) { return std::make_shared<Communicator>(comm); };
}

}  // namespace gmb
