// SPDX-License-Identifier: BSD-3-Clause
// A plan file read: one block a line, tab-separated; malformed lines refused with the line named.
#include <gtest/gtest.h>

#include "gmb/error.hpp"
#include "gmb/plan.hpp"

using namespace gmb;

TEST(Plan, BlocksAreReadInOrderWithTheirArguments) {
  const auto blocks = parse_plan("# comment\n\nA\t0\tbw\t--sizes\t1:4K\r\nB\t2.5\tcoll\tallreduce\n", "p");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].id, "A");
  EXPECT_EQ(blocks[0].deadline_s, 0);
  EXPECT_EQ(blocks[0].args, (std::vector<std::string>{"bw", "--sizes", "1:4K"}));
  EXPECT_EQ(blocks[0].line, 3);
  EXPECT_EQ(blocks[1].deadline_s, 2.5);
  EXPECT_EQ(blocks[1].args, (std::vector<std::string>{"coll", "allreduce"}));
}

TEST(Plan, AnArgumentMayHoldSpaces) {
  const auto blocks = parse_plan("A\t0\tbw\t--out\tmy results/a.jsonl\n", "p");
  EXPECT_EQ(blocks[0].args.back(), "my results/a.jsonl");
}

TEST(Plan, MalformedPlansAreRefusedWithTheirLine) {
  const auto message = [](const std::string& text) {
    try {
      parse_plan(text, "plan.tsv");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("A\t0\n").find("plan.tsv line 1"), std::string::npos);
  EXPECT_NE(message("A\t0\tbw\nA\t0\tbw\n").find("line 2: block ID 'A' is used twice"), std::string::npos);
  EXPECT_NE(message("A\t-1\tbw\n").find("is not a number of seconds"), std::string::npos);
  EXPECT_NE(message("A\tnan\tbw\n").find("is not a number of seconds"), std::string::npos);
  EXPECT_NE(message("A B\t0\tbw\n").find("without spaces"), std::string::npos);
  EXPECT_NE(message("A\t0\t\n").find("names no benchmark"), std::string::npos);
  EXPECT_NE(message("# only a comment\n").find("holds no block"), std::string::npos);
  EXPECT_NE(message("").find("holds no block"), std::string::npos);
}
