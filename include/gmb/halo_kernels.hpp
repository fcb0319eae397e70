// SPDX-License-Identifier: BSD-3-Clause
// The halo mini-app's data layout and its kernels: pack / unpack of a face (a box of the padded
// field) and the Jacobi star stencil over a box, on the host (always) and on the GPU (CUDA module
// only; a host-only build's factory throws Unsupported with the reason). No CUDA headers here.
//
// Layout: a rank's field is its interior (n[0] x n[1] x n[2] cells, x fastest) surrounded by `pad`
// cells of halo per axis: pad = halo width on every active axis, 0 on z in 2D (n[2] = 1). Boxes are
// in interior coordinates: cell (0,0,0) is the first interior cell, halo cells have coordinates < 0
// or >= n. A packed face holds the box's cells in x-fastest order, on host and GPU alike.
//
// The stencil is a star of radius `halo` on every active axis (radius 1: the 5-point (2D) or 7-point
// (3D) Jacobi stencil). It never reads edges or corners, so faces are all a halo exchange moves.
// out = (in[c] + sum over r = 1..H of in[c-r*x] + in[c+r*x] + in[c-r*y] + in[c+r*y] (+ z)) * w,
// w = 1 / (1 + 2 * dims * H), added in exactly this order everywhere (host, GPU, the validation replay)
// so that a decomposed run reproduces a single domain bit for bit on the host.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gmb/gpu.hpp"

namespace gmb::halo {

enum class Dtype { f32, f64 };
inline std::size_t element_size(Dtype t) { return t == Dtype::f32 ? 4 : 8; }
inline const char* to_string(Dtype t) { return t == Dtype::f32 ? "float" : "double"; }

struct Box {
  std::array<long, 3> lo{0, 0, 0}, hi{0, 0, 0};  // half-open [lo, hi) per axis, interior coordinates
  std::size_t cells() const {
    std::size_t c = 1;
    for (int a = 0; a < 3; ++a) c *= hi[a] > lo[a] ? static_cast<std::size_t>(hi[a] - lo[a]) : 0;
    return c;
  }
  bool empty() const { return cells() == 0; }
};

struct Layout {
  int dims = 3;                        // 2 or 3
  int halo = 1;                        // halo width = stencil radius
  std::array<long, 3> n{1, 1, 1};      // interior extents (n[2] = 1 in 2D)
  std::array<long, 3> pad{0, 0, 0};    // halo cells per side and axis
  Dtype dtype = Dtype::f64;

