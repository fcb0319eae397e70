// SPDX-License-Identifier: BSD-3-Clause
// Host side of the halo mini-app: layout helpers, host pack / unpack / stencil, the strategies' names and
// the replay --validate checks a rank's field against (include/gmb/halo_kernels.hpp says what each computes).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gmb/error.hpp"
#include "gmb/halo_kernels.hpp"

namespace gmb::halo {

Layout Layout::make(int dims, int halo, std::array<long, 3> n, Dtype dtype) {
  Layout l;
  l.dims = dims;
  l.halo = halo;
  l.n = n;
  if (dims == 2) l.n[2] = 1;
  for (int a = 0; a < 3; ++a) l.pad[a] = a < dims ? halo : 0;
  l.dtype = dtype;
  return l;
}

std::size_t Layout::padded_cells() const {
  const auto e = extent();
  return static_cast<std::size_t>(e[0]) * static_cast<std::size_t>(e[1]) * static_cast<std::size_t>(e[2]);
}

Box send_box(const Layout& l, int d) {
  Box b = l.interior();
  const int axis = d / 2;
  if (d % 2 == 0) {
    b.hi[axis] = l.halo;
  } else {
    b.lo[axis] = l.n[axis] - l.halo;
  }
  return b;
}

Box recv_box(const Layout& l, int d) {
  Box b = l.interior();
  const int axis = d / 2;
  if (d % 2 == 0) {
    b.lo[axis] = -l.halo;
    b.hi[axis] = 0;
  } else {
    b.lo[axis] = l.n[axis];
    b.hi[axis] = l.n[axis] + l.halo;
  }
  return b;
}

Box inner_box(const Layout& l) {
  Box b = l.interior();
  for (int a = 0; a < l.dims; ++a) {
    b.lo[a] = l.halo;
    b.hi[a] = std::max<long>(l.halo, l.n[a] - l.halo);
  }
  return b;
}

std::vector<Box> boundary_boxes(const Layout& l) {
  // Peel axis by axis: the low and high slabs of axis a span the full extent of the axes after a
  // and only the inner part of the axes before it, so the slabs never overlap.
  std::vector<Box> boxes;
  const Box inner = inner_box(l);
  Box rest = l.interior();
  for (int a = 0; a < l.dims; ++a) {
    Box low = rest, high = rest;
    low.hi[a] = std::min<long>(l.halo, l.n[a]);
    high.lo[a] = std::max(low.hi[a], l.n[a] - l.halo);
    if (!low.empty()) boxes.push_back(low);
    if (!high.empty()) boxes.push_back(high);
    rest.lo[a] = inner.lo[a];
    rest.hi[a] = inner.hi[a];
  }
  return boxes;
}

Range block_range(long global, int parts, int index) {
  const long base = global / parts, extra = global % parts;
  Range r;
  r.count = base + (index < extra ? 1 : 0);
  r.offset = index * base + std::min<long>(index, extra);
  return r;
}

double initial_value(long gx, long gy, long gz) {
  std::uint64_t h = static_cast<std::uint64_t>(gx) * 0x9E3779B97F4A7C15ull ^
                    static_cast<std::uint64_t>(gy) * 0xC2B2AE3D27D4EB4Full ^
                    static_cast<std::uint64_t>(gz) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<double>(h % 1000003u) / 1000003.0;
}

namespace {

template <typename F>
void for_each_cell(const Box& b, F f) {
  for (long z = b.lo[2]; z < b.hi[2]; ++z)
    for (long y = b.lo[1]; y < b.hi[1]; ++y)
      for (long x = b.lo[0]; x < b.hi[0]; ++x) f(x, y, z);
}

template <typename T>
void initialize_typed(T* field, const Layout& l, std::array<long, 3> origin) {
  Box all;
  for (int a = 0; a < 3; ++a) {
    all.lo[a] = -l.pad[a];
    all.hi[a] = l.n[a] + l.pad[a];
  }
  for_each_cell(all, [&](long x, long y, long z) {
    field[l.offset(x, y, z)] = static_cast<T>(initial_value(origin[0] + x, origin[1] + y, origin[2] + z));
  });
}

template <typename T>
void pack_typed(const T* field, const Layout& l, const Box& b, T* packed) {
  std::size_t k = 0;
  const long width = b.hi[0] - b.lo[0];
  if (width <= 0) return;
  for (long z = b.lo[2]; z < b.hi[2]; ++z)
    for (long y = b.lo[1]; y < b.hi[1]; ++y, k += static_cast<std::size_t>(width))
      std::memcpy(packed + k, field + l.offset(b.lo[0], y, z), static_cast<std::size_t>(width) * sizeof(T));
}

template <typename T>
void unpack_typed(const T* packed, const Layout& l, const Box& b, T* field) {
  std::size_t k = 0;
  const long width = b.hi[0] - b.lo[0];
  if (width <= 0) return;
  for (long z = b.lo[2]; z < b.hi[2]; ++z)
    for (long y = b.lo[1]; y < b.hi[1]; ++y, k += static_cast<std::size_t>(width))
      std::memcpy(field + l.offset(b.lo[0], y, z), packed + k, static_cast<std::size_t>(width) * sizeof(T));
}

// The one definition of the stencil's arithmetic on the host; src/cuda/halo_kernels.cu repeats it
// term for term (same order, same weight) so that results agree bit for bit.
template <typename T>
void stencil_typed(const T* in, T* out, const Layout& l, const Box& b) {
  const auto e = l.extent();
  const std::ptrdiff_t sy = e[0], sz = static_cast<std::ptrdiff_t>(e[0]) * e[1];
  const int radius = l.halo;
  const bool three = l.dims == 3;
  const T w = T(1) / static_cast<T>(1 + 2 * l.dims * l.halo);
  const long width = b.hi[0] - b.lo[0];
  // Row by row: the cells of a row are contiguous, so that the compiler can keep the row's loop simple
  // (--validate replays every rank's subdomain with this loop); each cell's sum keeps its order.
  for (long z = b.lo[2]; z < b.hi[2]; ++z)
    for (long y = b.lo[1]; y < b.hi[1]; ++y) {
      const T* row = in + l.offset(b.lo[0], y, z);
      T* row_out = out + l.offset(b.lo[0], y, z);
      for (long x = 0; x < width; ++x) {
        const T* c = row + x;
        T s = c[0];
        for (int r = 1; r <= radius; ++r) {
          s += c[-r];
          s += c[r];
          s += c[-r * sy];
          s += c[r * sy];
          if (three) {
            s += c[-r * sz];
            s += c[r * sz];
          }
        }
        row_out[x] = s * w;
      }
    }
}

// Poison for the halos a neighbour fills, before the replay's first exchange: no initial value is negative.
constexpr double kPoison = -1.0;

const char* const kDirectionNames[] = {"-x", "+x", "-y", "+y", "-z", "+z"};

template <typename T>
void fill_box(T* field, const Layout& l, const Box& b, T value) {
  for_each_cell(b, [&](long x, long y, long z) { field[l.offset(x, y, z)] = value; });
}

// The first halo cell of side d (a box of `field`) that does not hold the initial value of the global cell it
// stands for (wrapped around the domain when periodic), as a message; "" when every cell does.
template <typename T>
std::string first_wrong_halo_cell(const T* field, const Layout& l, int d, std::array<long, 3> origin,
                                  std::array<long, 3> global, bool periodic) {
  std::string wrong;
  for_each_cell(recv_box(l, d), [&](long x, long y, long z) {
    if (!wrong.empty()) return;
    std::array<long, 3> g{origin[0] + x, origin[1] + y, origin[2] + z};
    if (periodic)
      for (int a = 0; a < l.dims; ++a) g[a] = ((g[a] % global[a]) + global[a]) % global[a];
    const T want = static_cast<T>(initial_value(g[0], g[1], g[2]));
    const T got = field[l.offset(x, y, z)];
    if (got == want) return;
    char text[320];
    std::snprintf(text, sizeof text,
                  "the halo on side %s after the first exchange holds %.17g at global cell (%ld, %ld, %ld), whose initial "
                  "value is %.17g: a face from the wrong rank, side or layers, or none",
                  kDirectionNames[d], static_cast<double>(got), g[0], g[1], g[2], static_cast<double>(want));
    wrong = text;
  });
  return wrong;
}

template <typename T>
Replay::Comparison compare_typed(const T* got, const T* want, const Layout& l, std::array<long, 3> origin,
                                 double tolerance) {
  Replay::Comparison c;
  for_each_cell(l.interior(), [&](long x, long y, long z) {
    const std::size_t k = l.offset(x, y, z);
    const double e = std::fabs(static_cast<double>(got[k]) - static_cast<double>(want[k]));
    if (!(e <= tolerance) && c.first_mismatch.empty()) {  // also catches NaN
      char text[256];
      std::snprintf(text, sizeof text, "global cell (%ld, %ld, %ld): %.17g, its host replay has %.17g", origin[0] + x,
                    origin[1] + y, origin[2] + z, static_cast<double>(got[k]), static_cast<double>(want[k]));
      c.first_mismatch = text;
    }
    if (!(e <= c.max_abs_error)) c.max_abs_error = e;
  });
  return c;
}

}  // namespace

void host_initialize(void* field, const Layout& l, std::array<long, 3> origin) {
  if (l.dtype == Dtype::f32) initialize_typed(static_cast<float*>(field), l, origin);
  else initialize_typed(static_cast<double*>(field), l, origin);
}

void host_pack(const void* field, const Layout& l, const Box& b, void* packed) {
  if (l.dtype == Dtype::f32) pack_typed(static_cast<const float*>(field), l, b, static_cast<float*>(packed));
  else pack_typed(static_cast<const double*>(field), l, b, static_cast<double*>(packed));
}

void host_unpack(const void* packed, const Layout& l, const Box& b, void* field) {
  if (l.dtype == Dtype::f32) unpack_typed(static_cast<const float*>(packed), l, b, static_cast<float*>(field));
  else unpack_typed(static_cast<const double*>(packed), l, b, static_cast<double*>(field));
}

void host_stencil(const void* in, void* out, const Layout& l, const Box& b) {
  if (l.dtype == Dtype::f32) stencil_typed(static_cast<const float*>(in), static_cast<float*>(out), l, b);
  else stencil_typed(static_cast<const double*>(in), static_cast<double*>(out), l, b);
}

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> table = {
      {"staged-pinned", "staged"}, {"direct", nullptr}, {"pipelined", nullptr}, {"pipelined-overlap", "overlap"}};
  return table;
}

