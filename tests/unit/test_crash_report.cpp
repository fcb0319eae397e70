// SPDX-License-Identifier: BSD-3-Clause
// A crash names what was being measured and still ends the process by the signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gmb/crash_report.hpp"

TEST(CrashReport, NamesTheRunAndEndsByTheSignal) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    gmb::install_crash_report("host testhost rank 3");
    gmb::set_crash_context("nbc, 1024 bytes, {\"operation\":\"allreduce\"}");
    raise(SIGSEGV);
    _exit(0);  // not reached
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  EXPECT_NE(text.find("gmb-bench: FATAL on host testhost rank 3: signal Segmentation fault while running: nbc, 1024 "
                      "bytes, {\"operation\":\"allreduce\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("stack at the crash"), std::string::npos) << text;
}
