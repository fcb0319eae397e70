// SPDX-License-Identifier: BSD-3-Clause
// Another program run beside a rank (the network ceiling's external tools: ucx_perftest, ib_write_bw,
// fi_pingpong): started with posix_spawn (no fork of the MPI process's memory), its standard output and error
// in one temporary file, stopped with a deadline so that a tool that hangs never hangs the job.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace gmb {

// The executable `name` resolves to on PATH (or `name` itself when it holds a '/' and is executable); "" when
// there is none.
std::string find_program(const std::string& name);

// A command line as one text: its words joined by spaces (for messages and records).
std::string command_text(const std::vector<std::string>& argv);

class ChildProcess {
 public:
  // Starts argv[0] (found on PATH) with the environment of this process plus `environment`. GMB_FATAL naming
  // the program and `where` when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment, std::string where);
  ~ChildProcess();  // kills a child still running and removes the output file
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits up to `seconds` for the child to end; true when it ended (exit_status() then says how).
  bool wait(double seconds);
  bool running();
  // Ends a child still running (SIGTERM, then SIGKILL after a second) and reaps it.
  void stop();
  // "exit status N" or "killed by signal N"; "running" before the child ended.
  std::string exit_description() const;
  bool succeeded() const { return ended_ && exited_ && code_ == 0; }
  std::string output() const;  // standard output and error so far
  std::string command_line() const { return command_text(argv_); }

 private:
  std::vector<std::string> argv_;
  std::string where_, output_path_;
  pid_t pid_ = -1;
  bool ended_ = false, exited_ = false;
  int code_ = 0;
};

// Whether a socket of this network namespace listens on TCP `port` (IPv4 or IPv6), from /proc/net/tcp{,6}.
bool tcp_port_listening(int port);

}  // namespace gmb
