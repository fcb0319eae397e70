// SPDX-License-Identifier: BSD-3-Clause
// The context record: everything needed to reproduce a run (METHODOLOGY "Statistics and trust").
#pragma once

#include <string>
#include <vector>

#include "gmb/benchmark.hpp"
#include "gmb/json.hpp"
#include "gmb/placement.hpp"

namespace gmb {

struct BuildInfo {
  std::string version, git_revision, compiler, cuda_architectures;
  bool cuda = false;
  bool nccl = false;
  // The MPI library the linker was given (from the compiler wrapper, through CMake's FindMPI), and that
  // path with symbolic links resolved at configure time.
  std::string mpi_library, mpi_library_realpath;
};
const BuildInfo& build_info();  // generated at configure time (src/core/build_info.cpp.in)

// A run identifier shared by all ranks (rank 0 makes it, everyone receives it).
std::string make_run_id(MPI_Comm comm);

// Collective: `value` of rank `root`, on every rank.
std::string broadcast_string(MPI_Comm comm, std::string value, int root);

// Collective: each rank's list of strings, gathered to rank 0 (empty elsewhere).
std::vector<std::vector<std::string>> gather_fields(MPI_Comm comm, const std::vector<std::string>& fields);

// Collective: every rank learns every rank's host and GPU (Context::ranks).
std::vector<RankFacts> gather_rank_facts(MPI_Comm comm, const Platform& platform);

// Collective: gathers per-rank facts to rank 0 and returns the context record there (an empty
// object elsewhere).
Json build_context(const Context& ctx, const std::vector<std::string>& command_line, const LocalRank& local,
                   const Json& benchmark_options);

// This rank's network facts (network.hpp) with its GPU and its --nic choice (nic_pinning), as the context record's
// ranks[].network holds them.
Json rank_network_facts(const Context& ctx);

// The prefixes of the environment variables the context record keeps (a prefix may be a whole name:
// LD_LIBRARY_PATH), in the order the engine's description lists them.
const std::vector<std::string>& recorded_environment_prefixes();

// Keeps this process's environment as the launch gave it. Called first thing in main: an MPI library sets
// variables of the recorded prefixes in its own process while it starts (Open MPI's PSM2 component sets
// PSM2_DEVICES=self,shm where every rank is on one host), which are not settings the launch was given.
void capture_launch_environment();

// Environment variables that change how MPI, its runtimes, CUDA or the launcher behave (those of
// recorded_environment_prefixes), as the launch gave them (capture_launch_environment; the environment now where
// it was not called): without those --nic set (`nic_pinning`, the record of apply_nic_request; null without --nic).
Json relevant_environment(const Json& nic_pinning);

}  // namespace gmb
