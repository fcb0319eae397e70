// SPDX-License-Identifier: BSD-3-Clause
// The engine's description of itself (gmb-bench list --format json): what the harness groups, ranks
// and plots by comes from here, so it must be complete and true to the code it describes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "gmb/benchmark.hpp"
#include "gmb/collectives.hpp"
#include "gmb/description.hpp"
#include "gmb/error.hpp"
#include "gmb/nccl.hpp"
#include "gmb/platform.hpp"
#include "gmb/provenance.hpp"
#include "gmb/transfer.hpp"

using namespace gmb;

namespace {

struct DescriptionFixture : ::testing::Test {
  Platform platform;
  Json description;
  bool validate = false;
  void SetUp() override {
    register_modules(platform);
    ArgParser common;  // the driver's options every benchmark takes; two of them stand for all here
    common.value({"--sizes"}, "SIZES", "sizes", [](const std::string&) {});
    common.flag({"--validate", "-c", "--validation"}, "check", &validate);
    description = engine_description(platform, common);
  }
  const Json::Array& list(const char* key) const { return *description.find(key)->as_array(); }
  const Json& entry(const char* key, const std::string& name) const {
    for (const Json& e : list(key))
      if (*e.find("name")->as_string() == name) return e;
    throw std::runtime_error(std::string("no ") + key + " entry " + name);
  }
};

std::vector<std::string> strings(const Json& array) {
  std::vector<std::string> out;
  for (const Json& v : *array.as_array()) out.push_back(*v.as_string());
  return out;
}

std::string text(const Json& value) { return value.as_string() ? *value.as_string() : value.dump(); }

}  // namespace

TEST_F(DescriptionFixture, SaysWhatItIs) { EXPECT_EQ(text(*description.find("schema")), "gmb.engine/1"); }

TEST_F(DescriptionFixture, EveryBenchmarkSaysWhatItsRecordsAre) {
  const std::set<std::string> families = {"pt2pt", "multi-pair", "collective", "nbc", "managed", "rma", "partitioned", "halo", "peaks", "doctor"};
  std::vector<std::string> order;
  for (Statistic s : all_statistics()) order.push_back(statistic_name(s));
  ASSERT_EQ(list("benchmarks").size(), Registry::instance().all().size());
  for (const Json& b : list("benchmarks")) {
    const std::string name = text(*b.find("name"));
    for (const char* key : {"family", "metrics", "headline", "transports", "operations"})
      EXPECT_NE(b.find(key), nullptr) << name << " has no " << key;
    EXPECT_TRUE(families.count(text(*b.find("family")))) << name;
    const std::vector<std::string> metrics = strings(*b.find("metrics"));
    // In the one order the description lists statistics, each once.
    std::vector<std::string> expected;
    for (const auto& s : order)
      if (std::count(metrics.begin(), metrics.end(), s)) expected.push_back(s);
    EXPECT_EQ(metrics, expected) << name;
    const Json& headline = *b.find("headline");
    if (headline.is_null()) {
      EXPECT_TRUE(metrics.empty()) << name << ": figures without a headline";
    } else {
      EXPECT_TRUE(std::count(metrics.begin(), metrics.end(), text(headline))) << name << ": headline not among metrics";
    }
    const std::vector<std::string> transports = strings(*b.find("transports"));
    ASSERT_FALSE(transports.empty()) << name;
    EXPECT_EQ(transports.front(), "mpi") << name;
    for (const auto& t : transports)
      EXPECT_TRUE(std::count(transport_names().begin(), transport_names().end(), t)) << name << ": " << t;
  }
}

// The transports a benchmark declares are the ones its options accept.
TEST_F(DescriptionFixture, TransportsAreWhatTheOptionsAccept) {
  for (const BenchmarkInfo& info : Registry::instance().all()) {
    auto bench = info.make();
    ArgParser parser;
    bench->add_options(parser);
    bool accepts_option = true;
    try {
      parser.parse({"--transport", "nccl"});
    } catch (const UsageError&) {
      accepts_option = false;
    }
    const auto& t = info.records.transports;
    EXPECT_EQ(accepts_option, std::count(t.begin(), t.end(), "nccl") == 1) << info.name;
  }
}

std::vector<std::string> option_names(const Json& options) {
  std::vector<std::string> out;
  for (const Json& o : *options.as_array())
    for (const auto& n : strings(*o.find("names"))) out.push_back(n);
  return out;
}

