// SPDX-License-Identifier: BSD-3-Clause
// The collectives table: counts (v-variants on odd rank counts), bus-bandwidth factors, expected
// data, and the overlap arithmetic on known timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "gmb/coll_operands.hpp"
#include "gmb/overlap.hpp"

using namespace gmb::coll;

namespace {

const Collective& op(const char* name) {
  const Collective* c = find_collective(name);
  EXPECT_NE(c, nullptr) << name;
  return *c;
}

std::uint64_t sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); }

}  // namespace

TEST(Collectives, TableHasEveryOperationOnce) {
  const char* names[] = {"bcast",     "reduce",    "allreduce", "gather",    "gatherv",        "allgather",
                         "allgatherv", "scatter",  "scatterv",  "alltoall",  "alltoallv",      "reduce_scatter",
                         "reduce_scatter_equal", "reduce_scatter_block", "barrier"};
  EXPECT_EQ(collectives().size(), std::size(names));
  for (const char* n : names) EXPECT_NE(find_collective(n), nullptr) << n;
  EXPECT_EQ(find_collective("allreduce_v"), nullptr);
}

// Every operation names its MPI-4.0 persistent initialiser (the blocking call's name and "_init"), and the
// engine can make it exactly when it was built with persistent collectives.
TEST(Collectives, EveryOperationHasItsPersistentInitialiser) {
  for (const auto& c : collectives()) {
    ASSERT_NE(c.persistent_name, nullptr) << c.name;
    EXPECT_EQ(std::string(c.persistent_name), std::string(c.blocking_name) + "_init") << c.name;
    EXPECT_EQ(c.init != nullptr, GMB_HAVE_MPI_PERSISTENT_COLLECTIVES != 0) << c.name;
  }
}

TEST(Collectives, UnequalSplitSumsToTotalAndGrows) {
  EXPECT_EQ(unequal_split(10, 3), (std::vector<std::uint64_t>{1, 4, 5}));
  for (int n : {1, 2, 3, 5, 7, 13})
    for (std::uint64_t t : {0ull, 1ull, 7ull, 1000ull, 65537ull, 1ull << 40}) {
      const auto c = unequal_split(t, n);
      ASSERT_EQ(c.size(), static_cast<std::size_t>(n));
      EXPECT_EQ(std::accumulate(c.begin(), c.end(), std::uint64_t{0}), t) << "n=" << n << " t=" << t;
    }
  const auto c = unequal_split(1000, 5);  // proportional to 1..5 out of 15
  EXPECT_EQ(c, (std::vector<std::uint64_t>{66, 134, 200, 266, 334}));
}

TEST(Collectives, GathervCountsOnOddRanks) {
  const Collective& g = op("gatherv");
  const int n = 3, root = 1;
  const std::uint64_t t = 1001;
  const Layout at_root = g.layout(t, root, n, root, false);
  ASSERT_EQ(at_root.recv_counts.size(), 3u);
  EXPECT_EQ(sum(at_root.recv_counts), t);
  EXPECT_EQ(at_root.recv_displs, (std::vector<int>{0, at_root.recv_counts[0], at_root.recv_counts[0] + at_root.recv_counts[1]}));
  EXPECT_NE(at_root.recv_counts[0], at_root.recv_counts[2]);  // unequal
  for (int r = 0; r < n; ++r) EXPECT_EQ(g.layout(t, r, n, root, false).send_count, at_root.recv_counts[r]);
  EXPECT_EQ(g.layout(t, 0, n, root, false).recv_elems, 0u);  // only the root receives
  EXPECT_EQ(at_root.op_elems, t);
}