std::string canonical_strategy(const std::string& text) {
  for (const Strategy& s : strategies())
    if (text == s.name || (s.former_name && text == s.former_name)) return s.name;
  return "";
}


Replay::Replay(const Layout& l, std::array<long, 3> origin, std::array<long, 3> global, bool periodic)
    : l_(l), origin_(origin), global_(global), periodic_(periodic) {
  field_[0].resize(l_.padded_bytes());
  host_initialize(field_[0].data(), l_, origin_);
  field_[1] = field_[0];  // both hold the fixed boundary values in their halos
}

bool Replay::neighbour_fills(int d) const {
  if (periodic_) return true;
  const int axis = d / 2;
  return d % 2 == 0 ? origin_[axis] > 0 : origin_[axis] + l_.n[axis] < global_[axis];
}

std::string Replay::run(int steps, const std::function<void(void* field)>& exchange) {
  std::string wrong;
  for (int s = 0; s < steps; ++s) {
    void* in = field_[current_].data();
    if (s == 0)
      for (int d = 0; d < 2 * l_.dims; ++d) {
        if (!neighbour_fills(d)) continue;
        if (l_.dtype == Dtype::f32) fill_box(static_cast<float*>(in), l_, recv_box(l_, d), static_cast<float>(kPoison));
        else fill_box(static_cast<double*>(in), l_, recv_box(l_, d), kPoison);
      }
    exchange(in);
    if (s == 0)
      for (int d = 0; d < 2 * l_.dims && wrong.empty(); ++d) {
        if (!neighbour_fills(d)) continue;
        wrong = l_.dtype == Dtype::f32
                    ? first_wrong_halo_cell(static_cast<const float*>(in), l_, d, origin_, global_, periodic_)
                    : first_wrong_halo_cell(static_cast<const double*>(in), l_, d, origin_, global_, periodic_);
      }
    host_stencil(in, field_[current_ ^ 1].data(), l_, l_.interior());
    current_ ^= 1;
  }
  return wrong;
}

Replay::Comparison Replay::compare(const void* padded, double tolerance) const {
  if (l_.dtype == Dtype::f32)
    return compare_typed(static_cast<const float*>(padded), reinterpret_cast<const float*>(field()), l_, origin_,
                         tolerance);
  return compare_typed(static_cast<const double*>(padded), reinterpret_cast<const double*>(field()), l_, origin_,
                       tolerance);
}

}  // namespace gmb::halo
