// SPDX-License-Identifier: BSD-3-Clause
// The collectives table (include/gmb/collectives.hpp): counts, calls, bus-bandwidth factors and
// expected data, one row per operation. Size convention (docs/collectives.md): `total` elements is
// the operation's size S as nccl-tests defines it; blocks are total / ranks, v-variants split total
// unequally.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gmb/collectives.hpp"
#include "gmb/error.hpp"
#include "gmb/overlap.hpp"
#include "gmb/stats.hpp"

namespace gmb::coll {

namespace {

int as_count(std::uint64_t v) {
  if (v > static_cast<std::uint64_t>(INT_MAX))
    throw Unsupported("an element count or displacement of " + std::to_string(v) +
                      " exceeds 2147483647, the per-call count of MPI-3 calls");
  return static_cast<int>(v);
}

std::vector<int> as_counts(const std::vector<std::uint64_t>& v) {
  std::vector<int> out;
  out.reserve(v.size());
  for (auto x : v) out.push_back(as_count(x));
  return out;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size());
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    d[k] = as_count(at);
    at += static_cast<std::uint64_t>(counts[k]);
  }
  return d;
}

double factor_one(int) { return 1.0; }
double factor_ring(int n) { return n > 0 ? static_cast<double>(n - 1) / n : 0.0; }
double factor_allreduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0.0; }
double factor_none(int) { return 0.0; }

// nccl-tests' bus-bandwidth factors, with the formula as its doc/PERFORMANCE.md writes it.
constexpr BusBandwidth kBusbwOne{"1", factor_one};
constexpr BusBandwidth kBusbwRing{"(n-1)/n", factor_ring};
constexpr BusBandwidth kBusbwAllreduce{"2(n-1)/n", factor_allreduce};
constexpr BusBandwidth kBusbwNone{nullptr, factor_none};
// Unequal counts: (n-1)/n assumes every rank moves the same share; the busiest rank moves more (busbw_factor).
constexpr BusBandwidth kBusbwBusiestRank{"busiest rank's bytes to or from the other ranks / S", nullptr};

// What NCCL offers. Its in-place forms (sendbuff == recvbuff, or the rank's block of recvbuff for
// allgather) mean what MPI_IN_PLACE means only where `in_place` says so; elsewhere the data sits at other
// offsets. Operations without an NCCL call run as one group of ncclSend/ncclRecv (as nccl-tests' alltoall).
constexpr NcclMapping nccl_call(const char* call, bool in_place) { return {call, in_place, nullptr}; }
constexpr NcclMapping kNcclGrouped{"ncclSend/ncclRecv (grouped)", false, nullptr};
constexpr NcclMapping nccl_none(const char* why) { return {nullptr, false, why}; }

const void* send_or_in_place(const CallArgs& a) { return a.in_place ? MPI_IN_PLACE : a.send; }
void* recv_or_in_place(const CallArgs& a) { return a.in_place ? MPI_IN_PLACE : a.recv; }

using Segments = std::vector<Segment>;

// ---- layouts ----------------------------------------------------------------------------------

Layout layout_bcast(std::uint64_t t, int, int, int, bool) {
  Layout l;
  l.recv_elems = t;
  l.recv_count = as_count(t);
  l.op_elems = t;
  return l;
}

Layout layout_reduce(std::uint64_t t, int rank, int, int root, bool) {
  Layout l;
  l.send_elems = t;
  l.recv_elems = rank == root ? t : 0;
  l.send_count = l.recv_count = as_count(t);
  l.op_elems = t;
  return l;
}

Layout layout_allreduce(std::uint64_t t, int, int, int, bool) {
  Layout l;
  l.send_elems = l.recv_elems = t;
  l.send_count = l.recv_count = as_count(t);
  l.op_elems = t;
  return l;
}

Layout layout_gather(std::uint64_t t, int rank, int n, int root, bool) {
  Layout l;
  const std::uint64_t b = t / n;
  l.block_elems = b;
  l.send_elems = b;
  l.recv_elems = rank == root ? b * n : 0;
  l.send_count = l.recv_count = as_count(b);
  l.op_elems = b * n;
  return l;
}

Layout layout_gatherv(std::uint64_t t, int rank, int n, int root, bool) {
  Layout l;
  const auto c = as_counts(unequal_split(t, n));
  l.send_elems = static_cast<std::uint64_t>(c[rank]);
  l.send_count = c[rank];
  if (rank == root) {
    l.recv_elems = t;
    l.recv_counts = c;
    l.recv_displs = displacements(c);
  }
  l.op_elems = t;
  return l;
}

Layout layout_allgather(std::uint64_t t, int, int n, int, bool) {
  Layout l;
  const std::uint64_t b = t / n;
  l.block_elems = b;
  l.send_elems = b;
  l.recv_elems = b * n;
  l.send_count = l.recv_count = as_count(b);
  l.op_elems = b * n;
  return l;
}

Layout layout_allgatherv(std::uint64_t t, int rank, int n, int, bool) {
  Layout l;
  const auto c = as_counts(unequal_split(t, n));
  l.send_elems = static_cast<std::uint64_t>(c[rank]);
  l.send_count = c[rank];
  l.recv_elems = t;
  l.recv_counts = c;
  l.recv_displs = displacements(c);
  l.op_elems = t;
  return l;
}

