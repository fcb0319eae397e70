// SPDX-License-Identifier: BSD-3-Clause
#include "um_counters.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "cuda_check.hpp"
#include "pattern_kernels.hpp"

#if GMB_HAVE_CUPTI
#include <cupti.h>
#endif

namespace gmb::cuda {

#if !GMB_HAVE_CUPTI

std::unique_ptr<UnifiedMemoryCounter> make_cupti_unified_memory_counter(std::string* reason) {
  *reason = "this gmb-bench was built without CUPTI's headers (cupti.h was not found next to the CUDA toolkit)";
  return nullptr;
}

#else

namespace {

// CUPTI's functions used here, resolved from libcupti at run time. The types come from cupti.h;
// only records' leading fields (kind, counterKind, value), which every CUPTI version shares, are read.
struct CuptiApi {
  decltype(&cuptiActivityConfigureUnifiedMemoryCounter) configure = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  std::string error;  // why CUPTI cannot be used; empty when it can
};

template <typename F>
bool resolve(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  return f != nullptr;
}

// GMB_CUPTI_LIBRARY names the library explicitly; otherwise the soname of the CUDA major version this
// engine was built with, the plain soname, then the toolkit's own directories.
std::vector<std::string> library_candidates() {
  if (const char* path = std::getenv("GMB_CUPTI_LIBRARY"); path && *path) return {path};
  return {"libcupti.so." + std::to_string(CUDART_VERSION / 1000), "libcupti.so",
          std::string(GMB_CUDA_LIBRARY_DIR) + "/libcupti.so",
          std::string(GMB_CUDA_TOOLKIT_ROOT) + "/extras/CUPTI/lib64/libcupti.so"};
}

const CuptiApi& cupti() {
  static const CuptiApi api = [] {
    CuptiApi a;
    void* library = nullptr;
    std::string tried;
    for (const auto& name : library_candidates()) {
      library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (library) break;
      const char* why = dlerror();
      tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : name);
    }
    if (!library) {
      a.error = "CUPTI library not found (set GMB_CUPTI_LIBRARY=/path/to/libcupti.so): " + tried;
      return a;
    }
    const bool ok = resolve(library, "cuptiActivityConfigureUnifiedMemoryCounter", a.configure) &&
                    resolve(library, "cuptiActivityRegisterCallbacks", a.register_callbacks) &&
                    resolve(library, "cuptiActivityEnable", a.enable) &&
                    resolve(library, "cuptiActivityFlushAll", a.flush_all) &&
                    resolve(library, "cuptiActivityGetNextRecord", a.next_record) &&
                    resolve(library, "cuptiActivityGetNumDroppedRecords", a.dropped_records) &&
                    resolve(library, "cuptiGetResultString", a.result_string);
    if (!ok) a.error = "the CUPTI library lacks the activity API functions needed";
    return a;
  }();
  return api;
}

std::string describe(const char* call, CUptiResult result) {
  const char* text = nullptr;
  if (cupti().result_string(result, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  return std::string(call) + " failed: " + text + " (CUptiResult " + std::to_string(static_cast<int>(result)) + ")";
}

// What the buffer callbacks accumulate. CUPTI may deliver buffers on its own thread.
std::mutex counts_mutex;
UnifiedMemoryCounts counts;
std::string record_error;

constexpr std::size_t kActivityBufferBytes = std::size_t{8} << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // CUPTI wants 8-byte aligned buffers; a null buffer makes it drop records, which are then counted.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(counts_mutex);
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = cupti().next_record(buffer, valid_bytes, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // end of the buffer
    if (r != CUPTI_SUCCESS) {
      if (record_error.empty()) record_error = describe("cuptiActivityGetNextRecord", r);
      break;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) continue;
    const auto* um = reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record);
    switch (um->counterKind) {
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD: counts.htod_bytes += um->value; break;
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: counts.dtoh_bytes += um->value; break;
      // value: the number of GPU page fault groups for the page.
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: counts.gpu_page_faults += um->value; break;
      // One record per CPU fault (value is the faulting instruction's address).
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT: counts.cpu_page_faults += 1; break;
      default: break;
    }
  }
  std::free(buffer);
}

// Registers the callbacks and configures the four counters for `device`, once per process;
// "" or why CUPTI refused.
std::string configure_once(int device) {
  static std::string outcome = [device] {
    const CuptiApi& api = cupti();
    if (!api.error.empty()) return api.error;
    if (const CUptiResult r = api.register_callbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS)
      return describe("cuptiActivityRegisterCallbacks", r);
    CUpti_ActivityUnifiedMemoryCounterConfig config[4] = {};
    const CUpti_ActivityUnifiedMemoryCounterKind kinds[4] = {
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT};
    for (int k = 0; k < 4; ++k) {
      config[k].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
      config[k].kind = kinds[k];
      config[k].deviceId = static_cast<uint32_t>(device);
      config[k].enable = 1;
    }
    if (const CUptiResult r = api.configure(config, 4); r != CUPTI_SUCCESS)
      return describe("cuptiActivityConfigureUnifiedMemoryCounter", r);
    // Enabled once for the whole process (as CUPTI's own unified-memory sample does): counting
    // windows are delimited by flushing, not by switching the kind on and off.
    if (const CUptiResult r = api.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER); r != CUPTI_SUCCESS)
      return describe("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)", r);
    return std::string();
  }();
  return outcome;
}

