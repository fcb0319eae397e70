// SPDX-License-Identifier: BSD-3-Clause
// Collectives as data (METHODOLOGY "Collectives" and "Non-blocking collectives and overlap").
//
// One table row per operation: how many elements each rank sends and receives for a size (v-variants
// with unequal counts), the blocking call, the non-blocking start, the bus-bandwidth factor, what NCCL
// offers for it and where every received element comes from (for --validate). The blocking benchmark
// (`coll`) and the non-blocking/overlap benchmark (`nbc`) iterate the same table, and
// `gmb-bench list --format json` describes it; adding an operation is one row (and, for a new NCCL
// call, its dispatch in src/nccl/nccl_module.cpp).
// Example followed: nccl-tests src/common.h (struct testColl) and doc/PERFORMANCE.md.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/memory.hpp"
#include "gmb/nccl.hpp"

namespace gmb::coll {

// Element types. Data-movement operations move bytes; reductions (MPI_SUM) use int, float or double.
enum class Dtype { byte, int32, float32, float64 };
std::size_t dtype_size(Dtype t);
const char* dtype_name(Dtype t);  // "byte", "int", "float", "double"
MPI_Datatype dtype_mpi(Dtype t);

// Where MPI allows MPI_IN_PLACE for an operation.
enum class InPlace { never, root_only, all };

// How an operation divides its size S among the ranks (docs/collectives.md, "The size convention").
enum class Split {
  none,          // no data (barrier)
  whole,         // every rank holds the whole vector of S (bcast, reduce, allreduce)
  equal_blocks,  // every rank's block is S / ranks (gather, allgather, scatter, alltoall, reduce_scatter_block ...)
  unequal,       // S split in proportion to 1, 2, ..., ranks (the v-variants, reduce_scatter)
};
const char* split_name(Split split);  // "none", "whole", "equal-blocks", "unequal"

// One rank's view of an operation at one size, in elements of the datatype.
struct Layout {
  std::uint64_t send_elems = 0, recv_elems = 0;  // buffer lengths this rank allocates
  int send_count = 0, recv_count = 0;            // the scalar counts of the regular calls
  // Per-peer counts and displacements (v-variants, alltoall(v), reduce_scatter).
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  // The size S of the operation in elements (nccl-tests' "size"); bandwidth = S * elem / time.
  std::uint64_t op_elems = 0;
  // Equal-block operations (gather, allgather, scatter, alltoall, reduce_scatter_block): the block each
  // rank exchanges with each peer, S / n (the size OSU's benchmarks sweep); 0 for the others.
  std::uint64_t block_elems = 0;
};

// A run of elements of a rank's receive buffer and where they come from: `length` elements at
// `dst_offset` equal rank `src_rank`'s input at `src_offset` on, or (reduce) the sum over all ranks'
// inputs at `src_offset` on. A rank's "input" is its logical send vector (what it would send when
// not in place).
struct Segment {
  std::uint64_t dst_offset = 0, length = 0;
  int src_rank = 0;  // ignored when reduce
  std::uint64_t src_offset = 0;
  bool reduce = false;
};

// Arguments of one call. In-place calls get MPI_IN_PLACE where the standard puts it.
struct CallArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  const Layout* layout = nullptr;
  MPI_Datatype type = MPI_BYTE;
  int root = 0, rank = 0;
  bool in_place = false;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// The bus-bandwidth factor (nccl-tests doc/PERFORMANCE.md): busbw = algbw * factor. Unequal counts have no factor of
// n alone: theirs comes from the counts used (busbw_factor).
struct BusBandwidth {
  const char* formula;  // the factor as nccl-tests writes it, "2(n-1)/n"; nullptr: no bandwidth (no data)
  double (*factor)(int ranks);  // nullptr: the busiest rank's share, from the counts (busbw_factor)
};

// What NCCL offers for an operation (the NCCL transport, --transport nccl).
struct NcclMapping {
  const char* call;     // "ncclAllReduce", "ncclSend/ncclRecv (grouped)"; nullptr when NCCL has none
  bool in_place;        // NCCL's in-place form means what MPI_IN_PLACE means for this operation
  const char* missing;  // why NCCL cannot run it, when call is nullptr
};

struct Collective {
  const char* name;             // "allreduce"
  const char* blocking_name;    // "MPI_Allreduce"
  const char* nonblocking_name; // "MPI_Iallreduce"; nullptr when MPI has none
  bool reduction;
  bool rooted;
  bool has_data;  // false for barrier
  InPlace in_place;
  Split split;
  // What `bytes` (S) is for this operation and which part of it each rank sends or receives: records and
  // `gmb-bench list --format json` carry it (counts_json).
  const char* counts;
  BusBandwidth busbw;
  NcclMapping nccl;
  // The layout of `rank` for `total` elements (total = floor(bytes / element size)).
  Layout (*layout)(std::uint64_t total, int rank, int ranks, int root, bool in_place);
  // What `rank`'s receive buffer holds after the call (checked by --validate).
  std::vector<Segment> (*received)(std::uint64_t total, int rank, int ranks, int root, bool in_place);
  // What `rank`'s receive buffer must hold before the call (in-place inputs; bcast's root data).
  std::vector<Segment> (*initial)(std::uint64_t total, int rank, int ranks, int root, bool in_place);
  void (*call)(const CallArgs& a);
  void (*start)(const CallArgs& a, MPI_Request* request);
  // The MPI-4.0 persistent initialiser ("MPI_Allreduce_init"; every operation has one) and the function making
  // it with MPI_INFO_NULL (coll --persistent). `init` returns MPI's code instead of checking it, so that a library
  // refusing it is reported (mpi_refusal), not fatal; nullptr where the engine was built without persistent
  // collectives (GMB_HAVE_MPI_PERSISTENT_COLLECTIVES, gmb/mpi_features.hpp).
  const char* persistent_name;
  int (*init)(const CallArgs& a, MPI_Request* request);
};

const std::vector<Collective>& collectives();
// The row, or nullptr.
const Collective* find_collective(const std::string& name);
// "bcast, reduce, ..." for messages.
std::string collective_names();
// Whether `rank` passes MPI_IN_PLACE when --in-place is asked for.
bool rank_is_in_place(const Collective& c, int rank, int root, bool in_place);
// {"split": split_name, "description": counts}: what the sizes of `c` mean, for records and the engine's description.
Json counts_json(const Collective& c);
// Why `bytes` cannot be measured as `c` on `ranks` ranks with elements of type `t`, or "": a size must be a whole,
// non-zero number of elements, and for equal blocks a whole number of elements per rank. Operations without data
// take any size. A sweep makes the sizes asked for whole first (whole_size): of those, only 0 B is refused.
std::string size_problem(const Collective& c, Dtype t, std::uint64_t bytes, int ranks);

// The size measured for `bytes` asked for (docs/collectives.md "The size convention"): the nearest whole size at or
// below it (a multiple of the element size, and for equal blocks of ranks x element size), or the smallest whole size
// where that is 0, as nccl-tests rounds its count. 0 stays 0 (no data asked for: refused by size_problem), and
// operations without data take any size.
std::uint64_t whole_size(const Collective& c, Dtype t, std::uint64_t bytes, int ranks);
// A size an operation measures and the sizes asked for that it stands for (several round to one: 1, 2 and 4 B of
// alltoall on 3 ranks are all measured as 3 B, once).
struct MeasuredSize {
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> requested;
};
// The sizes measured for the sizes asked for, each once, in the order first asked.
std::vector<MeasuredSize> measured_sizes(const Collective& c, Dtype t, const std::vector<std::uint64_t>& requested,
                                         int ranks);

// The bus-bandwidth factor of `c` at `total` elements: the row's nccl-tests factor of n where it has one, else (unequal
// counts) busiest_rank_share.
double busbw_factor(const Collective& c, std::uint64_t total, int ranks, int root);
// The busiest rank's share of S, from what `received` says every rank gets: the most elements a rank receives from the
// other ranks or has to send them (the distinct elements of its input they receive), over S. For equal blocks it is
// nccl-tests' (n-1)/n.
double busiest_rank_share(const Collective& c, std::uint64_t total, int ranks, int root);

// `total` elements split over `parts` unequally (part k proportional to k+1); the parts sum to total.
std::vector<std::uint64_t> unequal_split(std::uint64_t total, int parts);

// Input values: element i of rank r's input for `seed`. Bytes follow the memory pattern; typed
// values are small positive integers, so float sums are exact (and never negative: -1 is poison).
double input_value(Dtype t, int rank, std::uint64_t index, std::uint32_t seed);
// Writes / reads element `index` of a host array of type t.
void store_value(Dtype t, void* base, std::uint64_t index, double value);
double load_value(Dtype t, const void* base, std::uint64_t index);
// Host images: rank's send buffer, its receive buffer before the call (poison outside `initial`),
// and the expected receive buffer (checked only inside `received`).
std::vector<unsigned char> make_send_image(const Collective& c, const Layout& l, Dtype t, int rank, std::uint32_t seed);
std::vector<unsigned char> make_recv_image(const Collective& c, const Layout& l, Dtype t, std::uint64_t total, int rank,
                                           int ranks, int root, bool in_place, std::uint32_t seed);
double expected_value(Dtype t, const Segment& s, std::uint64_t k, int ranks, std::uint32_t seed);
// "" when `recv` (host copy of the receive buffer) holds what `received` says, else the first mismatch.
std::string check_received(const Collective& c, Dtype t, const unsigned char* recv, std::uint64_t total, int rank,
                           int ranks, int root, bool in_place, std::uint32_t seed);

// One overlapped operation on one rank (seconds): start, dummy compute (with its MPI_Test calls
// counted apart as `test`), wait; overall = init + compute + test + wait.
struct PhaseSample {
  double overall = 0, init = 0, compute = 0, test = 0, wait = 0;
};
// The figures of one compute point of nbc, from the medians (microseconds) of the slowest-rank samples: the
// phases of the overlapped operation besides gmb/overlap.hpp's figures.
struct OverlapFigures {
  double pure_us = 0, overall_us = 0, init_us = 0, compute_us = 0, test_us = 0, wait_us = 0;
  double overhead_us = 0, overlap_pct = 0;
  Json to_json() const;
};
// Overhead and overlap % as gmb/overlap.hpp computes them.
OverlapFigures overlap_figures(double pure_median_seconds, const std::vector<PhaseSample>& samples);

}  // namespace gmb::coll
