// SPDX-License-Identifier: BSD-3-Clause
// The one-sided (RMA) benchmarks' rules (gmb/rma.hpp): operations, synchronisations and window creations accepted,
// sizes refused, the values --validate expects; and the options each benchmark takes.
#include <gtest/gtest.h>

#include <set>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/platform.hpp"
#include "gmb/rma.hpp"

using namespace gmb;
using namespace gmb::rma;

namespace {

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Parses `args` with `benchmark`'s own options and configures it for 2 ranks.
std::string configure_error(const std::string& benchmark, const std::vector<std::string>& args) {
  Platform platform;
  register_modules(platform);
  auto bench = Registry::instance().find(benchmark)->make();
  ArgParser parser;
  bench->add_options(parser);
  return usage_error([&] { bench->configure(parser.parse(args), 2, platform); });
}

}  // namespace

TEST(Rma, OperationsSayTheirCallAndDatatype) {
  EXPECT_EQ(std::string(info(Op::put).call), "MPI_Put");
  EXPECT_EQ(std::string(info(Op::get_acc).call), "MPI_Get_accumulate");
  EXPECT_EQ(std::string(info(Op::cas).call), "MPI_Compare_and_swap");
  EXPECT_EQ(std::string(info(Op::get).datatype), "byte");
  EXPECT_EQ(std::string(info(Op::acc).datatype), "int");
  EXPECT_EQ(std::string(info(Op::fop).datatype), "int64");
  std::set<std::string> names;
  for (const auto& o : operations()) names.insert(o.name);
  EXPECT_EQ(names, (std::set<std::string>{"put", "get", "acc", "get_acc", "fop", "cas"}));
}

TEST(Rma, ParsingNamesWhatIsAccepted) {
  EXPECT_EQ(parse_op("get_acc", {Op::put, Op::get_acc}), Op::get_acc);
  EXPECT_EQ(usage_error([] { parse_op("fop", {Op::put, Op::get, Op::acc}); }),
            "unknown RMA operation 'fop' (accepted: put, get, acc)");
  EXPECT_EQ(parse_sync("pscw"), Sync::pscw);
  EXPECT_EQ(usage_error([] { parse_sync("lock_all"); }),
            "unknown synchronisation 'lock_all' (accepted: fence, lock, flush, pscw)");
  EXPECT_EQ(parse_window_creation("allocate"), WindowCreation::allocate);
  EXPECT_EQ(usage_error([] { parse_window_creation("dynamic"); }),
            "unknown window creation 'dynamic' (accepted: create, allocate)");
  for (Sync s : {Sync::fence, Sync::lock, Sync::flush, Sync::pscw}) EXPECT_EQ(parse_sync(sync_name(s)), s);
  EXPECT_TRUE(passive(Sync::lock));
  EXPECT_TRUE(passive(Sync::flush));
  EXPECT_FALSE(passive(Sync::fence));
  EXPECT_FALSE(passive(Sync::pscw));
}

TEST(Rma, SizesAnOperationCannotMove) {
  EXPECT_EQ(size_problem(Op::put, 0), "");
  EXPECT_EQ(size_problem(Op::get, 3), "");
  EXPECT_EQ(size_problem(Op::acc, 4), "");
  EXPECT_EQ(size_problem(Op::get_acc, 1 << 20), "");
  for (std::size_t bytes : {0, 1, 2, 6, 4097})
    EXPECT_NE(size_problem(Op::acc, bytes).find("positive multiple of 4 bytes"), std::string::npos) << bytes;
  EXPECT_EQ(size_problem(Op::fop, 8), "");
  EXPECT_EQ(size_problem(Op::cas, 8), "");
  for (std::size_t bytes : {0, 4, 16, 64})
    EXPECT_EQ(size_problem(Op::cas, bytes),
              "cas (MPI_Compare_and_swap) moves one 8-byte MPI_INT64_T element: it measures 8 bytes only (give --sizes 8)");
  EXPECT_EQ(element_count(Op::acc, 64), 16u);
  EXPECT_EQ(element_count(Op::put, 64), 64u);
  EXPECT_EQ(element_count(Op::fop, 8), 1u);
}

