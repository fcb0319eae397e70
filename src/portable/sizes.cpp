// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/sizes.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

#include "gmb/error.hpp"

namespace gmb {

namespace {
const char* const kAccepted =
    "accepted: a byte count with optional K, M or G suffix (powers of 1024), e.g. 8, 4K, 1M; "
    "a range MIN:MAX in doubling steps, e.g. 1:4M; or a list, e.g. 1,8,4K";

// MIN, 2 MIN, ... while <= MAX; 0 first and then doubling from 1 when MIN is 0 (OMB's convention).
std::vector<std::uint64_t> doubling(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> sizes;
  if (lo == 0) sizes.push_back(0);
  for (std::uint64_t s = lo == 0 ? 1 : lo; s <= hi; s *= 2) {
    sizes.push_back(s);
    if (s > hi / 2) break;
  }
  return sizes;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}
}  // namespace

std::uint64_t parse_size(const std::string& raw) {
  const std::string text = trim(raw);
  std::size_t k = 0;
  std::uint64_t value = 0;
  while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[k] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw UsageError("size '" + raw + "' is too large (accepted: up to 2^64 - 1 bytes)");
    value = value * 10 + digit;
    ++k;
  }
  if (k == 0) throw UsageError("bad size '" + raw + "' (" + kAccepted + ")");
  std::string suffix = text.substr(k);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  else throw UsageError("bad size suffix in '" + raw + "' (" + kAccepted + ")");
  if (shift && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    throw UsageError("size '" + raw + "' is too large (accepted: up to 2^64 - 1 bytes)");
  return value << shift;
}

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> sizes;
  const auto colon = text.find(':');
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos)
    throw UsageError("bad size range '" + text + "': a range is MIN:MAX in doubling steps, a step is not accepted (" +
                     kAccepted + ")");
  if (colon != std::string::npos && text.find(',') != std::string::npos)
    throw UsageError("bad sizes '" + text + "': a range and a list cannot be combined (" + std::string(kAccepted) + ")");
  if (colon != std::string::npos) {
    const std::uint64_t lo = parse_size(text.substr(0, colon));
    const std::uint64_t hi = parse_size(text.substr(colon + 1));
    if (lo > hi)
      throw UsageError("size range '" + text + "' has MIN greater than MAX (" + kAccepted + ")");
    return doubling(lo, hi);  // OMB's convention: 0 is measured, then doubling from 1
  }
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    sizes.push_back(parse_size(items.back()));
    // A size measured twice would give two records of one point, which the harness stores once.
    for (std::size_t earlier = 0; earlier + 1 < sizes.size(); ++earlier)
      if (sizes[earlier] == sizes.back())
        throw UsageError("sizes '" + text + "' name " + format_size(sizes.back()) + " twice ('" + trim(items[earlier]) +
                         "' and '" + trim(items.back()) + "'); give each size once (" + kAccepted + ")");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4 && bytes % (1ull << (10 * (u + 1))) == 0) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  return buf;
}

OmbMessageSizes parse_omb_message_sizes(const std::string& text, const OmbCounterpart& counterpart) {
  const char* const accepted =
      "accepted: OMB's [MIN:]MAX in bytes, K/M/G suffixes allowed: MAX (from the default minimum), MIN:MAX, MIN: "
      "(up to the default maximum) or :MAX; a list of sizes, or one size alone, is --sizes";
  if (text.find(',') != std::string::npos)
    throw UsageError("bad message size '" + text + "': -m is OMB's [MIN:]MAX, not a list (" + accepted + ")");
  const auto colon = text.find(':');
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos)
    throw UsageError("bad message size '" + text + "' (" + accepted + ")");
  OmbMessageSizes out;
  out.min = counterpart.min_size;
  out.max = counterpart.max_size;
  auto size_of = [&](const std::string& part) {
    try {
      return parse_size(part);
    } catch (const UsageError&) {
      throw UsageError("bad message size '" + text + "' (" + accepted + ")");
    }
  };
  if (colon == std::string::npos) {
    out.max = size_of(text);
    out.bare_max = true;
  } else {
    const std::string lo = trim(text.substr(0, colon)), hi = trim(text.substr(colon + 1));
    if (lo.empty() && hi.empty()) throw UsageError("bad message size '" + text + "' (" + accepted + ")");
    if (!lo.empty()) out.min = size_of(lo);
    if (!hi.empty()) out.max = size_of(hi);
  }
  if (out.min > out.max)
    throw UsageError("message size '" + text + "': MIN " + format_size(out.min) + " is greater than MAX " +
                     format_size(out.max) +
                     (colon == std::string::npos || trim(text.substr(0, colon)).empty()
                          ? std::string(" (the default minimum of ") + counterpart.program + ")"
                          : trim(text.substr(colon + 1)).empty() ? std::string(" (the default maximum of ") + counterpart.program + ")"
                                                                 : "") +
                     " (" + accepted + ")");
  out.sizes = doubling(out.min, out.max);
  out.reading = "sizes " + format_size(out.min) + " to " + format_size(out.sizes.back()) + " in doubling steps (" +
                std::to_string(out.sizes.size()) + (out.sizes.size() == 1 ? " size)" : " sizes)");
  if (out.bare_max && out.sizes != std::vector<std::uint64_t>{out.max})
    out.warning = "-m " + text + " read as OMB's [MIN:]MAX, as in " + counterpart.program + ": " + out.reading +
                  "; for " + text + " bytes alone give --sizes " + text;
  return out;
}

}  // namespace gmb
