// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "gmb/gpu.hpp"

namespace gmb::cuda {

class CudaRuntime final : public GpuRuntime {
 public:
  int device_count(std::string* error) const override;
  void select_device(int index) override;
  int current_device_index() const override;
  GpuInfo device_info(int index) const override;
  std::string runtime_version() const override;
  std::string driver_version() const override;
  void synchronize() override;
  std::size_t free_memory() const override;

  GpuStream create_stream() override;
  void destroy_stream(GpuStream stream) override;
  void stream_synchronize(GpuStream stream) override;
  GpuEvent create_event() override;
  void destroy_event(GpuEvent event) override;
  void record_event(GpuEvent event, GpuStream stream) override;
  void event_synchronize(GpuEvent event) override;
  bool event_done(GpuEvent event) override;
  double elapsed_ms(GpuEvent start, GpuEvent stop) override;

  void copy(void* dst, const void* src, std::size_t bytes) override;
  void copy_async(void* dst, const void* src, std::size_t bytes, GpuStream stream) override;
  void busy_kernel(double seconds, GpuStream stream) override;
  void empty_kernel(GpuStream stream) override;
  void partition_producer(void* data, std::size_t bytes, int partitions, double seconds, std::uint32_t seed,
                          std::uint32_t* flags, std::uint32_t epoch, GpuStream stream) override;
  void sm_copy(void* dst, const void* src, std::size_t bytes, GpuStream stream) override;
  bool enable_peer_access(int from, int to) override;
  std::string ipc_export(void* device_pointer) override;
  void* ipc_open(const std::string& handle) override;
  void ipc_close(void* pointer) override;
  bool dma_buf_supported(int index, std::string* problem) const override;
  GpuLink link_between(const std::string& pci_a, const std::string& pci_b) const override;
  std::unique_ptr<UnifiedMemoryCounter> unified_memory_counter(std::string* reason) override;
};

}  // namespace gmb::cuda