TEST(Rma, ValidationValuesAreSmallAndExact) {
  for (std::size_t k = 0; k < 4096; ++k) {
    const auto operand = operand_value(k, 12345), initial = initial_target_value(k, 12345);
    EXPECT_GE(operand, 1);
    EXPECT_LE(operand, 16);
    EXPECT_GE(initial, 0);
    EXPECT_LE(initial, 255);
    EXPECT_GT(operand, kUnfetched);
    EXPECT_GT(initial, kUnfetched);
  }
  // Another seed writes other values: a buffer left from an earlier checked iteration does not pass.
  int differ = 0;
  for (std::size_t k = 0; k < 64; ++k) differ += operand_value(k, 1) != operand_value(k, 2);
  EXPECT_GT(differ, 32);
}

TEST(Rma, ExpectedAfterOneOperation) {
  EXPECT_EQ(expected_after(Op::acc, 5, 7).target, 12);
  const Expected get_acc = expected_after(Op::get_acc, 5, 7);
  EXPECT_EQ(get_acc.target, 12);
  EXPECT_EQ(get_acc.fetched, 7);
  const Expected fop = expected_after(Op::fop, 3, 200);
  EXPECT_EQ(fop.target, 203);
  EXPECT_EQ(fop.fetched, 200);
  const Expected cas = expected_after(Op::cas, 9, 42);  // compared with the target's value: swapped
  EXPECT_EQ(cas.target, 9);
  EXPECT_EQ(cas.fetched, 42);
}

TEST(Rma, BenchmarksAreRegisteredForTwoRanks) {
  for (const char* name : {"rma_latency", "rma_bw", "rma_bibw"}) {
    const BenchmarkInfo* info = Registry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->min_ranks, 2) << name;
    EXPECT_EQ(info->max_ranks, 2) << name;
    EXPECT_EQ(info->records.family, Family::rma) << name;
  }
  EXPECT_EQ(*Registry::instance().find("rma_latency")->records.headline, Statistic::time_us);
  EXPECT_EQ(*Registry::instance().find("rma_bw")->records.headline, Statistic::bandwidth_GBps);
  EXPECT_EQ(*Registry::instance().find("rma_bibw")->records.headline, Statistic::bandwidth_GBps);
}

TEST(Rma, OptionsEachBenchmarkTakes) {
  EXPECT_EQ(configure_error("rma_latency", {"--op", "cas", "--sync", "fence", "--win", "allocate"}), "");
  EXPECT_EQ(configure_error("rma_latency", {"-s", "pscw", "-w", "create", "D", "H"}), "");
  EXPECT_EQ(configure_error("rma_bw", {"--op", "get", "--window", "16"}), "");
  EXPECT_EQ(configure_error("rma_bibw", {"--op", "acc", "-W", "8", "--send", "managed", "--recv", "pinned"}), "");
  EXPECT_EQ(configure_error("rma_bw", {"--op", "cas"}), "--op: unknown RMA operation 'cas' (accepted: put, get, acc)");
  EXPECT_EQ(configure_error("rma_bibw", {"--op", "get"}), "--op: unknown RMA operation 'get' (accepted: put, acc)");
  EXPECT_NE(configure_error("rma_latency", {"--window", "8"}), "");  // one operation per iteration
  EXPECT_NE(configure_error("rma_bw", {"--window", "0"}), "");
  EXPECT_NE(configure_error("rma_latency", {"--send", "managed:device"}).find("do not place managed memory"),
            std::string::npos);
  EXPECT_NE(configure_error("rma_latency", {"MD", "MH"}).find("do not place managed memory"), std::string::npos);
  EXPECT_NE(configure_error("rma_latency", {"H"}).find("expected two buffer letters"), std::string::npos);
}
