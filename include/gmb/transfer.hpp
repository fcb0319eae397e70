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

struct StrategyInfo {
  std::string name;
  std::string description;
};
// The strategies this engine knows, in the order `--help` lists them.
const std::vector<StrategyInfo>& transfer_strategies();

// The strategy and its chunking. Staging strategies apply to GPU-backed buffers (device,
// managed); a rank whose buffers are host or pinned memory hands them to MPI directly.
struct TransferConfig {
  std::string transport = "mpi";  // or "nccl": NCCL moves device buffers (direct strategy only)
  std::string strategy = "direct";
  int chunks = 4;              // pipelined: chunks per message (when chunk_size is 0)
  std::size_t chunk_size = 0;  // pipelined: bytes per chunk instead of a chunk count
  // Chunks a message of `bytes` is split into (1 for everything but pipelined).
  int chunks_for(std::size_t bytes) const;
};

// Why `config` cannot move `kind` memory with this library on this platform, or "" (the MPI
// transport; the NCCL transport's rules are nccl_problem in gmb/nccl.hpp).
std::string strategy_problem(const TransferConfig& config, const MemoryKind& kind, const Platform& platform,
                             const AwarenessReport& awareness);

// A transfer able to carry messages of up to `max_bytes` from/to buffers of `kind`, at most
// `window` started operations of each direction at a time. Throws Unsupported when it cannot.
std::unique_ptr<Transfer> make_transfer(const TransferConfig& config, MPI_Comm comm, const Platform& platform,
                                        const MemoryKind& kind, std::size_t max_bytes, int window);

}  // namespace gmb
