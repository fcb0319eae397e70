// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/stdout_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace gmb {

namespace {

// How many processes up from this one are followed (this one, a launcher's proxy, the launcher, ...).
constexpr int kForwarders = 6;

// Large enough for any one flush_stdout's worth (a record line, a table row with its notes).
constexpr std::size_t kStdoutBuffer = std::size_t{1} << 16;

bool silenced = false;

std::string link_target(const std::string& path) {
  char target[256];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

// Whether the /proc/PID/fd/N link `path` leads to a pipe, anonymous ("pipe:[...]") or named (a FIFO's path).
bool is_pipe(const std::string& path) {
  struct stat object{};
  return ::stat(path.c_str(), &object) == 0 && S_ISFIFO(object.st_mode);
}

// The parent of `pid` (field 4 of /proc/PID/stat), or 0.
long parent_of(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  long parent = 0;
  fields >> state >> parent;
  return parent;
}

}  // namespace

void silence_stdout() {
  if (silenced) return;
  silenced = true;
  // Descriptor 1 is pointed at /dev/null under stdio, not through freopen: freopen would first flush what stdio
  // still holds into the old descriptor, the line a launcher would then forward into the closed pipe. Dropped
  // quietly: what was lost is the view, the records are in --out.
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::close(null_fd);
  }
  std::fflush(stdout);
  std::clearerr(stdout);
}

void guard_stdout() {
  std::signal(SIGPIPE, SIG_IGN);
  // A buffer of our own: given none, glibc keeps the stream's present one, the single byte MPICH's MPI_Init leaves
  // (setbuf(stdout, NULL)).
  static char buffer[kStdoutBuffer];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
}

bool pipe_without_reader(const std::string& path) {
  if (!is_pipe(path)) return false;
  // A write end of the same pipe (opened through /proc, without blocking) polls POLLERR once no reader is left.
  // Such an open is refused with ENXIO where nobody has the pipe open for reading (a named pipe).
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == ENXIO;
  pollfd end{fd, POLLOUT, 0};
  const bool gone = ::poll(&end, 1, 0) == 1 && (end.revents & POLLERR);
  ::close(fd);
  return gone;
}

bool stdout_reader_gone() {
  long pid = ::getpid();
  for (int k = 0; k < kForwarders && pid > 1; ++k) {
    const std::string out = "/proc/" + std::to_string(pid) + "/fd/1";
    // A pipe, or a pseudo-terminal (Open MPI's mpirun gives its ranks one and forwards what they print): the output
    // goes on through the process holding the other end, a parent. A file, /dev/null, a socket: it ends there.
    if (is_pipe(out)) {
      if (pipe_without_reader(out)) return true;
    } else if (link_target(out).rfind("/dev/pts/", 0) != 0) {
      return false;
    }
    pid = parent_of(pid);
  }
  return false;
}

bool flush_stdout() {
  if (silenced) return false;
  if (stdout_reader_gone() || (std::fflush(stdout) != 0 && errno == EPIPE)) {
    silence_stdout();
    return false;
  }
  return true;
}

}  // namespace gmb
