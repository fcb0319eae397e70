// SPDX-License-Identifier: BSD-3-Clause
// Which local rank this process is, and so which GPU it uses (METHODOLOGY "Placement").
#pragma once

#include <mpi.h>

#include <string>

namespace gmb {

struct LocalRank {
  int rank = -1;       // -1 when no launcher variable names it
  std::string source;  // the variable it came from, or "shared-memory communicator split"
};

// Reads, in order: OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// SLURM_LOCALID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID, FLUX_TASK_LOCAL_ID. Never SLURM_PROCID.
// Safe before MPI_Init.
LocalRank local_rank_from_environment();

// Fallback after MPI_Init: the rank within an MPI_COMM_TYPE_SHARED split of `comm`.
LocalRank local_rank_from_shared_memory_split(MPI_Comm comm);

// CPU binding of this process as a list such as "0-3,8".
std::string cpu_binding();

}  // namespace gmb
