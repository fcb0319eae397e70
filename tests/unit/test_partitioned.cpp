// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <climits>

#include "gmb/mpi_features.hpp"
#include "gmb/partitioned.hpp"

namespace gmb {

TEST(PartitionSplit, EqualNonEmptyPartitionsOnly) {
  EXPECT_EQ(partition_split_problem(64, 1), "");
  EXPECT_EQ(partition_split_problem(64, 64), "");
  EXPECT_NE(partition_split_problem(3, 4).find("3 bytes do not split into 4 equal"), std::string::npos);
  EXPECT_NE(partition_split_problem(0, 1).find("do not split"), std::string::npos);
  EXPECT_NE(partition_split_problem(100, 0).find("at least 1"), std::string::npos);
}

TEST(PartitionSplit, CountsBeyondIntAreRefused) {
  const std::size_t big = static_cast<std::size_t>(INT_MAX) + 1;
  EXPECT_NE(partition_split_problem(big, 1).find("beyond MPI's int count"), std::string::npos);
  EXPECT_EQ(partition_split_problem(2 * big, 4), "");
}

TEST(MpiFeatures, DescribedWithTheirCallsAndAReasonWhenAbsent) {
  for (MpiFeature f : {MpiFeature::partitioned, MpiFeature::persistent_collectives}) {
    const MpiFeatureInfo& info = mpi_feature(f);
    EXPECT_STREQ(info.standard, "MPI-4.0");
    // The reason needs MPI_Get_version, which is callable before MPI_Init; it names the calls.
    if (info.built) EXPECT_EQ(mpi_feature_problem(f), "");
    else EXPECT_NE(mpi_feature_problem(f).find(info.calls), std::string::npos);
  }
}

}  // namespace gmb
