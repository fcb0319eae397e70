// Is the MPI library GPU (CUDA) aware? Static answers are recorded as evidence; a functional proof
// (a validated device-to-device exchange) is run only when the static answers allow it, because a
// CUDA-unaware library handed a device pointer may crash the job.
#pragma once

#include <mpi.h>

#include <string>

#include "gmb/json.hpp"

namespace gmb {

struct Platform;

enum class Awareness { aware, not_aware, unknown };
const char* to_string(Awareness a);

struct AwarenessReport {
  Awareness verdict = Awareness::unknown;
  std::string summary;  // one sentence: why this verdict
  Json evidence = Json::object();
};

// Collective over `comm`. Static queries (MPIX_Query_cuda_support, MPIX_GPU_query_support,
// mpi_memory_alloc_kinds), then, when they say "aware" and device memory exists, the proof.
AwarenessReport detect_gpu_awareness(MPI_Comm comm, const Platform& platform);

struct MemoryKind;
// "" when buffers of `kind` may be handed to this library; otherwise why not: GPU memory and a
// library not proven CUDA-aware (it may crash). The one rule every benchmark applies; callers add
// what the user can do instead.
std::string device_pointer_refusal(const MemoryKind& kind, const AwarenessReport& awareness);

}  // namespace gmb
