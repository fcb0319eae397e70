// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/placement.hpp"

#include <sched.h>

#include <cstdlib>
#include <string>

#include "gmb/error.hpp"

namespace gmb {

LocalRank local_rank_from_environment() {
  // Order from METHODOLOGY "Placement". SLURM_PROCID is a global rank and is deliberately absent.
  static const char* const kVariables[] = {
      "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
      "PMI_LOCAL_RANK",             "PALS_LOCAL_RANKID",         "FLUX_TASK_LOCAL_ID"};
  for (const char* name : kVariables) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long v = std::strtol(value, &end, 10);
    if (*end == '\0' && v >= 0) return {static_cast<int>(v), name};
  }
  return {};
}

LocalRank local_rank_from_shared_memory_split(MPI_Comm comm) {
  MPI_Comm node;
  GMB_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int rank = 0;
  GMB_MPI_CHECK(MPI_Comm_rank(node, &rank));
  GMB_MPI_CHECK(MPI_Comm_free(&node));
  return {rank, "shared-memory communicator split"};
}

std::string cpu_binding() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  int k = 0;
  while (k < CPU_SETSIZE) {
    if (!CPU_ISSET(k, &set)) {
      ++k;
      continue;
    }
    int end = k;
    while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) ++end;
    out += (out.empty() ? "" : ",") + std::to_string(k) + (end > k ? "-" + std::to_string(end) : "");
    k = end + 1;
  }
  return out;
}

}  // namespace gmb
