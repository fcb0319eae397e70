// SPDX-License-Identifier: BSD-3-Clause
// The halo mini-app's host kernels, box decomposition and single-domain reference.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <tuple>

#include "gmb/halo_kernels.hpp"
#include "gmb/transfer.hpp"

using namespace gmb::halo;

namespace {

using Cell = std::tuple<long, long, long>;

std::set<Cell> cells_of(const Box& b) {
  std::set<Cell> out;
  for (long z = b.lo[2]; z < b.hi[2]; ++z)
    for (long y = b.lo[1]; y < b.hi[1]; ++y)
      for (long x = b.lo[0]; x < b.hi[0]; ++x) out.insert({x, y, z});
  return out;
}

}  // namespace

TEST(Halo, BlockRangeCoversTheAxisOnce) {
  long next = 0;
  for (int p = 0; p < 3; ++p) {
    const Range r = block_range(10, 3, p);
    EXPECT_EQ(r.offset, next);
    next += r.count;
  }
  EXPECT_EQ(next, 10);
  EXPECT_EQ(block_range(10, 3, 0).count, 4);
  EXPECT_EQ(block_range(10, 3, 2).count, 3);
}

TEST(Halo, InnerAndBoundaryBoxesPartitionTheInterior) {
  for (int dims : {2, 3})
    for (int h : {1, 2, 3})
      for (long n : {1L, 3L, 4L, 7L}) {
        const Layout l = Layout::make(dims, h, {n, n + 1, n + 2}, Dtype::f64);
        std::set<Cell> seen;
        std::size_t total = 0;
        std::vector<Box> boxes = boundary_boxes(l);
        boxes.push_back(inner_box(l));
        for (const Box& b : boxes) {
          const auto c = cells_of(b);
          total += c.size();
          seen.insert(c.begin(), c.end());
        }
        EXPECT_EQ(total, seen.size()) << "boxes overlap: dims " << dims << " halo " << h << " n " << n;
        EXPECT_EQ(seen, cells_of(l.interior())) << "dims " << dims << " halo " << h << " n " << n;
      }
}

TEST(Halo, InnerBoxReadsNoHalo) {
  const Layout l = Layout::make(3, 2, {9, 6, 5}, Dtype::f64);
  const Box b = inner_box(l);
  for (int a = 0; a < 3; ++a) {
    EXPECT_GE(b.lo[a] - l.halo, 0);
    EXPECT_LE(b.hi[a] + l.halo, l.n[a]);
  }
}

TEST(Halo, FacesHaveMatchingShapes) {
  const Layout l = Layout::make(3, 2, {5, 6, 7}, Dtype::f32);
  for (int d = 0; d < 6; ++d) {
    EXPECT_EQ(send_box(l, d).cells(), recv_box(l, d).cells());
    EXPECT_EQ(send_box(l, d).cells(), 2u * 5 * 6 * 7 / static_cast<std::size_t>(l.n[d / 2]));
  }
  EXPECT_EQ(recv_box(l, 0).lo[0], -2);
  EXPECT_EQ(recv_box(l, 1).hi[0], 7);
  EXPECT_EQ(send_box(l, 5).lo[2], 5);
}

TEST(Halo, PackUnpackRoundTrip) {
  const Layout l = Layout::make(3, 2, {5, 4, 3}, Dtype::f64);
  std::vector<double> a(l.padded_cells()), b(l.padded_cells(), -1.0);
  host_initialize(a.data(), l, {10, 20, 30});
  for (int d = 0; d < 6; ++d) {
    const Box s = send_box(l, d);
    std::vector<double> packed(s.cells());
    host_pack(a.data(), l, s, packed.data());
    // x fastest: the first packed element is the box's first cell, the second its x neighbour.
    EXPECT_EQ(packed[0], a[l.offset(s.lo[0], s.lo[1], s.lo[2])]);
    host_unpack(packed.data(), l, s, b.data());
  }
  for (int d = 0; d < 6; ++d) {
    const Box s = send_box(l, d);
    for (const auto& [x, y, z] : cells_of(s)) EXPECT_EQ(b[l.offset(x, y, z)], a[l.offset(x, y, z)]);
  }
}

TEST(Halo, InitialValuesDependOnGlobalCoordinates) {
  const Layout l = Layout::make(2, 1, {4, 4, 1}, Dtype::f64);
  std::vector<double> a(l.padded_cells());
  host_initialize(a.data(), l, {4, 0, 0});
  EXPECT_EQ(a[l.offset(-1, 0, 0)], initial_value(3, 0, 0));  // halo: the cell the left neighbour owns
  EXPECT_EQ(a[l.offset(0, 2, 0)], initial_value(4, 2, 0));
  EXPECT_NE(initial_value(1, 2, 3), initial_value(2, 1, 3));
  EXPECT_GE(initial_value(-5, 7, 1), 0.0);
  EXPECT_LT(initial_value(-5, 7, 1), 1.0);
}

