// SPDX-License-Identifier: BSD-3-Clause
// A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) names what was being measured and shows the
// stack, whose frames name the library the fault happened in: a crash inside the MPI library or the
// CUDA driver must not look like gmb's, and the user needs the configuration to report it. The
// handler then hands the signal on (Open MPI's own handler prints its backtrace and aborts the job).
#include "gmb/crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace gmb {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr std::size_t kTextBytes = 1024;
// Written before a crash, read only by the handler: plain buffers, no allocation in the handler.
char g_where[256] = "gmb-bench: FATAL";
char g_doing[kTextBytes] = "starting up";
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];

void copy_text(char* dst, std::size_t size, const std::string& text) {
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

void say(const char* text) {
  const std::size_t n = std::strlen(text);
  if (write(STDERR_FILENO, text, n) < 0) return;  // nothing else can be done inside a handler
}

void on_crash(int signal, siginfo_t* info, void* context) {
  say(g_where);
  say(": signal ");
  say(strsignal(signal));
  say(" while running: ");
  say(g_doing);
  say("\ngmb-bench: stack at the crash (the first frames name the library the fault is in):\n");
  void* frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
  // Hand the signal on: the previous handler (e.g. Open MPI's) or the default action.
  for (std::size_t k = 0; k < sizeof kSignals / sizeof kSignals[0]; ++k) {
    if (kSignals[k] != signal) continue;
    const struct sigaction& previous = g_previous[k];
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
      previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
      previous.sa_handler(signal);
    }
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigaction(signal, &fallback, nullptr);
  raise(signal);
}

}  // namespace

void install_crash_report(const std::string& where) {
  copy_text(g_where, sizeof g_where, "gmb-bench: FATAL on " + where);
  // The first backtrace() loads libgcc_s (dlopen, malloc): do it now, not inside the signal handler,
  // where a fault taken under the malloc lock would turn the crash into a hang.
  void* warm[1];
  backtrace(warm, 1);
  for (std::size_t k = 0; k < sizeof kSignals / sizeof kSignals[0]; ++k) {
    struct sigaction action {};
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[k], &action, &g_previous[k]);
  }
}

void set_crash_context(const std::string& doing) { copy_text(g_doing, sizeof g_doing, doing); }

}  // namespace gmb
