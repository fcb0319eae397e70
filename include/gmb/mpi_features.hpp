// SPDX-License-Identifier: BSD-3-Clause
// MPI-4 interfaces the engine measures where the library has them: partitioned point-to-point
// (MPI_Psend_init ...) and persistent collectives (MPI_Allreduce_init ...). Whether the engine has them is
// decided at build time, by compiling and linking a call against the library (cmake/GmbMpiFeatures.cmake):
// MPI_VERSION does not say (Open MPI 5 has both and reports MPI 3.1). At run time a library can still refuse
// a call (an error code): benchmarks make these calls with errors returned and report the refusal as
// unsupported, with MPI's own words.
#pragma once

#include <mpi.h>

#include <string>

#include "gmb/json.hpp"

namespace gmb {

enum class MpiFeature { partitioned, persistent_collectives };

struct MpiFeatureInfo {
  const char* name;      // "partitioned", as records and the description name it
  const char* calls;     // the calls it needs, "MPI_Psend_init/MPI_Precv_init/MPI_Pready/MPI_Parrived"
  const char* standard;  // "MPI-4.0"
  bool built;            // the engine was built with them
};
const MpiFeatureInfo& mpi_feature(MpiFeature feature);

// Why the feature cannot be measured with this engine, naming the library and its MPI standard version, or "".
std::string mpi_feature_problem(MpiFeature feature);

// {"partitioned": {"available": true, "calls": ..., "standard": ...}, "persistent_collectives": {"available":
// false, "reason": ...}} for the engine's description and the context record.
Json mpi_features_json();

// Runs `call` (an MPI call's return code) on `comm` with MPI_ERRORS_RETURN in force, then restores the
// communicator's error handler. Returns "" on success, else "<what> failed: <MPI's error string>": a library
// that refuses an interface or a memory kind there says so instead of aborting the job.
template <typename Call>
std::string mpi_refusal(MPI_Comm comm, const std::string& what, Call&& call);

// The error string of an MPI error code.
std::string mpi_error_text(int code);

template <typename Call>
std::string mpi_refusal(MPI_Comm comm, const std::string& what, Call&& call) {
  MPI_Errhandler previous;
  MPI_Comm_get_errhandler(comm, &previous);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int rc = call();
  MPI_Comm_set_errhandler(comm, previous);
  MPI_Errhandler_free(&previous);
  return rc == MPI_SUCCESS ? std::string() : what + " failed: " + mpi_error_text(rc);
}

}  // namespace gmb
