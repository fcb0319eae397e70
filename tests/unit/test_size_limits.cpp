// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/benchmark.hpp"
#include "gmb/collectives.hpp"
#include "gmb/platform.hpp"
#include "gmb/size_limits.hpp"

using namespace gmb;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// A registered size sweep, its options parsed and configured for `ranks` ranks.
std::unique_ptr<Benchmark> configured(const std::string& name, const std::vector<std::string>& args, const Platform& platform,
                                      int ranks = 2) {
  auto bench = Registry::instance().find(name)->make();
  ArgParser parser;
  bench->add_options(parser);
  bench->configure(parser.parse(args), ranks, platform);
  return bench;
}

SizeNeeds needs_of(Benchmark& bench, const Context& ctx, std::uint64_t bytes) {
  return dynamic_cast<SizeSweep&>(bench).needs(ctx, bytes);
}

struct HostOnly {
  Platform platform;
  RunSettings settings;
  Context ctx;
  HostOnly() {
    register_modules(platform);
    ctx.platform = &platform;
    ctx.settings = &settings;
    ctx.size = 2;
  }
};

}  // namespace

TEST(SizeLimits, CountLimitIsTheLargestInt) {
  EXPECT_EQ(count_limit_reason(kMaxMpiCount, 1, "MPI_Send with MPI_BYTE"), "");
  EXPECT_EQ(count_limit_reason(2 * kGiB, 1, "MPI_Send with MPI_BYTE"),
            "2 GiB exceeds the 2 GiB - 1 byte per-call count of MPI-3 calls (MPI_Send with MPI_BYTE)");
  EXPECT_EQ(count_limit_reason(kGiB, 4, "MPI_Allreduce"), "");
  EXPECT_EQ(count_limit_reason(3 * kGiB, 4, "MPI_Allreduce"),
            "a count of 3221225472 elements of 4 bytes exceeds 2147483647, the per-call count of MPI-3 calls (MPI_Allreduce)");
}

TEST(SizeLimits, NeedsAddUpPerSideAndKeepTheFirstRefusal) {
  SizeNeeds n;
  n.add("send", 4 * kGiB, MemorySide::host);
  n.add("recv", 4 * kGiB, MemorySide::device);
  n.add("nothing", 0, MemorySide::host);  // an empty buffer is not listed
  n.add("image", 2 * kGiB, MemorySide::host);
  EXPECT_EQ(n.parts.size(), 3u);
  EXPECT_EQ(n.bytes_on(MemorySide::host), 6 * kGiB);
  EXPECT_EQ(n.bytes_on(MemorySide::device), 4 * kGiB);
  EXPECT_EQ(n.total_bytes(), 10 * kGiB);
  n.check_count(kGiB, 1, "MPI_Send");
  EXPECT_EQ(n.refusal, "");
  n.check_count(4 * kGiB, 1, "first");
  n.check_count(8 * kGiB, 1, "second");
  EXPECT_NE(n.refusal.find("(first)"), std::string::npos) << n.refusal;
}

TEST(SizeLimits, ShareLeavesTheMarginAndDividesAmongRanks) {
  EXPECT_EQ(share_of(100 * kGiB, 1, 0), 90 * kGiB);
  EXPECT_EQ(share_of(100 * kGiB, 4, 0), 90 * kGiB / 4);
  EXPECT_EQ(share_of(100 * kGiB, 4, kGiB), 90 * kGiB / 4 + kGiB);  // memory held for reuse counts whole
  EXPECT_EQ(share_of(100 * kGiB, 0, 0), 90 * kGiB);                // never divides by zero
}

TEST(SizeLimits, RefusalNamesTheLimitAndTheNumbers) {
  SizeNeeds n;
  n.add("send", 4 * kGiB, MemorySide::host);
  n.add("recv", 4 * kGiB, MemorySide::host);
  n.add("input image", 4 * kGiB, MemorySide::host);
  MemoryBudget budget;
  budget.host_bytes = share_of(23 * kGiB, 2, 0);
  budget.host_source = "23 GiB MemAvailable less a 10% margin, shared by 2 ranks on host x";
  EXPECT_EQ(size_refusal(n, budget),
            "needs 12 GiB of host memory per rank (send 4 GiB, recv 4 GiB, input image 4 GiB), 10.3 GiB available to "
            "each rank: 23 GiB MemAvailable less a 10% margin, shared by 2 ranks on host x");
  budget.host_bytes = 12 * kGiB;  // exactly enough
  EXPECT_EQ(size_refusal(n, budget), "");
  budget.host_bytes.reset();  // unknown: not refused for host memory
  EXPECT_EQ(size_refusal(n, budget), "");

  // Device memory is budgeted apart; no GPU budget with a device need is not a refusal either (the
  // memory kind is refused first, with its own reason).
  SizeNeeds d;
  d.add("send", 64 * kMiB, MemorySide::device);
  budget.device_bytes = 32 * kMiB;
  budget.device_source = "free on GPU";
  EXPECT_EQ(size_refusal(d, budget), "needs 64 MiB of device memory per rank (send 64 MiB), 32 MiB available to each rank: free on GPU");

  // --memory-limit caps host and device together.
  MemoryBudget limited;
  limited.limit = 16 * kMiB;
  SizeNeeds both;
  both.add("send", 8 * kMiB, MemorySide::host);
  both.add("recv", 9 * kMiB, MemorySide::device);
  EXPECT_EQ(size_refusal(both, limited), "needs 17 MiB per rank (send 8 MiB; device: recv 9 MiB), over --memory-limit 16 MiB");
  // A count refusal comes first: it holds whatever the memory.
  both.check_count(4 * kGiB, 1, "MPI_Isend with MPI_BYTE");
  EXPECT_NE(size_refusal(both, limited).find("per-call count"), std::string::npos);
}

