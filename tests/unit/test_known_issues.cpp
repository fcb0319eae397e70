// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/known_issues.hpp"

using namespace gmb;

TEST(KnownIssues, ParsesLibraryVersions) {
  const LibraryVersion ompi = parse_library_version("Open MPI v5.0.7, package: Open MPI root@lab Distribution, ident: 5.0.7");
  EXPECT_EQ(ompi.family, "Open MPI");
  EXPECT_EQ(ompi.major, 5);
  EXPECT_EQ(ompi.minor, 0);
  EXPECT_EQ(ompi.patch, 7);
  const LibraryVersion mpich = parse_library_version("MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022");
  EXPECT_EQ(mpich.family, "MPICH");
  EXPECT_EQ(mpich.minor, 0);
  EXPECT_EQ(mpich.patch, 2);
  EXPECT_EQ(parse_library_version("Intel(R) MPI Library 2021.10").family, "");
}

namespace {
CollectiveCallFacts iallreduce_on_device() {
  CollectiveCallFacts c;
  c.call = "MPI_Iallreduce";
  c.nonblocking = c.reduction = c.device_memory = true;
  c.bytes = 1024;
  return c;
}
}  // namespace

// Open MPI up to 5.0 reduces non-blocking collectives on the CPU (coll/libnbc): device memory crashes.
TEST(KnownIssues, OpenMpiNonBlockingReductionOnDevice) {
  const LibraryVersion v507 = parse_library_version("Open MPI v5.0.7");
  const std::string reason = known_crash(v507, iallreduce_on_device());
  EXPECT_NE(reason.find("Open MPI 5.0.7 applies the reduction of MPI_Iallreduce on the CPU"), std::string::npos) << reason;
  EXPECT_NE(known_crash(parse_library_version("Open MPI v4.1.6"), iallreduce_on_device()), "");
  CollectiveCallFacts c = iallreduce_on_device();
  c.device_memory = false;  // pinned or host buffers: fine
  EXPECT_EQ(known_crash(v507, c), "");
  c = iallreduce_on_device();
  c.reduction = false;  // ibcast, ialltoall: nothing to reduce
  EXPECT_EQ(known_crash(v507, c), "");
  c = iallreduce_on_device();
  c.nonblocking = false;  // MPI_Allreduce: coll/accelerator stages it
  EXPECT_EQ(known_crash(v507, c), "");
  c.call = "MPI_Allreduce_init";  // persistent: coll/libnbc again
  c.persistent = true;
  EXPECT_NE(known_crash(v507, c).find("applies the reduction of MPI_Allreduce_init on the CPU"), std::string::npos);
  c = iallreduce_on_device();
  c.ucc_enabled = true;
  EXPECT_EQ(known_crash(v507, c), "");
  EXPECT_EQ(known_crash(parse_library_version("Open MPI v5.1.0"), iallreduce_on_device()), "");
  EXPECT_EQ(known_crash(parse_library_version("MPICH Version: 4.2.0"), iallreduce_on_device()), "");
}

TEST(KnownIssues, MpichInPlaceReduceAtAnotherRoot) {
  const LibraryVersion mpich = parse_library_version("MPICH Version:\t4.0.2");
  CollectiveCallFacts c;
  c.call = "MPI_Reduce";
  c.reduction = c.in_place = true;
  c.root = 1;
  c.bytes = 4096;
  EXPECT_NE(known_crash(mpich, c).find("MPICH 4.0.2 crashes in MPI_Reduce with MPI_IN_PLACE"), std::string::npos);
  c.bytes = 4095;
  EXPECT_EQ(known_crash(mpich, c), "");
  c.bytes = 1 << 20;
  c.root = 0;
  EXPECT_EQ(known_crash(mpich, c), "");
  c.root = 1;
  c.in_place = false;
  EXPECT_EQ(known_crash(mpich, c), "");
  c.in_place = true;
  c.call = "MPI_Ireduce";
  c.nonblocking = true;
  EXPECT_EQ(known_crash(mpich, c), "");
  c.call = "MPI_Reduce";
  c.nonblocking = false;
  EXPECT_EQ(known_crash(parse_library_version("MPICH Version: 4.1.2"), c), "");
  EXPECT_EQ(known_crash(parse_library_version("Open MPI v4.1.4"), c), "");
}

TEST(KnownIssues, MpichPersistentScatter) {
  const LibraryVersion mpich = parse_library_version("MPICH Version:\t4.0.2");
  CollectiveCallFacts c;
  c.call = "MPI_Scatter_init";
  c.bytes = 7;
  EXPECT_NE(known_crash(mpich, c).find("persistent MPI_Scatter_init"), std::string::npos);
  c.bytes = 0;  // nothing to scatter: it runs
  EXPECT_EQ(known_crash(mpich, c), "");
  c.bytes = 7;
  c.call = "MPI_Scatter";
  EXPECT_EQ(known_crash(mpich, c), "");
  c.call = "MPI_Scatter_init";
  EXPECT_EQ(known_crash(parse_library_version("MPICH Version: 4.1.2"), c), "");
}

namespace {
// The smallest MPI_Gather MPICH 4.0.2 built with CUDA was seen dying in: 4 ranks, 1 KiB blocks of device memory.
CollectiveCallFacts gather_of_four_on_device() {
  CollectiveCallFacts c;
  c.call = "MPI_Gather";
  c.device_memory = c.device_memory_off_root = true;
  c.ranks = 4;
  c.bytes = 4096;
  c.block_bytes = 1024;
  return c;
}
}  // namespace

TEST(KnownIssues, MpichBinomialGatherOnDeviceFromFourRanks) {
  const LibraryVersion mpich = parse_library_version("MPICH Version:\t4.0.2");
  CollectiveCallFacts c = gather_of_four_on_device();
  EXPECT_NE(known_crash(mpich, c).find("MPICH 4.0.2 dies with SIGSEGV in MPI_Gather on device memory from 4 ranks on"),
            std::string::npos);
  for (const char* call : {"MPI_Igather", "MPI_Gather_init"}) {
    c.call = call;
    EXPECT_NE(known_crash(mpich, c), "") << call;
  }
  c.call = "MPI_Gatherv";  // linear: passes
  EXPECT_EQ(known_crash(mpich, c), "");
  c.call = "MPI_Gather";
  c.block_bytes = 1023;  // under MPIR_CVAR_GATHER_VSMALL_MSG_SIZE: copied into the temporary buffer, passes
  EXPECT_EQ(known_crash(mpich, c), "");
  c.block_bytes = 1 << 20;
  c.mpich_gather_vsmall_msg_size = 2u << 20;  // the threshold as the process sees it
  EXPECT_EQ(known_crash(mpich, c), "");
  c.mpich_gather_vsmall_msg_size = 1024;
  c.ranks = 3;  // no rank but the root has children in the tree
  EXPECT_EQ(known_crash(mpich, c), "");
  c.ranks = 8;
  c.device_memory_off_root = false;  // only the root's buffers on the device
  EXPECT_EQ(known_crash(mpich, c), "");
  c.device_memory_off_root = true;
  EXPECT_EQ(known_crash(parse_library_version("MPICH Version: 4.1.2"), c), "");
  EXPECT_EQ(known_crash(parse_library_version("Open MPI v5.0.7"), c), "");
}
