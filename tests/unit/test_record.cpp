// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "gmb/error.hpp"
#include "gmb/record.hpp"

using namespace gmb;

namespace {
std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "/gmb_" + name + "_" + std::to_string(::getpid()) + ".jsonl";
}
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(RecordSink, WritesOneLinePerRecordAndFlushesAtOnce) {
  const std::string path = temp_path("lines");
  std::remove(path.c_str());
  {
    RecordSink sink(path, StdoutFormat::table);
    sink.write_context(Json::object().set("type", "context"));
    // Flushed as produced: visible before the sink is closed.
    EXPECT_EQ(read_all(path), "{\"type\":\"context\"}\n");
    sink.write_result(Json::object().set("type", "result").set("bytes", 8));
    EXPECT_EQ(read_all(path), "{\"type\":\"context\"}\n{\"type\":\"result\",\"bytes\":8}\n");
  }
  std::remove(path.c_str());
}

// A result that carries the benchmark's headline statistic names it; one without it (a refused point)
// does not.
TEST(RecordSink, ResultsNameTheHeadlineTheyCarry) {
  const std::string path = temp_path("headline");
  std::remove(path.c_str());
  {
    RecordSink sink(path, StdoutFormat::none);
    sink.set_headline("busbw_GBps");
    sink.write_result(Json::object().set("status", "ok").set("busbw_GBps", Json::object().set("median", 1.5)));
    sink.write_result(Json::object().set("status", "unsupported"));
  }
  EXPECT_EQ(read_all(path),
            "{\"status\":\"ok\",\"busbw_GBps\":{\"median\":1.5},\"headline\":\"busbw_GBps\"}\n"
            "{\"status\":\"unsupported\"}\n");
  std::remove(path.c_str());
}

TEST(RecordSink, NeverOverwritesAnExistingFile) {
  const std::string path = temp_path("exists");
  { std::ofstream(path) << "precious\n"; }
  try {
    RecordSink sink(path, StdoutFormat::table);
    FAIL() << "opened an existing file";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
  }
  EXPECT_EQ(read_all(path), "precious\n");
  std::remove(path.c_str());
}

TEST(RecordSink, UnwritableDirectoryIsAUsageError) {
  EXPECT_THROW(RecordSink("/nonexistent-dir/x.jsonl", StdoutFormat::table), UsageError);
}