// Every option a benchmark declares is listed with all its names, and nothing else: what a campaign may pass.
TEST_F(DescriptionFixture, OptionsAreWhatTheCommandLineDeclares) {
  EXPECT_EQ(option_names(*description.find("options")),
            (std::vector<std::string>{"--sizes", "--validate", "-c", "--validation"}));
  EXPECT_EQ(text(*(*description.find("options")->as_array())[1].find("value")), "none");
  for (const BenchmarkInfo& info : Registry::instance().all()) {
    ArgParser parser;
    info.make()->add_options(parser);
    std::vector<std::string> declared;
    for (const auto& o : parser.options()) declared.insert(declared.end(), o.names.begin(), o.names.end());
    const Json* options = entry("benchmarks", info.name).find("options");
    ASSERT_NE(options, nullptr) << info.name;
    EXPECT_EQ(option_names(*options), declared) << info.name;
  }
  // A value's kind, and the accepted values where the option declares them
  const Json* window = nullptr;
  const Json* strategy = nullptr;
  for (const Json& o : *entry("benchmarks", "bw").find("options")->as_array()) {
    if (strings(*o.find("names")).front() == "--window") window = &o;
    if (strings(*o.find("names")).front() == "--strategy") strategy = &o;
  }
  ASSERT_TRUE(window && strategy);
  EXPECT_EQ(strings(*window->find("names")), (std::vector<std::string>{"--window", "-W", "--window-size"}));
  EXPECT_EQ(text(*window->find("value")), "required");
  EXPECT_EQ(window->find("choices"), nullptr);
  std::vector<std::string> transfer;
  for (const auto& s : transfer_strategies()) transfer.push_back(s.name);
  EXPECT_EQ(strings(*strategy->find("choices")), transfer);
}

TEST_F(DescriptionFixture, KnownBenchmarks) {
  auto check = [&](const char* name, const char* family, const char* headline, std::vector<std::string> transports) {
    const Json& b = entry("benchmarks", name);
    EXPECT_EQ(text(*b.find("family")), family) << name;
    EXPECT_EQ(text(*b.find("headline")), headline) << name;
    EXPECT_EQ(strings(*b.find("transports")), transports) << name;
  };
  check("latency", "pt2pt", "time_us", {"mpi", "nccl"});
  check("bw", "pt2pt", "bandwidth_GBps", {"mpi", "nccl"});
  check("bibw", "pt2pt", "bandwidth_GBps", {"mpi", "nccl"});
  check("coll", "collective", "busbw_GBps", {"mpi", "nccl"});
  check("nbc", "nbc", "time_us", {"mpi"});
  check("halo", "halo", "time_us", {"mpi"});
  check("peaks", "peaks", "bandwidth_GBps", {"mpi"});
  EXPECT_TRUE(entry("benchmarks", "doctor").find("headline")->is_null());
  EXPECT_EQ(entry("benchmarks", "coll").find("operations")->dump(), "true");
  EXPECT_EQ(entry("benchmarks", "nbc").find("operations")->dump(), "true");
  EXPECT_EQ(entry("benchmarks", "latency").find("operations")->dump(), "false");
}

// "adaptive": the benchmark takes --precision, which the size-sweep runner implements and the others refuse.
TEST_F(DescriptionFixture, AdaptiveIsWhetherTheBenchmarkTakesPrecision) {
  for (const BenchmarkInfo& info : Registry::instance().all()) {
    const Json* adaptive = entry("benchmarks", info.name).find("adaptive");
    ASSERT_NE(adaptive, nullptr) << info.name;
    const auto bench = info.make();
    EXPECT_EQ(adaptive->dump(), bench->takes_precision() ? "true" : "false") << info.name;
    RunSettings settings;
    settings.precision = 0.03;
    EXPECT_EQ(precision_problem(info, *bench, settings).empty(), bench->takes_precision()) << info.name;
  }
  for (const char* name : {"latency", "bw", "bibw", "mbw", "mlat", "um", "coll"})
    EXPECT_EQ(entry("benchmarks", name).find("adaptive")->dump(), "true") << name;
  for (const char* name : {"nbc", "halo", "peaks", "doctor"})
    EXPECT_EQ(entry("benchmarks", name).find("adaptive")->dump(), "false") << name;
  // --max-seconds caps adaptive repetitions only.
  RunSettings capped;
  capped.max_seconds = 2;
  const BenchmarkInfo& latency = *Registry::instance().find("latency");
  EXPECT_NE(precision_problem(latency, *latency.make(), capped).find("needs --precision"), std::string::npos);
}

