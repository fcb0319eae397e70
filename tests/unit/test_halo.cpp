// SPDX-License-Identifier: BSD-3-Clause
// The halo mini-app's host kernels, box decomposition and single-domain reference.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
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

// The halo exchange of a one-rank periodic domain: every side's halo is the far interior layers of the
// field itself (what MPI delivers when a rank is its own neighbour). `layer_shift` moves the face sent by that
// many layers inwards (a wrong face); `corrupt` flips a bit in a high byte of a value in the first face sent (a
// flip in a value's last bits may round away within a few steps, leaving no trace in the state to find).
void wrap_halos(void* field, const Layout& l, long layer_shift = 0, bool corrupt = false) {
  for (int d = 0; d < 2 * l.dims; ++d) {
    Box from = send_box(l, opposite(d));
    const int axis = d / 2;
    const long inwards = d % 2 == 0 ? -layer_shift : layer_shift;  // opposite(d)'s face lies on the other side
    from.lo[axis] += inwards;
    from.hi[axis] += inwards;
    std::vector<unsigned char> face(from.cells() * element_size(l.dtype));
    host_pack(field, l, from, face.data());
    const std::size_t es = element_size(l.dtype);
    if (corrupt && d == 0) face[from.cells() / 2 * es + es - 2] ^= 0x10;
    host_unpack(face.data(), l, recv_box(l, d), field);
  }
}

const double* values(const void* field) { return static_cast<const double*>(field); }

TEST(Halo, ReplayKeepsFixedBoundariesOrWraps) {
  // One step on a 1-cell-thick periodic 2D domain of 3 x 1: every cell averages itself, its
  // x neighbours (wrapping) and twice itself along y (it is its own y neighbour).
  const Layout l = Layout::make(2, 1, {3, 1, 1}, Dtype::f64);
  const double u0 = initial_value(0, 0, 0), u1 = initial_value(1, 0, 0), u2 = initial_value(2, 0, 0);
  Replay periodic(l, {0, 0, 0}, {3, 1, 1}, true);
  EXPECT_EQ(periodic.run(1, [&](void* f) { wrap_halos(f, l); }), "");
  EXPECT_DOUBLE_EQ(values(periodic.field())[l.offset(0, 0, 0)], (((u0 + u2) + u1) + u0 + u0) / 5);
  // Not periodic: no side has a neighbour, and the halos keep their fixed initial values.
  Replay fixed(l, {0, 0, 0}, {3, 1, 1}, false);
  EXPECT_EQ(fixed.run(1, [](void*) {}), "");  // no neighbour: nothing to receive, nothing checked
  EXPECT_DOUBLE_EQ(values(fixed.field())[l.offset(0, 0, 0)],
                   ((((u0 + initial_value(-1, 0, 0)) + u1) + initial_value(0, -1, 0)) + initial_value(0, 1, 0)) / 5);
}

TEST(Halo, DecomposedHostRunMatchesOneDomainExactly) {
  // Two subdomains along x exchanging by hand reproduce the single domain (a replay without neighbours) bit for bit.
  for (Dtype t : {Dtype::f32, Dtype::f64}) {
    const std::array<long, 3> global{7, 5, 4};
    const int steps = 4, h = 2;
    const Layout whole = Layout::make(3, h, global, t);
    Replay one_domain(whole, {0, 0, 0}, global, false);
    EXPECT_EQ(one_domain.run(steps, [](void*) {}), "");
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
    const auto* want = static_cast<const unsigned char*>(one_domain.field());
    for (long z = 0; z < 4; ++z)
      for (long y = 0; y < 5; ++y)
        for (long x = 0; x < 7; ++x) {
          const unsigned char* got = x < 4 ? &l0[left.offset(x, y, z) * es] : &r0[right.offset(x - 4, y, z) * es];
          EXPECT_EQ(std::memcmp(got, want + whole.offset(x, y, z) * es, es), 0) << "cell " << x << "," << y << "," << z;
        }
  }
}

// The state a strategy leaves on a one-rank periodic domain, computed apart from the replay: the field, both
// buffers, `steps` steps whose halos come from `exchange` at each step (the "timed path" under test).
std::vector<unsigned char> run_field(const Layout& l, int steps, const std::function<void(void*, int step)>& exchange) {
  std::vector<unsigned char> a(l.padded_bytes()), b(l.padded_bytes());
  host_initialize(a.data(), l, {0, 0, 0});
  host_initialize(b.data(), l, {0, 0, 0});
  for (int s = 0; s < steps; ++s) {
    exchange(a.data(), s);
    host_stencil(a.data(), b.data(), l, l.interior());
    std::swap(a, b);
  }
  return a;
}

