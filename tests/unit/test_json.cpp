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

TEST(Json, LookupPath) {
  Json j = Json::object().set("time_us", Json::object().set("median", 2.5));
  ASSERT_NE(lookup_path(j, "time_us.median"), nullptr);
  EXPECT_DOUBLE_EQ(lookup_path(j, "time_us.median")->as_number(), 2.5);
  EXPECT_EQ(lookup_path(j, "time_us.p95"), nullptr);
  EXPECT_EQ(lookup_path(j, "nothing.median"), nullptr);
}