Layout layout_scatter(std::uint64_t t, int rank, int n, int root, bool) {
  Layout l;
  const std::uint64_t b = t / n;
  l.block_elems = b;
  l.send_elems = rank == root ? b * n : 0;
  l.recv_elems = b;
  l.send_count = l.recv_count = as_count(b);
  l.op_elems = b * n;
  return l;
}

Layout layout_scatterv(std::uint64_t t, int rank, int n, int root, bool) {
  Layout l;
  const auto c = as_counts(unequal_split(t, n));
  if (rank == root) {
    l.send_elems = t;
    l.send_counts = c;
    l.send_displs = displacements(c);
  }
  l.recv_elems = static_cast<std::uint64_t>(c[rank]);
  l.recv_count = c[rank];
  l.op_elems = t;
  return l;
}

Layout layout_alltoall(std::uint64_t t, int, int n, int, bool) {
  Layout l;
  const std::uint64_t b = t / n;
  l.block_elems = b;
  l.send_elems = l.recv_elems = b * n;
  l.send_count = l.recv_count = as_count(b);
  l.op_elems = b * n;
  return l;
}

// Rank r sends w[(r + k) % n] elements to rank k: a symmetric matrix, so what r sends to k is what
// r receives from k (which MPI_IN_PLACE alltoallv requires), and every rank sends and receives
// exactly `total` elements.
std::vector<int> alltoallv_counts(std::uint64_t t, int rank, int n) {
  const auto w = as_counts(unequal_split(t, n));
  std::vector<int> c(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) c[k] = w[(rank + k) % n];
  return c;
}

Layout layout_alltoallv(std::uint64_t t, int rank, int n, int, bool) {
  Layout l;
  l.send_counts = l.recv_counts = alltoallv_counts(t, rank, n);
  l.send_displs = l.recv_displs = displacements(l.send_counts);
  l.send_elems = l.recv_elems = t;
  l.op_elems = t;
  return l;
}

Layout layout_reduce_scatter(std::uint64_t t, int rank, int n, int, bool in_place) {
  Layout l;
  const auto c = as_counts(unequal_split(t, n));
  l.send_elems = t;
  l.recv_counts = c;
  l.recv_count = c[rank];
  l.recv_elems = in_place ? t : static_cast<std::uint64_t>(c[rank]);
  as_count(t);
  l.op_elems = t;
  return l;
}

Layout layout_reduce_scatter_block(std::uint64_t t, int, int n, int, bool in_place) {
  Layout l;
  const std::uint64_t b = t / n;
  l.block_elems = b;
  l.send_elems = b * n;
  l.recv_elems = in_place ? b * n : b;
  l.recv_count = as_count(b);
  as_count(b * n);
  l.op_elems = b * n;
  return l;
}

// MPI_Reduce_scatter with every count S / ranks, as OSU's osu_reduce_scatter calls it: reduce_scatter_block's
// layout, its block given as the count of every rank.
Layout layout_reduce_scatter_equal(std::uint64_t t, int rank, int n, int root, bool in_place) {
  Layout l = layout_reduce_scatter_block(t, rank, n, root, in_place);
  l.recv_counts.assign(static_cast<std::size_t>(n), l.recv_count);
  return l;
}

Layout layout_barrier(std::uint64_t, int, int, int, bool) { return Layout{}; }

// ---- what arrives (received) and what must be there before (initial) --------------------------

Segments none(std::uint64_t, int, int, int, bool) { return {}; }

Segments recv_bcast(std::uint64_t t, int, int, int root, bool) { return {{0, t, root, 0, false}}; }
Segments init_bcast(std::uint64_t t, int rank, int, int root, bool) {
  if (rank != root) return {};
  return {{0, t, root, 0, false}};
}

Segments recv_reduce(std::uint64_t t, int rank, int, int root, bool) {
  if (rank != root) return {};
  return {{0, t, 0, 0, true}};
}
Segments init_reduce(std::uint64_t t, int rank, int, int root, bool in_place) {
  if (!in_place || rank != root) return {};
  return {{0, t, rank, 0, false}};
}

Segments recv_allreduce(std::uint64_t t, int, int, int, bool) { return {{0, t, 0, 0, true}}; }
Segments init_allreduce(std::uint64_t t, int rank, int, int, bool in_place) {
  if (!in_place) return {};
  return {{0, t, rank, 0, false}};
}

// Blocks of rank k at offset d[k], length c[k], from k's input at 0 (gather, allgather and v).
Segments gathered(const std::vector<std::uint64_t>& c) {
  Segments s;
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    s.push_back({at, c[k], static_cast<int>(k), 0, false});
    at += c[k];
  }
  return s;
}
std::vector<std::uint64_t> equal_blocks(std::uint64_t t, int n) { return std::vector<std::uint64_t>(n, t / n); }

Segments recv_gather(std::uint64_t t, int rank, int n, int root, bool) {
  return rank == root ? gathered(equal_blocks(t, n)) : Segments{};
}
Segments init_gather(std::uint64_t t, int rank, int n, int root, bool in_place) {
  if (!in_place || rank != root) return {};
  return {gathered(equal_blocks(t, n))[root]};
}
Segments recv_gatherv(std::uint64_t t, int rank, int n, int root, bool) {
  return rank == root ? gathered(unequal_split(t, n)) : Segments{};
}
Segments init_gatherv(std::uint64_t t, int rank, int n, int root, bool in_place) {
  if (!in_place || rank != root) return {};
  return {gathered(unequal_split(t, n))[root]};
}
Segments recv_allgather(std::uint64_t t, int, int n, int, bool) { return gathered(equal_blocks(t, n)); }
Segments init_allgather(std::uint64_t t, int rank, int n, int, bool in_place) {
  if (!in_place) return {};
  return {gathered(equal_blocks(t, n))[rank]};
}
Segments recv_allgatherv(std::uint64_t t, int, int n, int, bool) { return gathered(unequal_split(t, n)); }
Segments init_allgatherv(std::uint64_t t, int rank, int n, int, bool in_place) {
  if (!in_place) return {};
  return {gathered(unequal_split(t, n))[rank]};
}