TEST(SizeLimits, ReadsMemAvailable) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24684100 kB\nMemFree:  1 kB\nMemAvailable:   24363628 kB\n"),
            std::optional<std::uint64_t>(24363628ull * 1024));
  EXPECT_EQ(parse_mem_available("MemTotal: 5 kB\n"), std::nullopt);
  std::string source;
  const auto here = host_memory_available(&source);  // Linux: always known
  ASSERT_TRUE(here.has_value());
  EXPECT_GT(*here, 0u);
  EXPECT_FALSE(source.empty());
}

TEST(SizeLimits, ReadableBytes) {
  EXPECT_EQ(readable_bytes(512), "512 B");
  EXPECT_EQ(readable_bytes(4 * kGiB), "4 GiB");
  EXPECT_EQ(readable_bytes(12 * kGiB + kGiB / 2), "12.5 GiB");
  EXPECT_EQ(readable_bytes(1536), "1.5 KiB");
}

TEST(SizeLimits, PointToPointNeedsBothBuffersAndCountsOneMessagePerCall) {
  HostOnly h;
  auto bw = configured("bw", {}, h.platform);
  const SizeNeeds small = needs_of(*bw, h.ctx, kMiB);
  EXPECT_EQ(small.bytes_on(MemorySide::host), 2 * kMiB);  // send and recv; the window reuses them
  EXPECT_EQ(small.refusal, "");
  const SizeNeeds huge = needs_of(*bw, h.ctx, 4 * kGiB);
  EXPECT_EQ(huge.refusal, "4 GiB exceeds the 2 GiB - 1 byte per-call count of MPI-3 calls (MPI_Isend/MPI_Irecv with MPI_BYTE)");
  auto latency = configured("latency", {}, h.platform);
  EXPECT_NE(needs_of(*latency, h.ctx, 2 * kGiB).refusal.find("(MPI_Send/MPI_Recv with MPI_BYTE)"), std::string::npos);
  EXPECT_EQ(needs_of(*latency, h.ctx, 2 * kGiB - 1).refusal, "");
}

TEST(SizeLimits, StagedStrategiesNeedTheirSlotsAndChunksCountPerCall) {
  HostOnly h;
  // Rank 0 sends from device memory staged through 2 x 8 pinned slots (window 8).
  auto staged = configured("bw", {"--send", "device", "--strategy", "staged-pinned", "--window", "8"}, h.platform);
  const SizeNeeds n = needs_of(*staged, h.ctx, 4 * kMiB);
  EXPECT_EQ(n.bytes_on(MemorySide::device), 8 * kMiB);
  EXPECT_EQ(n.bytes_on(MemorySide::host), 16 * 4 * kMiB);
  // Over the 4 GiB staging limit per direction.
  EXPECT_NE(needs_of(*staged, h.ctx, kGiB).refusal.find("staging limit"), std::string::npos);
  // Pipelined: one call carries one chunk, so 4 GiB in 4 chunks passes the count limit.
  auto pipelined = configured("latency", {"--strategy", "pipelined", "--chunks", "4"}, h.platform);
  EXPECT_EQ(needs_of(*pipelined, h.ctx, 4 * kGiB).refusal, "");
  // Chunks of at most 3 GiB: 4 GiB + 2 bytes goes in 2 chunks of 2 GiB + 1 byte, one over the count.
  auto large_chunks = configured("latency", {"--strategy", "pipelined", "--chunk-size", "3G"}, h.platform);
  EXPECT_NE(needs_of(*large_chunks, h.ctx, 4 * kGiB + 2).refusal.find("one chunk per call"), std::string::npos);
  EXPECT_EQ(needs_of(*large_chunks, h.ctx, 4 * kGiB - 2).refusal, "");  // 2 chunks of 2 GiB - 1 byte
}

