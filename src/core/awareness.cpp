#include "gmb/awareness.hpp"

#include "gmb/benchmark.hpp"
#include "gmb/crash_report.hpp"
#include "gmb/error.hpp"
#include "gmb/platform.hpp"

#if GMB_HAVE_MPIX_QUERY_CUDA_SUPPORT
#include <mpi-ext.h>
#endif

namespace gmb {

const char* to_string(Awareness a) {
  switch (a) {
    case Awareness::aware: return "aware";
    case Awareness::not_aware: return "not aware";
    case Awareness::unknown: break;
  }
  return "unknown";
}

namespace {

enum class StaticAnswer { yes, no, none };

// The static answers this library offers; each one found is recorded in `evidence`.
StaticAnswer query_static_answers(MPI_Comm comm, Json& evidence) {
  bool any_yes = false, any_no = false;
#if GMB_HAVE_MPIX_QUERY_CUDA_SUPPORT
  const int cuda = MPIX_Query_cuda_support();
  evidence.set("MPIX_Query_cuda_support", cuda);
  (cuda ? any_yes : any_no) = true;
#else
  evidence.set("MPIX_Query_cuda_support", "not provided by this library");
#endif
#if GMB_HAVE_MPIX_GPU_QUERY_SUPPORT
  int gpu = 0;
  GMB_MPI_CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &gpu));
  evidence.set("MPIX_GPU_query_support(CUDA)", gpu);
  (gpu ? any_yes : any_no) = true;
#else
  evidence.set("MPIX_GPU_query_support(CUDA)", "not provided by this library");
#endif
  // MPI 4.1: the memory allocation kinds the library supports, e.g. "mpi,system,cuda:device".
  MPI_Info info = MPI_INFO_NULL;
  GMB_MPI_CHECK(MPI_Comm_get_info(comm, &info));
  char value[1024] = {0};
  int flag = 0;
  GMB_MPI_CHECK(MPI_Info_get(info, "mpi_memory_alloc_kinds", sizeof value - 1, value, &flag));
  GMB_MPI_CHECK(MPI_Info_free(&info));
  if (flag) {
    const std::string kinds = value;
    evidence.set("mpi_memory_alloc_kinds", kinds);
    (kinds.find("cuda") != std::string::npos ? any_yes : any_no) = true;
  } else {
    evidence.set("mpi_memory_alloc_kinds", "not provided by this library");
  }
  if (any_yes) return StaticAnswer::yes;
  return any_no ? StaticAnswer::no : StaticAnswer::none;
}

// What to try when the proof fails, for libraries where a cause is known.
std::string library_hint() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return "";
  if (std::string(version).find("Open MPI") == std::string::npos) return "";
  return ". Under Open MPI's pml ucx, UCX's memory-type cache can take device pointers for host memory: with "
         "CUDA 13 and UCX 1.22 on H200 this proof crashed in uct_mm_ep_am_short under UCX's defaults and passed with "
         "UCX_MEMTYPE_CACHE=n (windows of messages on reallocated device buffers then still failed in cuda_ipc); pml ob1 "
         "with btl smcuda moved device memory correctly";
}

// How long the proof may take. A library that mishandles device memory can hang instead of
// failing; the proof then says so and the run goes on with device pointers refused.
constexpr double kProofTimeoutSeconds = 15.0;

// Whether every rank's `problem` is empty. A library that failed an exchange may have broken its
// connections: if ranks can no longer agree, say what happened instead of a bare MPI error later.
bool all_ranks_agree(MPI_Comm comm, const std::string& problem) {
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    GMB_FATAL("the MPI library stopped working while proving it can move device memory (this rank: " +
              (problem.empty() ? std::string("its exchanges completed") : problem) +
              "); treat it as not CUDA-aware" + library_hint());
  return all_ok == 1;
}

// Sizes the proof exchanges: eager, mid-size and rendezvous messages. Libraries move
// them through different protocols, and one can be broken while another works (under pml ucx with
// UCX_MEMTYPE_CACHE=n, 1 MiB arrived intact while 1-byte messages arrived wrong).
constexpr std::size_t kProofSizes[] = {1, 4096, std::size_t{1} << 20, std::size_t{64} << 20};

