#include <gtest/gtest.h>

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
