// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <cmath>

#include "gmb/json.hpp"
#include "gmb/record.hpp"

using namespace gmb;

TEST(Json, DumpsInInsertionOrderAndEscapes) {
  Json j = Json::object().set("b", 1).set("a", "x\"y\n").set("c", Json::array().push(true).push(nullptr)).set("d", 0.5);
  EXPECT_EQ(j.dump(), R"({"b":1,"a":"x\"y\n","c":[true,null],"d":0.5})");
  j.set("b", 2);
  EXPECT_EQ(j.dump().substr(0, 7), R"({"b":2,)");
}

TEST(Json, NonFiniteBecomesNull) { EXPECT_EQ(Json(std::nan("")).dump(), "null"); }

TEST(Json, ControlCharactersEscaped) { EXPECT_EQ(Json(std::string("\x01")).dump(), "\"\\u0001\""); }

TEST(Json, InvalidUtf8BecomesTheReplacementCharacter) {
  const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD
  EXPECT_EQ(Json(std::string("a\xff" "b")).dump(), "\"a" + replacement + "b\"");
  // Well-formed sequences pass unchanged: 2, 3 and 4 bytes.
  const std::string good = "\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_EQ(Json(good).dump(), "\"" + good + "\"");
  // A truncated sequence, a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF:
  // each offending byte is replaced, the bytes after it are read afresh.
  EXPECT_EQ(Json(std::string("\xE2\x82")).dump(), "\"" + replacement + replacement + "\"");
  EXPECT_EQ(Json(std::string("\x80")).dump(), "\"" + replacement + "\"");
  EXPECT_EQ(Json(std::string("\xC0\xAF")).dump(), "\"" + replacement + replacement + "\"");
  EXPECT_EQ(Json(std::string("\xED\xA0\x80")).dump(), "\"" + replacement + replacement + replacement + "\"");
  EXPECT_EQ(Json(std::string("\xF4\x90\x80\x80")).dump(), "\"" + replacement + replacement + replacement + replacement + "\"");
  // Keys are strings too.
  EXPECT_EQ(Json::object().set("k\xfe", 1).dump(), "{\"k" + replacement + "\":1}");
}

TEST(Json, LookupPath) {
  Json j = Json::object().set("time_us", Json::object().set("median", 2.5));
  ASSERT_NE(lookup_path(j, "time_us.median"), nullptr);
  EXPECT_DOUBLE_EQ(lookup_path(j, "time_us.median")->as_number(), 2.5);
  EXPECT_EQ(lookup_path(j, "time_us.p95"), nullptr);
  EXPECT_EQ(lookup_path(j, "nothing.median"), nullptr);
}

TEST(Json, VerbatimIsWrittenAsItIs) {
  const Json other_rank = Json::object().set("name", "lo").set("mtu", 65536);
  EXPECT_EQ(Json::array().push(Json::verbatim(other_rank.dump())).dump(), R"([{"name":"lo","mtu":65536}])");
}

TEST(Json, ParsesWhatItDumpsAndReadsMembers) {
  const std::string text = R"( {"a": [1, -2.5e3, true, null], "b": {"c": "x\"y\u00e9\ud83d\ude00"}} )";
  std::string error;
  const std::optional<Json> j = Json::parse(text, &error);
  ASSERT_TRUE(j) << error;
  EXPECT_EQ(j->dump(), R"({"a":[1,-2500,true,null],"b":{"c":"x\"y)" "\xC3\xA9\xF0\x9F\x98\x80" R"("}})");
  EXPECT_EQ(j->find("a")->as_array()->at(1).as_number(), -2500);
  EXPECT_EQ(*j->find("b")->find("c")->as_string(), "x\"y\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(Json, ANumberBeyondADoubleIsInfinityForTheReaderToJudge) {
  std::string error;
  const std::optional<Json> j = Json::parse(R"({"x": 1e9999})", &error);
  ASSERT_TRUE(j) << error;
  EXPECT_TRUE(std::isinf(j->find("x")->as_number()));
}

TEST(Json, MalformedTextSaysWhatAndWhere) {
  for (const std::string text : {"", "{", "{\"a\" 1}", "[1,]", "{\"a\":1} x", "nan", "Infinity", "\"\\q\"", "01x"}) {
    std::string error;
    EXPECT_FALSE(Json::parse(text, &error)) << text;
    EXPECT_NE(error.find("at byte"), std::string::npos) << text << ": " << error;
  }
  std::string deep(100, '['), error;
  EXPECT_FALSE(Json::parse(deep, &error));
  EXPECT_NE(error.find("nested deeper"), std::string::npos) << error;
}