Segments recv_scatter(std::uint64_t t, int rank, int n, int root, bool in_place) {
  if (in_place && rank == root) return {};  // the root's block stays in its send buffer
  const std::uint64_t b = t / n;
  return {{0, b, root, b * rank, false}};
}
Segments recv_scatterv(std::uint64_t t, int rank, int n, int root, bool in_place) {
  if (in_place && rank == root) return {};
  const auto c = unequal_split(t, n);
  std::uint64_t at = 0;
  for (int k = 0; k < rank; ++k) at += c[k];
  return {{0, c[rank], root, at, false}};
}

Segments recv_alltoall(std::uint64_t t, int rank, int n, int, bool) {
  const std::uint64_t b = t / n;
  Segments s;
  for (int k = 0; k < n; ++k) s.push_back({b * k, b, k, b * rank, false});
  return s;
}
Segments init_whole_input(std::uint64_t t, int rank, int, int, bool in_place) {
  if (!in_place) return {};
  return {{0, t, rank, 0, false}};
}
Segments init_alltoall(std::uint64_t t, int rank, int n, int, bool in_place) {
  if (!in_place) return {};
  return {{0, (t / n) * n, rank, 0, false}};
}
Segments recv_alltoallv(std::uint64_t t, int rank, int n, int, bool) {
  const auto w = unequal_split(t, n);
  // upto[i]: the sum of the parts w[j mod n] for j < i, over two turns of the parts
  std::vector<std::uint64_t> upto(2 * static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t i = 0; i + 1 < upto.size(); ++i) upto[i + 1] = upto[i] + w[i % static_cast<std::size_t>(n)];
  Segments s;
  std::uint64_t dst = 0;
  for (int k = 0; k < n; ++k) {
    // Rank k's displacement for destination `rank`: the sum of what k sends to ranks before it.
    const std::uint64_t src = upto[static_cast<std::size_t>(k + rank)] - upto[static_cast<std::size_t>(k)];
    const std::uint64_t len = w[(rank + k) % n];
    s.push_back({dst, len, k, src, false});
    dst += len;
  }
  return s;
}

Segments recv_reduce_scatter(std::uint64_t t, int rank, int n, int, bool) {
  const auto c = unequal_split(t, n);
  std::uint64_t at = 0;
  for (int k = 0; k < rank; ++k) at += c[k];
  return {{0, c[rank], 0, at, true}};
}
Segments recv_reduce_scatter_block(std::uint64_t t, int rank, int n, int, bool) {
  const std::uint64_t b = t / n;
  return {{0, b, 0, b * rank, true}};
}
Segments init_reduce_scatter_block(std::uint64_t t, int rank, int n, int, bool in_place) {
  if (!in_place) return {};
  return {{0, (t / n) * n, rank, 0, false}};
}

// ---- calls --------------------------------------------------------------------------------------

