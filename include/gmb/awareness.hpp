// SPDX-License-Identifier: BSD-3-Clause
// Is the MPI library GPU (CUDA) aware? Static answers are recorded as evidence; a functional proof
// (a validated device-to-device exchange) is run only when the static answers allow it, because a
// CUDA-unaware library handed a device pointer may crash the job.
#pragma once

#include <mpi.h>

#include <string>

#include "gmb/json.hpp"

namespace gmb {

struct Platform;
struct MemoryKind;
class BufferPool;

enum class Awareness { aware, not_aware, unknown };
const char* to_string(Awareness a);

struct AwarenessReport {
  Awareness verdict = Awareness::unknown;
  std::string summary;  // one sentence: why this verdict
  Json evidence = Json::object();
};

// Collective over `comm`. Static queries (MPIX_Query_cuda_support, MPIX_GPU_query_support,
// mpi_memory_alloc_kinds), then, when they say "aware" and device memory exists, the proof: validated
// device-to-device exchanges on buffers taken from `buffers` (which the benchmark reuses).
AwarenessReport detect_gpu_awareness(MPI_Comm comm, const Platform& platform, BufferPool& buffers);

// The doctor's stress check of reallocation: the proof's validated exchanges, in windows of messages, on
// device buffers allocated for each exchange and freed after it (every size twice, so that each lands on
// memory freed before). "" when every byte arrived; else what went wrong. Collective; only for a library
// proven aware (a crash is reported by the crash report, naming this check).
std::string check_fresh_device_buffers(MPI_Comm comm, const MemoryKind& device);

// "" when buffers of `kind` may be handed to this library; otherwise why not: GPU memory and a
// library not proven CUDA-aware (it may crash). The one rule every benchmark applies; callers add
// what the user can do instead.
std::string device_pointer_refusal(const MemoryKind& kind, const AwarenessReport& awareness);

}  // namespace gmb
