// SPDX-License-Identifier: BSD-3-Clause
// A pipe's reader is seen gone through /proc, as the engine checks its stdout and its launcher's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

TEST(StdoutReader, ANamedPipeWithoutItsReaderIsSeen) {
  char dir[] = "/tmp/gmb-fifo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/out";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const int writer = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  EXPECT_FALSE(pipe_without_reader(proc_fd(writer)));
  ::close(reader);
  EXPECT_TRUE(pipe_without_reader(proc_fd(writer)));
  ::close(writer);
  ::unlink(fifo.c_str());
  ::rmdir(dir);
}

TEST(StdoutReader, WhatIsNoPipeHasNoReaderToLose) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(pipe_without_reader(proc_fd(::fileno(file))));
  std::fclose(file);
  EXPECT_FALSE(pipe_without_reader("/proc/self/fd/987654"));  // no such descriptor
}

// What stdio still holds when stdout is silenced must not reach the old output: a launcher would forward it into the
// pipe whose reader has gone. A child prints into a full buffer over a pipe, is silenced, prints again and exits (the
// exit flushes stdio); the parent reads nothing.
TEST(StdoutReader, SilencingDropsWhatIsStillBuffered) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ends[0]);
    if (::dup2(ends[1], STDOUT_FILENO) < 0) ::_exit(2);
    ::close(ends[1]);
    static char buffer[4096];
    std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    std::printf("a line held in the buffer\n");
    silence_stdout();
    std::printf("a line printed after\n");
    std::exit(0);
  }
  ::close(ends[1]);
  std::string received;
  char chunk[256];
  for (ssize_t n; (n = ::read(ends[0], chunk, sizeof chunk)) > 0;) received.append(chunk, static_cast<std::size_t>(n));
  ::close(ends[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(received, "");
}
