// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/known_issues.hpp"

#include <cstdio>
#include <regex>

namespace gmb {

LibraryVersion parse_library_version(const std::string& text) {
  LibraryVersion v;
  std::smatch m;
  static const std::regex open_mpi(R"(Open MPI v(\d+)\.(\d+)(?:\.(\d+))?)");
  static const std::regex mpich(R"(MPICH Version:\s*(\d+)\.(\d+)(?:\.(\d+))?)");
  if (std::regex_search(text, m, open_mpi)) v.family = "Open MPI";
  else if (std::regex_search(text, m, mpich)) v.family = "MPICH";
  else return v;
  v.major = std::stoi(m[1]);
  v.minor = std::stoi(m[2]);
  v.patch = m[3].matched ? std::stoi(m[3]) : 0;
  return v;
}

std::string known_crash(const LibraryVersion& library, const CollectiveCallFacts& call) {
  const std::string version = library.family + " " + std::to_string(library.major) + "." + std::to_string(library.minor) +
                              "." + std::to_string(library.patch);
  // Open MPI up to 5.0: non-blocking and persistent collectives go through coll/libnbc, which applies
  // reductions on the CPU; coll/accelerator stages device buffers for the blocking reductions only.
  if (library.family == "Open MPI" && (library.major < 5 || (library.major == 5 && library.minor == 0)) &&
      (call.nonblocking || call.persistent) && call.reduction && call.device_memory && !call.ucc_enabled)
    return version + " applies the reduction of " + call.call +
           " on the CPU (coll/libnbc), which reads device memory as host memory: the process dies with SIGSEGV in "
           "NBC_Progress (seen with Open MPI 5.0.7, pml ob1 and ucx, on H200 for MPI_Iallreduce and on H100 for "
           "MPI_Allreduce_init). Use pinned or host buffers, "
           "OMPI_MCA_coll_ucc_enable=1 where Open MPI has UCC, or --run-known-crashes to try it anyway";
  // MPICH 4.0: MPI_Reduce with MPI_IN_PLACE at a root other than 0 reads from the MPI_IN_PLACE address.
  if (library.family == "MPICH" && library.major == 4 && library.minor == 0 && call.call == "MPI_Reduce" &&
      call.in_place && call.root != 0 && call.bytes >= 4096)
    return version + " crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 from 4 KiB on (it copies from "
           "the MPI_IN_PLACE address; seen with Debian's MPICH 4.0.2, ch4:ucx). Use --root 0, no --in-place, or "
           "--run-known-crashes to try it anyway";
  // MPICH 4.0: a persistent scatter's second MPI_Start fails in MPI_Wait ("Invalid communicator"), and an
  // MPI error ends the job.
  if (library.family == "MPICH" && library.major == 4 && library.minor == 0 && call.call == "MPI_Scatter_init" &&
      call.bytes > 0)
    return version + " fails the second start of a persistent MPI_Scatter_init request (MPI_Wait: \"Invalid "
           "communicator\" in MPIDU_Sched_progress_state; the job aborts; seen with Debian's MPICH 4.0.2, reproduced "
           "with a 30-line C program). Use coll scatter without --persistent, scatterv, or --run-known-crashes to try "
           "it anyway";
  // MPICH 4.0 built with CUDA: in its binomial gather every non-root rank with children in the tree (there is one
  // from 4 ranks on) sends its own block and its children's as one struct datatype spanning the device send buffer
  // and a host temporary buffer, once a block reaches MPIR_CVAR_GATHER_VSMALL_MSG_SIZE; MPICH packs that struct on
  // the CPU and dies reading device memory.
  if (library.family == "MPICH" && library.major == 4 && library.minor == 0 &&
      (call.call == "MPI_Gather" || call.call == "MPI_Igather" || call.call == "MPI_Gather_init") &&
      call.device_memory_off_root && call.ranks >= 4 && call.block_bytes >= call.mpich_gather_vsmall_msg_size)
    return version + " dies with SIGSEGV in " + call.call + " on device memory from 4 ranks on once each rank's block "
           "reaches MPIR_CVAR_GATHER_VSMALL_MSG_SIZE (" + std::to_string(call.mpich_gather_vsmall_msg_size) +
           " B): its binomial gather sends a struct datatype spanning the device send buffer and a host temporary "
           "buffer, and packs it on the CPU (seen with MPICH 4.0.2 built with CUDA, ch4:ucx, UCX 1.22, on H100: 4 ranks, "
           "1 KiB blocks; 2 and 3 ranks pass). Set MPIR_CVAR_GATHER_VSMALL_MSG_SIZE above the block (it then copies "
           "into the temporary buffer: 1 GiB passed every size), use gatherv, host or pinned buffers, or "
           "--run-known-crashes to try it anyway";
  return "";
}

}  // namespace gmb