// Delivers every pending record to buffer_completed; "" or CUPTI's error.
std::string flush_records() {
  GMB_CUDA_CHECK(cudaDeviceSynchronize());  // every migration of the window has happened
  if (const CUptiResult r = cupti().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    return describe("cuptiActivityFlushAll", r);
  return "";
}

void reset_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  counts = UnifiedMemoryCounts{};
  record_error.clear();
}

// Counts are trusted only after CUPTI has seen a migration that certainly happened: 1 MiB of
// managed memory written by the CPU, touched by a kernel (host to device), then read by the CPU
// (device to host). Silence here means CUPTI does not report this machine's migrations, and zeros
// in the records would be wrong.
std::string prove_counting() {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  void* data = nullptr;
  GMB_CUDA_CHECK(cudaMallocManaged(&data, kBytes));
  if (std::string e = flush_records(); !e.empty()) return e;
  reset_counts();
  auto* bytes = static_cast<volatile unsigned char*>(data);
  for (std::size_t k = 0; k < kBytes; k += 4096) bytes[k] = 1;
  launch_touch(data, kBytes, nullptr);
  GMB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  for (std::size_t k = 0; k < kBytes; k += 4096) (void)bytes[k];  // volatile reads: the pages come back
  const std::string flushed = flush_records();
  GMB_CUDA_CHECK(cudaFree(data));
  if (!flushed.empty()) return flushed;
  std::lock_guard<std::mutex> lock(counts_mutex);
  if (!record_error.empty()) return record_error;
  if (counts.htod_bytes == 0 && counts.dtoh_bytes == 0 && counts.gpu_page_faults == 0 && counts.cpu_page_faults == 0)
    return "CUPTI reported no unified-memory activity for a known migration (1 MiB of managed memory written by the "
           "CPU, touched by a kernel, read back by the CPU); its counters do not see this machine's migrations, so "
           "none are reported";
  return "";
}

class CuptiUnifiedMemoryCounter final : public UnifiedMemoryCounter {
 public:
  // Whatever is pending belongs to the untimed work before counting: flushed, then forgotten, and so
  // are the records CUPTI dropped until now (reading the count resets it).
  std::string start() override {
    std::string e = flush_records();
    size_t dropped = 0;
    if (const CUptiResult r = cupti().dropped_records(nullptr, 0, &dropped); r != CUPTI_SUCCESS && e.empty())
      e = describe("cuptiActivityGetNumDroppedRecords", r);
    reset_counts();
    return e;
  }

  UnifiedMemoryCounts stop(std::string* error) override {
    const std::string flushed = flush_records();
    size_t dropped = 0;
    const CUptiResult counted_drops = cupti().dropped_records(nullptr, 0, &dropped);
    std::lock_guard<std::mutex> lock(counts_mutex);
    if (!flushed.empty()) *error = flushed;
    else if (counted_drops != CUPTI_SUCCESS) *error = describe("cuptiActivityGetNumDroppedRecords", counted_drops);
    else if (!record_error.empty()) *error = record_error;
    UnifiedMemoryCounts out = counts;
    out.dropped_records = dropped;
    return out;
  }
};

}  // namespace

std::unique_ptr<UnifiedMemoryCounter> make_cupti_unified_memory_counter(std::string* reason) {
  int device = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  *reason = configure_once(device);
  if (!reason->empty()) return nullptr;
  static const std::string proof = prove_counting();  // once per process
  *reason = proof;
  if (!reason->empty()) return nullptr;
  return std::make_unique<CuptiUnifiedMemoryCounter>();
}

#endif

}  // namespace gmb::cuda
