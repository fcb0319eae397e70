// SPDX-License-Identifier: BSD-3-Clause
// The engine describes itself (`gmb-bench list --format json`, docs/records.md "The engine's
// description"): its build, its MPI library, the options every benchmark takes, every benchmark with
// what its records are (family, statistics, headline, transports) and its own options, every memory
// kind with its properties, and the collectives table with its NCCL mapping. What a reader of the
// records needs to know comes from here, never from a second list kept elsewhere.
#pragma once

#include <string>

#include "gmb/json.hpp"

namespace gmb {

struct Platform;
class ArgParser;

// The schema id of the description, bumped when a field changes meaning.
inline constexpr const char* kDescriptionSchema = "gmb.engine/1";

// The description of this build on `platform` (modules registered), with `common_options` the options every
// benchmark takes (the driver's) and each benchmark's own. Starts no MPI job.
Json engine_description(const Platform& platform, const ArgParser& common_options);

// MPI_Get_library_version's text, asked before MPI_Init (or what went wrong).
std::string mpi_library_version_text();

}  // namespace gmb
