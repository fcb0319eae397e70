// SPDX-License-Identifier: BSD-3-Clause
// Which MPI library this process is running: the shared object the dynamic loader picked for the MPI
// symbols, next to the one the engine was linked against when it was built. Several MPI installations
// can share a soname (Open MPI's libmpi.so.40, MPICH's libmpi.so.12), so LD_LIBRARY_PATH can swap one
// for another without a sound: a figure is only as trustworthy as this record of where it came from.
#pragma once

#include <string>

#include "gmb/json.hpp"

namespace gmb {

struct MpiLibraryObject {
  std::string loaded;           // the object defining the MPI symbols, as the loader named it
  std::string loaded_realpath;  // ... with symbolic links resolved ("" when it could not be found)
  std::string linked;           // the MPI library given to the linker at build time
  std::string linked_realpath;  // ... resolved at build time
  std::string lookup_error;     // why `loaded` is empty

  // The loaded object is the file the engine was built against, or lies in the same directory (the
  // same installation). False also when either is unknown.
  bool matches_build() const;
  // "running /a/libmpi.so.40 but built against /b/libmpi.so.40.30.4" ("" when they match or are unknown).
  std::string mismatch() const;
  Json to_json() const;
};

// Works before MPI_Init (nothing is asked of the library: the loader already mapped it).
MpiLibraryObject loaded_mpi_library();

// MPI_Get_library_version into `text`, without the NUL and newlines some libraries count in its length.
// Callable before MPI_Init (MPI-3.0 onwards). Returns the call's MPI error code.
int mpi_library_version(std::string& text);

}  // namespace gmb
