// SPDX-License-Identifier: BSD-3-Clause
// Defects of MPI libraries that kill the process (a crash inside the library, not a slow or wrong
// result), as data: gmb refuses such a configuration with the reason (status unsupported, exit 3)
// instead of running it into a segfault, unless --run-known-crashes asks to try it anyway (e.g. to
// find out whether a new release fixed it). Each entry says where it was seen.
#pragma once

#include <cstdint>
#include <string>

namespace gmb {

struct LibraryVersion {
  std::string family;  // "Open MPI", "MPICH", "" (unknown)
  int major = -1, minor = -1, patch = -1;
};
// From MPI_Get_library_version's text, e.g. "Open MPI v5.0.7, package: ..." or "MPICH Version:\t4.0.2".
LibraryVersion parse_library_version(const std::string& text);

// One collective call about to be made.
struct CollectiveCallFacts {
  std::string call;       // "MPI_Iallreduce"
  bool nonblocking = false;
  bool persistent = false;     // an MPI-4 persistent collective (MPI_Allreduce_init ...), started and waited for
  bool reduction = false;
  bool device_memory = false;  // some rank hands the library device memory
  bool device_memory_off_root = false;  // the ranks other than the root hand it device memory
  int ranks = 0;
  std::uint64_t block_bytes = 0;  // Layout::block_elems in bytes (gather: what each rank sends); 0 for the others
  // MPICH's MPIR_CVAR_GATHER_VSMALL_MSG_SIZE as this process sees it (MPICH's default 1024 where unset)
  std::uint64_t mpich_gather_vsmall_msg_size = 1024;
  bool in_place = false;       // --in-place asked for
  int root = 0;
  std::uint64_t bytes = 0;
  bool ucc_enabled = false;    // Open MPI's coll/ucc asked for (OMPI_MCA_coll_ucc_enable=1): it reduces on the GPU
};

// Why this call is known to crash `library`, or "".
std::string known_crash(const LibraryVersion& library, const CollectiveCallFacts& call);

}  // namespace gmb
