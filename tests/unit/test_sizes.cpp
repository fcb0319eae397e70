// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/sizes.hpp"

using namespace gmb;

TEST(Sizes, ParsesSuffixes) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("16B"), 16u);
}

TEST(Sizes, RejectsBadSyntaxWithWhatIsAccepted) {
  for (const char* bad : {"", "K", "4Q", "-1", "1.5M", "4 K B"}) {
    try {
      parse_size(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("accepted"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_size("99999999999999999999"), UsageError);
  EXPECT_THROW(parse_size("17179869184G"), UsageError);
}

TEST(Sizes, RangeDoubles) {
  EXPECT_EQ(parse_sizes("1:16"), (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_sizes("4K:16K"), (std::vector<std::uint64_t>{4096, 8192, 16384}));
  EXPECT_EQ(parse_sizes("0:4"), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  // MAX need not be a power-of-two step from MIN: the sweep stops at the last step below it.
  EXPECT_EQ(parse_sizes("3:20"), (std::vector<std::uint64_t>{3, 6, 12}));
  EXPECT_EQ(parse_sizes("16M:16M"), (std::vector<std::uint64_t>{16u << 20}));
}

TEST(Sizes, ListAndSingle) {
  EXPECT_EQ(parse_sizes("1,8,4K"), (std::vector<std::uint64_t>{1, 8, 4096}));
  EXPECT_EQ(parse_sizes("16M"), (std::vector<std::uint64_t>{16u << 20}));
}

// A list naming one size twice (in any spelling) is bad input: it would measure one point twice.
TEST(Sizes, AListNamingASizeTwiceIsRefused) {
  for (const char* twice : {"8,1,8", "1K,1024", "4M, 8, 4MiB"}) {
    try {
      parse_sizes(twice);
      FAIL() << "accepted '" << twice << "'";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("twice"), std::string::npos) << message;
      EXPECT_NE(message.find("give each size once"), std::string::npos) << message;
      EXPECT_NE(message.find("accepted"), std::string::npos) << message;
    }
  }
  try {
    parse_sizes("8,1,8");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("name 8 B twice ('8' and '8')"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_sizes("8,1,16"), (std::vector<std::uint64_t>{8, 1, 16}));  // any order, each once
}

TEST(Sizes, MinGreaterThanMaxIsAnError) {
  try {
    parse_sizes("4K:1");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("MIN greater than MAX"), std::string::npos);
  }
  EXPECT_THROW(parse_sizes("1,,2"), UsageError);
}

TEST(Sizes, AStepInARangeIsRefusedWithTheAcceptedForms) {
  try {
    parse_sizes("1:8:2");
    FAIL();
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("bad size range '1:8:2': a range is MIN:MAX in doubling steps, a step is not accepted"),
              std::string::npos) << message;
    EXPECT_NE(message.find("accepted: a byte count"), std::string::npos) << message;
    EXPECT_EQ(message.find("bad size suffix"), std::string::npos) << message;
  }
  EXPECT_THROW(parse_sizes("1:4,8"), UsageError);
}

TEST(Sizes, Format) {
  EXPECT_EQ(format_size(1), "1 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(64u << 20), "64 MiB");
  EXPECT_EQ(format_size(1536), "1536 B");
}

// ---- OMB's -m [MIN:]MAX (docs/omb.md) -----------------------------------------------------------------------

namespace {
std::vector<std::uint64_t> doubling_sizes(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> v;
  if (lo == 0) v.push_back(0);
  for (std::uint64_t s = lo ? lo : 1; s <= hi; s *= 2) v.push_back(s);
  return v;
}
// The counterpart a benchmark declares where it registers.
std::optional<OmbCounterpart> omb_counterpart(const std::string& benchmark) {
  const BenchmarkInfo* info = Registry::instance().find(benchmark);
  return info ? info->omb : std::nullopt;
}
OmbCounterpart counterpart_of(const std::string& benchmark) {
  const auto c = omb_counterpart(benchmark);
  EXPECT_TRUE(c.has_value()) << benchmark;
  return c.value_or(OmbCounterpart{});
}
}  // namespace

TEST(OmbSizes, CounterpartsCarryOmbDefaults) {
  // OMB 7.x process_options: pt2pt 1 B (latency 0 B) .. 4 MiB, collectives 1 B .. 1 MiB.
  for (const char* name : {"latency", "mlat", "um"}) {
    EXPECT_EQ(counterpart_of(name).min_size, 0u) << name;
    EXPECT_EQ(counterpart_of(name).max_size, 4u << 20) << name;
    EXPECT_FALSE(counterpart_of(name).collective) << name;
  }
  for (const char* name : {"bw", "bibw", "mbw"}) {
    EXPECT_EQ(counterpart_of(name).min_size, 1u) << name;
    EXPECT_EQ(counterpart_of(name).max_size, 4u << 20) << name;
  }
  for (const char* name : {"coll", "nbc"}) {
    EXPECT_EQ(counterpart_of(name).min_size, 1u) << name;
    EXPECT_EQ(counterpart_of(name).max_size, 1u << 20) << name;
    EXPECT_TRUE(counterpart_of(name).collective) << name;
  }
  EXPECT_STREQ(counterpart_of("bw").program, "osu_bw");
  EXPECT_TRUE(counterpart_of("bw").host_by_default);
  EXPECT_FALSE(counterpart_of("um").host_by_default);
  for (const char* none : {"halo", "peaks", "doctor", "nonesuch"}) EXPECT_FALSE(omb_counterpart(none).has_value()) << none;
}

TEST(OmbSizes, BareMaxSweepsFromOmbsMinimumAndWarns) {
  // osu_bw -m 4194304: 1 B .. 4 MiB, the literature's `osu_bw -m 1:4194304`.
  const auto bw = parse_omb_message_sizes("4194304", counterpart_of("bw"));
  EXPECT_EQ(bw.sizes, doubling_sizes(1, 4u << 20));
  EXPECT_EQ(bw.sizes.size(), 23u);
  EXPECT_TRUE(bw.bare_max);
  EXPECT_EQ(bw.reading, "sizes 1 B to 4 MiB in doubling steps (23 sizes)");
  EXPECT_EQ(bw.warning,
            "-m 4194304 read as OMB's [MIN:]MAX, as in osu_bw: sizes 1 B to 4 MiB in doubling steps (23 sizes); for "
            "4194304 bytes alone give --sizes 4194304");
  EXPECT_EQ(parse_omb_message_sizes("4194304", counterpart_of("bw")).sizes,
            parse_omb_message_sizes("1:4194304", counterpart_of("bw")).sizes);
  // osu_latency starts at 0 bytes.
  EXPECT_EQ(parse_omb_message_sizes("128", counterpart_of("latency")).sizes, doubling_sizes(0, 128));
  // Collectives: 1 B up; suffixes are gmb's addition (OMB reads digits).
  EXPECT_EQ(parse_omb_message_sizes("4K", counterpart_of("coll")).sizes, doubling_sizes(1, 4096));
  // Where --sizes would read the same (the minimum itself), there is nothing to warn about.
  const auto one = parse_omb_message_sizes("1", counterpart_of("bw"));
  EXPECT_EQ(one.sizes, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(one.warning, "");
  // Not a power-of-two step from MIN: OMB's loop stops at the last step below MAX.
  EXPECT_EQ(parse_omb_message_sizes("1000", counterpart_of("bw")).sizes, doubling_sizes(1, 512));
}

TEST(OmbSizes, RangesOpenAtEitherEnd) {
  const auto from2 = parse_omb_message_sizes("2:", counterpart_of("latency"));
  EXPECT_EQ(from2.sizes, doubling_sizes(2, 4u << 20));
  EXPECT_FALSE(from2.bare_max);
  EXPECT_EQ(from2.warning, "");
  EXPECT_EQ(parse_omb_message_sizes("2:", counterpart_of("coll")).sizes, doubling_sizes(2, 1u << 20));
  EXPECT_EQ(parse_omb_message_sizes(":16", counterpart_of("latency")).sizes, doubling_sizes(0, 16));
  EXPECT_EQ(parse_omb_message_sizes(":16", counterpart_of("bw")).sizes, doubling_sizes(1, 16));
  EXPECT_EQ(parse_omb_message_sizes("2:128", counterpart_of("bw")).sizes, doubling_sizes(2, 128));
  EXPECT_EQ(parse_omb_message_sizes("2:128", counterpart_of("bw")).warning, "");
  EXPECT_EQ(parse_omb_message_sizes("0:4", counterpart_of("bw")).sizes, doubling_sizes(0, 4));  // gmb accepts MIN 0
}

TEST(OmbSizes, BadTextSaysWhatIsAccepted) {
  auto message_of = [](const std::string& text, const std::string& benchmark) {
    try {
      parse_omb_message_sizes(text, counterpart_of(benchmark));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message_of("1,8", "bw").find("-m is OMB's [MIN:]MAX, not a list"), std::string::npos);
  EXPECT_NE(message_of("1,8", "bw").find("is --sizes"), std::string::npos);
  EXPECT_NE(message_of("8M:", "bw").find("MIN 8 MiB is greater than MAX 4 MiB (the default maximum of osu_bw)"),
            std::string::npos) << message_of("8M:", "bw");
  EXPECT_NE(message_of("2M:", "coll").find("greater than MAX 1 MiB (the default maximum of the OMB collectives)"),
            std::string::npos);
  EXPECT_NE(message_of("0", "bw").find("MIN 1 B is greater than MAX 0 B (the default minimum of osu_bw)"),
            std::string::npos) << message_of("0", "bw");
  EXPECT_NE(message_of("4:2", "latency").find("MIN 4 B is greater than MAX 2 B"), std::string::npos);
  for (const char* bad : {":", "1:2:3", "abc", "4Q", ""})
    EXPECT_NE(message_of(bad, "latency").find("accepted: OMB's [MIN:]MAX"), std::string::npos) << bad;
}
