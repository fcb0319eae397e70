// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/error.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace gmb {

std::string where_am_i() {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  std::string rank = "?";
  if (initialized && !finalized) {
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    rank = std::to_string(r);
  }
  return "host " + std::string(host) + " rank " + rank;
}

namespace {

[[noreturn]] void abort_or_exit(int exit_code) {
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace

void fatal(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "gmb-bench: FATAL on %s at %s:%d: %s\n", where_am_i().c_str(), file, line, what.c_str());
  abort_or_exit(kExitFailure);
}

void end_job(int exit_code, const std::string& label, const std::string& what) {
  std::fprintf(stderr, "gmb-bench: %s on %s: %s\n", label.c_str(), where_am_i().c_str(), what.c_str());
  abort_or_exit(exit_code);
}

void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "error code %d", rc);
  fatal(file, line, std::string(call) + " failed: " + text);
}

}  // namespace gmb
