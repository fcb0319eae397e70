// SPDX-License-Identifier: BSD-3-Clause
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
         "UCX_MEMTYPE_CACHE=n; pml ob1 with btl smcuda moved device memory correctly";
}

// How long one exchange may take. A library that mishandles device memory can hang instead of
// failing; the exchange then says so and the run goes on with device pointers refused.
constexpr double kExchangeTimeoutSeconds = 15.0;

// Whether every rank's `problem` is empty. A library that failed an exchange may have broken its
// connections: if ranks can no longer agree, say what happened instead of a bare MPI error later.
bool all_ranks_agree(MPI_Comm comm, const std::string& problem) {
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    GMB_FATAL("the MPI library stopped working while moving device memory (this rank: " +
              (problem.empty() ? std::string("its exchanges completed") : problem) +
              "); treat it as not CUDA-aware" + library_hint());
  return all_ok == 1;
}

// Ranks pair up (0-1, 2-3, ...; an odd last rank talks to itself).
int exchange_partner(MPI_Comm comm) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  return (rank ^ 1) < size ? (rank ^ 1) : rank;
}

// `window` messages of `bytes` each way between this rank and `partner`, from `send` into `recv`,
// polled against a deadline; then what arrived is checked. Returns "" when every byte arrived, else
// what went wrong (`what` names the exchange). MPI errors here are the answer, not a failure of gmb. After
// an error or a hang the library may still own the buffers: they are leaked rather than freed under it.
std::string validated_exchange(MPI_Comm comm, int partner, std::unique_ptr<Buffer>& send, std::unique_ptr<Buffer>& recv,
                               std::size_t bytes, int window, const std::string& what) {
  int rank = 0;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::uint32_t mine = 0xC0DA0000u + static_cast<std::uint32_t>(bytes * 16 + rank);
  const std::uint32_t theirs = 0xC0DA0000u + static_cast<std::uint32_t>(bytes * 16 + partner);
  send->fill(bytes, mine);
  recv->poison(bytes, theirs);
  std::vector<MPI_Request> requests(static_cast<std::size_t>(2 * window), MPI_REQUEST_NULL);
  int rc = MPI_SUCCESS;
  for (int w = 0; w < window && rc == MPI_SUCCESS; ++w)
    rc = MPI_Irecv(recv->data(), static_cast<int>(bytes), MPI_BYTE, partner, 7, comm, &requests[w]);
  for (int w = 0; w < window && rc == MPI_SUCCESS; ++w)
    rc = MPI_Isend(send->data(), static_cast<int>(bytes), MPI_BYTE, partner, 7, comm, &requests[window + w]);
  const double deadline = MPI_Wtime() + kExchangeTimeoutSeconds;
  int done = 0;
  while (rc == MPI_SUCCESS && !done && MPI_Wtime() < deadline)
    rc = MPI_Testall(2 * window, requests.data(), &done, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS || !done) {
    send.release();
    recv.release();
    if (rc == MPI_SUCCESS)
      return "the " + what + " did not complete within " + std::to_string(static_cast<int>(kExchangeTimeoutSeconds)) +
             " s (the library hung moving device memory)";
    char text[MPI_MAX_ERROR_STRING] = {0};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    return "the library returned an error in the " + what + ": " + text;
  }
  if (auto bad = recv->first_mismatch(bytes, theirs))
    return "the " + what + " delivered wrong data at byte " + std::to_string(*bad);
  return "";
}

// Sizes the proof exchanges: eager, mid-size and rendezvous messages. Libraries move
// them through different protocols, and one can be broken while another works (under pml ucx with
// UCX_MEMTYPE_CACHE=n, 1 MiB arrived intact while 1-byte messages arrived wrong).
constexpr std::size_t kProofSizes[] = {1, 4096, std::size_t{1} << 20, std::size_t{64} << 20};