// Each operation once, blocking (NB false, request unused) or non-blocking.
template <bool NB>
void bcast(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB) GMB_MPI_CHECK(MPI_Ibcast(a.recv, l.recv_count, a.type, a.root, a.comm, r));
  else GMB_MPI_CHECK(MPI_Bcast(a.recv, l.recv_count, a.type, a.root, a.comm));
}
template <bool NB>
void reduce(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB) GMB_MPI_CHECK(MPI_Ireduce(send_or_in_place(a), a.recv, l.send_count, a.type, MPI_SUM, a.root, a.comm, r));
  else GMB_MPI_CHECK(MPI_Reduce(send_or_in_place(a), a.recv, l.send_count, a.type, MPI_SUM, a.root, a.comm));
}
template <bool NB>
void allreduce(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB) GMB_MPI_CHECK(MPI_Iallreduce(send_or_in_place(a), a.recv, l.recv_count, a.type, MPI_SUM, a.comm, r));
  else GMB_MPI_CHECK(MPI_Allreduce(send_or_in_place(a), a.recv, l.recv_count, a.type, MPI_SUM, a.comm));
}
template <bool NB>
void gather(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Igather(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.root, a.comm, r));
  else GMB_MPI_CHECK(MPI_Gather(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.root, a.comm));
}
template <bool NB>
void gatherv(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Igatherv(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(),
                               l.recv_displs.data(), a.type, a.root, a.comm, r));
  else
    GMB_MPI_CHECK(MPI_Gatherv(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(),
                              l.recv_displs.data(), a.type, a.root, a.comm));
}
template <bool NB>
void allgather(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Iallgather(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm, r));
  else GMB_MPI_CHECK(MPI_Allgather(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm));
}
template <bool NB>
void allgatherv(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Iallgatherv(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(),
                                  l.recv_displs.data(), a.type, a.comm, r));
  else
    GMB_MPI_CHECK(MPI_Allgatherv(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(),
                                 l.recv_displs.data(), a.type, a.comm));
}
template <bool NB>
void scatter(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Iscatter(a.send, l.send_count, a.type, recv_or_in_place(a), l.recv_count, a.type, a.root, a.comm, r));
  else GMB_MPI_CHECK(MPI_Scatter(a.send, l.send_count, a.type, recv_or_in_place(a), l.recv_count, a.type, a.root, a.comm));
}
template <bool NB>
void scatterv(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Iscatterv(a.send, l.send_counts.data(), l.send_displs.data(), a.type, recv_or_in_place(a),
                                l.recv_count, a.type, a.root, a.comm, r));
  else
    GMB_MPI_CHECK(MPI_Scatterv(a.send, l.send_counts.data(), l.send_displs.data(), a.type, recv_or_in_place(a),
                               l.recv_count, a.type, a.root, a.comm));
}
template <bool NB>
void alltoall(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Ialltoall(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm, r));
  else GMB_MPI_CHECK(MPI_Alltoall(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm));
}
template <bool NB>
void alltoallv(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Ialltoallv(send_or_in_place(a), l.send_counts.data(), l.send_displs.data(), a.type, a.recv,
                                 l.recv_counts.data(), l.recv_displs.data(), a.type, a.comm, r));
  else
    GMB_MPI_CHECK(MPI_Alltoallv(send_or_in_place(a), l.send_counts.data(), l.send_displs.data(), a.type, a.recv,
                                l.recv_counts.data(), l.recv_displs.data(), a.type, a.comm));
}
template <bool NB>
void reduce_scatter(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Ireduce_scatter(send_or_in_place(a), a.recv, l.recv_counts.data(), a.type, MPI_SUM, a.comm, r));
  else GMB_MPI_CHECK(MPI_Reduce_scatter(send_or_in_place(a), a.recv, l.recv_counts.data(), a.type, MPI_SUM, a.comm));
}
template <bool NB>
void reduce_scatter_block(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  if constexpr (NB)
    GMB_MPI_CHECK(MPI_Ireduce_scatter_block(send_or_in_place(a), a.recv, l.recv_count, a.type, MPI_SUM, a.comm, r));
  else GMB_MPI_CHECK(MPI_Reduce_scatter_block(send_or_in_place(a), a.recv, l.recv_count, a.type, MPI_SUM, a.comm));
}
template <bool NB>
void barrier(const CallArgs& a, MPI_Request* r) {
  if constexpr (NB) GMB_MPI_CHECK(MPI_Ibarrier(a.comm, r));
  else GMB_MPI_CHECK(MPI_Barrier(a.comm));
}

template <void (*F)(const CallArgs&, MPI_Request*)>
void blocking(const CallArgs& a) {
  F(a, nullptr);
}

#define GMB_COLL_CALLS(f) blocking<f<false>>, f<true>

// Persistent initialisers (MPI-4.0, coll --persistent): the non-blocking call's arguments and MPI_INFO_NULL.
// They return MPI's code: the caller makes them with errors returned (mpi_refusal), so that a library that
// refuses one is recorded unsupported with its words. The count and displacement arrays stay in the Layout,
// untouched until the request is freed, as MPI requires of persistent requests.
#if GMB_HAVE_MPI_PERSISTENT_COLLECTIVES
int bcast_init(const CallArgs& a, MPI_Request* r) {
  return MPI_Bcast_init(a.recv, a.layout->recv_count, a.type, a.root, a.comm, MPI_INFO_NULL, r);
}
int reduce_init(const CallArgs& a, MPI_Request* r) {
  return MPI_Reduce_init(send_or_in_place(a), a.recv, a.layout->send_count, a.type, MPI_SUM, a.root, a.comm,
                         MPI_INFO_NULL, r);
}
int allreduce_init(const CallArgs& a, MPI_Request* r) {
  return MPI_Allreduce_init(send_or_in_place(a), a.recv, a.layout->recv_count, a.type, MPI_SUM, a.comm, MPI_INFO_NULL, r);
}
int gather_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Gather_init(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.root, a.comm,
                         MPI_INFO_NULL, r);
}
int gatherv_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Gatherv_init(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(), l.recv_displs.data(),
                          a.type, a.root, a.comm, MPI_INFO_NULL, r);
}
int allgather_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Allgather_init(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm,
                            MPI_INFO_NULL, r);
}
int allgatherv_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Allgatherv_init(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_counts.data(),
                             l.recv_displs.data(), a.type, a.comm, MPI_INFO_NULL, r);
}
int scatter_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Scatter_init(a.send, l.send_count, a.type, recv_or_in_place(a), l.recv_count, a.type, a.root, a.comm,
                          MPI_INFO_NULL, r);
}
int scatterv_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Scatterv_init(a.send, l.send_counts.data(), l.send_displs.data(), a.type, recv_or_in_place(a), l.recv_count,
                           a.type, a.root, a.comm, MPI_INFO_NULL, r);
}
int alltoall_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Alltoall_init(send_or_in_place(a), l.send_count, a.type, a.recv, l.recv_count, a.type, a.comm,
                           MPI_INFO_NULL, r);
}
int alltoallv_init(const CallArgs& a, MPI_Request* r) {
  const Layout& l = *a.layout;
  return MPI_Alltoallv_init(send_or_in_place(a), l.send_counts.data(), l.send_displs.data(), a.type, a.recv,
                            l.recv_counts.data(), l.recv_displs.data(), a.type, a.comm, MPI_INFO_NULL, r);
}
int reduce_scatter_init(const CallArgs& a, MPI_Request* r) {
  return MPI_Reduce_scatter_init(send_or_in_place(a), a.recv, a.layout->recv_counts.data(), a.type, MPI_SUM, a.comm,
                                 MPI_INFO_NULL, r);
}
int reduce_scatter_block_init(const CallArgs& a, MPI_Request* r) {
  return MPI_Reduce_scatter_block_init(send_or_in_place(a), a.recv, a.layout->recv_count, a.type, MPI_SUM, a.comm,
                                       MPI_INFO_NULL, r);
}
int barrier_init(const CallArgs& a, MPI_Request* r) { return MPI_Barrier_init(a.comm, MPI_INFO_NULL, r); }
#define GMB_COLL_INIT(name, f) name, f
#else
#define GMB_COLL_INIT(name, f) name, nullptr
#endif

}  // namespace