TEST(Halo, StencilIsTheStarAverage) {
  const Layout l = Layout::make(3, 1, {3, 3, 3}, Dtype::f64);
  std::vector<double> in(l.padded_cells(), 0.0), out(l.padded_cells(), -1.0);
  in[l.offset(1, 1, 1)] = 7.0;
  host_stencil(in.data(), out.data(), l, l.interior());
  EXPECT_DOUBLE_EQ(out[l.offset(1, 1, 1)], 1.0);  // 7 / 7
  EXPECT_DOUBLE_EQ(out[l.offset(0, 1, 1)], 1.0);  // a face neighbour sees it once
  EXPECT_DOUBLE_EQ(out[l.offset(0, 0, 1)], 0.0);  // an edge neighbour does not (star stencil)
  EXPECT_DOUBLE_EQ(out[l.offset(-1, 1, 1)], -1.0);  // the halo is never written
}

TEST(Halo, ReferenceKeepsFixedBoundariesOrWraps) {
  // One step on a 1-cell-thick periodic 2D domain of 3 x 1: every cell averages itself, its
  // x neighbours (wrapping) and twice itself along y (it is its own y neighbour).
  const auto dense = reference_solution(2, 1, {3, 1, 1}, Dtype::f64, true, 1);
  const double* v = reinterpret_cast<const double*>(dense.data());
  const double u0 = initial_value(0, 0, 0), u1 = initial_value(1, 0, 0), u2 = initial_value(2, 0, 0);
  EXPECT_DOUBLE_EQ(v[0], (((u0 + u2) + u1) + u0 + u0) / 5);
  const auto fixed = reference_solution(2, 1, {3, 1, 1}, Dtype::f64, false, 1);
  const double* w = reinterpret_cast<const double*>(fixed.data());
  EXPECT_DOUBLE_EQ(w[0], ((((u0 + initial_value(-1, 0, 0)) + u1) + initial_value(0, -1, 0)) + initial_value(0, 1, 0)) / 5);
}

TEST(Halo, DecomposedHostRunMatchesTheReferenceExactly) {
  // Two subdomains along x exchanging by hand reproduce the single-domain run bit for bit.
  for (Dtype t : {Dtype::f32, Dtype::f64}) {
    const std::array<long, 3> global{7, 5, 4};
    const int steps = 4, h = 2;
    const auto want = reference_solution(3, h, global, t, false, steps);
    const Layout left = Layout::make(3, h, {4, 5, 4}, t), right = Layout::make(3, h, {3, 5, 4}, t);
    const std::size_t es = element_size(t);
    std::vector<unsigned char> l0(left.padded_bytes()), l1(left.padded_bytes()), r0(right.padded_bytes()),
        r1(right.padded_bytes());
    host_initialize(l0.data(), left, {0, 0, 0});
    host_initialize(l1.data(), left, {0, 0, 0});
    host_initialize(r0.data(), right, {4, 0, 0});
    host_initialize(r1.data(), right, {4, 0, 0});
    for (int s = 0; s < steps; ++s) {
      std::vector<unsigned char> face(send_box(left, 1).cells() * es);
      host_pack(l0.data(), left, send_box(left, 1), face.data());
      host_unpack(face.data(), right, recv_box(right, 0), r0.data());
      host_pack(r0.data(), right, send_box(right, 0), face.data());
      host_unpack(face.data(), left, recv_box(left, 1), l0.data());
      host_stencil(l0.data(), l1.data(), left, left.interior());
      host_stencil(r0.data(), r1.data(), right, right.interior());
      std::swap(l0, l1);
      std::swap(r0, r1);
    }
    std::vector<unsigned char> a(left.interior().cells() * es), b(right.interior().cells() * es);
    host_extract_interior(l0.data(), left, a.data());
    host_extract_interior(r0.data(), right, b.data());
    for (long z = 0; z < 4; ++z)
      for (long y = 0; y < 5; ++y)
        for (long x = 0; x < 7; ++x) {
          const std::size_t g = static_cast<std::size_t>((z * 5 + y) * 7 + x);
          const unsigned char* got = x < 4 ? &a[static_cast<std::size_t>((z * 5 + y) * 4 + x) * es]
                                           : &b[static_cast<std::size_t>((z * 5 + y) * 3 + (x - 4)) * es];
          EXPECT_EQ(std::memcmp(got, &want[g * es], es), 0) << "cell " << x << "," << y << "," << z;
        }
  }
}

// One strategy vocabulary: halo's strategies are point-to-point strategies of the same name, except
// pipelined-overlap (nothing to overlap in point to point); the former spellings name the same strategies.
TEST(Halo, StrategiesAreNamedAsThePointToPointOnes) {
  std::vector<std::string> names;
  for (const Strategy& s : strategies()) {
    names.push_back(s.name);
    if (std::string(s.name) != "pipelined-overlap") EXPECT_NE(gmb::find_strategy(s.name), nullptr) << s.name;
    EXPECT_EQ(canonical_strategy(s.name), s.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"staged-pinned", "direct", "pipelined", "pipelined-overlap"}));
  EXPECT_EQ(gmb::find_strategy("pipelined-overlap"), nullptr);
  EXPECT_EQ(canonical_strategy("staged"), "staged-pinned");
  EXPECT_EQ(canonical_strategy("overlap"), "pipelined-overlap");
  EXPECT_EQ(canonical_strategy("staged-pageable"), "");
  EXPECT_EQ(canonical_strategy("all"), "");
}
