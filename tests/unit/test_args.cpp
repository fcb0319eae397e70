// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <map>

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

TEST(Args, DidYouMeanNamesTheClosestNameOnlyWhenItIsClose) {
  EXPECT_EQ(did_you_mean("--size", {"--sizes", "--iters"}), "; did you mean '--sizes'?");
  EXPECT_EQ(did_you_mean("alltoal", {"allreduce", "alltoall", "alltoallv"}), "; did you mean 'alltoall'?");
  EXPECT_EQ(did_you_mean("pingpong", {"latency", "bw", "bibw"}), "");
  EXPECT_EQ(did_you_mean("x", {}), "");
  try {
    parse_choice("jsn", {"table", "json"}, "format");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown format 'jsn'; did you mean 'json'? (accepted: table, json)");
  }
}

TEST(Args, AChoiceOptionChecksItsValueAndListsItsChoices) {
  std::string strategy;
  ArgParser parser;
  parser.choice({"--strategy"}, {"direct", "staged"}, "strategy", "how", [&](const std::string& v) { strategy = v; });
  parser.parse({"--strategy", "staged"});
  EXPECT_EQ(strategy, "staged");
  try {
    parser.parse({"--strategy", "bogus"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--strategy: unknown strategy 'bogus' (accepted: direct, staged)");
  }
  EXPECT_NE(parser.help().find("--strategy direct|staged"), std::string::npos);
}

// A list of choices ("gmb-tcp,iperf3"): each item checked, the error said once under the option's name (not
// "--network-tools: --network-tools: ..."), and the description marks it a list.
TEST(Args, AChoiceListChecksEveryItemAndSaysTheOptionOnce) {
  std::vector<std::string> tools;
  ArgParser parser;
  parser.choice_list({"--network-tools"}, {"auto", "gmb-tcp", "iperf3"}, "network tool", "which",
                     [&](const std::vector<std::string>& v) { tools = v; });
  parser.parse({"--network-tools", "iperf3,gmb-tcp,iperf3"});
  EXPECT_EQ(tools, (std::vector<std::string>{"iperf3", "gmb-tcp"}));
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"gmb-tcp,bogus", "--network-tools: unknown network tool 'bogus' (accepted: auto, gmb-tcp, iperf3, or a comma-separated list of them)"},
           {"iperf", "--network-tools: unknown network tool 'iperf'; did you mean 'iperf3'? (accepted: auto, gmb-tcp, iperf3, or a "
                     "comma-separated list of them)"},
           {"gmb-tcp,", "--network-tools: an empty network tool in 'gmb-tcp,' (accepted: auto, gmb-tcp, iperf3, or a comma-separated list of them)"}}) {
    try {
      parser.parse({"--network-tools", value});
      FAIL() << value;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
  const ArgParser::OptionInfo info = parser.options().front();
  EXPECT_TRUE(info.list);
  EXPECT_EQ(info.choices, (std::vector<std::string>{"auto", "gmb-tcp", "iperf3"}));
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

// ---- OSU Micro-Benchmarks spellings (docs/omb.md) ----------------------------------------------------------

namespace {
struct Formats {
  std::string format;
  bool full = false;
};
// The driver's -f: "-f table|json" is the format, a bare -f OMB's full statistics.
ArgParser make_format_parser(Formats& f, Parsed& p) {
  ArgParser parser = make_parser(p);
  parser.optional_value({"-f"}, "table|json", "format or full", [](const std::string& next) { return next == "table" || next == "json"; },
                        [&](const std::string& v) {
                          if (v.empty()) f.full = true;
                          else f.format = v;
                        });
  return parser;
}
}  // namespace

TEST(Args, OptionalValueTakesOnlyWhatItAccepts) {
  Parsed p;
  Formats f;
  auto parser = make_format_parser(f, p);
  parser.parse({"-f", "json"});
  EXPECT_EQ(f.format, "json");
  EXPECT_FALSE(f.full);
  parser.parse({"-f", "table"});
  EXPECT_EQ(f.format, "table");
  EXPECT_FALSE(f.full);
  // Bare: at the end, before another option, before a positional (OMB's `-f D D`).
  for (const auto& args : std::vector<std::vector<std::string>>{{"-f"}, {"-f", "-i", "3"}, {"D", "-f", "H"}}) {
    Formats g;
    Parsed q;
    const auto pos = make_format_parser(g, q).parse(args);
    EXPECT_TRUE(g.full) << args.size();
    EXPECT_EQ(g.format, "") << args.size();
    for (const auto& a : pos) EXPECT_NE(a, "-f");
  }
  Formats g;
  Parsed q;
  EXPECT_EQ(make_format_parser(g, q).parse({"-f", "H", "D"}), (std::vector<std::string>{"H", "D"}));
  EXPECT_TRUE(g.full);
  EXPECT_NE(make_format_parser(g, q).help().find("-f [table|json]"), std::string::npos);
}

// What the engine's description lists of each option: every name, whether it takes a value, the choices.
TEST(Args, OptionsSayTheirNamesValuesAndChoices) {
  Parsed p;
  Formats f;
  auto parser = make_format_parser(f, p);
  parser.choice({"--strategy"}, {"direct", "staged"}, "strategy", "how", [](const std::string&) {});
  std::map<std::string, ArgParser::OptionInfo> by_name;
  for (const auto& o : parser.options()) by_name[o.names.front()] = o;
  EXPECT_EQ(by_name["--iters"].names, (std::vector<std::string>{"--iters", "-i"}));
  EXPECT_EQ(by_name["--iters"].value, "required");
  EXPECT_EQ(by_name["--iters"].metavar, "N");
  EXPECT_EQ(by_name["--validate"].names, (std::vector<std::string>{"--validate", "-c"}));
  EXPECT_EQ(by_name["--validate"].value, "none");
  EXPECT_EQ(by_name["-f"].value, "optional");
  EXPECT_EQ(by_name["--strategy"].choices, (std::vector<std::string>{"direct", "staged"}));
  EXPECT_TRUE(by_name["--iters"].choices.empty());
}

TEST(Args, RefusalsSayWhyAndADeclaredOptionWins) {
  Parsed p;
  auto parser = make_parser(p);
  parser.refuse({"-z"}, "OMB's tail latency: not here");
  parser.refuse({"-i"}, "never seen: -i is declared");
  try {
    parser.parse({"-z"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "-z: OMB's tail latency: not here");
  }
  parser.parse({"-i", "4"});
  EXPECT_EQ(p.iters, 4);
  EXPECT_EQ(parser.help().find("-z"), std::string::npos);  // refusals are not options
  EXPECT_TRUE(parser.declares("-i"));
  EXPECT_FALSE(parser.declares("-z"));
}

TEST(Args, GivenAndApply) {
  Parsed p;
  auto parser = make_parser(p);
  parser.parse({"-i", "3"});
  EXPECT_TRUE(parser.given("--iters"));  // any name of the option
  EXPECT_TRUE(parser.given("-i"));
  EXPECT_FALSE(parser.given("--send"));
  parser.apply("--send", "device");
  EXPECT_EQ(p.kind, "device");
  EXPECT_FALSE(parser.given("--send"));  // applied, not given
  parser.parse({});
  EXPECT_FALSE(parser.given("--iters"));  // the last parse only
  try {
    parser.apply("--iters", "0");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--iters: bad iteration count '0'", 0), 0u) << e.what();
  }
}

TEST(Args, OmbAcceleratorIsCudaOrManaged) {
  EXPECT_EQ(parse_omb_accelerator("cuda"), "cuda");
  EXPECT_EQ(parse_omb_accelerator("CUDA"), "cuda");  // OMB compares without case
  EXPECT_EQ(parse_omb_accelerator("managed"), "managed");
  for (const char* other : {"openacc", "rocm", "ROCm", "sycl"}) {
    try {
      parse_omb_accelerator(other);
      ADD_FAILURE() << other;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "accelerator '" + std::string(other) +
                                           "' is not supported: gmb-bench measures CUDA devices only (accepted: cuda, managed)");
    }
  }
  try {
    parse_omb_accelerator("gpu");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown accelerator 'gpu' (accepted: cuda, managed)");
  }
}

TEST(Args, OmbAcceleratorWarningsOnPointToPoint) {
  // Without letters OMB keeps both sides on the host.
  EXPECT_EQ(omb_pt2pt_accelerator_warning("cuda", "osu_bw", {}, false),
            "-d cuda without buffer letters: both buffers in host memory, as in osu_bw (OMB's default H H); give D D "
            "for device buffers");
  EXPECT_EQ(omb_pt2pt_accelerator_warning("cuda", "osu_bw", {}, true), "");  // --send/--recv chose
  EXPECT_EQ(omb_pt2pt_accelerator_warning("cuda", "osu_bw", {"D", "D"}, false), "");
  EXPECT_EQ(omb_pt2pt_accelerator_warning("cuda", "osu_bw", {"MD", "MH"}, false), "");
  // OMB allocates D with cudaMalloc whatever -d says; managed memory is MH/MD.
  EXPECT_NE(omb_pt2pt_accelerator_warning("managed", "osu_latency", {"D", "H"}, false).find("D is device memory"),
            std::string::npos);
  EXPECT_EQ(omb_pt2pt_accelerator_warning("managed", "osu_latency", {"MD", "MD"}, false), "");
}

TEST(Args, OmbLettersGmbLacksAreRefusedWithTheirMeaning) {
  Parsed p;
  auto parser = make_parser(p);
  parser.value({"--tests", "-t"}, "K", "MPI_Test calls", [](const std::string&) {});
  add_omb_refusals(parser);
  parser.parse({"-t", "5"});  // declared by this benchmark (nbc): not refused
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"-W", "windowed bandwidth benchmarks: bw, bibw, mbw"}, {"-a", "array-size"},   {"-s", "one-sided"},
      {"-w", "one-sided"},   {"-R", "message rate"},  {"-p", "ranks/2 pairs"},  {"-V", "vary-window"},
      {"-b", "buffer-num"},  {"-u", "validation-warmup"}, {"-G", "graph"},   {"-P", "papi"},
      {"-D", "derived datatypes"}, {"-N", "neighbourhood"}, {"-T", "coll, nbc"}, {"-I", "MPI sessions"},
      {"-l", "coll, nbc"},   {"-z", "tail-lat"},      {"-q", "partitions"},   {"-k", "coll, nbc"},
      {"-v", "gmb-bench list"}, {"-r", "nbc -r/--compute"}};
  for (const auto& [letter, says] : expected) {
    try {
      parser.parse({letter, "1"});
      ADD_FAILURE() << letter << " accepted";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(letter + ": OMB's", 0), 0u) << message;
      EXPECT_NE(message.find(says), std::string::npos) << message;
    }
  }
  ArgParser plain;
  add_omb_refusals(plain);
  try {
    plain.parse({"-t", "4"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nbc -t/--tests"), std::string::npos) << e.what();
  }
}
