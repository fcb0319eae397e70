#include "gmb/transfer.hpp"

#include <limits>

#include "gmb/error.hpp"
#include "gmb/platform.hpp"

namespace gmb {

namespace {

int count_of(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Unsupported("messages over 2 GiB - 1 byte need MPI large-count calls, which this engine does not use");
  return static_cast<int>(bytes);
}

// The buffer's pointer goes to MPI as it is: the library moves device memory itself.
class DirectTransfer final : public Transfer {
 public:
  DirectTransfer(MPI_Comm comm, int window) : comm_(comm) { requests_.reserve(static_cast<std::size_t>(2 * window)); }

  void send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    GMB_MPI_CHECK(MPI_Send(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_));
  }
  void recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    GMB_MPI_CHECK(MPI_Recv(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE));
  }
  void start_send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    requests_.emplace_back();
    GMB_MPI_CHECK(MPI_Isend(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_, &requests_.back()));
  }
  void start_recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    requests_.emplace_back();
    GMB_MPI_CHECK(MPI_Irecv(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_, &requests_.back()));
  }
  void complete_all() override {
    GMB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    requests_.clear();
  }

 private:
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

const std::vector<StrategyInfo>& transfer_strategies() {
  static const std::vector<StrategyInfo> strategies = {
      {"direct", "hand the buffer's pointer to MPI (device memory needs a CUDA-aware library)"},
  };
  return strategies;
}

std::string strategy_problem(const std::string& strategy, const MemoryKind& kind, const Platform& platform,
                             bool library_gpu_aware) {
  (void)platform;
  if (strategy == "direct" && kind.gpu_memory && !library_gpu_aware)
    return "refusing to hand " + kind.name +
           " memory to this MPI library: it is not known to be CUDA-aware (see `gmb-bench doctor`); "
           "a CUDA-unaware library given a device pointer may crash. Use host or pinned buffers.";
  return "";
}

std::unique_ptr<Transfer> make_transfer(const std::string& strategy, MPI_Comm comm, const Platform& platform,
                                        std::size_t max_bytes, int window) {
  (void)platform;
  (void)max_bytes;
  if (strategy == "direct") return std::make_unique<DirectTransfer>(comm, window);
  throw Unsupported("unknown transfer strategy '" + strategy + "'");
}

}  // namespace gmb