TEST(Collectives, AlltoallvMatrixIsSymmetricAndBalanced) {
  const Collective& a = op("alltoallv");
  for (int n : {2, 3, 5}) {
    const std::uint64_t t = 997;
    std::vector<Layout> l;
    for (int r = 0; r < n; ++r) l.push_back(a.layout(t, r, n, 0, false));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(sum(l[r].send_counts), t);
      EXPECT_EQ(sum(l[r].recv_counts), t);
      for (int k = 0; k < n; ++k) EXPECT_EQ(l[r].send_counts[k], l[k].recv_counts[r]) << r << "->" << k;
    }
    // What rank r receives from k starts where k's send displacement for r says.
    for (int r = 0; r < n; ++r) {
      const auto segs = a.received(t, r, n, 0, false);
      ASSERT_EQ(segs.size(), static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(segs[k].src_rank, k);
        EXPECT_EQ(segs[k].src_offset, static_cast<std::uint64_t>(l[k].send_displs[r]));
        EXPECT_EQ(segs[k].length, static_cast<std::uint64_t>(l[k].send_counts[r]));
        EXPECT_EQ(segs[k].dst_offset, static_cast<std::uint64_t>(l[r].recv_displs[k]));
      }
    }
  }
}

TEST(Collectives, ReduceScatterCountsOnOddRanks) {
  const Collective& rs = op("reduce_scatter");
  const int n = 5;
  const std::uint64_t t = 1000;
  std::uint64_t offset = 0;
  for (int r = 0; r < n; ++r) {
    const Layout l = rs.layout(t, r, n, 0, false);
    EXPECT_EQ(sum(l.recv_counts), t);
    EXPECT_EQ(l.send_elems, t);
    EXPECT_EQ(l.recv_elems, static_cast<std::uint64_t>(l.recv_count));
    const auto segs = rs.received(t, r, n, 0, false);
    ASSERT_EQ(segs.size(), 1u);
    EXPECT_TRUE(segs[0].reduce);
    EXPECT_EQ(segs[0].src_offset, offset);
    offset += static_cast<std::uint64_t>(l.recv_count);
  }
  EXPECT_EQ(offset, t);
  EXPECT_EQ(rs.layout(t, 0, n, 0, true).recv_elems, t);  // in place: the whole input lives in recvbuf
}

TEST(Collectives, EqualBlockSizesFollowTheSizeConvention) {
  // 4 ranks, 4 KiB allgather: S = 4 KiB is the gathered buffer, each rank contributes 1 KiB.
  const Layout l = op("allgather").layout(4096, 2, 4, 0, false);
  EXPECT_EQ(l.send_count, 1024);
  EXPECT_EQ(l.recv_elems, 4096u);
  EXPECT_EQ(l.op_elems, 4096u);
  EXPECT_EQ(Operands::op_bytes_for(op("allreduce"), Dtype::float32, 4096, 4), 4096.0);
  EXPECT_EQ(Operands::op_bytes_for(op("barrier"), Dtype::byte, 4096, 4), 0.0);
}

