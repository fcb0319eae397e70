// SPDX-License-Identifier: BSD-3-Clause
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "cuda_check.hpp"
#include "gmb/pci_topology.hpp"
#include "gpu_runtime.hpp"
#include "nvml_links.hpp"
#include "pattern_kernels.hpp"
#include "um_counters.hpp"

namespace gmb::cuda {

namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

int CudaRuntime::device_count(std::string* error) const {
  int count = 0;
  const cudaError_t s = cudaGetDeviceCount(&count);
  if (s != cudaSuccess) {
    cudaGetLastError();
    // What CUDA's words mean on a machine with the toolkit but no usable driver or GPU (a login node, a container
    // without GPUs): "CUDA driver version is insufficient for CUDA runtime version" reads as a version problem.
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    if (!error) return 0;
    if (s == cudaErrorInsufficientDriver)
      *error = "no CUDA driver is loaded, or it is older than the CUDA " + version_text(runtime) +
               " runtime this engine was built with";
    else if (s == cudaErrorNoDevice)
      *error = "the CUDA driver finds no GPU (none installed, or none visible: CUDA_VISIBLE_DEVICES, the container)";
    else
      *error = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(s);
    return 0;
  }
  if (count == 0 && error) *error = "the CUDA driver finds no GPU";
  return count;
}

void CudaRuntime::select_device(int index) { GMB_CUDA_CHECK(cudaSetDevice(index)); }

int CudaRuntime::current_device_index() const {
  int index = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

GpuInfo CudaRuntime::device_info(int index) const {
  GpuInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  GMB_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.index));
  info.name = prop.name;
  char uuid[64];
  const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  info.uuid = uuid;
  char pci[32];
  std::snprintf(pci, sizeof pci, "%08x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  info.pci_bus_id = pci;
  info.memory_bytes = prop.totalGlobalMem;
  return info;
}

std::string CudaRuntime::runtime_version() const {
  int v = 0;
  GMB_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  return version_text(v);
}

std::string CudaRuntime::driver_version() const {
  int v = 0;
  GMB_CUDA_CHECK(cudaDriverGetVersion(&v));
  return v ? version_text(v) : "no driver";
}

void CudaRuntime::synchronize() { GMB_CUDA_CHECK(cudaDeviceSynchronize()); }

std::size_t CudaRuntime::free_memory() const {
  std::size_t free_bytes = 0, total = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

static cudaStream_t as_stream(GpuStream s) { return static_cast<cudaStream_t>(s); }
static cudaEvent_t as_event(GpuEvent e) { return static_cast<cudaEvent_t>(e); }

GpuStream CudaRuntime::create_stream() {
  cudaStream_t s = nullptr;
  GMB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}
void CudaRuntime::destroy_stream(GpuStream stream) {
  if (stream) GMB_CUDA_CHECK(cudaStreamDestroy(as_stream(stream)));
}
void CudaRuntime::stream_synchronize(GpuStream stream) { GMB_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream))); }
GpuEvent CudaRuntime::create_event() {
  cudaEvent_t e = nullptr;
  GMB_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}
void CudaRuntime::destroy_event(GpuEvent event) {
  if (event) GMB_CUDA_CHECK(cudaEventDestroy(as_event(event)));
}
void CudaRuntime::record_event(GpuEvent event, GpuStream stream) {
  GMB_CUDA_CHECK(cudaEventRecord(as_event(event), as_stream(stream)));
}
void CudaRuntime::event_synchronize(GpuEvent event) { GMB_CUDA_CHECK(cudaEventSynchronize(as_event(event))); }
bool CudaRuntime::event_done(GpuEvent event) {
  const cudaError_t s = cudaEventQuery(as_event(event));
  if (s == cudaErrorNotReady) return false;
  GMB_CUDA_CHECK(s);
  return true;
}
double CudaRuntime::elapsed_ms(GpuEvent start, GpuEvent stop) {
  float ms = 0;
  GMB_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(start), as_event(stop)));
  return ms;
}

