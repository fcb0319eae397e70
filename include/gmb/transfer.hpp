// How a message moves between a rank's buffer and the MPI library: a transfer strategy
// (METHODOLOGY "Transfer strategies"). Point-to-point benchmarks and the halo mini-app call these
// instead of MPI so the strategy is a parameter, not a copy of the benchmark.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

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

// Why `strategy` cannot move `kind` memory with this library on this platform, or "".
std::string strategy_problem(const std::string& strategy, const MemoryKind& kind, const Platform& platform,
                             bool library_gpu_aware);

// A transfer for `strategy` able to carry messages of up to `max_bytes`, at most `window`
// started operations of each direction at a time. Throws Unsupported when it cannot be built.
std::unique_ptr<Transfer> make_transfer(const std::string& strategy, MPI_Comm comm, const Platform& platform,
                                        std::size_t max_bytes, int window);

}  // namespace gmb