// A size is measured only as whole elements (and, for equal blocks, whole elements per rank): a size that is not is
// refused by size_problem, with the size, the element or rank count and what is accepted, never measured as a smaller
// operation than it says; a sweep asks for whole sizes only (whole_size), so that only 0 B is refused there.
TEST(Collectives, SizesThatAreNotWholeElementsAreRefused) {
  EXPECT_EQ(size_problem(op("allreduce"), Dtype::float32, 4096, 3), "");
  EXPECT_EQ(size_problem(op("alltoall"), Dtype::byte, 12, 3), "");
  EXPECT_EQ(size_problem(op("reduce_scatter_block"), Dtype::float32, 48, 3), "");
  EXPECT_EQ(size_problem(op("barrier"), Dtype::byte, 0, 3), "");  // no data: any size
  EXPECT_EQ(size_problem(op("bcast"), Dtype::byte, 1, 3), "");

  EXPECT_EQ(size_problem(op("allreduce"), Dtype::float32, 3, 2),
            "3 B is not a whole number of 4-byte float elements (accepted for allreduce: a non-zero multiple of 4 B; a "
            "sweep measures any other non-zero size at the nearest one)");
  EXPECT_EQ(size_problem(op("allreduce"), Dtype::float64, 0, 2),
            "0 B gives allreduce no elements (accepted for allreduce: a non-zero multiple of 8 B; a sweep measures any "
            "other non-zero size at the nearest one)");
  EXPECT_EQ(size_problem(op("bcast"), Dtype::byte, 0, 2), "0 B gives bcast no elements (accepted for bcast: 1 B or more)");
  EXPECT_EQ(size_problem(op("alltoall"), Dtype::byte, 10, 3),
            "10 B (10 1-byte MPI_BYTE elements) does not split into 3 equal blocks of whole elements, one per rank "
            "(accepted for alltoall on 3 ranks: a non-zero multiple of 3 B (3 ranks x 1 B); a sweep measures any other "
            "non-zero size at the nearest one)");
  const std::string block = size_problem(op("reduce_scatter_block"), Dtype::float32, 8, 4);
  EXPECT_NE(block.find("8 B (2 4-byte float elements) does not split into 4 equal blocks"), std::string::npos) << block;
  EXPECT_NE(block.find("a non-zero multiple of 16 B (4 ranks x 4 B)"), std::string::npos) << block;
  for (const char* name : {"gather", "allgather", "scatter", "alltoall", "reduce_scatter_block", "reduce_scatter_equal"})
    EXPECT_NE(size_problem(op(name), Dtype::float32, 4, 2), "") << name << ": one float on two ranks";

  // Unequal counts give every rank whole elements whatever the total; some ranks get none when the total is
  // small, which MPI allows (counts of zero) and which still moves all of S.
  for (const char* name : {"gatherv", "allgatherv", "scatterv", "alltoallv", "reduce_scatter"}) {
    EXPECT_EQ(size_problem(op(name), Dtype::float32, 4, 4), "") << name;
    EXPECT_NE(size_problem(op(name), Dtype::float32, 6, 4).find("6 B is not a whole number of 4-byte float elements"),
              std::string::npos)
        << name;
    EXPECT_NE(size_problem(op(name), Dtype::float32, 0, 4), "") << name;
  }
  EXPECT_EQ(unequal_split(1, 4), (std::vector<std::uint64_t>{0, 0, 0, 1}));
}

// A size asked for is measured at the nearest whole size at or below it (a multiple of the element, and of ranks x
// element for equal blocks), or the smallest one where that is 0, as nccl-tests rounds its count; sizes that round to
// one size are measured once, and the record names every size it stands for.
TEST(Collectives, SizesAreMeasuredAtTheNearestWholeSize) {
  EXPECT_EQ(whole_size(op("alltoall"), Dtype::byte, 64, 3), 63u);
  EXPECT_EQ(whole_size(op("alltoall"), Dtype::byte, 1, 3), 3u);  // down is 0: up
  EXPECT_EQ(whole_size(op("gather"), Dtype::byte, 65536, 6), 65532u);
  EXPECT_EQ(whole_size(op("reduce_scatter_block"), Dtype::float32, 8, 4), 16u);
  EXPECT_EQ(whole_size(op("reduce_scatter_block"), Dtype::float32, 100, 3), 96u);
  EXPECT_EQ(whole_size(op("allreduce"), Dtype::float32, 3, 3), 4u);
  EXPECT_EQ(whole_size(op("allreduce"), Dtype::float64, 20, 3), 16u);
  EXPECT_EQ(whole_size(op("gatherv"), Dtype::byte, 7, 3), 7u);  // unequal counts take any whole number of elements
  EXPECT_EQ(whole_size(op("reduce_scatter"), Dtype::float32, 6, 4), 4u);
  EXPECT_EQ(whole_size(op("alltoall"), Dtype::byte, 0, 3), 0u);  // nothing asked for: refused, not made up
  EXPECT_EQ(whole_size(op("barrier"), Dtype::byte, 5, 3), 5u);   // no data
  for (const auto& c : collectives())
    for (int n : {1, 2, 3, 5, 6})
      for (std::uint64_t bytes : {1ull, 3ull, 7ull, 64ull, 1000ull, 65536ull}) {
        const std::uint64_t whole = whole_size(c, c.reduction ? Dtype::float64 : Dtype::byte, bytes, n);
        EXPECT_EQ(size_problem(c, c.reduction ? Dtype::float64 : Dtype::byte, whole, n), "") << c.name << " " << bytes;
      }

  const std::vector<MeasuredSize> sizes = measured_sizes(op("alltoall"), Dtype::byte, {1, 2, 4, 8, 64, 63}, 3);
  ASSERT_EQ(sizes.size(), 3u);
  EXPECT_EQ(sizes[0].bytes, 3u);
  EXPECT_EQ(sizes[0].requested, (std::vector<std::uint64_t>{1, 2, 4}));
  EXPECT_EQ(sizes[1].bytes, 6u);
  EXPECT_EQ(sizes[1].requested, (std::vector<std::uint64_t>{8}));
  EXPECT_EQ(sizes[2].bytes, 63u);
  EXPECT_EQ(sizes[2].requested, (std::vector<std::uint64_t>{64, 63}));
}

