// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <string>

#include "gmb/mpi_library.hpp"
#include "gmb/provenance.hpp"

using namespace gmb;

// The test program links the same MPI as the engine, with the same run path: it must find that library.
TEST(MpiLibrary, NamesTheLoadedLibraryAndItsBuild) {
  const MpiLibraryObject mpi = loaded_mpi_library();
  ASSERT_TRUE(mpi.lookup_error.empty()) << mpi.lookup_error;
  EXPECT_NE(mpi.loaded_realpath.find("libmpi"), std::string::npos) << mpi.loaded_realpath;
  EXPECT_EQ(mpi.linked, build_info().mpi_library);
  EXPECT_FALSE(mpi.linked_realpath.empty());
  EXPECT_TRUE(mpi.matches_build()) << mpi.loaded_realpath << " vs " << mpi.linked_realpath;
  EXPECT_EQ(mpi.mismatch(), "");
  const std::string json = mpi.to_json().dump();
  EXPECT_NE(json.find("\"matches_build\":true"), std::string::npos) << json;
}

TEST(MpiLibrary, AnotherInstallationIsAMismatch) {
  MpiLibraryObject mpi;
  mpi.loaded_realpath = "/opt/ompi-5.0/lib/libmpi.so.40.40.7";
  mpi.linked_realpath = "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.6";
  EXPECT_FALSE(mpi.matches_build());
  EXPECT_EQ(mpi.mismatch(), "running /opt/ompi-5.0/lib/libmpi.so.40.40.7 but built against "
                            "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.6");
  // A wheel holds libmpi.so and libmpi.so.40 as two copies in one directory: the same installation.
  mpi.loaded_realpath = "/venv/lib/libmpi.so.40";
  mpi.linked_realpath = "/venv/lib/libmpi.so";
  EXPECT_TRUE(mpi.matches_build());
  // Unknown on either side is not a match, and not a claimed mismatch either.
  mpi.loaded_realpath.clear();
  EXPECT_FALSE(mpi.matches_build());
  EXPECT_EQ(mpi.mismatch(), "");
}
