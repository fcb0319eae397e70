// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/transfer.hpp"

#include <algorithm>
#include <deque>

#include "gmb/error.hpp"
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"
#include "gmb/size_limits.hpp"

namespace gmb {

namespace {

// Host staging memory one transfer may hold per direction. Every message in flight needs its own
// slot: reusing one while its send or receive is pending would be erroneous, and draining early
// could deadlock bibw (both sides waiting for receives before posting sends).
constexpr std::size_t kStagingLimitBytes = std::size_t{4} << 30;

// Sizes over the count limit are refused before they are set up (SizeNeeds); this only guards the cast.
int count_of(std::size_t bytes) {
  if (const std::string reason = count_limit_reason(bytes, 1, "MPI_BYTE point to point"); !reason.empty())
    throw Unsupported(reason);
  return static_cast<int>(bytes);
}

// Calls f(offset, length) for each chunk of a message of `bytes` (one call for 0 bytes).
template <typename F>
void for_each_chunk(const TransferConfig& config, std::size_t bytes, F f) {
  if (bytes == 0) {
    f(0, 0);
    return;
  }
  const std::size_t chunk = config.chunk_bytes(bytes);
  for (std::size_t offset = 0; offset < bytes; offset += chunk) f(offset, std::min(chunk, bytes - offset));
}

// The buffer's pointer goes to MPI as it is: the library moves device memory itself. Under a
// chunked strategy a side that does not stage still splits messages into the same chunks as its
// staging peer, so that both post matching sends and receives.
class DirectTransfer final : public Transfer {
 public:
  DirectTransfer(MPI_Comm comm, int window, const TransferConfig& config)
      : comm_(comm), config_(config), chunked_(config.chunked()) {
    requests_.reserve(2 * static_cast<std::size_t>(window));
  }

  // The unchunked case is the latency hot path: no string compare, no request bookkeeping.
  void send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    if (!chunked_ || config_.chunks_for(bytes) == 1) {
      GMB_MPI_CHECK(MPI_Send(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_));
      return;
    }
    start_send(b, bytes, peer, tag);
    complete_all();
  }
  void recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    if (!chunked_ || config_.chunks_for(bytes) == 1) {
      GMB_MPI_CHECK(MPI_Recv(b.data(), count_of(bytes), MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE));
      return;
    }
    start_recv(b, bytes, peer, tag);
    complete_all();
  }
  void start_send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    const auto* data = static_cast<const char*>(b.data());
    for_each_chunk(config_, bytes, [&](std::size_t offset, std::size_t length) {
      requests_.emplace_back();
      GMB_MPI_CHECK(MPI_Isend(data + offset, count_of(length), MPI_BYTE, peer, tag, comm_, &requests_.back()));
    });
  }
  void start_recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    auto* data = static_cast<char*>(b.data());
    for_each_chunk(config_, bytes, [&](std::size_t offset, std::size_t length) {
      requests_.emplace_back();
      GMB_MPI_CHECK(MPI_Irecv(data + offset, count_of(length), MPI_BYTE, peer, tag, comm_, &requests_.back()));
    });
  }
  void complete_all() override {
    GMB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    requests_.clear();
  }

 private:
  MPI_Comm comm_;
  TransferConfig config_;
  bool chunked_;
  std::vector<MPI_Request> requests_;
};

// The persistent form of DirectTransfer (make_persistent_transfer): the same MPI calls' arguments, bound once.
class PersistentTransfer final : public Transfer {
 public:
  PersistentTransfer(MPI_Comm comm, const Buffer& send, Buffer& recv, std::size_t bytes, int peer, int tag, int window)
      : send_data_(send.data()), recv_data_(recv.data()), bytes_(bytes), peer_(peer), tag_(tag) {
    const int count = count_of(bytes);  // may throw Unsupported: before any request exists
    sends_.assign(static_cast<std::size_t>(window), MPI_REQUEST_NULL);
    recvs_.assign(static_cast<std::size_t>(window), MPI_REQUEST_NULL);
    for (auto& r : sends_) GMB_MPI_CHECK(MPI_Send_init(send_data_, count, MPI_BYTE, peer, tag, comm, &r));
    for (auto& r : recvs_) GMB_MPI_CHECK(MPI_Recv_init(recv_data_, count, MPI_BYTE, peer, tag, comm, &r));
  }

  ~PersistentTransfer() override {
    for (auto* requests : {&sends_, &recvs_})
      for (auto& r : *requests) GMB_MPI_CHECK(MPI_Request_free(&r));
  }