TEST_F(DescriptionFixture, MemoryKindsAndTheirPlacements) {
  for (const Json& k : list("memory_kinds"))
    for (const char* key : {"gpu_memory", "gpu_backed", "placeable", "placement", "base", "host_accessible"})
      EXPECT_NE(k.find(key), nullptr) << text(*k.find("name")) << " has no " << key;
  EXPECT_TRUE(entry("memory_kinds", "host").find("placement")->is_null());
  EXPECT_EQ(text(*entry("memory_kinds", "host").find("base")), "host");
  EXPECT_EQ(entry("memory_kinds", "host").find("host_accessible")->dump(), "true");
  EXPECT_EQ(entry("memory_kinds", "pinned").find("host_accessible")->dump(), "true");
  EXPECT_EQ(entry("memory_kinds", "device").find("host_accessible")->dump(), "false");
  EXPECT_EQ(entry("memory_kinds", "device").find("gpu_memory")->dump(), "true");
  for (const char* where : {"host", "device"}) {
    const Json& placed = entry("memory_kinds", std::string("managed:") + where);
    EXPECT_EQ(text(*placed.find("placement")), where);
    EXPECT_EQ(text(*placed.find("base")), "managed");
    EXPECT_EQ(placed.find("host_accessible")->dump(), "true");
    EXPECT_EQ(placed.find("gpu_backed")->dump(), "true");
  }
}

TEST_F(DescriptionFixture, CollectivesAreTheTableWithItsNcclMapping) {
  const auto& rows = coll::collectives();
  ASSERT_EQ(list("collectives").size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Json& c = list("collectives")[k];
    EXPECT_EQ(text(*c.find("name")), rows[k].name);
    EXPECT_EQ(text(*c.find("mpi_call")), rows[k].blocking_name);
    // Operations with data have a bus-bandwidth factor; barrier has none.
    EXPECT_EQ(c.find("busbw_factor")->is_null(), !rows[k].has_data) << rows[k].name;
    const Json& nccl = *c.find("nccl");
    EXPECT_NE(nccl.find("call")->is_null(), nccl.find("reason")->is_null()) << rows[k].name << ": a call or a reason";
  }
  const Json& allreduce = entry("collectives", "allreduce");
  EXPECT_EQ(text(*allreduce.find("busbw_factor")), "2(n-1)/n");
  EXPECT_EQ(text(*allreduce.find("nonblocking_call")), "MPI_Iallreduce");
  EXPECT_EQ(text(*allreduce.find("nccl")->find("call")), "ncclAllReduce");
  EXPECT_EQ(text(*entry("collectives", "alltoall").find("nccl")->find("call")), "ncclSend/ncclRecv (grouped)");
  EXPECT_NE(text(*entry("collectives", "barrier").find("nccl")->find("reason")).find("no barrier"), std::string::npos);
}

// Every operation says what its size means and how it is divided: reduce_scatter's unequal counts are told apart
// from the equal blocks that OSU's osu_reduce_scatter moves.
TEST_F(DescriptionFixture, CollectivesSayWhatTheirCountsAre) {
  for (const auto& row : coll::collectives()) {
    const Json& counts = *entry("collectives", row.name).find("counts");
    EXPECT_EQ(text(*counts.find("split")), coll::split_name(row.split)) << row.name;
    EXPECT_FALSE(text(*counts.find("description")).empty()) << row.name;
  }
  auto split = [&](const char* name) { return text(*entry("collectives", name).find("counts")->find("split")); };
  EXPECT_EQ(split("reduce_scatter"), "unequal");
  EXPECT_EQ(split("reduce_scatter_equal"), "equal-blocks");
  EXPECT_EQ(split("reduce_scatter_block"), "equal-blocks");
  EXPECT_EQ(split("allreduce"), "whole");
  EXPECT_EQ(split("gatherv"), "unequal");
  EXPECT_EQ(split("barrier"), "none");
  EXPECT_NE(text(*entry("collectives", "reduce_scatter").find("counts")->find("description")).find("reduce_scatter_equal"),
            std::string::npos);
}

// What the harness plans and reads by: directions and overlap per benchmark, its OMB counterpart, the run
// defaults, the strategies with what they stage through, and the copies peaks measures with what they bound.
TEST_F(DescriptionFixture, BenchmarksSayTheirDirectionsOverlapAndOmbCounterpart) {
  EXPECT_EQ(text(*entry("benchmarks", "bw").find("directions")), "uni");
  EXPECT_EQ(text(*entry("benchmarks", "bibw").find("directions")), "bi");
  EXPECT_EQ(text(*entry("benchmarks", "rma_bibw").find("directions")), "bi");
  EXPECT_TRUE(entry("benchmarks", "latency").find("directions")->is_null());
  EXPECT_EQ(entry("benchmarks", "part_overlap").find("overlap")->dump(), "true");
  EXPECT_EQ(entry("benchmarks", "nbc").find("overlap")->dump(), "true");
  EXPECT_EQ(entry("benchmarks", "coll").find("overlap")->dump(), "false");
  EXPECT_EQ(text(*entry("benchmarks", "bibw").find("omb")->find("program")), "osu_bibw");
  EXPECT_TRUE(entry("benchmarks", "halo").find("omb")->is_null());
}

