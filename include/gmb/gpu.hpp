// SPDX-License-Identifier: BSD-3-Clause
// What the engine needs from a GPU runtime, without CUDA headers. The CUDA module provides the
// implementation; a host-only build has none (Platform::gpu is null) and benchmarks that need it
// report "unsupported" with Platform::gpu_unavailable_reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gmb {

struct GpuInfo {
  int index = -1;
  std::string name, uuid, pci_bus_id;
  std::size_t memory_bytes = 0;
};

// The link between two GPUs of one host.
struct GpuLink {
  std::string kind;            // "nvlink", "pcie", "same-gpu", "unknown"
  std::string detail;          // e.g. "NV18 (NVLink 4)" or how it was determined
  double nominal_GBps = 0;     // per direction; 0 when unknown
};

// Opaque handles (cudaStream_t / cudaEvent_t underneath). A null stream is the default stream.
using GpuStream = void*;
using GpuEvent = void*;

// What CUPTI's unified-memory counters saw in one process between start() and stop().
struct UnifiedMemoryCounts {
  std::uint64_t gpu_page_faults = 0;  // GPU page fault groups (the sum of CUPTI's GPU_PAGE_FAULT values)
  std::uint64_t cpu_page_faults = 0;  // CPU page faults (one CPU_PAGE_FAULT_COUNT record each)
  std::uint64_t htod_bytes = 0;       // bytes migrated host to device
  std::uint64_t dtoh_bytes = 0;       // bytes migrated device to host
  std::uint64_t dropped_records = 0;  // records CUPTI lost: the counts are then lower bounds
};

// Page faults and migrations of managed memory (docs/methodology.md "Page faults").
class UnifiedMemoryCounter {
 public:
  virtual ~UnifiedMemoryCounter() = default;
  // Starts counting; "" or why counting could not start.
  virtual std::string start() = 0;
  // Stops counting and returns what was counted since start(); sets `error` when that failed.
  virtual UnifiedMemoryCounts stop(std::string* error) = 0;
};

class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;
  // Number of visible devices; 0 with `error` set when the runtime cannot find any.
  virtual int device_count(std::string* error) const = 0;
  virtual void select_device(int index) = 0;
  virtual int current_device_index() const = 0;
  virtual GpuInfo device_info(int index) const = 0;
  GpuInfo current_device() const { return device_info(current_device_index()); }
  virtual std::string runtime_version() const = 0;
  virtual std::string driver_version() const = 0;
  virtual void synchronize() = 0;
  // Bytes of device memory free on the current device.
  virtual std::size_t free_memory() const = 0;

  // Streams and events.
  virtual GpuStream create_stream() = 0;
  virtual void destroy_stream(GpuStream stream) = 0;
  virtual void stream_synchronize(GpuStream stream) = 0;
  virtual GpuEvent create_event() = 0;
  virtual void destroy_event(GpuEvent event) = 0;
  virtual void record_event(GpuEvent event, GpuStream stream) = 0;
  virtual void event_synchronize(GpuEvent event) = 0;
  virtual bool event_done(GpuEvent event) = 0;
  // Milliseconds between two recorded, completed events.
  virtual double elapsed_ms(GpuEvent start, GpuEvent stop) = 0;

  // Copies between any two allocations (host, pinned, device, managed; direction inferred).
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, GpuStream stream) = 0;

  // A kernel that keeps one block busy on `stream` for about `seconds` (clock-based), used as
  // calibrated dummy compute and to hold a stream while copies are queued behind it.
  virtual void busy_kernel(double seconds, GpuStream stream) = 0;
  // An empty kernel (launch-cost measurement).
  virtual void empty_kernel(GpuStream stream) = 0;
  // A kernel producing a partitioned send buffer: an equal share of the device's blocks per partition,
  // partitions finishing in order over about `seconds`. The blocks of partition p write it in `data` (`bytes`
  // split into `partitions` equal parts; the validation pattern for `seed`) and make it visible to the
  // system; the last of them sets flags[p] = epoch. `flags` is page-locked host memory the host polls to ready
  // each partition as soon as it is written.
  virtual void partition_producer(void* data, std::size_t bytes, int partitions, double seconds, std::uint32_t seed,
                                  std::uint32_t* flags, std::uint32_t epoch, GpuStream stream) = 0;
  // A grid-stride copy kernel on the current device (the SM copy path, as opposed to copy engines).
  virtual void sm_copy(void* dst, const void* src, std::size_t bytes, GpuStream stream) = 0;

  // Peer access from device `from` to memory of device `to`; false when the pair cannot.
  virtual bool enable_peer_access(int from, int to) = 0;
  // CUDA IPC: a handle to device memory another process on the host can open.
  virtual std::string ipc_export(void* device_pointer) = 0;
  virtual void* ipc_open(const std::string& handle) = 0;
  virtual void ipc_close(void* pointer) = 0;

  // How two GPUs of this host are linked (NVML when present, else the CUDA peer query).
  // Whether the device can export memory as dma-buf (GPUDirect RDMA without nvidia_peermem); false with
  // `problem` set when the question could not be asked.
  virtual bool dma_buf_supported(int index, std::string* problem) const = 0;
  virtual GpuLink link_between(const std::string& pci_a, const std::string& pci_b) const = 0;

  // Unified-memory counters for the current device; null with `reason` set where they cannot be
  // had (no CUPTI library, or CUPTI refuses unified-memory profiling on this device or system).
  virtual std::unique_ptr<UnifiedMemoryCounter> unified_memory_counter(std::string* reason) = 0;
};

// RAII owner of a GpuStream.
class StreamOwner {
 public:
  StreamOwner(GpuRuntime& gpu) : gpu_(&gpu), stream_(gpu.create_stream()) {}
  ~StreamOwner() { gpu_->destroy_stream(stream_); }
  StreamOwner(const StreamOwner&) = delete;
  StreamOwner& operator=(const StreamOwner&) = delete;
  GpuStream get() const { return stream_; }

 private:
  GpuRuntime* gpu_;
  GpuStream stream_;
};

// RAII owner of a GpuEvent.
class EventOwner {
 public:
  EventOwner(GpuRuntime& gpu) : gpu_(&gpu), event_(gpu.create_event()) {}
  ~EventOwner() { gpu_->destroy_event(event_); }
  EventOwner(const EventOwner&) = delete;
  EventOwner& operator=(const EventOwner&) = delete;
  GpuEvent get() const { return event_; }

 private:
  GpuRuntime* gpu_;
  GpuEvent event_;
};

}  // namespace gmb
