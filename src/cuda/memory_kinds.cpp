// SPDX-License-Identifier: BSD-3-Clause
// GPU memory kinds: pinned host, device and managed buffers (RAII), registered in the table.
#include <cuda_runtime.h>

#include <cstring>

#include "cuda_check.hpp"
#include "gmb/memory.hpp"
#include "memory_kinds.hpp"
#include "pattern_kernels.hpp"

namespace gmb::cuda {

namespace {

std::string allocation_failure(const char* what, std::size_t bytes, cudaError_t status) {
  cudaGetLastError();  // an allocation failure is not sticky; clear it so later calls are unaffected
  return std::string("cannot allocate ") + std::to_string(bytes) + " bytes of " + what + ": " +
         cudaGetErrorString(status);
}

// Page-locked host memory from cudaMallocHost (host registration of existing memory fails on some
// machines, allocation works). CPU-addressable: filled and checked on the CPU.
class PinnedHostBuffer final : public HostAddressableBuffer {
 public:
  explicit PinnedHostBuffer(std::size_t bytes) : HostAddressableBuffer(allocate(bytes), bytes) {}
  ~PinnedHostBuffer() override { cudaFreeHost(data_); }

 private:
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (const cudaError_t s = cudaMallocHost(&p, bytes); s != cudaSuccess)
      throw Unsupported(allocation_failure("pinned host memory", bytes, s));
    return p;
  }
};

// GPU memory: written and checked by kernels on the current device.
class DeviceBuffer final : public Buffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : Buffer(allocate(bytes), bytes) {}
  ~DeviceBuffer() override { cudaFree(data_); }
  void fill(std::size_t bytes, std::uint32_t seed) override {
    launch_fill_pattern(data_, bytes, seed, false, nullptr);
    GMB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  void poison(std::size_t bytes, std::uint32_t seed) override {
    launch_fill_pattern(data_, bytes, seed, true, nullptr);
    GMB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    const std::size_t bad = first_pattern_mismatch(data_, bytes, seed, nullptr);
    if (bad < bytes) return bad;
    return std::nullopt;
  }

 private:
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (const cudaError_t s = cudaMalloc(&p, bytes); s != cudaSuccess)
      throw Unsupported(allocation_failure("device memory", bytes, s));
    return p;
  }
};

// Unified memory. The effective location is set by place(): a kernel touching every page
// (device) or a CPU pass over every page (host). Filled and checked where it currently is
// accessed from: the CPU writes the pattern, so fill() leaves it on the host.
class ManagedBuffer final : public Buffer {
 public:
  explicit ManagedBuffer(std::size_t bytes) : Buffer(allocate(bytes), bytes) { live_bytes_ += bytes; }
  ~ManagedBuffer() override {
    cudaFree(data_);
    live_bytes_ -= bytes_;
  }
  void fill(std::size_t bytes, std::uint32_t seed) override {
    GMB_CUDA_CHECK(cudaDeviceSynchronize());
    fill_pattern(data_, bytes, seed);
  }
  void poison(std::size_t bytes, std::uint32_t seed) override {
    GMB_CUDA_CHECK(cudaDeviceSynchronize());
    fill_pattern(data_, bytes, seed, true);
  }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    GMB_CUDA_CHECK(cudaDeviceSynchronize());
    return find_pattern_mismatch(data_, bytes, seed);
  }
  void place(Placement where, std::size_t bytes) override {
    if (where == Placement::device) {
      launch_touch(data_, bytes, nullptr);
      GMB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    } else if (where == Placement::host) {
      GMB_CUDA_CHECK(cudaDeviceSynchronize());
      volatile auto* p = static_cast<volatile std::uint8_t*>(data_);
      for (std::size_t k = 0; k < bytes; k += 4096) p[k] = p[k];
    }
  }

 private:
  static void* allocate(std::size_t bytes) {
    // Never hold more managed memory than the GPU has free: once it is placed on the device, the
    // excess would be evicted and re-fetched (or hang older GPUs), and the run would measure that.
    // cudaMallocManaged itself succeeds far beyond device memory and cudaMemGetInfo does not see
    // managed memory until it is resident, so this process's live managed bytes are counted
    // (conservatively: as if none of them were resident yet).
    std::size_t free_bytes = 0, total_bytes = 0;
    GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (live_bytes_ + bytes > free_bytes)
      throw Unsupported("refusing to allocate " + std::to_string(bytes) + " bytes of managed memory: with the " +
                        std::to_string(live_bytes_) + " bytes this process already holds it would exceed the " +
                        std::to_string(free_bytes) + " bytes of device memory free (of " + std::to_string(total_bytes) +
                        "); oversubscribed managed memory measures eviction, not MPI");
    void* p = nullptr;
    if (const cudaError_t s = cudaMallocManaged(&p, bytes); s != cudaSuccess)
      throw Unsupported(allocation_failure("managed memory", bytes, s));
    return p;
  }

  // Managed bytes this process holds (engine is single-threaded).
  static inline std::size_t live_bytes_ = 0;
};

}  // namespace

void register_gpu_memory(MemoryKinds& kinds, const std::string& unavailable_reason) {
  GpuAllocators allocators;
  allocators.pinned = [](std::size_t bytes) -> std::unique_ptr<Buffer> { return std::make_unique<PinnedHostBuffer>(bytes); };
  allocators.device = [](std::size_t bytes) -> std::unique_ptr<Buffer> { return std::make_unique<DeviceBuffer>(bytes); };
  allocators.managed = [](std::size_t bytes) -> std::unique_ptr<Buffer> { return std::make_unique<ManagedBuffer>(bytes); };
  register_gpu_memory_kinds(kinds, unavailable_reason, allocators);
}

}  // namespace gmb::cuda