// reduce_scatter_equal is MPI_Reduce_scatter with every count S / ranks (what osu_reduce_scatter calls);
// reduce_scatter keeps the unequal counts.
TEST(Collectives, ReduceScatterEqualGivesEveryRankTheSameCount) {
  const Collective& equal = op("reduce_scatter_equal");
  EXPECT_STREQ(equal.blocking_name, "MPI_Reduce_scatter");
  EXPECT_EQ(equal.split, Split::equal_blocks);
  EXPECT_EQ(op("reduce_scatter").split, Split::unequal);
  for (int r = 0; r < 4; ++r) {
    const Layout l = equal.layout(1024, r, 4, 0, false);
    EXPECT_EQ(l.recv_counts, (std::vector<int>{256, 256, 256, 256}));
    EXPECT_EQ(l.recv_count, 256);
    EXPECT_EQ(l.send_elems, 1024u);
    EXPECT_EQ(l.block_elems, 256u);
    const auto segs = equal.received(1024, r, 4, 0, false);
    ASSERT_EQ(segs.size(), 1u);
    EXPECT_TRUE(segs[0].reduce);
    EXPECT_EQ(segs[0].src_offset, 256u * r);
  }
  EXPECT_EQ(equal.layout(1024, 0, 4, 0, true).recv_elems, 1024u);  // in place: the whole input lives in recvbuf
}

