// SPDX-License-Identifier: BSD-3-Clause
// A pipe's reader is seen gone through /proc, as the engine checks its stdout and its launcher's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gmb/stdout_reader.hpp"

using namespace gmb;

namespace {
std::string proc_fd(int fd) { return "/proc/self/fd/" + std::to_string(fd); }
}  // namespace

TEST(StdoutReader, APipeWithoutItsReaderIsSeen) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  EXPECT_FALSE(pipe_without_reader(proc_fd(ends[1])));  // read end still open
  ::close(ends[0]);
  EXPECT_TRUE(pipe_without_reader(proc_fd(ends[1])));
  ::close(ends[1]);
}

TEST(StdoutReader, WhatIsNoPipeHasNoReaderToLose) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(pipe_without_reader(proc_fd(::fileno(file))));
  std::fclose(file);
  EXPECT_FALSE(pipe_without_reader("/proc/self/fd/987654"));  // no such descriptor
}
