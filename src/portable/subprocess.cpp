// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "gmb/error.hpp"

extern char** environ;

namespace gmb {

std::string find_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + name;
    struct stat s {};
    if (stat(candidate.c_str(), &s) == 0 && S_ISREG(s.st_mode) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment, std::string where)
    : argv_(argv), where_(std::move(where)) {
  if (argv_.empty()) GMB_FATAL("no program to start (on " + where_ + ")");
  const std::string program = find_program(argv_[0]);
  if (program.empty()) GMB_FATAL(argv_[0] + " is not on PATH (on " + where_ + ")");
  char path_template[] = "/tmp/gmb-tool-XXXXXX";
  const int out = mkstemp(path_template);
  if (out < 0) GMB_FATAL("cannot create a file in /tmp for the output of " + argv_[0] + " (on " + where_ + "): " + std::strerror(errno));
  output_path_ = path_template;

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!environment.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (const auto& [name, value] : environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> env_pointers, arg_pointers;
  for (auto& e : env_strings) env_pointers.push_back(e.data());
  env_pointers.push_back(nullptr);
  for (auto& a : argv_) arg_pointers.push_back(a.data());
  arg_pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out);
  const int error = posix_spawn(&pid_, program.c_str(), &actions, nullptr, arg_pointers.data(), env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out);
  if (error != 0) {
    pid_ = -1;
    GMB_FATAL("cannot start " + command_line() + " (on " + where_ + "): " + std::strerror(error));
  }
}

ChildProcess::~ChildProcess() {
  stop();
  if (!output_path_.empty()) unlink(output_path_.c_str());
}

bool ChildProcess::running() {
  if (pid_ < 0 || ended_) return false;
  int status = 0;
  pid_t got = 0;
  do got = waitpid(pid_, &status, WNOHANG);
  while (got < 0 && errno == EINTR);
  if (got == 0) return true;
  ended_ = true;
  if (got == pid_) {
    exited_ = WIFEXITED(status);
    code_ = exited_ ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return false;
}

bool ChildProcess::wait(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void ChildProcess::stop() {
  if (!running()) return;
  kill(pid_, SIGTERM);
  if (!wait(1.0)) {
    kill(pid_, SIGKILL);
    wait(5.0);
  }
}

std::string ChildProcess::exit_description() const {
  if (!ended_) return "running";
  return exited_ ? "exit status " + std::to_string(code_) : "killed by signal " + std::to_string(code_);
}

std::string ChildProcess::output() const {
  std::ifstream in(output_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

bool tcp_port_listening(int port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      if (!(fields >> slot >> local >> remote >> state)) continue;
      const std::size_t colon = local.rfind(':');
      if (state == "0A" && colon != std::string::npos && std::stoi(local.substr(colon + 1), nullptr, 16) == port) return true;
    }
  }
  return false;
}

}  // namespace gmb