  void send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    expect(b.data() == send_data_, bytes, peer, tag);
    GMB_MPI_CHECK(MPI_Start(&sends_.front()));
    GMB_MPI_CHECK(MPI_Wait(&sends_.front(), MPI_STATUS_IGNORE));
  }
  void recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    expect(b.data() == recv_data_, bytes, peer, tag);
    GMB_MPI_CHECK(MPI_Start(&recvs_.front()));
    GMB_MPI_CHECK(MPI_Wait(&recvs_.front(), MPI_STATUS_IGNORE));
  }
  void start_send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    expect(b.data() == send_data_ && started_sends_ < sends_.size(), bytes, peer, tag);
    ++started_sends_;
  }
  void start_recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    expect(b.data() == recv_data_ && started_recvs_ < recvs_.size(), bytes, peer, tag);
    ++started_recvs_;
  }
  void complete_all() override {
    const int recvs = static_cast<int>(started_recvs_), sends = static_cast<int>(started_sends_);
    if (recvs) GMB_MPI_CHECK(MPI_Startall(recvs, recvs_.data()));
    if (sends) GMB_MPI_CHECK(MPI_Startall(sends, sends_.data()));
    if (recvs) GMB_MPI_CHECK(MPI_Waitall(recvs, recvs_.data(), MPI_STATUSES_IGNORE));
    if (sends) GMB_MPI_CHECK(MPI_Waitall(sends, sends_.data(), MPI_STATUSES_IGNORE));
    started_recvs_ = started_sends_ = 0;
  }

 private:
  void expect(bool same_buffer_within_window, std::size_t bytes, int peer, int tag) const {
    if (!same_buffer_within_window || bytes != bytes_ || peer != peer_ || tag != tag_)
      GMB_FATAL("a message the persistent requests were not built for (other buffer, size, peer or tag, or more than "
                "the window of " + std::to_string(sends_.size()) + "): a benchmark bug");
  }

  const void* send_data_;
  void* recv_data_;
  std::size_t bytes_;
  int peer_, tag_;
  std::vector<MPI_Request> sends_, recvs_;
  std::size_t started_sends_ = 0, started_recvs_ = 0;
};

// Messages copied through staging buffers, in C chunks per message (staged-*: C = 1): device data
// through host memory (staged-*, pipelined) or host data through the rank's GPU (pipelined-gpu).
// Send side: chunk copies into staging are queued on one stream; each chunk's MPI_Isend is posted
// as soon as its copy has finished, so the copy of chunk i+1 overlaps the transfer of chunk i.
// Receive side: an MPI_Irecv per chunk; as each arrives (in order: same source, tag and
// communicator), its copy out of staging is queued on another stream and overlaps the next chunk.
// Chunks of one message share the tag; MPI's ordering keeps them matched.
class StagedTransfer final : public Transfer {
 public:
  StagedTransfer(MPI_Comm comm, GpuRuntime& gpu, BufferPool& buffers, const MemoryKind& staging_kind,
                 const TransferConfig& config, std::size_t max_bytes, int window)
      : comm_(comm), gpu_(gpu), config_(config), into_staging_(gpu), out_of_staging_(gpu) {
    const std::size_t slot_bytes = std::max<std::size_t>(max_bytes, 1);
    const auto slots = static_cast<std::size_t>(window);
    if (const std::string problem = staging_limit_problem(config, max_bytes, window); !problem.empty())
      throw Unsupported(problem);
    for (std::size_t k = 0; k < slots; ++k) {
      send_slots_.push_back(buffers.take(staging_kind, slot_bytes));
      recv_slots_.push_back(buffers.take(staging_kind, slot_bytes));
    }
  }

  ~StagedTransfer() override {
    for (GpuEvent e : events_) gpu_.destroy_event(e);
  }