TEST(Collectives, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(op("allreduce").busbw.factor(4), 1.5);
  EXPECT_DOUBLE_EQ(op("allreduce").busbw.factor(2), 1.0);
  EXPECT_DOUBLE_EQ(op("allgather").busbw.factor(4), 0.75);
  EXPECT_DOUBLE_EQ(op("reduce_scatter_block").busbw.factor(3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(op("alltoall").busbw.factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(op("gather").busbw.factor(3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(op("bcast").busbw.factor(16), 1.0);
  EXPECT_DOUBLE_EQ(op("reduce").busbw.factor(16), 1.0);
  EXPECT_DOUBLE_EQ(op("allreduce").busbw.factor(1), 0.0);
  EXPECT_DOUBLE_EQ(op("barrier").busbw.factor(4), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(op("allreduce"), 1024, 4, 0), 1.5);  // a factor of n: the row's
}

// Unequal counts: the busiest rank's share of S (what it receives from the other ranks, or the distinct part of its
// input they receive), not (n-1)/n, which assumes equal shares.
TEST(Collectives, BusBandwidthOfUnequalCountsIsTheBusiestRanksShare) {
  for (const char* name : {"gatherv", "allgatherv", "scatterv", "alltoallv", "reduce_scatter"})
    EXPECT_EQ(op(name).busbw.factor, nullptr) << name;
  // 2 ranks, 3 elements: parts 1 and 2. The root (0) of gatherv receives 2 of 3: 2/3, where (n-1)/n says 1/2.
  for (const char* name : {"gatherv", "allgatherv", "scatterv", "alltoallv", "reduce_scatter"})
    EXPECT_DOUBLE_EQ(busbw_factor(op(name), 3, 2, 0), 2.0 / 3) << name;
  // 3 ranks, 6 elements: parts 1, 2, 3.
  EXPECT_DOUBLE_EQ(busbw_factor(op("gatherv"), 6, 3, 0), 5.0 / 6);   // the root receives parts 1 and 2
  EXPECT_DOUBLE_EQ(busbw_factor(op("gatherv"), 6, 3, 2), 3.0 / 6);   // root 2 receives parts 0 and 1
  EXPECT_DOUBLE_EQ(busbw_factor(op("scatterv"), 6, 3, 0), 5.0 / 6);  // the root sends parts 1 and 2
  EXPECT_DOUBLE_EQ(busbw_factor(op("allgatherv"), 6, 3, 1), 5.0 / 6);  // rank 0 receives parts 1 and 2
  EXPECT_DOUBLE_EQ(busbw_factor(op("alltoallv"), 6, 3, 0), 5.0 / 6);   // rank 0 keeps part 0, sends the rest
  EXPECT_DOUBLE_EQ(busbw_factor(op("reduce_scatter"), 6, 3, 0), 5.0 / 6);  // rank 0's input for parts 1 and 2
  // The same model gives nccl-tests' (n-1)/n for equal blocks, at any rank count and root.
  for (const auto& c : collectives()) {
    if (c.split != Split::equal_blocks) continue;
    for (int n : {2, 3, 4, 7})
      EXPECT_NEAR(busiest_rank_share(c, 840, n, n - 1), c.busbw.factor(n), 1e-12) << c.name << " on " << n;
  }
}

TEST(Collectives, InPlaceRules) {
  EXPECT_EQ(op("bcast").in_place, InPlace::never);
  EXPECT_EQ(op("barrier").in_place, InPlace::never);
  EXPECT_TRUE(rank_is_in_place(op("gather"), 2, 2, true));
  EXPECT_FALSE(rank_is_in_place(op("gather"), 1, 2, true));
  EXPECT_TRUE(rank_is_in_place(op("allreduce"), 1, 2, true));
  EXPECT_FALSE(rank_is_in_place(op("allreduce"), 1, 2, false));
}

TEST(Collectives, TypedInputsSumExactlyInFloat) {
  for (std::uint64_t i = 0; i < 1000; ++i) {
    float f = 0;
    double d = 0;
    for (int r = 0; r < 64; ++r) {
      f += static_cast<float>(input_value(Dtype::float32, r, i, 12345));
      d += input_value(Dtype::float64, r, i, 12345);
      EXPECT_GE(input_value(Dtype::int32, r, i, 12345), 1.0);
    }
    EXPECT_EQ(static_cast<double>(f), d);
  }
  EXPECT_NE(input_value(Dtype::float32, 0, 5, 1), input_value(Dtype::float32, 0, 5, 2));  // seeds differ
}

// Simulates MPI_Allgatherv on 3 ranks from the layouts alone and checks that the expected-data
// code agrees, and that the poisoned buffer does not pass.
TEST(Collectives, ExpectedDataMatchesASimulatedAllgatherv) {
  const Collective& c = op("allgatherv");
  const int n = 3;
  const std::uint64_t t = 101;
  const std::uint32_t seed = 77;
  for (int r = 0; r < n; ++r) {
    const Layout mine = c.layout(t, r, n, 0, false);
    std::vector<unsigned char> recv = make_recv_image(c, mine, Dtype::byte, t, r, n, 0, false, seed);
    EXPECT_NE(check_received(c, Dtype::byte, recv.data(), t, r, n, 0, false, seed), "");  // poison fails
    for (int k = 0; k < n; ++k) {
      const Layout theirs = c.layout(t, k, n, 0, false);
      const auto send = make_send_image(c, theirs, Dtype::byte, k, seed);
      std::memcpy(recv.data() + mine.recv_displs[k], send.data(), static_cast<std::size_t>(theirs.send_count));
    }
    EXPECT_EQ(check_received(c, Dtype::byte, recv.data(), t, r, n, 0, false, seed), "");
    recv[mine.recv_displs[2] + 3] ^= 1;
    const std::string e = check_received(c, Dtype::byte, recv.data(), t, r, n, 0, false, seed);
    EXPECT_NE(e.find("rank 2's element 3"), std::string::npos) << e;
  }
}

TEST(Collectives, ExpectedDataOfAnInPlaceAllreduce) {
  const Collective& c = op("allreduce");
  const int n = 4;
  const std::uint64_t t = 50;
  const Layout l = c.layout(t, 1, n, 0, true);
  std::vector<unsigned char> recv = make_recv_image(c, l, Dtype::float32, t, 1, n, 0, true, 9);
  // Before the call: rank 1's own input, in the receive buffer.
  for (std::uint64_t i = 0; i < t; ++i) EXPECT_EQ(load_value(Dtype::float32, recv.data(), i), input_value(Dtype::float32, 1, i, 9));
  for (std::uint64_t i = 0; i < t; ++i) {
    double s = 0;
    for (int r = 0; r < n; ++r) s += input_value(Dtype::float32, r, i, 9);
    store_value(Dtype::float32, recv.data(), i, s);
  }
  EXPECT_EQ(check_received(c, Dtype::float32, recv.data(), t, 1, n, 0, true, 9), "");
}

TEST(Collectives, ReceivedSegmentsStayInsideBuffers) {
  for (const auto& c : collectives())
    for (int n : {1, 2, 3, 4, 5})
      for (std::uint64_t t : {0ull, 1ull, 7ull, 1000ull})
        for (bool in_place : {false, true}) {
          if (in_place && c.in_place == InPlace::never) continue;
          for (int root : {0, n - 1})
            for (int r = 0; r < n; ++r) {
              const Layout l = c.layout(t, r, n, root, in_place);
              std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
              for (const auto& s : c.received(t, r, n, root, in_place)) {
                EXPECT_LE(s.dst_offset + s.length, l.recv_elems) << c.name << " n=" << n << " r=" << r;
                if (!s.reduce && c.layout(t, s.src_rank, n, root, false).send_elems > 0)
                  EXPECT_LE(s.src_offset + s.length, c.layout(t, s.src_rank, n, root, false).send_elems) << c.name;
                if (s.length) spans.push_back({s.dst_offset, s.dst_offset + s.length});
              }
              std::sort(spans.begin(), spans.end());
              for (std::size_t k = 1; k < spans.size(); ++k) EXPECT_LE(spans[k - 1].second, spans[k].first) << c.name;
              for (const auto& s : c.initial(t, r, n, root, in_place)) EXPECT_LE(s.dst_offset + s.length, l.recv_elems) << c.name;
            }
        }
}

TEST(Collectives, OverlapArithmeticOnKnownTimings) {
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(12, 10, 10), 80.0);  // 2 us of the 10 us operation not hidden
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(10, 10, 10), 100.0);  // fully hidden
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(20, 10, 10), 0.0);    // nothing hidden
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(25, 10, 10), 0.0);    // worse than nothing: clamped at 0
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(15, 10, 20), 75.0);
  EXPECT_DOUBLE_EQ(gmb::overlap::percent(5, 0, 0), 0.0);       // no pure time: no overlap claimed
  EXPECT_DOUBLE_EQ(gmb::overlap::overhead(12, 10), 2.0);

  // Medians of the slowest-rank samples (seconds in, microseconds out).
  std::vector<PhaseSample> s = {{14e-6, 1e-6, 10e-6, 1e-6, 2e-6},
                                {12e-6, 1e-6, 10e-6, 0.5e-6, 0.5e-6},
                                {30e-6, 2e-6, 11e-6, 1e-6, 16e-6}};
  const OverlapFigures f = overlap_figures(10e-6, s);
  EXPECT_DOUBLE_EQ(f.pure_us, 10.0);
  EXPECT_NEAR(f.overall_us, 14.0, 1e-9);
  EXPECT_NEAR(f.compute_us, 10.0, 1e-9);
  EXPECT_NEAR(f.wait_us, 2.0, 1e-9);
  EXPECT_NEAR(f.overhead_us, 4.0, 1e-9);
  EXPECT_NEAR(f.overlap_pct, 60.0, 1e-9);
}

TEST(Collectives, ComputeSweepFractions) {
  EXPECT_EQ(gmb::overlap::compute_fractions(false), (std::vector<double>{1.0}));
  const auto f = gmb::overlap::compute_fractions(true);
  ASSERT_EQ(f.size(), 9u);
  EXPECT_EQ(f.front(), 0.0);
  EXPECT_EQ(f[4], 1.0);
  EXPECT_EQ(f.back(), 2.0);
}