TEST(SizeLimits, CollectivesNeedBuffersImagesAndCopies) {
  HostOnly h;
  auto allreduce = configured("coll", {"allreduce"}, h.platform);
  const SizeNeeds n = needs_of(*allreduce, h.ctx, 4 * kGiB);  // 1 Gi floats: within the count limit
  EXPECT_EQ(n.refusal, "");
  EXPECT_EQ(n.bytes_on(MemorySide::host), 12 * kGiB);  // send, recv and the input image
  h.settings.validate = true;
  EXPECT_EQ(needs_of(*allreduce, h.ctx, 4 * kGiB).bytes_on(MemorySide::host), 16 * kGiB);  // + the received copy
  // Bytes: 4 Gi elements is over the count of one call.
  auto bcast = configured("coll", {"bcast"}, h.platform);
  const SizeNeeds b = needs_of(*bcast, h.ctx, 4 * kGiB);
  EXPECT_NE(b.refusal.find("exceeds 2147483647, the per-call count of MPI-3 calls (MPI_Bcast)"), std::string::npos) << b.refusal;
  // Gather: the root receives every rank's block, the others only send theirs.
  auto gather = configured("coll", {"gather"}, h.platform, 4);
  h.ctx.size = 4;
  h.settings.validate = false;
  h.ctx.rank = 0;
  EXPECT_EQ(needs_of(*gather, h.ctx, 64 * kMiB).bytes_on(MemorySide::host), 16 * kMiB + 64 * kMiB + 64 * kMiB);
  h.ctx.rank = 1;
  EXPECT_EQ(needs_of(*gather, h.ctx, 64 * kMiB).bytes_on(MemorySide::host), 16 * kMiB + 16 * kMiB);
}

// What scales with an option rather than the size: the requests a window keeps in flight (the MPI library's state for
// each, kBytesPerOperationInFlight), counted once past the margin's share, with the count one MPI_Waitall takes.
TEST(SizeLimits, WindowsChunksAndOneSidedOperationsNeedTheLibrarysStatePerOperation) {
  HostOnly h;
  auto bw = configured("bw", {"--window", "100000000"}, h.platform);
  const SizeNeeds n = needs_of(*bw, h.ctx, 8);
  EXPECT_EQ(n.bytes_on(MemorySide::host), 16 + 100000000 * kBytesPerOperationInFlight);
  EXPECT_EQ(n.parts.back().what, "100000000 requests in flight (1 KiB each, the MPI library's state)");
  // Both ways: twice the window; a default window's requests stay within the margin, out of the reasons.
  auto bibw = configured("bibw", {"--window", "1000"}, h.platform);
  EXPECT_EQ(needs_of(*bibw, h.ctx, 8).bytes_on(MemorySide::host), 16 + 2000 * kBytesPerOperationInFlight);
  EXPECT_EQ(needs_of(*configured("bw", {}, h.platform), h.ctx, 8).parts.size(), 2u);
  // A chunked strategy: a request per chunk; 1-byte chunks of 4 GiB are more requests than MPI_Waitall takes.
  auto chunked = configured("bw", {"--strategy", "pipelined", "--chunk-size", "1", "--window", "2"}, h.platform);
  EXPECT_EQ(needs_of(*chunked, h.ctx, 4 * kGiB).refusal,
            "8589934592 requests in flight at once exceed 2147483647, the count one MPI_Waitall takes");
  // Bad input whatever the size: a window both ways beyond what one MPI_Waitall takes.
  EXPECT_THROW(configured("bibw", {"--window", "1073741824"}, h.platform), UsageError);
  EXPECT_NO_THROW(configured("bibw", {"--window", "1073741823"}, h.platform));
  EXPECT_NO_THROW(configured("bw", {"--window", "2147483647"}, h.platform));
  // One-sided: the origin's operations until their synchronisation.
  auto rma = configured("rma_bw", {"--window", "4096"}, h.platform);
  h.ctx.rank = 0;
  const SizeNeeds origin = needs_of(*rma, h.ctx, 8);
  EXPECT_EQ(origin.parts.front().what, "4096 MPI_Put operations in flight (1 KiB each, the MPI library's state)");
  // Saturating: an option's product beyond 64 bits is refused as far over any memory, never wrapped to a small one.
  SizeNeeds huge;
  huge.add_in_flight(UINT64_MAX / 2, "requests");
  huge.add("send", kGiB, MemorySide::host);
  EXPECT_EQ(huge.bytes_on(MemorySide::host), UINT64_MAX);
}
