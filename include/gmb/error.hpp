// SPDX-License-Identifier: BSD-3-Clause
// Errors and exit codes. Every MPI/CUDA failure goes through fatal(): it names the call, file:line,
// host and rank, then calls MPI_Abort so that no peer waits forever.
#pragma once

#include <stdexcept>
#include <string>

namespace gmb {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,           // a runtime failure (MPI/CUDA error, I/O error)
  kExitUsage = 2,             // bad input: the message says what was wrong and what is accepted
  kExitUnsupported = 3,       // this build, machine or library cannot run the configuration
  kExitValidationFailed = 4,  // --validate found wrong data
};

// Bad user input. Reported once by rank 0, exit status kExitUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A configuration that cannot run here (missing memory kind, CUDA-unaware library, ...).
// Becomes a result record with status "unsupported" and the reason.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Prints "gmb-bench: FATAL on host H rank R at file:line: what" to stderr and aborts the job.
[[noreturn]] void fatal(const char* file, int line, const std::string& what);

// Prints "gmb-bench: <label> on host H rank R: what" and ends this process with `exit_code`: through
// MPI_Abort while MPI is running (its peers may be waiting for it in a call), else by exiting.
[[noreturn]] void end_job(int exit_code, const std::string& label, const std::string& what);

// Aborts through fatal() when an MPI call did not return MPI_SUCCESS, with the library's error string.
void check_mpi(int rc, const char* call, const char* file, int line);

// Host name and world rank as used in error messages ("?" before MPI is initialised).
std::string where_am_i();

}  // namespace gmb

#define GMB_MPI_CHECK(call) ::gmb::check_mpi((call), #call, __FILE__, __LINE__)
#define GMB_FATAL(what) ::gmb::fatal(__FILE__, __LINE__, (what))