// Validated device-to-device exchanges of each proof size with the partner rank, on buffers taken from
// the launch's pool: the benchmark reuses them, so the proof never frees device memory the library has
// seen (a library that caches what it learnt about an address must not see it freed and allocated again).
std::string prove_with_device_exchange(MPI_Comm comm, const MemoryKind& device, BufferPool& buffers) {
  const int partner = exchange_partner(comm);
  std::string problem;
  std::unique_ptr<Buffer> send, recv;
  try {
    send = buffers.take(device, kProofSizes[std::size(kProofSizes) - 1]);
    recv = buffers.take(device, kProofSizes[std::size(kProofSizes) - 1]);
  } catch (const Unsupported& e) {
    problem = std::string("could not run the device-to-device proof: ") + e.what();
  }
  if (!all_ranks_agree(comm, problem) && problem.empty())
    problem = "another rank could not allocate device memory for the proof";
  for (const std::size_t bytes : kProofSizes) {
    if (!problem.empty()) break;
    const std::string what = std::to_string(bytes) + "-byte device-to-device exchange with rank " + std::to_string(partner);
    // A library can also crash here instead of failing: the crash report then says what was proved.
    set_crash_context("the GPU awareness proof (" + what + "): the library crashed moving device memory, so it is "
                      "not CUDA-aware as configured" + library_hint());
    problem = validated_exchange(comm, partner, send, recv, bytes, 1, what);
    // Ranks stop together: a rank going on to the next size would wait for a partner that stopped.
    if (!all_ranks_agree(comm, problem) && problem.empty())
      problem = "another rank's " + std::to_string(bytes) + "-byte exchange failed";
  }
  if (!problem.empty()) problem += library_hint();
  return agree_on_reason(comm, problem);
}

}  // namespace

std::string check_fresh_device_buffers(MPI_Comm comm, const MemoryKind& device) {
  const int partner = exchange_partner(comm);
  constexpr int kWindow = 8;
  constexpr std::size_t kSizes[] = {1, 2, 4096, std::size_t{1} << 20, std::size_t{64} << 20};
  std::string problem;
  for (int pass = 0; pass < 2 && problem.empty(); ++pass)
    for (const std::size_t bytes : kSizes) {
      const std::string what = "window of " + std::to_string(kWindow) + " " + std::to_string(bytes) +
                               "-byte device-to-device messages with rank " + std::to_string(partner) +
                               " on freshly allocated buffers";
      std::unique_ptr<Buffer> send, recv;
      try {
        send = device.allocate(bytes);
        recv = device.allocate(bytes);
      } catch (const Unsupported& e) {
        problem = std::string("could not allocate device memory: ") + e.what();
      }
      if (problem.empty()) {
        set_crash_context("the doctor's fresh-buffer check (" + what + "): the library crashed on device buffers freed "
                          "and allocated again. Benchmarks allocate once per launch and are not affected; "
                          "applications that free and reallocate device buffers would be");
        problem = validated_exchange(comm, partner, send, recv, bytes, kWindow, what);
      }
      if (!all_ranks_agree(comm, problem) && problem.empty()) problem = "another rank's " + what + " failed";
      if (!problem.empty()) break;
    }
  set_crash_context("doctor, after the fresh-buffer check");
  return agree_on_reason(comm, problem);
}

std::string device_pointer_refusal(const MemoryKind& kind, const AwarenessReport& awareness) {
  if (!kind.gpu_memory || awareness.verdict == Awareness::aware) return "";
  return "refusing to hand " + kind.name + " memory to this MPI library: it is not known to be CUDA-aware (" +
         awareness.summary + "; see `gmb-bench doctor`); a CUDA-unaware library given a device pointer may crash";
}

AwarenessReport detect_gpu_awareness(MPI_Comm comm, const Platform& platform, BufferPool& buffers) {
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
  const MemoryKind* device = platform.memory.find(kDeviceMemory);
  if (!device || !device->available()) {
    report.verdict = Awareness::unknown;
    report.summary = "the library says it is CUDA-aware, but there is no device memory here to prove it";
    report.evidence.set("proof", std::string("not run: ") + (device ? device->unavailable_reason : "no device memory kind"));
    return report;
  }
  const std::string problem = prove_with_device_exchange(comm, *device, buffers);
  set_crash_context("start-up, after the GPU awareness proof");
  report.evidence.set("proof", problem.empty()
                                   ? "validated device-to-device exchanges of 1 B, 4 KiB, 1 MiB and 64 MiB between rank pairs: passed"
                                   : problem);
  report.verdict = problem.empty() ? Awareness::aware : Awareness::not_aware;
  report.summary = problem.empty() ? "the library says it is CUDA-aware and a validated device-to-device exchange proved it"
                                   : "the library says it is CUDA-aware but the device-to-device proof failed";
  return report;
}

}  // namespace gmb
