// SPDX-License-Identifier: BSD-3-Clause
// How a message moves between a rank's buffer and the MPI library: a transfer strategy
// (METHODOLOGY "Transfer strategies"). Point-to-point benchmarks and the halo mini-app call these
// instead of MPI so the strategy is a parameter, not a copy of the benchmark.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gmb/awareness.hpp"
#include "gmb/buffer_pool.hpp"
#include "gmb/memory.hpp"

namespace gmb {

struct Platform;

class Transfer {
 public:
  virtual ~Transfer() = default;
  // Blocking send and receive (latency).
  virtual void send(const Buffer& buffer, std::size_t bytes, int peer, int tag) = 0;
  virtual void recv(Buffer& buffer, std::size_t bytes, int peer, int tag) = 0;
  // Windowed operations (bw, bibw, mbw): start any number, then complete them all. Received data
  // is in the caller's buffer when complete_all() returns.
  virtual void start_send(const Buffer& buffer, std::size_t bytes, int peer, int tag) = 0;
  virtual void start_recv(Buffer& buffer, std::size_t bytes, int peer, int tag) = 0;
  virtual void complete_all() = 0;
};

// A strategy says which side copies its messages through a staging buffer, and of which memory:
// staged-* and pipelined stage GPU-backed buffers (device, managed) through host memory so that MPI
// sees host memory only; pipelined-gpu relays host or pinned buffers through the rank's own GPU so
// that MPI moves device memory (its GPU path, e.g. NVLink) instead of host memory. Every other side
// hands its buffer to MPI as it is (in the same chunks as its peer when the strategy chunks).
struct StrategyInfo {
  std::string name;
  std::string description;
  const MemoryByProperty* staging = nullptr;  // the staging buffers' memory; nullptr: nothing is staged
  bool relays_host_side = false;           // true: host-memory sides stage; false: GPU-backed sides stage
  bool chunked = false;                    // messages are split into chunks (--chunks, --chunk-size)
  // Whether a side whose buffers are of `kind` copies through staging buffers.
  bool stages(const MemoryKind& kind) const { return staging && (relays_host_side ? !kind.gpu_backed : kind.gpu_backed); }
  // The kind its staging buffers are allocated from (available or not); nullptr when nothing is staged or no kind
  // has the property.
  const MemoryKind* staging_kind(const MemoryKinds& kinds) const { return staging ? kinds.find(*staging) : nullptr; }
};
// The strategies this engine knows, in the order `--help` lists them.
const std::vector<StrategyInfo>& transfer_strategies();
// The strategy of that name, or nullptr.
const StrategyInfo* find_strategy(const std::string& name);

// The strategy and its chunking.
struct TransferConfig {
  std::string transport = "mpi";  // or "nccl": NCCL moves device buffers (direct strategy only)
  std::string strategy = "direct";
  int chunks = 4;              // chunked strategies: chunks per message (when chunk_size is 0)
  std::size_t chunk_size = 0;  // chunked strategies: bytes per chunk instead of a chunk count
  // Whether the strategy splits messages into chunks (pipelined, pipelined-gpu).
  bool chunked() const;
  // Chunks a message of `bytes` is split into (1 for a strategy that does not chunk).
  std::uint64_t chunks_for(std::size_t bytes) const;
  // Bytes of the largest chunk of a message of `bytes` (all of it when the strategy does not chunk):
  // what one MPI call carries.
  std::size_t chunk_bytes(std::size_t bytes) const;
};

// Why `config` cannot stage messages of `bytes` with `window` operations in flight (each needs its own
// staging slot), or "".
std::string staging_limit_problem(const TransferConfig& config, std::size_t bytes, int window);

// Why `config` cannot move `kind` memory with this library on this platform, or "" (the MPI
// transport; the NCCL transport's rules are nccl_problem in gmb/nccl.hpp).
std::string strategy_problem(const TransferConfig& config, const MemoryKind& kind, const Platform& platform,
                             const AwarenessReport& awareness);

// A transfer able to carry messages of up to `max_bytes` from/to buffers of `kind`, at most
// `window` started operations of each direction at a time; staging buffers come from `buffers`.
// Throws Unsupported when it cannot.
std::unique_ptr<Transfer> make_transfer(const TransferConfig& config, MPI_Comm comm, const Platform& platform,
                                        BufferPool& buffers, const MemoryKind& kind, std::size_t max_bytes, int window);

// The persistent form of the direct strategy (--persistent; METHODOLOGY "Persistent communication"): the
// messages of an iteration are persistent requests built here, once, over the buffers, peer and tag the
// regular form uses (MPI_Send_init/MPI_Recv_init): `window` sends of `bytes` from `send` and `window` receives
// into `recv`. send()/recv() start one and wait for it (MPI_Start, MPI_Wait); a window's start_send() and
// start_recv() calls are started together by complete_all() (MPI_Startall, receives first) and completed
// (MPI_Waitall). Every call must name the buffer, size, peer and tag the requests were built with (anything
// else is a benchmark bug, fatal). The requests are freed with the transfer (MPI_Request_free).
std::unique_ptr<Transfer> make_persistent_transfer(MPI_Comm comm, const Buffer& send, Buffer& recv, std::size_t bytes,
                                                   int peer, int tag, int window);

}  // namespace gmb