const std::vector<Collective>& collectives() {
  // clang-format off
  static const std::vector<Collective> table = {
    // name, blocking, non-blocking, reduction, rooted, has_data, in-place, split, counts, busbw factor, NCCL,
    //   layout, received, initial, calls, persistent initialiser
    {"bcast", "MPI_Bcast", "MPI_Ibcast", false, true, true, InPlace::never, Split::whole,
     "bytes = S, the vector the root sends; every rank receives all of it", kBusbwOne, nccl_call("ncclBroadcast", false),
     layout_bcast, recv_bcast, init_bcast, GMB_COLL_CALLS(bcast),
     GMB_COLL_INIT("MPI_Bcast_init", bcast_init)},
    {"reduce", "MPI_Reduce", "MPI_Ireduce", true, true, true, InPlace::root_only, Split::whole,
     "bytes = S, the vector every rank contributes; the root receives their element-wise sum", kBusbwOne,
     nccl_call("ncclReduce", true), layout_reduce, recv_reduce, init_reduce, GMB_COLL_CALLS(reduce),
     GMB_COLL_INIT("MPI_Reduce_init", reduce_init)},
    {"allreduce", "MPI_Allreduce", "MPI_Iallreduce", true, false, true, InPlace::all, Split::whole,
     "bytes = S, the vector every rank contributes; every rank receives the element-wise sum", kBusbwAllreduce,
     nccl_call("ncclAllReduce", true), layout_allreduce, recv_allreduce, init_allreduce, GMB_COLL_CALLS(allreduce),
     GMB_COLL_INIT("MPI_Allreduce_init", allreduce_init)},
    {"gather", "MPI_Gather", "MPI_Igather", false, true, true, InPlace::root_only, Split::equal_blocks,
     "bytes = S, the root's gathered result; every rank contributes an equal block of S/ranks", kBusbwRing,
     kNcclGrouped, layout_gather, recv_gather, init_gather, GMB_COLL_CALLS(gather),
     GMB_COLL_INIT("MPI_Gather_init", gather_init)},
    {"gatherv", "MPI_Gatherv", "MPI_Igatherv", false, true, true, InPlace::root_only, Split::unequal,
     "bytes = S, the root's gathered result; unequal counts: rank k contributes part k of S split in proportion to "
     "1, 2, ..., ranks", kBusbwBusiestRank, kNcclGrouped,
     layout_gatherv, recv_gatherv, init_gatherv, GMB_COLL_CALLS(gatherv),
     GMB_COLL_INIT("MPI_Gatherv_init", gatherv_init)},
    {"allgather", "MPI_Allgather", "MPI_Iallgather", false, false, true, InPlace::all, Split::equal_blocks,
     "bytes = S, every rank's gathered result; every rank contributes an equal block of S/ranks", kBusbwRing,
     nccl_call("ncclAllGather", true), layout_allgather, recv_allgather, init_allgather, GMB_COLL_CALLS(allgather),
     GMB_COLL_INIT("MPI_Allgather_init", allgather_init)},
    {"allgatherv", "MPI_Allgatherv", "MPI_Iallgatherv", false, false, true, InPlace::all, Split::unequal,
     "bytes = S, every rank's gathered result; unequal counts: rank k contributes part k of S split in proportion "
     "to 1, 2, ..., ranks", kBusbwBusiestRank, kNcclGrouped,
     layout_allgatherv, recv_allgatherv, init_allgatherv, GMB_COLL_CALLS(allgatherv),
     GMB_COLL_INIT("MPI_Allgatherv_init", allgatherv_init)},
    {"scatter", "MPI_Scatter", "MPI_Iscatter", false, true, true, InPlace::root_only, Split::equal_blocks,
     "bytes = S, the root's send buffer; every rank receives an equal block of S/ranks", kBusbwRing, kNcclGrouped,
     layout_scatter, recv_scatter, none, GMB_COLL_CALLS(scatter),
     GMB_COLL_INIT("MPI_Scatter_init", scatter_init)},
    {"scatterv", "MPI_Scatterv", "MPI_Iscatterv", false, true, true, InPlace::root_only, Split::unequal,
     "bytes = S, the root's send buffer; unequal counts: rank k receives part k of S split in proportion to 1, 2, "
     "..., ranks", kBusbwBusiestRank, kNcclGrouped,
     layout_scatterv, recv_scatterv, none, GMB_COLL_CALLS(scatterv),
     GMB_COLL_INIT("MPI_Scatterv_init", scatterv_init)},
    {"alltoall", "MPI_Alltoall", "MPI_Ialltoall", false, false, true, InPlace::all, Split::equal_blocks,
     "bytes = S, each rank's send buffer (and receive buffer); every rank sends an equal block of S/ranks to each "
     "rank", kBusbwRing, kNcclGrouped,
     layout_alltoall, recv_alltoall, init_alltoall, GMB_COLL_CALLS(alltoall),
     GMB_COLL_INIT("MPI_Alltoall_init", alltoall_init)},
    {"alltoallv", "MPI_Alltoallv", "MPI_Ialltoallv", false, false, true, InPlace::all, Split::unequal,
     "bytes = S, each rank's send buffer (and receive buffer); unequal counts: S split in proportion to 1, 2, ..., "
     "ranks, rank r sends part (r+k) mod ranks to rank k", kBusbwBusiestRank, kNcclGrouped,
     layout_alltoallv, recv_alltoallv, init_whole_input, GMB_COLL_CALLS(alltoallv),
     GMB_COLL_INIT("MPI_Alltoallv_init", alltoallv_init)},
    {"reduce_scatter", "MPI_Reduce_scatter", "MPI_Ireduce_scatter", true, false, true, InPlace::all, Split::unequal,
     "bytes = S, each rank's input; unequal counts: rank k receives part k of the element-wise sum, S split in "
     "proportion to 1, 2, ..., ranks (osu_reduce_scatter's equal counts: reduce_scatter_equal)", kBusbwBusiestRank,
     nccl_none("NCCL has no reduce-scatter with unequal counts (ncclReduceScatter gives every rank the same count: "
               "use reduce_scatter_equal or reduce_scatter_block)"),
     layout_reduce_scatter, recv_reduce_scatter, init_whole_input, GMB_COLL_CALLS(reduce_scatter),
     GMB_COLL_INIT("MPI_Reduce_scatter_init", reduce_scatter_init)},
    {"reduce_scatter_equal", "MPI_Reduce_scatter", "MPI_Ireduce_scatter", true, false, true, InPlace::all,
     Split::equal_blocks,
     "bytes = S, each rank's input; MPI_Reduce_scatter with equal counts (as osu_reduce_scatter calls it): every "
     "rank receives an equal block of S/ranks of the element-wise sum", kBusbwRing,
     nccl_call("ncclReduceScatter", false), layout_reduce_scatter_equal, recv_reduce_scatter_block,
     init_reduce_scatter_block, GMB_COLL_CALLS(reduce_scatter),
     GMB_COLL_INIT("MPI_Reduce_scatter_init", reduce_scatter_init)},
    {"reduce_scatter_block", "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", true, false, true, InPlace::all,
     Split::equal_blocks,
     "bytes = S, each rank's input; every rank receives an equal block of S/ranks of the element-wise sum",
     kBusbwRing, nccl_call("ncclReduceScatter", false), layout_reduce_scatter_block, recv_reduce_scatter_block,
     init_reduce_scatter_block, GMB_COLL_CALLS(reduce_scatter_block),
     GMB_COLL_INIT("MPI_Reduce_scatter_block_init", reduce_scatter_block_init)},
    {"barrier", "MPI_Barrier", "MPI_Ibarrier", false, false, false, InPlace::never, Split::none,
     "no data: bytes is 0", kBusbwNone, nccl_none("NCCL has no barrier"), layout_barrier, none, none,
     GMB_COLL_CALLS(barrier), GMB_COLL_INIT("MPI_Barrier_init", barrier_init)},
  };
  // clang-format on
  return table;
}