TEST_F(DescriptionFixture, RunDefaultsAreTheRunnersDefaults) {
  const Json& defaults = *description.find("run_defaults");
  const RunSettings settings;
  EXPECT_EQ(defaults.find("iters")->dump(), std::to_string(settings.iters));
  EXPECT_EQ(defaults.find("warmup_large")->dump(), std::to_string(settings.warmup_large));
  EXPECT_EQ(defaults.find("large_size")->dump(), std::to_string(settings.large_size));
  EXPECT_EQ(defaults.find("window")->dump(), std::to_string(RunSettings::kDefaultWindow));
}

TEST_F(DescriptionFixture, StrategiesSayWhatTheyStageThrough) {
  const Json& staged = entry("strategies", "staged-pageable");
  EXPECT_EQ(text(*staged.find("staged_side")), "gpu_backed");
  EXPECT_EQ(text(*staged.find("staging")->find("property")), "pageable");
  EXPECT_EQ(text(*entry("strategies", "pipelined").find("staging")->find("property")), "page_locked");
  EXPECT_EQ(text(*entry("strategies", "pipelined-gpu").find("staged_side")), "host");
  EXPECT_TRUE(entry("strategies", "direct").find("staging")->is_null());
}

TEST_F(DescriptionFixture, CeilingsSayWhichPathTheyBound) {
  const Json* found = nullptr;
  for (const Json& c : *description.find("ceilings")->as_array())
    if (text(*c.find("operation")) == "p2p-ipc") found = &c;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(strings(*found->find("bounds")), (std::vector<std::string>{"nvlink", "pcie", "peer"}));
}

TEST_F(DescriptionFixture, NetworkCeilingBoundsInterNodeTransfers) {
  const Json* found = nullptr;
  for (const Json& c : *description.find("ceilings")->as_array())
    if (text(*c.find("operation")) == "network") found = &c;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(strings(*found->find("bounds")), (std::vector<std::string>{"inter-node"}));
  EXPECT_TRUE(found->find("direction")->is_null());
  EXPECT_TRUE(found->find("host_memory")->is_null());
}

// The harness checks its settings against this list; the context records exactly what it says.
TEST_F(DescriptionFixture, EnvironmentPrefixesAreWhatTheContextRecords) {
  const std::vector<std::string> prefixes = strings(*description.find("environment_prefixes"));
  EXPECT_EQ(prefixes, recorded_environment_prefixes());
  for (const char* runtime : {"PSM2_", "HCOLL_", "UCX_", "NCCL_"})
    EXPECT_NE(std::find(prefixes.begin(), prefixes.end(), runtime), prefixes.end()) << runtime;
  for (const std::string& prefix : prefixes) ::setenv((prefix + "GMB_TEST_PROBE").c_str(), "1", 1);
  ::setenv("XGMB_TEST_PROBE", "1", 1);
  const Json recorded = relevant_environment(Json());
  for (const std::string& prefix : prefixes) {
    EXPECT_NE(recorded.find(prefix + "GMB_TEST_PROBE"), nullptr) << prefix;
    ::unsetenv((prefix + "GMB_TEST_PROBE").c_str());
  }
  EXPECT_EQ(recorded.find("XGMB_TEST_PROBE"), nullptr);
  ::unsetenv("XGMB_TEST_PROBE");
}

TEST(Provenance, TheEnvironmentRecordedIsTheOneTheLaunchGave) {
  // An MPI library sets variables of the recorded prefixes in its own process while it starts (Open MPI's PSM2
  // component: PSM2_DEVICES=self,shm on one host); they are not settings of the launch.
  ::setenv("UCX_GMB_TEST_GIVEN", "1", 1);
  capture_launch_environment();
  ::setenv("PSM2_GMB_TEST_SET_LATER", "self,shm", 1);
  const Json recorded = relevant_environment(Json());
  EXPECT_NE(recorded.find("UCX_GMB_TEST_GIVEN"), nullptr);
  EXPECT_EQ(recorded.find("PSM2_GMB_TEST_SET_LATER"), nullptr);
  ::unsetenv("UCX_GMB_TEST_GIVEN");
  ::unsetenv("PSM2_GMB_TEST_SET_LATER");
}