void CudaRuntime::copy(void* dst, const void* src, std::size_t bytes) {
  GMB_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  // From pageable memory cudaMemcpy may return before the DMA lands, and non-blocking streams (the
  // MPI library's, NCCL's) do not wait for it: the copy is complete when this returns.
  GMB_CUDA_CHECK(cudaDeviceSynchronize());
}
void CudaRuntime::copy_async(void* dst, const void* src, std::size_t bytes, GpuStream stream) {
  GMB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream)));
}
void CudaRuntime::busy_kernel(double seconds, GpuStream stream) { launch_busy(seconds, as_stream(stream)); }
void CudaRuntime::empty_kernel(GpuStream stream) { launch_empty(as_stream(stream)); }
void CudaRuntime::partition_producer(void* data, std::size_t bytes, int partitions, double seconds, std::uint32_t seed,
                                     std::uint32_t* flags, std::uint32_t epoch, GpuStream stream) {
  launch_partition_producer(data, bytes, partitions, seconds, seed, flags, epoch, as_stream(stream));
}

void CudaRuntime::sm_copy(void* dst, const void* src, std::size_t bytes, GpuStream stream) {
  launch_sm_copy(dst, src, bytes, as_stream(stream));
}

bool CudaRuntime::enable_peer_access(int from, int to) {
  int can = 0;
  GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) return false;
  int previous = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&previous));
  GMB_CUDA_CHECK(cudaSetDevice(from));
  const cudaError_t s = cudaDeviceEnablePeerAccess(to, 0);
  if (s == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
  else GMB_CUDA_CHECK(s);
  GMB_CUDA_CHECK(cudaSetDevice(previous));
  return true;
}

std::string CudaRuntime::ipc_export(void* device_pointer) {
  cudaIpcMemHandle_t handle;
  GMB_CUDA_CHECK(cudaIpcGetMemHandle(&handle, device_pointer));
  return std::string(reinterpret_cast<const char*>(&handle), sizeof handle);
}

void* CudaRuntime::ipc_open(const std::string& handle) {
  if (handle.size() != sizeof(cudaIpcMemHandle_t)) GMB_FATAL("malformed CUDA IPC handle");
  cudaIpcMemHandle_t h;
  std::memcpy(&h, handle.data(), sizeof h);
  void* p = nullptr;
  GMB_CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
  return p;
}

void CudaRuntime::ipc_close(void* pointer) { GMB_CUDA_CHECK(cudaIpcCloseMemHandle(pointer)); }

// A driver-API attribute (the runtime has no name for it): libcuda.so.1 is opened as NVML is, so that the engine
// links only the runtime. The runtime has initialised the driver, and both number devices alike.
bool CudaRuntime::dma_buf_supported(int index, std::string* problem) const {
  using GetDevice = CUresult (*)(CUdevice*, int);
  using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  static void* const driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  const auto get_device = driver ? reinterpret_cast<GetDevice>(dlsym(driver, "cuDeviceGet")) : nullptr;
  const auto get_attribute = driver ? reinterpret_cast<GetAttribute>(dlsym(driver, "cuDeviceGetAttribute")) : nullptr;
  if (!get_device || !get_attribute) {
    *problem = "cannot open libcuda.so.1 or find cuDeviceGet/cuDeviceGetAttribute in it";
    return false;
  }
  CUdevice device = 0;
  int supported = 0;
  CUresult s = get_device(&device, index);
  if (s == CUDA_SUCCESS) s = get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device);
  if (s != CUDA_SUCCESS) {
    *problem = "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) on device " + std::to_string(index) + " failed: CUresult " + std::to_string(s);
    return false;
  }
  return supported != 0;
}

GpuLink CudaRuntime::link_between(const std::string& pci_a, const std::string& pci_b) const {
  if (pci_a == pci_b) return {"same-gpu", "one GPU", 0};
  if (GpuLink link = nvml_link_between(pci_a, pci_b); !link.kind.empty()) return link;
  // Without NVML: CUDA tells only whether peer access works, not over which link.
  int a = -1, b = -1;
  if (cudaDeviceGetByPCIBusId(&a, pci_a.c_str()) != cudaSuccess || cudaDeviceGetByPCIBusId(&b, pci_b.c_str()) != cudaSuccess) {
    cudaGetLastError();
    return {"unknown", "GPU not visible to this process", 0};
  }
  int can = 0;
  GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
  const std::string where = pcie_common_ancestor(pci_a, pci_b);
  const std::string tree = where.empty() ? "" : "; PCIe common ancestor (sysfs): " + where;
  return {can ? "peer" : "pcie", (can ? "peer access (link type unknown: NVML not available)" : "no peer access") + tree, 0};
}

std::unique_ptr<UnifiedMemoryCounter> CudaRuntime::unified_memory_counter(std::string* reason) {
  return make_cupti_unified_memory_counter(reason);
}

}  // namespace gmb::cuda