  void send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    start_send(b, bytes, peer, tag);
    complete_all();
  }
  void recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    start_recv(b, bytes, peer, tag);
    complete_all();
  }

  void start_send(const Buffer& b, std::size_t bytes, int peer, int tag) override {
    if (next_send_slot_ == send_slots_.size()) throw_window_exceeded();
    auto* staging = static_cast<char*>(send_slots_[next_send_slot_++]->data());
    const auto* source = static_cast<const char*>(b.data());
    for_each_chunk(config_, bytes, [&](std::size_t offset, std::size_t length) {
      gpu_.copy_async(staging + offset, source + offset, length, into_staging_.get());
      GpuEvent done = take_event();
      gpu_.record_event(done, into_staging_.get());
      unsent_.push_back({done, staging + offset, length, peer, tag});
    });
    post_finished_sends();
  }

  void start_recv(Buffer& b, std::size_t bytes, int peer, int tag) override {
    if (next_recv_slot_ == recv_slots_.size()) throw_window_exceeded();
    auto* staging = static_cast<char*>(recv_slots_[next_recv_slot_++]->data());
    auto* target = static_cast<char*>(b.data());
    for_each_chunk(config_, bytes, [&](std::size_t offset, std::size_t length) {
      arriving_.push_back({MPI_REQUEST_NULL, staging + offset, target + offset, length});
      GMB_MPI_CHECK(MPI_Irecv(staging + offset, count_of(length), MPI_BYTE, peer, tag, comm_, &arriving_.back().request));
    });
  }

  void complete_all() override {
    // Sends: post every remaining chunk once its copy is done.
    while (!unsent_.empty()) {
      gpu_.event_synchronize(unsent_.front().copied);
      post_finished_sends();
    }
    // Receives, in order: copy each chunk out of staging as soon as it has arrived.
    for (auto& chunk : arriving_) {
      GMB_MPI_CHECK(MPI_Wait(&chunk.request, MPI_STATUS_IGNORE));
      gpu_.copy_async(chunk.target, chunk.staging, chunk.length, out_of_staging_.get());
    }
    arriving_.clear();
    GMB_MPI_CHECK(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE));
    sends_.clear();
    gpu_.stream_synchronize(out_of_staging_.get());
    next_send_slot_ = next_recv_slot_ = 0;
    next_event_ = 0;
  }

 private:
  struct PendingSend {
    GpuEvent copied;
    const char* staging;
    std::size_t length;
    int peer, tag;
  };
  struct ArrivingChunk {
    MPI_Request request;
    const char* staging;
    char* target;
    std::size_t length;
  };

  [[noreturn]] void throw_window_exceeded() const {
    GMB_FATAL("more operations started than the window this transfer was built for (" +
              std::to_string(send_slots_.size()) + "): a benchmark bug");
  }

  // Events are reused across windows: all are complete after complete_all().
  GpuEvent take_event() {
    if (next_event_ == events_.size()) events_.push_back(gpu_.create_event());
    return events_[next_event_++];
  }

  void post_finished_sends() {
    while (!unsent_.empty() && gpu_.event_done(unsent_.front().copied)) {
      const PendingSend& s = unsent_.front();
      sends_.emplace_back();
      GMB_MPI_CHECK(MPI_Isend(s.staging, count_of(s.length), MPI_BYTE, s.peer, s.tag, comm_, &sends_.back()));
      unsent_.pop_front();
    }
  }

  MPI_Comm comm_;
  GpuRuntime& gpu_;
  TransferConfig config_;
  StreamOwner into_staging_, out_of_staging_;
  std::vector<std::unique_ptr<Buffer>> send_slots_, recv_slots_;
  std::size_t next_send_slot_ = 0, next_recv_slot_ = 0;
  std::vector<GpuEvent> events_;
  std::size_t next_event_ = 0;
  std::deque<PendingSend> unsent_;
  std::vector<MPI_Request> sends_;
  std::vector<ArrivingChunk> arriving_;
};

// The NCCL transport: sends and receives enqueued on the communicator's stream. A window is one
// NCCL group (NCCL matches a pair's messages in order, so tags are not needed); completion is the
// stream synchronisation.
class NcclTransfer final : public Transfer {
 public:
  explicit NcclTransfer(std::shared_ptr<NcclComm> nccl) : nccl_(std::move(nccl)) {}
  ~NcclTransfer() override {
    if (grouped_) nccl_->group_end();
  }

  void send(const Buffer& b, std::size_t bytes, int peer, int) override {
    nccl_->send(b.data(), bytes, peer);
    nccl_->synchronize();
  }
  void recv(Buffer& b, std::size_t bytes, int peer, int) override {
    nccl_->recv(b.data(), bytes, peer);
    nccl_->synchronize();
  }
  void start_send(const Buffer& b, std::size_t bytes, int peer, int) override {
    open_group();
    nccl_->send(b.data(), bytes, peer);
  }
  void start_recv(Buffer& b, std::size_t bytes, int peer, int) override {
    open_group();
    nccl_->recv(b.data(), bytes, peer);
  }
  void complete_all() override {
    if (grouped_) nccl_->group_end();
    grouped_ = false;
    nccl_->synchronize();
  }

 private:
  void open_group() {
    if (!grouped_) nccl_->group_start();
    grouped_ = true;
  }

  std::shared_ptr<NcclComm> nccl_;
  bool grouped_ = false;
};

}  // namespace

bool TransferConfig::chunked() const {
  const StrategyInfo* s = find_strategy(strategy);
  return s && s->chunked;
}

