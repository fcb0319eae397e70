// SPDX-License-Identifier: BSD-3-Clause
// NCCL as a second transport (`--transport nccl`): the same benchmarks, records and statistics as
// MPI, with NCCL moving the data. Core and the benchmarks see only this interface; the NCCL module
// (src/nccl/, built when CMake finds NCCL) implements it, and a build without NCCL registers it
// unavailable with the reason. The communicator is bootstrapped over MPI (rank 0's unique id is
// broadcast), so MPI still launches, synchronises and times the job.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gmb {

struct Context;
struct MemoryKind;
struct Platform;
namespace coll {
struct Collective;
struct CallArgs;
enum class Dtype;
}  // namespace coll

// One NCCL communicator over an MPI communicator, with the stream its operations run on.
// Operations are enqueued; synchronize() waits for them (the timing point: an application
// that needs the data must do the same).
class NcclComm {
 public:
  virtual ~NcclComm() = default;
  // Everything between group_start and group_end is issued as one NCCL group (needed when a
  // rank both sends and receives, and what makes a window of sends one launch).
  virtual void group_start() = 0;
  virtual void group_end() = 0;
  virtual void send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer) = 0;
  // One call of the operation described by `args` (the table's layout and buffers).
  virtual void collective(const coll::Collective& op, const coll::CallArgs& args, coll::Dtype dtype) = 0;
  virtual void synchronize() = 0;
};

struct NcclSupport {
  std::string version;             // of the library loaded at run time, e.g. "2.27.7"; empty when unavailable
  std::string unavailable_reason = "the NCCL module was not registered";  // empty when NCCL can be used
  // Collective over `comm`: creates the NCCL communicator (once per MPI communicator; later calls
  // return the same one). Set only when available.
  std::function<std::shared_ptr<NcclComm>(MPI_Comm)> create;

  bool available() const { return unavailable_reason.empty(); }
  std::shared_ptr<NcclComm> connect(MPI_Comm comm) const;
  // Finalizes and destroys every communicator this process connected (collective over each); called
  // before MPI_Finalize, so that NCCL's teardown still has MPI and a failure is reported.
  void disconnect_all() const;

 private:
  // A cache, not state a caller sees: connecting twice gives the same communicator.
  mutable std::map<MPI_Comm, std::shared_ptr<NcclComm>> communicators_;
};

// Fills platform.nccl: implemented by src/nccl/ when NCCL was found at configure time, else by
// src/nonccl/nccl_module.cpp (unavailable, saying why). Called by register_modules.
void register_nccl(Platform& platform);

// The transports a benchmark can use; "mpi" is the default.
const std::vector<std::string>& transport_names();

// Why NCCL cannot move this rank's `kind` of memory in `ctx`, or "": NCCL must be built
// and loadable, buffers must be GPU memory, and every rank needs a GPU of its own.
std::string nccl_problem(const Context& ctx, const MemoryKind& kind);
// Why NCCL cannot run the collective `op` (with `in_place` asked for), or "": the table row's NCCL mapping.
std::string nccl_collective_problem(const coll::Collective& op, bool in_place);

}  // namespace gmb