// What --validate compares each rank's field with: a right field passes exactly; a wrong exchange in the
// field's history, at any step, or one corrupted byte, fails and names the global cell.
TEST(Halo, ReplayComparisonCatchesAWrongExchangeOrAByte) {
  for (Dtype t : {Dtype::f32, Dtype::f64}) {
    const Layout l = Layout::make(3, 2, {6, 5, 4}, t);
    const int steps = 5;
    Replay replay(l, {0, 0, 0}, {6, 5, 4}, true);
    ASSERT_EQ(replay.run(steps, [&](void* f) { wrap_halos(f, l); }), "");

    const auto right = run_field(l, steps, [&](void* f, int) { wrap_halos(f, l); });
    const Replay::Comparison same = replay.compare(right.data(), 0.0);
    EXPECT_EQ(same.first_mismatch, "");
    EXPECT_EQ(same.max_abs_error, 0.0);

    // The wrong layers sent at the last step only, one byte flipped in a face at the third, no exchange at all.
    const auto wrong_face = run_field(l, steps, [&](void* f, int s) { wrap_halos(f, l, s == steps - 1 ? 1 : 0); });
    const auto corrupted_face = run_field(l, steps, [&](void* f, int s) { wrap_halos(f, l, 0, s == 2); });
    const auto no_exchange = run_field(l, steps, [](void*, int) {});
    for (const auto* field : {&wrong_face, &corrupted_face, &no_exchange}) {
      const Replay::Comparison c = replay.compare(field->data(), 0.0);
      SCOPED_TRACE(field == &wrong_face ? "wrong face" : field == &corrupted_face ? "corrupted face" : "no exchange");
      EXPECT_NE(c.first_mismatch.find("global cell ("), std::string::npos) << c.first_mismatch;
      EXPECT_NE(c.first_mismatch.find("its host replay has"), std::string::npos) << c.first_mismatch;
      EXPECT_GT(c.max_abs_error, 0.0);
    }

    // One corrupted byte of the final state (an interior cell), at global cell (3, 2, 1).
    auto flipped = right;
    flipped[l.offset(3, 2, 1) * element_size(t) + 1] ^= 0x01;
    const Replay::Comparison c = replay.compare(flipped.data(), 0.0);
    EXPECT_EQ(c.first_mismatch.rfind("global cell (3, 2, 1): ", 0), 0u) << c.first_mismatch;
    // Within a tolerance wider than the difference, the same field passes (GPU fields allow a few ulps).
    EXPECT_EQ(replay.compare(flipped.data(), 1.0).first_mismatch, "");
  }
}

// The replay's own exchange is checked after its first step against the initial values of the global cells
// its halos stand for: a face from the wrong layers or with a corrupted byte, or no face at all, fails there.
TEST(Halo, ReplayChecksItsFirstExchangeAgainstTheInitialValues) {
  const Layout l = Layout::make(2, 1, {6, 5, 1}, Dtype::f64);
  auto first_exchange = [&](const std::function<void(void*)>& exchange) {
    Replay replay(l, {0, 0, 0}, {6, 5, 1}, true);
    return replay.run(2, exchange);
  };
  EXPECT_EQ(first_exchange([&](void* f) { wrap_halos(f, l); }), "");
  const std::string shifted = first_exchange([&](void* f) { wrap_halos(f, l, 1); });
  EXPECT_NE(shifted.find("the halo on side -x after the first exchange holds"), std::string::npos) << shifted;
  EXPECT_NE(shifted.find("at global cell (5, 0, 0)"), std::string::npos) << shifted;  // x = -1, wrapped around
  EXPECT_NE(shifted.find("a face from the wrong rank, side or layers, or none"), std::string::npos) << shifted;
  const std::string corrupted = first_exchange([&](void* f) { wrap_halos(f, l, 0, true); });
  EXPECT_NE(corrupted.find("the halo on side -x"), std::string::npos) << corrupted;
  EXPECT_NE(first_exchange([](void*) {}).find("holds -1 at global cell"), std::string::npos);  // the poison stayed
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
