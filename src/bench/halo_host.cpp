// SPDX-License-Identifier: BSD-3-Clause
// Host side of the halo mini-app: layout helpers, host pack / unpack / stencil and the
// single-domain reference (include/gmb/halo_kernels.hpp says what each computes).
#include <algorithm>
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
  for_each_cell(b, [&](long x, long y, long z) {
    const std::size_t c = l.offset(x, y, z);
    T s = in[c];
    for (int r = 1; r <= radius; ++r) {
      s += in[c - r];
      s += in[c + r];
      s += in[c - r * sy];
      s += in[c + r * sy];
      if (three) {
        s += in[c - r * sz];
        s += in[c + r * sz];
      }
    }
    out[c] = s * w;
  });
}

template <typename T>
void extract_typed(const T* field, const Layout& l, T* dense) {
  pack_typed(field, l, l.interior(), dense);
}

// Refreshes the halos of a single-domain field: periodic wrap-around (the far interior layers)
// or nothing (they keep their initial boundary values).
template <typename T>
void wrap_halos(T* field, const Layout& l, std::vector<T>& scratch) {
  for (int d = 0; d < 2 * l.dims; ++d) {
    const Box from = send_box(l, opposite(d));  // my high layers fill my low halo, and back
    scratch.resize(from.cells());
    pack_typed(field, l, from, scratch.data());
    unpack_typed(scratch.data(), l, recv_box(l, d), field);
  }
}

template <typename T>
std::vector<unsigned char> reference_typed(const Layout& l, bool periodic, int steps) {
  std::vector<T> a(l.padded_cells()), b(l.padded_cells()), scratch;
  initialize_typed(a.data(), l, {0, 0, 0});
  initialize_typed(b.data(), l, {0, 0, 0});
  for (int s = 0; s < steps; ++s) {
    if (periodic) wrap_halos(a.data(), l, scratch);
    stencil_typed(a.data(), b.data(), l, l.interior());
    std::swap(a, b);
  }
  std::vector<unsigned char> dense(l.interior().cells() * sizeof(T));
  extract_typed(a.data(), l, reinterpret_cast<T*>(dense.data()));
  return dense;
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

void host_extract_interior(const void* field, const Layout& l, void* dense) {
  if (l.dtype == Dtype::f32) extract_typed(static_cast<const float*>(field), l, static_cast<float*>(dense));
  else extract_typed(static_cast<const double*>(field), l, static_cast<double*>(dense));
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

std::vector<unsigned char> reference_solution(int dims, int halo, std::array<long, 3> global, Dtype dtype,
                                              bool periodic, int steps) {
  const Layout l = Layout::make(dims, halo, global, dtype);
  if (dtype == Dtype::f32) return reference_typed<float>(l, periodic, steps);
  return reference_typed<double>(l, periodic, steps);
}

}  // namespace gmb::halo
