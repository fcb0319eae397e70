// SPDX-License-Identifier: BSD-3-Clause
// The NCCL transport's rules that need no GPU: which operations it runs, what it refuses and why,
// and that its byte counts are the MPI table's (one arithmetic for both transports).
#include <gtest/gtest.h>

#include "gmb/benchmark.hpp"
#include "gmb/coll_operands.hpp"
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"

using namespace gmb;

namespace {

const coll::Collective& op(const char* name) { return *coll::find_collective(name); }

struct NcclFixture : ::testing::Test {
  Platform platform;
  Context ctx;
  void SetUp() override {
    platform.nccl.unavailable_reason.clear();  // as register_nccl leaves it when NCCL loads
    platform.nccl.version = "2.28.9";
    register_host_memory(platform.memory);
    register_gpu_memory_kinds(platform.memory, "", GpuAllocators{});
    ctx.platform = &platform;
    ctx.ranks = {{"node1", "GPU-a", "0000:01:00.0"}, {"node1", "GPU-b", "0000:02:00.0"}};
  }
  const MemoryKind& kind(const char* name) const { return platform.memory.known(name); }
};

}  // namespace

TEST(NcclCoverage, EveryOperationHasACallOrAReason) {
  for (const auto& c : coll::collectives())
    EXPECT_TRUE(c.nccl.call != nullptr || (c.nccl.missing != nullptr && *c.nccl.missing)) << c.name;
}

TEST(NcclCoverage, NativeCallsAndGroupedOnes) {
  EXPECT_STREQ(op("allreduce").nccl.call, "ncclAllReduce");
  EXPECT_STREQ(op("bcast").nccl.call, "ncclBroadcast");
  EXPECT_STREQ(op("reduce_scatter_block").nccl.call, "ncclReduceScatter");
  EXPECT_STREQ(op("reduce_scatter_equal").nccl.call, "ncclReduceScatter");
  EXPECT_STREQ(op("alltoall").nccl.call, "ncclSend/ncclRecv (grouped)");
  EXPECT_EQ(op("barrier").nccl.call, nullptr);
  EXPECT_EQ(op("reduce_scatter").nccl.call, nullptr);
}

TEST(NcclCoverage, RefusesWhatNcclCannotMeanTheSameWay) {
  EXPECT_EQ(nccl_collective_problem(op("allreduce"), false), "");
  EXPECT_EQ(nccl_collective_problem(op("allreduce"), true), "");
  EXPECT_EQ(nccl_collective_problem(op("allgather"), true), "");
  EXPECT_NE(nccl_collective_problem(op("alltoall"), true).find("supported for reduce, allreduce and allgather only"),
            std::string::npos);
  EXPECT_NE(nccl_collective_problem(op("reduce_scatter_block"), true), "");
  EXPECT_NE(nccl_collective_problem(op("reduce_scatter"), false).find("reduce_scatter_equal or reduce_scatter_block"),
            std::string::npos);
  EXPECT_NE(nccl_collective_problem(op("barrier"), false).find("no barrier"), std::string::npos);
  // bcast has no MPI in-place form, so --in-place never reaches the NCCL rule for it.
  EXPECT_EQ(nccl_collective_problem(op("bcast"), true), "");
}

TEST(NcclCoverage, TransportNames) { EXPECT_EQ(transport_names(), (std::vector<std::string>{"mpi", "nccl"})); }

TEST_F(NcclFixture, DeviceMemoryOnDistinctGpusIsAccepted) { EXPECT_EQ(nccl_problem(ctx, kind("device")), ""); }

TEST_F(NcclFixture, OtherMemoryKindsAreRefusedWithTheKind) {
  const std::string why = nccl_problem(ctx, kind("managed"));
  EXPECT_NE(why.find("device memory only"), std::string::npos);
  EXPECT_NE(why.find("'managed'"), std::string::npos);
}

TEST_F(NcclFixture, TwoRanksOnOneGpuAreRefused) {
  ctx.ranks[1].gpu_uuid = "GPU-a";
  EXPECT_NE(nccl_problem(ctx, kind("device")).find("ranks 0 and 1 both use GPU GPU-a"), std::string::npos);
  ctx.ranks[1].host = "node2";  // the same UUID text on another host is another GPU
  EXPECT_EQ(nccl_problem(ctx, kind("device")), "");
}

TEST_F(NcclFixture, UnavailableNcclSaysWhy) {
  platform.nccl.unavailable_reason = "built without NCCL";
  EXPECT_EQ(nccl_problem(ctx, kind("device")), "the NCCL transport is not available: built without NCCL");
  Platform unregistered;
  EXPECT_FALSE(unregistered.nccl.available());
}

// Bandwidth under NCCL uses the table's op_bytes and busbw factors, as nccl-tests does.
TEST(NcclCoverage, SizesAndBusBandwidthMatchNcclTests) {
  // nccl-tests: allreduce busbw = algbw * 2(n-1)/n; allgather, reduce_scatter, alltoall (n-1)/n.
  EXPECT_DOUBLE_EQ(op("allreduce").busbw.factor(4), 1.5);
  EXPECT_DOUBLE_EQ(op("allgather").busbw.factor(4), 0.75);
  EXPECT_DOUBLE_EQ(op("reduce_scatter_block").busbw.factor(4), 0.75);
  EXPECT_DOUBLE_EQ(op("alltoall").busbw.factor(4), 0.75);
  EXPECT_DOUBLE_EQ(op("bcast").busbw.factor(4), 1.0);
  // 1 GiB of floats over 4 ranks: every equal-block operation moves the whole size.
  const std::size_t gib = std::size_t{1} << 30;
  for (const char* name : {"allreduce", "allgather", "reduce_scatter_block", "reduce_scatter_equal", "alltoall", "bcast"})
    EXPECT_DOUBLE_EQ(coll::Operands::op_bytes_for(op(name), coll::Dtype::float32, gib, 4), static_cast<double>(gib))
        << name;
}