// Validated device-to-device exchanges: ranks pair up (0-1, 2-3, ...; an odd last rank talks to
// itself) and swap each proof size of device memory. Returns "" when every byte arrived.
std::string prove_with_device_exchange(MPI_Comm comm, const MemoryKind& device) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
  std::string problem;
  // Two rounds, each on freshly allocated buffers: benchmarks free and allocate per size, and a
  // library that caches what it learnt about an address can deliver into memory that no longer
  // exists (pml ucx did: the first buffers passed, later ones received wrong data).
  for (int round = 0; round < 2 && problem.empty(); ++round) {
    std::unique_ptr<Buffer> send, recv;
    try {
      send = device.allocate(kMaxBytes);
      recv = device.allocate(kMaxBytes);
    } catch (const Unsupported& e) {
      problem = std::string("could not run the device-to-device proof: ") + e.what();
    }
    if (!all_ranks_agree(comm, problem)) {
      if (problem.empty()) problem = "another rank could not allocate device memory for the proof";
      break;
    }
    for (const std::size_t bytes : kProofSizes) {
      const std::uint32_t mine = 0xC0DA0000u + static_cast<std::uint32_t>(bytes * 16 + rank);
      const std::uint32_t theirs = 0xC0DA0000u + static_cast<std::uint32_t>(bytes * 16 + partner);
      const std::string what = std::to_string(bytes) + "-byte device-to-device exchange with rank " +
                               std::to_string(partner) + (round ? " on reallocated buffers" : "");
      send->fill(bytes, mine);
      recv->poison(bytes, theirs);
      // A library can also crash here instead of failing: the crash report then says what was proved.
      set_crash_context("the GPU awareness proof (" + what + "): the library crashed moving device memory, so it is "
                        "not CUDA-aware as configured" + library_hint());
      // MPI errors here are the answer, not a failure of gmb: the library could not move device memory.
      MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      int rc = MPI_Irecv(recv->data(), static_cast<int>(bytes), MPI_BYTE, partner, 7, comm, &requests[0]);
      if (rc == MPI_SUCCESS) rc = MPI_Isend(send->data(), static_cast<int>(bytes), MPI_BYTE, partner, 7, comm, &requests[1]);
      const double deadline = MPI_Wtime() + kProofTimeoutSeconds;
      int done = 0;
      while (rc == MPI_SUCCESS && !done && MPI_Wtime() < deadline) rc = MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING] = {0};
        int length = 0;
        MPI_Error_string(rc, text, &length);
        send.release();  // the library may still own them
        recv.release();
        problem = "the library returned an error in the " + what + ": " + text;
      } else if (!done) {
        // The library still owns the buffers: leak them rather than free memory it may write.
        send.release();
        recv.release();
        problem = "the " + what + " did not complete within " + std::to_string(static_cast<int>(kProofTimeoutSeconds)) +
                  " s (the library hung moving device memory)";
      } else if (auto bad = recv->first_mismatch(bytes, theirs)) {
        problem = "the " + what + " delivered wrong data at byte " + std::to_string(*bad);
      }
      // Ranks stop together: a rank going on to the next size would wait for a partner that stopped.
      if (!all_ranks_agree(comm, problem)) {
        if (problem.empty()) problem = "another rank's " + std::to_string(bytes) + "-byte exchange failed";
        break;
      }
    }
  }
  if (!problem.empty()) problem += library_hint();
  return agree_on_reason(comm, problem);
}

}  // namespace

std::string device_pointer_refusal(const MemoryKind& kind, const AwarenessReport& awareness) {
  if (!kind.gpu_memory || awareness.verdict == Awareness::aware) return "";
  return "refusing to hand " + kind.name + " memory to this MPI library: it is not known to be CUDA-aware (" +
         awareness.summary + "; see `gmb-bench doctor`); a CUDA-unaware library given a device pointer may crash";
}

AwarenessReport detect_gpu_awareness(MPI_Comm comm, const Platform& platform) {
  AwarenessReport report;
  const StaticAnswer answer = query_static_answers(comm, report.evidence);
  if (answer == StaticAnswer::no) {
    report.verdict = Awareness::not_aware;
    report.summary = "the library's own queries say it has no CUDA support";
    report.evidence.set("proof", "not run: a CUDA-unaware library handed device pointers may crash");
    return report;
  }
  if (answer == StaticAnswer::none) {
    report.verdict = Awareness::unknown;
    report.summary = "the library offers no GPU-support query; device pointers are not handed to it";
    report.evidence.set("proof", "not run: no static answer allows it");
    return report;
  }
  const MemoryKind* device = platform.memory.find("device");
  if (!device || !device->available()) {
    report.verdict = Awareness::unknown;
    report.summary = "the library says it is CUDA-aware, but there is no device memory here to prove it";
    report.evidence.set("proof", std::string("not run: ") + (device ? device->unavailable_reason : "no device memory kind"));
    return report;
  }
  const std::string problem = prove_with_device_exchange(comm, *device);
  set_crash_context("start-up, after the GPU awareness proof");
  report.evidence.set("proof", problem.empty()
                                   ? "validated device-to-device exchanges of 1 B, 4 KiB, 1 MiB and 64 MiB between rank pairs, twice on fresh buffers: passed"
                                   : problem);
  report.verdict = problem.empty() ? Awareness::aware : Awareness::not_aware;
  report.summary = problem.empty() ? "the library says it is CUDA-aware and a validated device-to-device exchange proved it"
                                   : "the library says it is CUDA-aware but the device-to-device proof failed";
  return report;
}

}  // namespace gmb
