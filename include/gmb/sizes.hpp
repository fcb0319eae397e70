// SPDX-License-Identifier: BSD-3-Clause
// Message-size syntax: "8", "4K", "1M", "2G" (powers of 1024, optional trailing B/iB),
// ranges "MIN:MAX" in doubling steps (OMB's -m), lists "1,8,4K".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmb {

// Throws UsageError with what was wrong and what is accepted.
std::uint64_t parse_size(const std::string& text);
std::vector<std::uint64_t> parse_sizes(const std::string& text);
// "4 KiB"-style label used in tables.
std::string format_size(std::uint64_t bytes);

// ---- OSU Micro-Benchmarks (OMB) -m (docs/omb.md) --------------------------------------------------------
// The OMB program a gmb benchmark stands for, and the message sizes that program sweeps by default
// (OMB 7.x, c/util/osu_util.c process_options: point to point MIN_MESSAGE_SIZE 1 B, 0 B for the latency
// benchmarks, up to MAX_MESSAGE_SIZE 4 MiB; collectives 1 B up to MAX_MSG_SIZE_COLL 1 MiB).
struct OmbCounterpart {
  const char* program = "";  // "osu_bw", "the OMB collectives" ... (a literal: registrations stay constant data)
  std::uint64_t min_size = 1, max_size = 0;
  bool collective = false;  // coll, nbc: -d places every rank's buffers; point to point: the letters do
  bool host_by_default = true;  // without letters both sides are host memory (um: managed:device)
};
// A point-to-point program: from 0 B for the latency-type ones (process_options: LAT with PT2PT), else 1 B, up to
// MAX_MESSAGE_SIZE. Each benchmark names its counterpart where it registers (BenchmarkInfo::omb).
constexpr OmbCounterpart omb_point_to_point(const char* program, bool latency_type, bool host_by_default = true) {
  constexpr std::uint64_t kPt2ptMax = 1ull << 22;  // MAX_MESSAGE_SIZE
  return OmbCounterpart{program, latency_type ? 0u : 1u, kPt2ptMax, false, host_by_default};
}
// The collectives, blocking or not: 1 B up to MAX_MSG_SIZE_COLL.
constexpr OmbCounterpart omb_collectives(const char* program) {
  constexpr std::uint64_t kCollMax = 1ull << 20;  // MAX_MSG_SIZE_COLL
  return OmbCounterpart{program, 1, kCollMax, true, true};
}

// OMB's -m [MIN:]MAX: "MAX" (from the program's minimum), "MIN:MAX", "MIN:" (up to its default maximum),
// ":MAX"; sizes doubling from MIN while <= MAX, as OMB's loops step. K/M/G suffixes are accepted (OMB reads
// digits only). A list is refused (that is --sizes). Throws UsageError saying what is accepted.
struct OmbMessageSizes {
  std::vector<std::uint64_t> sizes;
  std::uint64_t min = 0, max = 0;
  bool bare_max = false;  // "-m N": gmb's --sizes N would measure N alone
  std::string reading;    // "sizes 1 B to 4 MiB in doubling steps (23 sizes)"
  // Where gmb's --sizes would read the same text otherwise (a bare MAX that is not the only size): the line
  // rank 0 says on stderr, with how to get gmb's meaning; "" otherwise.
  std::string warning;
};
OmbMessageSizes parse_omb_message_sizes(const std::string& text, const OmbCounterpart& counterpart);

}  // namespace gmb
