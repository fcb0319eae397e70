#include <gtest/gtest.h>

#include "gmb/args.hpp"
#include "gmb/error.hpp"

using namespace gmb;

namespace {
struct Parsed {
  int iters = 0;
  std::string kind;
  bool validate = false;
};

ArgParser make_parser(Parsed& p) {
  ArgParser parser;
  parser.value({"--iters", "-i"}, "N", "iterations", [&](const std::string& v) { p.iters = parse_positive_int(v, "iteration count"); });
  parser.value({"--send"}, "KIND", "kind", [&](const std::string& v) { p.kind = v; });
  parser.flag({"--validate", "-c"}, "check", &p.validate);
  return parser;
}
}  // namespace

TEST(Args, LongShortInlineAndPositionals) {
  Parsed p;
  auto parser = make_parser(p);
  const auto pos = parser.parse({"D", "--iters=5", "-c", "--send", "device", "H"});
  EXPECT_EQ(p.iters, 5);
  EXPECT_EQ(p.kind, "device");
  EXPECT_TRUE(p.validate);
  EXPECT_EQ(pos, (std::vector<std::string>{"D", "H"}));
  parser.parse({"-i", "7"});
  EXPECT_EQ(p.iters, 7);
}

TEST(Args, UnknownOptionAndMissingValue) {
  Parsed p;
  auto parser = make_parser(p);
  EXPECT_THROW(parser.parse({"--bogus"}), UsageError);
  EXPECT_THROW(parser.parse({"--iters"}), UsageError);
  EXPECT_THROW(parser.parse({"--validate=yes"}), UsageError);
}

TEST(Args, ValueErrorsNameTheOption) {
  Parsed p;
  auto parser = make_parser(p);
  try {
    parser.parse({"--iters", "zero"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--iters: bad iteration count 'zero' (accepted: a whole number from 1 to 2147483647)");
  }
  EXPECT_THROW(parser.parse({"--iters", "0"}), UsageError);
  EXPECT_THROW(parser.parse({"--iters", "99999999999"}), UsageError);
}

TEST(Args, IntegerMessagesStateTheRange) {
  auto message_of = [](auto parse, const std::string& text) {
    try {
      parse(text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto positive = [](const std::string& t) { return parse_positive_int(t, "iteration count"); };
  auto nonnegative = [](const std::string& t) { return parse_nonnegative_int(t, "warm-up count"); };
  EXPECT_EQ(message_of(positive, "2147483648"), "bad iteration count '2147483648' (accepted: a whole number from 1 to 2147483647)");
  EXPECT_EQ(message_of(positive, "0"), "bad iteration count '0' (accepted: a whole number from 1 to 2147483647)");
  EXPECT_EQ(message_of(nonnegative, "-1"), "bad warm-up count '-1' (accepted: a whole number from 0 to 2147483647)");
  EXPECT_EQ(message_of(nonnegative, "99999999999999999999"),
            "bad warm-up count '99999999999999999999' (accepted: a whole number from 0 to 2147483647)");
  EXPECT_EQ(positive("2147483647"), 2147483647);
  EXPECT_EQ(nonnegative("0"), 0);
}

TEST(Args, Choices) {
  EXPECT_EQ(parse_choice("json", {"table", "json"}, "format"), "json");
  try {
    parse_choice("xml", {"table", "json"}, "format");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown format 'xml' (accepted: table, json)");
  }
}

TEST(Args, HelpListsEveryOption) {
  Parsed p;
  const std::string help = make_parser(p).help();
  EXPECT_NE(help.find("--iters, -i N"), std::string::npos);
  EXPECT_NE(help.find("--validate, -c"), std::string::npos);
}

TEST(Args, PrecisionIsAFractionOrAPercentage) {
  EXPECT_DOUBLE_EQ(parse_precision("0.03"), 0.03);
  EXPECT_DOUBLE_EQ(parse_precision("3%"), 0.03);
  EXPECT_DOUBLE_EQ(parse_precision("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(parse_precision("50%"), 0.5);
  EXPECT_DOUBLE_EQ(parse_precision("1e-2"), 0.01);
  for (const char* bad : {"0", "-0.1", "0.6", "51%", "abc", "", "%", "3%%", " 0.1", "0.1x", "inf", "nan", "1e999"}) {
    try {
      parse_precision(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("accepted: a fraction above 0 and at most 0.5"), std::string::npos) << e.what();
    }
  }
}

TEST(Args, SecondsArePositive) {
  EXPECT_DOUBLE_EQ(parse_positive_seconds("1", "time cap"), 1.0);
  EXPECT_DOUBLE_EQ(parse_positive_seconds("0.25", "time cap"), 0.25);
  for (const char* bad : {"0", "-1", "x", "", "inf"}) EXPECT_THROW(parse_positive_seconds(bad, "time cap"), UsageError) << bad;
}
