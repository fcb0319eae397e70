// SPDX-License-Identifier: BSD-3-Clause
// GPU kernels of the halo mini-app: pack / unpack of a face (a strided box of the padded field
// into a contiguous buffer) and the Jacobi star stencil over a box. The arithmetic repeats
// stencil_typed in src/bench/halo_host.cpp term for term, so GPU and host agree bit for bit.
#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "gmb/error.hpp"
#include "gmb/halo_kernels.hpp"

namespace gmb::halo {

namespace {

// What a kernel needs of a box: its origin in the padded array and its extents.
struct DeviceBox {
  long long x0, y0, z0;     // padded coordinates of the box's first cell
  long long bx, by, bz;     // box extents
  long long ex, ey;         // padded extents of the field (x, y)
  unsigned long long cells;
};

DeviceBox device_box(const Layout& l, const Box& b) {
  const auto e = l.extent();
  DeviceBox d;
  d.x0 = b.lo[0] + l.pad[0];
  d.y0 = b.lo[1] + l.pad[1];
  d.z0 = b.lo[2] + l.pad[2];
  d.bx = b.hi[0] - b.lo[0];
  d.by = b.hi[1] - b.lo[1];
  d.bz = b.hi[2] - b.lo[2];
  d.ex = e[0];
  d.ey = e[1];
  d.cells = b.cells();
  return d;
}

// Element offset in the padded field of the k-th cell of the box (x fastest).
__device__ __forceinline__ long long field_offset(const DeviceBox& b, unsigned long long k) {
  const long long x = static_cast<long long>(k % b.bx);
  const long long rest = static_cast<long long>(k / b.bx);
  const long long y = rest % b.by;
  const long long z = rest / b.by;
  return ((b.z0 + z) * b.ey + (b.y0 + y)) * b.ex + (b.x0 + x);
}

template <typename T>
__global__ void pack_kernel(const T* __restrict__ field, DeviceBox b, T* __restrict__ packed) {
  for (unsigned long long k = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; k < b.cells;
       k += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    packed[k] = field[field_offset(b, k)];
}

template <typename T>
__global__ void unpack_kernel(const T* __restrict__ packed, DeviceBox b, T* __restrict__ field) {
  for (unsigned long long k = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; k < b.cells;
       k += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    field[field_offset(b, k)] = packed[k];
}

template <typename T>
__global__ void stencil_kernel(const T* __restrict__ in, T* __restrict__ out, DeviceBox b, int radius, bool three,
                               T w) {
  const long long sy = b.ex, sz = b.ex * b.ey;
  for (unsigned long long k = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; k < b.cells;
       k += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const long long c = field_offset(b, k);
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
  }
}

constexpr unsigned kThreads = 256;

unsigned blocks_for(unsigned long long cells) {
  const unsigned long long blocks = (cells + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535ull * 8 ? blocks : 65535ull * 8);  // grid-stride beyond that
}

cudaStream_t as_stream(GpuStream s) { return static_cast<cudaStream_t>(s); }

class CudaHaloKernels final : public GpuKernels {
 public:
  void pack(const void* field, const Layout& l, const Box& b, void* packed, GpuStream stream) override {
    const DeviceBox d = device_box(l, b);
    if (d.cells == 0) return;
    if (l.dtype == Dtype::f32)
      pack_kernel<float><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(static_cast<const float*>(field), d,
                                                                                   static_cast<float*>(packed));
    else
      pack_kernel<double><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(static_cast<const double*>(field), d,
                                                                                    static_cast<double*>(packed));
    GMB_CUDA_CHECK_LAUNCH("pack_kernel");
  }

  void unpack(const void* packed, const Layout& l, const Box& b, void* field, GpuStream stream) override {
    const DeviceBox d = device_box(l, b);
    if (d.cells == 0) return;
    if (l.dtype == Dtype::f32)
      unpack_kernel<float><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(static_cast<const float*>(packed),
                                                                                     d, static_cast<float*>(field));
    else
      unpack_kernel<double><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(
          static_cast<const double*>(packed), d, static_cast<double*>(field));
    GMB_CUDA_CHECK_LAUNCH("unpack_kernel");
  }

  void stencil(const void* in, void* out, const Layout& l, const Box& b, GpuStream stream) override {
    const DeviceBox d = device_box(l, b);
    if (d.cells == 0) return;
    const bool three = l.dims == 3;
    const int count = 1 + 2 * l.dims * l.halo;
    if (l.dtype == Dtype::f32)
      stencil_kernel<float><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(
          static_cast<const float*>(in), static_cast<float*>(out), d, l.halo, three, 1.0f / static_cast<float>(count));
    else
      stencil_kernel<double><<<blocks_for(d.cells), kThreads, 0, as_stream(stream)>>>(
          static_cast<const double*>(in), static_cast<double*>(out), d, l.halo, three, 1.0 / static_cast<double>(count));
    GMB_CUDA_CHECK_LAUNCH("stencil_kernel");
  }

  GpuStream create_stream(bool high_priority) override {
    int least = 0, greatest = 0;  // numerically: greatest priority is the lowest number
    GMB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    GMB_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? greatest : least));
    return s;
  }

  void destroy_stream(GpuStream stream) override {
    if (stream) GMB_CUDA_CHECK(cudaStreamDestroy(as_stream(stream)));
  }
};

}  // namespace

std::unique_ptr<GpuKernels> make_gpu_kernels() { return std::make_unique<CudaHaloKernels>(); }

}  // namespace gmb::halo