  static Layout make(int dims, int halo, std::array<long, 3> n, Dtype dtype);
  std::array<long, 3> extent() const { return {n[0] + 2 * pad[0], n[1] + 2 * pad[1], n[2] + 2 * pad[2]}; }
  std::size_t padded_cells() const;
  std::size_t padded_bytes() const { return padded_cells() * element_size(dtype); }
  // Element offset of interior coordinate (x, y, z) in the padded array.
  std::size_t offset(long x, long y, long z) const {
    const auto e = extent();
    return static_cast<std::size_t>(((z + pad[2]) * e[1] + (y + pad[1])) * e[0] + (x + pad[0]));
  }
  Box interior() const { return Box{{0, 0, 0}, {n[0], n[1], n[2]}}; }
};

// Directions: d = 2 * axis + side (side 0: low, 1: high); 2 * dims of them.
inline int opposite(int d) { return d ^ 1; }
// The interior layers this rank sends towards direction d (width `halo`).
Box send_box(const Layout& l, int d);
// The halo layers on side d that the neighbour in direction d fills.
Box recv_box(const Layout& l, int d);
// Cells whose stencil reads no halo cell (empty when an axis is narrower than 2 * halo).
Box inner_box(const Layout& l);
// The rest of the interior, as disjoint boxes (at most 2 * dims, empty ones left out).
std::vector<Box> boundary_boxes(const Layout& l);

// The block decomposition of `global` cells over `parts` ranks: the first global % parts ranks
// get one cell more. Offset and count of part `index`.
struct Range {
  long offset = 0, count = 0;
};
Range block_range(long global, int parts, int index);

// The initial value of global cell (gx, gy, gz), halo cells outside the domain included (the
// fixed boundary values of a non-periodic run): a hash in [0, 1), so a misplaced cell is visible.
double initial_value(long gx, long gy, long gz);
// Writes initial_value into every cell of the padded field (halo included); `origin` is the
// global coordinate of interior cell (0, 0, 0).
void host_initialize(void* field, const Layout& l, std::array<long, 3> origin);

// Host kernels (host and pinned memory, and the validation replay).
void host_pack(const void* field, const Layout& l, const Box& b, void* packed);
void host_unpack(const void* packed, const Layout& l, const Box& b, void* field);
void host_stencil(const void* in, void* out, const Layout& l, const Box& b);

// What --validate checks a rank's field against (docs/halo.md "Validation"): the rank's own subdomain replayed
// on the host, from the initial values of its cells, step by step, its halos filled before each step by
// `exchange` from the neighbours' replays. Its cost is one host sweep of the rank's subdomain per step.
// Before the first exchange the halos a neighbour fills (every side of a periodic domain; the inner sides
// otherwise) are poisoned, and after it each of their cells must hold the initial value of the global cell it
// stands for (wrapped around when periodic): a face that came from the wrong rank, side or layers, or did not
// come, is reported there whatever the exchange did; the halos of a non-periodic domain's edges keep their fixed
// initial values. Exact on the host: the stencil is host_stencil.
class Replay {
 public:
  // `l` the rank's layout, `origin` the global coordinates of its interior cell (0, 0, 0), `global` the domain.
  Replay(const Layout& l, std::array<long, 3> origin, std::array<long, 3> global, bool periodic);
  // Runs `steps` Jacobi steps, calling exchange(field) to fill the halos of the current (padded) field before
  // each stencil; every step runs whatever was found. Returns "" or what the first exchange delivered wrong.
  std::string run(int steps, const std::function<void(void* field)>& exchange);
  // The current padded field: after run(), the replayed state.
  const void* field() const { return field_[current_].data(); }
  // `padded` (a field of the same layout on the host) against the replay's interior: the largest absolute
  // difference and the first cell that differs by more than `tolerance` (NaN included), with its global
  // coordinates and both values, or "".
  struct Comparison {
    double max_abs_error = 0;
    std::string first_mismatch;
  };
  Comparison compare(const void* padded, double tolerance) const;

 private:
  bool neighbour_fills(int d) const;
  Layout l_;
  std::array<long, 3> origin_, global_;
  bool periodic_;
  std::vector<unsigned char> field_[2];
  int current_ = 0;
};

// GPU kernels on device or managed memory, queued on a stream; nothing synchronises unless said.
class GpuKernels {
 public:
  virtual ~GpuKernels() = default;
  virtual void pack(const void* field, const Layout& l, const Box& b, void* packed, GpuStream stream) = 0;
  virtual void unpack(const void* packed, const Layout& l, const Box& b, void* field, GpuStream stream) = 0;
  virtual void stencil(const void* in, void* out, const Layout& l, const Box& b, GpuStream stream) = 0;
  // A non-blocking stream; high priority for communication streams, so that pack and unpack
  // kernels are scheduled ahead of the blocks of a long interior update (overlap).
  virtual GpuStream create_stream(bool high_priority) = 0;
  virtual void destroy_stream(GpuStream stream) = 0;
};

// The CUDA implementation; throws Unsupported with the reason in a host-only build.
std::unique_ptr<GpuKernels> make_gpu_kernels();

// How halos move (docs/halo.md "Strategies"), named as the point-to-point transfer strategies where they mean
// the same (staged-pinned, direct, pipelined: gmb/transfer.hpp); pipelined-overlap, the pipelined exchange
// hidden behind the interior update, is halo's own (point to point has no computation to overlap).
struct Strategy {
  const char* name;
  const char* former_name;  // the spelling halo used before, still accepted; nullptr when there is none
};
const std::vector<Strategy>& strategies();
// The name of the strategy `text` names (its name or its former spelling), or "" when it names none.
std::string canonical_strategy(const std::string& text);

}  // namespace gmb::halo