#undef GMB_COLL_CALLS
#undef GMB_COLL_INIT

const Collective* find_collective(const std::string& name) {
  for (const auto& c : collectives())
    if (name == c.name) return &c;
  return nullptr;
}

std::string collective_names() {
  std::string s;
  for (const auto& c : collectives()) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

bool rank_is_in_place(const Collective& c, int rank, int root, bool in_place) {
  if (!in_place) return false;
  switch (c.in_place) {
    case InPlace::never: return false;
    case InPlace::root_only: return rank == root;
    case InPlace::all: return true;
  }
  return false;
}

const char* split_name(Split split) {
  switch (split) {
    case Split::none: return "none";
    case Split::whole: return "whole";
    case Split::equal_blocks: return "equal-blocks";
    case Split::unequal: return "unequal";
  }
  return "?";
}

Json counts_json(const Collective& c) {
  return Json::object().set("split", split_name(c.split)).set("description", c.counts);
}

std::string size_problem(const Collective& c, Dtype t, std::uint64_t bytes, int ranks) {
  if (c.split == Split::none || (bytes > 0 && whole_size(c, t, bytes, ranks) == bytes)) return "";
  const std::uint64_t element = dtype_size(t);
  const bool per_rank = c.split == Split::equal_blocks;
  const std::uint64_t unit = whole_size(c, t, 1, ranks);
  const std::string elements =
      std::to_string(element) + "-byte " + (t == Dtype::byte ? std::string("MPI_BYTE") : dtype_name(t)) + " elements";
  std::string what;
  if (bytes == 0) what = "0 B gives " + std::string(c.name) + " no elements";
  else if (bytes % element != 0) what = std::to_string(bytes) + " B is not a whole number of " + elements;
  else
    what = std::to_string(bytes) + " B (" + std::to_string(bytes / element) + " " + elements + ") does not split into " +
           std::to_string(ranks) + " equal blocks of whole elements, one per rank";
  std::string accepted = "accepted for " + std::string(c.name) + (per_rank ? " on " + std::to_string(ranks) + " ranks" : "") +
                         ": a non-zero multiple of " + std::to_string(unit) + " B";
  if (per_rank) accepted += " (" + std::to_string(ranks) + " ranks x " + std::to_string(element) + " B)";
  if (unit == 1) accepted = "accepted for " + std::string(c.name) + ": 1 B or more";
  else accepted += "; a sweep measures any other non-zero size at the nearest one";
  return what + " (" + accepted + ")";
}

std::uint64_t whole_size(const Collective& c, Dtype t, std::uint64_t bytes, int ranks) {
  if (c.split == Split::none || bytes == 0) return bytes;
  // The smallest whole size, of which every whole size is a multiple: one element, or one element per rank.
  const std::uint64_t unit = dtype_size(t) * (c.split == Split::equal_blocks ? static_cast<std::uint64_t>(ranks) : 1);
  return std::max<std::uint64_t>(bytes / unit, 1) * unit;
}

std::vector<MeasuredSize> measured_sizes(const Collective& c, Dtype t, const std::vector<std::uint64_t>& requested,
                                         int ranks) {
  std::vector<MeasuredSize> out;
  for (const std::uint64_t asked : requested) {
    const std::uint64_t bytes = whole_size(c, t, asked, ranks);
    auto same = std::find_if(out.begin(), out.end(), [&](const MeasuredSize& m) { return m.bytes == bytes; });
    if (same == out.end()) out.push_back({bytes, {asked}});
    else same->requested.push_back(asked);
  }
  return out;
}

double busbw_factor(const Collective& c, std::uint64_t total, int ranks, int root) {
  return c.busbw.factor ? c.busbw.factor(ranks) : busiest_rank_share(c, total, ranks, root);
}

double busiest_rank_share(const Collective& c, std::uint64_t total, int ranks, int root) {
  // Per rank: the elements it receives from the other ranks, and the distinct elements of its input the other ranks
  // receive (each leaves it at least once; a ring or a tree forwards what several ranks need). A reduction's
  // result needs every other rank's input over its span: one reduced element per element received.
  std::vector<std::uint64_t> in(static_cast<std::size_t>(ranks), 0);
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> read(static_cast<std::size_t>(ranks));
  auto read_from = [&](int k, std::uint64_t from, std::uint64_t length) {
    auto& spans = read[static_cast<std::size_t>(k)];
    // Receivers are visited in rank order and mostly read adjacent or equal spans: keep them merged as they come.
    if (!spans.empty() && from <= spans.back().second && from + length >= spans.back().first)
      spans.back() = {std::min(spans.back().first, from), std::max(spans.back().second, from + length)};
    else if (length > 0)
      spans.push_back({from, from + length});
  };
  for (int r = 0; r < ranks; ++r) {
    for (const Segment& s : c.received(total, r, ranks, root, false)) {
      if (!s.reduce && s.src_rank == r) continue;  // its own input, moved inside the rank
      in[static_cast<std::size_t>(r)] += s.length;
      if (!s.reduce) read_from(s.src_rank, s.src_offset, s.length);
      else
        for (int k = 0; k < ranks; ++k)
          if (k != r) read_from(k, s.src_offset, s.length);
    }
  }
  std::uint64_t busiest = *std::max_element(in.begin(), in.end());
  for (auto& spans : read) {
    std::sort(spans.begin(), spans.end());
    std::uint64_t distinct = 0, end = 0;
    for (const auto& [from, to] : spans) {
      if (to > end) distinct += to - std::max(from, end);
      end = std::max(end, to);
    }
    busiest = std::max(busiest, distinct);
  }
  const std::uint64_t size = c.layout(total, 0, ranks, root, false).op_elems;
  return size ? static_cast<double>(busiest) / static_cast<double>(size) : 0.0;
}

std::vector<std::uint64_t> unequal_split(std::uint64_t total, int parts) {
  // Cumulative share of parts 0..k is (k+1)(k+2) / (n(n+1)) of the total, rounded down.
  std::vector<std::uint64_t> out(static_cast<std::size_t>(parts));
  const unsigned __int128 denominator = static_cast<unsigned __int128>(parts) * (parts + 1);
  std::uint64_t before = 0;
  for (int k = 0; k < parts; ++k) {
    const unsigned __int128 upto = static_cast<unsigned __int128>(total) * (k + 1) * (k + 2) / denominator;
    out[k] = static_cast<std::uint64_t>(upto) - before;
    before = static_cast<std::uint64_t>(upto);
  }
  return out;
}

// ---- data -------------------------------------------------------------------------------------

std::size_t dtype_size(Dtype t) {
  switch (t) {
    case Dtype::byte: return 1;
    case Dtype::int32: return 4;
    case Dtype::float32: return 4;
    case Dtype::float64: return 8;
  }
  return 1;
}

const char* dtype_name(Dtype t) {
  switch (t) {
    case Dtype::byte: return "byte";
    case Dtype::int32: return "int";
    case Dtype::float32: return "float";
    case Dtype::float64: return "double";
  }
  return "?";
}

MPI_Datatype dtype_mpi(Dtype t) {
  switch (t) {
    case Dtype::byte: return MPI_BYTE;
    case Dtype::int32: return MPI_INT;
    case Dtype::float32: return MPI_FLOAT;
    case Dtype::float64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

double input_value(Dtype t, int rank, std::uint64_t index, std::uint32_t seed) {
  if (t == Dtype::byte) return pattern_byte(index, seed * 7919u + static_cast<std::uint32_t>(rank));
  // 1..97: a sum over up to 170,000 ranks stays below 2^24, exact in float.
  return static_cast<double>((index * 7u + static_cast<std::uint64_t>(rank) * 13u + seed * 5ull) % 97u + 1u);
}

void store_value(Dtype t, void* base, std::uint64_t index, double value) {
  switch (t) {
    case Dtype::byte: static_cast<std::uint8_t*>(base)[index] = static_cast<std::uint8_t>(value); break;
    case Dtype::int32: static_cast<std::int32_t*>(base)[index] = static_cast<std::int32_t>(value); break;
    case Dtype::float32: static_cast<float*>(base)[index] = static_cast<float>(value); break;
    case Dtype::float64: static_cast<double*>(base)[index] = value; break;
  }
}

double load_value(Dtype t, const void* base, std::uint64_t index) {
  switch (t) {
    case Dtype::byte: return static_cast<const std::uint8_t*>(base)[index];
    case Dtype::int32: return static_cast<const std::int32_t*>(base)[index];
    case Dtype::float32: return static_cast<const float*>(base)[index];
    case Dtype::float64: return static_cast<const double*>(base)[index];
  }
  return 0;
}

double expected_value(Dtype t, const Segment& s, std::uint64_t k, int ranks, std::uint32_t seed) {
  if (!s.reduce) return input_value(t, s.src_rank, s.src_offset + k, seed);
  double sum = 0;
  for (int r = 0; r < ranks; ++r) sum += input_value(t, r, s.src_offset + k, seed);
  return sum;
}

std::vector<unsigned char> make_send_image(const Collective&, const Layout& l, Dtype t, int rank, std::uint32_t seed) {
  std::vector<unsigned char> image(l.send_elems * dtype_size(t));
  for (std::uint64_t i = 0; i < l.send_elems; ++i) store_value(t, image.data(), i, input_value(t, rank, i, seed));
  return image;
}

std::vector<unsigned char> make_recv_image(const Collective& c, const Layout& l, Dtype t, std::uint64_t total, int rank,
                                           int ranks, int root, bool in_place, std::uint32_t seed) {
  std::vector<unsigned char> image(l.recv_elems * dtype_size(t));
  // Poison: typed data gets -1 (inputs and sums are positive); bytes get 0x5A, and the complement
  // of the expected byte where data must arrive, so that nothing passes unless it was written.
  for (std::uint64_t i = 0; i < l.recv_elems; ++i) store_value(t, image.data(), i, t == Dtype::byte ? 0x5A : -1.0);
  if (t == Dtype::byte)
    for (const auto& s : c.received(total, rank, ranks, root, in_place))
      for (std::uint64_t k = 0; k < s.length; ++k)
        image[s.dst_offset + k] = static_cast<unsigned char>(~static_cast<unsigned>(expected_value(t, s, k, ranks, seed)));
  for (const auto& s : c.initial(total, rank, ranks, root, in_place))
    for (std::uint64_t k = 0; k < s.length; ++k)
      store_value(t, image.data(), s.dst_offset + k, expected_value(t, s, k, ranks, seed));
  return image;
}

std::string check_received(const Collective& c, Dtype t, const unsigned char* recv, std::uint64_t total, int rank,
                           int ranks, int root, bool in_place, std::uint32_t seed) {
  for (const auto& s : c.received(total, rank, ranks, root, in_place)) {
    for (std::uint64_t k = 0; k < s.length; ++k) {
      const double want = expected_value(t, s, k, ranks, seed);
      const double got = load_value(t, recv, s.dst_offset + k);
      if (got != want) {
        std::string from = s.reduce ? "the sum over all ranks of element " + std::to_string(s.src_offset + k)
                                    : "rank " + std::to_string(s.src_rank) + "'s element " + std::to_string(s.src_offset + k);
        char values[96];
        std::snprintf(values, sizeof values, "%.17g, expected %.17g", got, want);
        return "rank " + std::to_string(rank) + ": " + c.name + " receive element " + std::to_string(s.dst_offset + k) +
               " (" + from + ") is " + values;
      }
    }
  }
  return "";
}

Json OverlapFigures::to_json() const {
  return Json::object()
      .set("pure_us", pure_us)
      .set("overall_us", overall_us)
      .set("init_us", init_us)
      .set("compute_us", compute_us)
      .set("test_us", test_us)
      .set("wait_us", wait_us)
      .set("overhead_us", overhead_us)
      .set("overlap_pct", overlap_pct);
}

OverlapFigures overlap_figures(double pure_median_seconds, const std::vector<PhaseSample>& samples) {
  auto median_us = [&](double PhaseSample::*field) {
    std::vector<double> v;
    v.reserve(samples.size());
    for (const auto& s : samples) v.push_back(s.*field * 1e6);
    return summarize(std::move(v)).median;
  };
  OverlapFigures f;
  f.pure_us = pure_median_seconds * 1e6;
  f.overall_us = median_us(&PhaseSample::overall);
  f.init_us = median_us(&PhaseSample::init);
  f.compute_us = median_us(&PhaseSample::compute);
  f.test_us = median_us(&PhaseSample::test);
  f.wait_us = median_us(&PhaseSample::wait);
  f.overhead_us = overlap::overhead(f.overall_us, f.pure_us);
  f.overlap_pct = overlap::percent(f.overall_us, f.compute_us, f.pure_us);
  return f;
}

}  // namespace gmb::coll
