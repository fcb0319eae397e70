// SPDX-License-Identifier: BSD-3-Clause
// The operands of a collective, shared by the `coll` and `nbc` benchmarks (src/bench/coll_operands.cpp): kept
// apart from the collectives table (gmb/collectives.hpp, in core) because they are the benchmarks' own.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/collectives.hpp"
#include "gmb/memory.hpp"
#include "gmb/nccl.hpp"

namespace gmb::coll {

// Operands shared by `coll` and `nbc`: the operation, memory kinds per role, root, in-place, data
// type, buffers, validation images. Declares and checks the options both benchmarks share.
class Operands {
 public:
  void add_options(ArgParser& p);
  // `--transport mpi|nccl` (blocking collectives only: NCCL has no request to test).
  void add_transport_option(ArgParser& p);
  // `--rotate-offsets` (blocking collectives): each call at the next offset of buffers sized for the sweep's largest
  // size, as nccl-tests does, so that no call reads what an earlier one left in a cache.
  void add_rotation_option(ArgParser& p);
  bool rotates_offsets() const { return rotate_offsets_; }
  // How many offsets the calls of the current size cycle through (1: every call on the same buffers).
  std::size_t offset_positions() const { return offsets_; }
  // Takes OP from the positionals (one name, a comma-separated list, or "all") and checks the
  // combination for every operation; throws UsageError. Selects the first operation.
  void configure(const std::vector<std::string>& positionals, int world_size, const Platform& platform,
                 const std::string& benchmark);
  // The operations asked for, in order; select(k) makes the k-th current.
  std::size_t operation_count() const { return ops_.size(); }
  void select(std::size_t k);
  bool any_data() const;
  // The sizes the current operation measures for the sizes asked for, each made whole (whole_size) and measured once;
  // records say which sizes asked for each stands for (requested_bytes). Operations without data run once, at 0 B.
  std::vector<std::uint64_t> plan_sizes(const std::vector<std::uint64_t>& requested, int world_size);
  // For the table view: the sizes asked for that are measured at another size ("" when none), e.g.
  // "alltoall on 3 ranks measures whole blocks (multiples of 3 B): 1, 2, 4 B as 3 B; 8 B as 6 B".
  std::string rounding_note(int world_size) const;
  Json options_json() const;
  void describe_configuration(Json& record, int world_size) const;
  std::string unsupported_reason(const Context& ctx) const;
  // What this rank holds at `bytes` (its send and receive buffers, the host image inputs are written
  // through, with --validate the host copy of what it received) and the counts of its call.
  SizeNeeds needs(const Context& ctx, std::size_t bytes) const;
  // Allocates and fills for `bytes`; throws Unsupported (counts beyond int, allocation failure, a call
  // this MPI library is known to crash in: gmb/known_issues.hpp).
  void setup(const Context& ctx, std::size_t bytes);
  void prepare(std::uint32_t seed);
  std::string verify(std::uint32_t seed);
  void teardown();

  // One blocking call; under NCCL, enqueued on the stream (complete() waits for it). With --rotate-offsets each
  // call moves to the next offset (prepare() goes back to the first, where validation writes and reads).
  void call();
  void complete() const;
  void start(MPI_Request* request) const { op_->start(args_, request); }
  // The persistent request of the current operation over this size's buffers (coll --persistent): MPI's code,
  // for mpi_refusal. The row must have an initialiser (op().init).
  int init(MPI_Request* request) const { return op_->init(args_, request); }
  // The function a call makes, as records name it ("MPI_Allreduce", "ncclAllReduce", "MPI_Iallreduce" in nbc,
  // "MPI_Allreduce_init" in coll's persistent form).
  std::string call_name() const;
  // Whether the calls are the persistent form (coll --persistent, from setup on: known crashes are those of it).
  void set_persistent(bool persistent) { persistent_ = persistent; }

  // Managed placements (coll --mem managed:device; docs/collectives.md): buffers are placed before
  // every call (untimed), and ranks that receive place what arrived after the call (timed).
  bool placed() const { return spec_root_.placement != Placement::none || spec_others_.placement != Placement::none; }
  bool uses_managed() const { return managed_; }  // a placeable kind: count page faults
  void place_buffers();
  void settle_received();
  // The launch cost of the device touch inside this rank's call: its own, when it receives and is
  // placed on the device (receiving ranks touch at the same time and wait for nobody).
  double launch_in_my_call(const LaunchCost& cost) const;

  const Collective& op() const { return *op_; }
  const std::string& transport() const { return transport_; }
  Dtype dtype() const { return dtype_; }
  // Bytes the operation moves in nccl-tests' sense (S * element size) at the current size.
  double op_bytes() const { return static_cast<double>(layout_.op_elems) * static_cast<double>(dtype_size(dtype_)); }
  static double op_bytes_for(const Collective& c, Dtype t, std::size_t bytes, int ranks);
  // The bus-bandwidth factor at the current size (busbw_factor: unequal counts by the busiest rank).
  double busbw_factor() const { return coll::busbw_factor(*op_, total_, ranks_, root_); }

 private:
  const MemorySpec& my_spec(int rank) const { return rank == root_ ? spec_root_ : spec_others_; }
  void describe_size(Json& record, int world_size) const;
  // --rotate-offsets: this rank's layout at the largest size of the sweep that can be laid out (what the
  // buffers span).
  Layout rotation_span(const Context& ctx) const;
  // Why this library is known to crash in the current operation at `bytes` (laid out in layout_), or "".
  std::string known_crash_here(const Context& ctx, std::size_t bytes) const;
  void upload(Buffer& b, const std::vector<unsigned char>& image) const;
  void download(std::vector<unsigned char>& image, const Buffer& b) const;

  const Collective* op_ = nullptr;
  std::vector<const Collective*> ops_;
  std::string mem_all_, mem_root_explicit_, mem_others_explicit_;
  std::string mem_root_ = "host", mem_others_ = "host";  // resolved by configure()
  MemorySpec spec_root_, spec_others_;                  // the same, parsed
  bool managed_ = false;
  int root_ = 0;
  bool in_place_ = false;
  bool nonblocking_ = false;         // the nbc benchmark: calls start requests
  bool persistent_ = false;          // coll --persistent, while its persistent form is measured
  bool run_known_crashes_ = false;   // --run-known-crashes
  std::string dtype_text_;
  Dtype dtype_ = Dtype::byte;
  std::string transport_ = "mpi";
  std::vector<MeasuredSize> sizes_;  // the current operation's, from plan_sizes
  bool rotate_offsets_ = false;      // --rotate-offsets
  std::shared_ptr<NcclComm> nccl_;  // under --transport nccl, from setup on
  std::optional<PathInfo> path_;    // among all ranks, from the first setup on (kinds are fixed)

  // Per size.
  const Platform* platform_ = nullptr;
  const MemoryKind* kind_ = nullptr;
  int rank_ = 0, ranks_ = 1;
  std::uint64_t total_ = 0;
  Layout layout_;
  std::unique_ptr<Buffer> send_, recv_;
  bool receives_ = false;  // whether this rank's receive buffer gets data
  // --rotate-offsets: calls cycle through `offsets_` positions `offset_stride_` bytes apart; `next_offset_` is the
  // position of the next call.
  std::size_t offsets_ = 1, offset_stride_ = 0, next_offset_ = 0;
  CallArgs args_;
  std::vector<unsigned char> scratch_;
};

}  // namespace gmb::coll