std::uint64_t TransferConfig::chunks_for(std::size_t bytes) const {
  if (!chunked()) return 1;
  if (chunk_size > 0) return std::max<std::uint64_t>(1, bytes / chunk_size + (bytes % chunk_size != 0));
  // Never more chunks than bytes.
  return std::clamp<std::uint64_t>(bytes, 1, static_cast<std::uint64_t>(chunks));
}

std::size_t TransferConfig::chunk_bytes(std::size_t bytes) const {
  const auto chunks = static_cast<std::size_t>(chunks_for(bytes));
  return (bytes + chunks - 1) / chunks;
}

std::string staging_limit_problem(const TransferConfig& config, std::size_t bytes, int window) {
  const std::size_t slot_bytes = std::max<std::size_t>(bytes, 1);
  const auto slots = static_cast<std::size_t>(window);
  if (slot_bytes * slots <= kStagingLimitBytes) return "";
  return config.strategy + " needs " + std::to_string(slots) + " staging slots of " + std::to_string(slot_bytes) +
         " bytes per direction, over the " + std::to_string(kStagingLimitBytes >> 30) +
         " GiB staging limit; use a smaller --window";
}

const std::vector<StrategyInfo>& transfer_strategies() {
  static const std::vector<StrategyInfo> strategies = {
      {"direct", "hand the buffer's pointer to MPI (device memory needs a CUDA-aware library)"},
      {"staged-pageable", "copy device data through pageable host memory, MPI on host memory", &kPageableHostMemory, false,
       false},
      {"staged-pinned", "copy device data through pinned host memory, MPI on host memory", &kPinnedHostMemory, false, false},
      {"pipelined", "chunked staging of device data through pinned memory: copies of one chunk overlap MPI of another",
       &kPinnedHostMemory, false, true},
      {"pipelined-gpu",
       "chunked relay of host data through the rank's own GPU: its host<->device copies overlap MPI moving device "
       "memory (needs a CUDA-aware library)",
       &kDeviceMemory, true, true},
  };
  return strategies;
}

const StrategyInfo* find_strategy(const std::string& name) {
  for (const auto& s : transfer_strategies())
    if (s.name == name) return &s;
  return nullptr;
}

std::string strategy_problem(const TransferConfig& config, const MemoryKind& kind, const Platform& platform,
                             const AwarenessReport& awareness) {
  if (config.strategy == "direct") {
    const std::string refusal = device_pointer_refusal(kind, awareness);
    if (refusal.empty()) return "";
    return refusal + ". Use --strategy staged-pinned, staged-pageable or pipelined, or host/pinned buffers.";
  }
  const StrategyInfo* strategy = find_strategy(config.strategy);
  if (!strategy) return "unknown transfer strategy '" + config.strategy + "'";
  if (!platform.gpu || !platform.gpu_unavailable_reason.empty())
    return "the " + config.strategy + " strategy copies through a GPU runtime, and there is none: " +
           platform.gpu_unavailable_reason;
  const MemoryKind* staging = strategy->staging_kind(platform.memory);
  if (!staging || !staging->available())
    return "the " + config.strategy + " strategy needs " + strategy->staging->what + ", which is not available";
  if (!strategy->relays_host_side) return "";
  // Relaying sides hand MPI device memory, and so do GPU sides: the library must be proven CUDA-aware.
  const std::string refusal = device_pointer_refusal(strategy->stages(kind) ? *staging : kind, awareness);
  if (refusal.empty()) return "";
  return "the " + config.strategy + " strategy moves device memory through MPI: " + refusal +
         ". Use --strategy pipelined, staged-pinned or staged-pageable, which give MPI host memory only.";
}

std::unique_ptr<Transfer> make_transfer(const TransferConfig& config, MPI_Comm comm, const Platform& platform,
                                        BufferPool& buffers, const MemoryKind& kind, std::size_t max_bytes, int window) {
  if (config.transport == "nccl") return std::make_unique<NcclTransfer>(platform.nccl.connect(comm));
  const StrategyInfo* strategy = find_strategy(config.strategy);
  if (!strategy) throw UsageError("unknown transfer strategy '" + config.strategy + "'");
  if (!strategy->stages(kind)) return std::make_unique<DirectTransfer>(comm, window, config);
  if (!platform.gpu) throw Unsupported(strategy_problem(config, kind, platform, AwarenessReport{}));
  const MemoryKind& staging = platform.memory.require(*strategy->staging);
  return std::make_unique<StagedTransfer>(comm, *platform.gpu, buffers, staging, config, max_bytes, window);
}

std::unique_ptr<Transfer> make_persistent_transfer(MPI_Comm comm, const Buffer& send, Buffer& recv, std::size_t bytes,
                                                   int peer, int tag, int window) {
  return std::make_unique<PersistentTransfer>(comm, send, recv, bytes, peer, tag, window);
}

}  // namespace gmb
