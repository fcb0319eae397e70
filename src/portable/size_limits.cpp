// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/size_limits.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace gmb {

namespace {

const char* side_name(MemorySide side) { return side == MemorySide::device ? "device" : "host"; }

// "send 4 GiB, recv 4 GiB, validation image 4 GiB" (the parts on `side` only).
std::string list_parts(const SizeNeeds& needs, MemorySide side) {
  std::string out;
  for (const auto& p : needs.parts)
    if (p.side == side) out += (out.empty() ? "" : ", ") + p.what + " " + readable_bytes(p.bytes);
  return out;
}

// The first line of a file that holds one number ("max" reads as nullopt), or nullopt.
std::optional<std::uint64_t> read_number_file(const char* path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

// What the memory cgroup of this process still allows: v2 (memory.max, memory.current) or v1
// (memory.limit_in_bytes, memory.usage_in_bytes); nullopt without a limit. Usage counts page cache
// the kernel could reclaim, so this errs on the safe side.
std::optional<std::uint64_t> cgroup_memory_left() {
  const struct {
    const char* limit;
    const char* usage;
  } files[] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
               {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& f : files) {
    const auto limit = read_number_file(f.limit), usage = read_number_file(f.usage);
    // v1 spells "no limit" as a number near 2^63.
    if (!limit || !usage || *limit >= (std::uint64_t{1} << 62)) continue;
    return *limit > *usage ? *limit - *usage : 0;
  }
  return std::nullopt;
}

}  // namespace

void SizeNeeds::add(const std::string& what, std::uint64_t bytes, MemorySide side) {
  if (bytes > 0) parts.push_back({what, bytes, side});
}

void SizeNeeds::check_count(std::uint64_t count, std::size_t element_bytes, const std::string& call) {
  refuse(count_limit_reason(count, element_bytes, call));
}

void SizeNeeds::refuse(const std::string& reason) {
  if (refusal.empty()) refusal = reason;
}

void SizeNeeds::add_bookkeeping(const std::string& what, std::uint64_t bytes) {
  if (bytes >= kBookkeepingWithinMargin) add(what, bytes, MemorySide::host);
}

void SizeNeeds::add_in_flight(std::uint64_t operations, const std::string& what) {
  // Saturating: an option's product beyond 64 bits is still far over any memory.
  const std::uint64_t bytes = operations > UINT64_MAX / kBytesPerOperationInFlight
                                  ? UINT64_MAX
                                  : operations * kBytesPerOperationInFlight;
  add_bookkeeping(std::to_string(operations) + " " + what + " in flight (" + readable_bytes(kBytesPerOperationInFlight) +
                      " each, the MPI library's state)",
                  bytes);
}

std::uint64_t SizeNeeds::bytes_on(MemorySide side) const {
  std::uint64_t sum = 0;
  for (const auto& p : parts)
    if (p.side == side) sum = p.bytes > UINT64_MAX - sum ? UINT64_MAX : sum + p.bytes;  // saturating, as add_in_flight
  return sum;
}

std::uint64_t SizeNeeds::total_bytes() const {
  const std::uint64_t host = bytes_on(MemorySide::host), device = bytes_on(MemorySide::device);
  return device > UINT64_MAX - host ? UINT64_MAX : host + device;
}

std::string count_limit_reason(std::uint64_t count, std::size_t element_bytes, const std::string& call) {
  if (count <= kMaxMpiCount) return "";
  if (element_bytes == 1)
    return readable_bytes(count) + " exceeds the 2 GiB - 1 byte per-call count of MPI-3 calls (" + call + ")";
  return "a count of " + std::to_string(count) + " elements of " + std::to_string(element_bytes) +
         " bytes exceeds 2147483647, the per-call count of MPI-3 calls (" + call + ")";
}

std::string request_count_reason(std::uint64_t requests, const std::string& call) {
  if (requests <= kMaxMpiCount) return "";
  return std::to_string(requests) + " requests in flight at once exceed 2147483647, the count one " + call + " takes";
}

std::uint64_t share_of(std::uint64_t available, int ranks, std::uint64_t reusable) {
  const std::uint64_t usable = available / 100 * (100 - kMemoryMarginPercent);
  return usable / static_cast<std::uint64_t>(std::max(ranks, 1)) + reusable;
}

std::string size_refusal(const SizeNeeds& needs, const MemoryBudget& budget) {
  if (!needs.refusal.empty()) return needs.refusal;
  const std::uint64_t total = needs.total_bytes();
  if (budget.limit && total > budget.limit) {
    std::string parts = list_parts(needs, MemorySide::host);
    if (const std::string device = list_parts(needs, MemorySide::device); !device.empty())
      parts += (parts.empty() ? "" : "; ") + ("device: " + device);
    return "needs " + readable_bytes(total) + " per rank (" + parts + "), over --memory-limit " +
           readable_bytes(budget.limit);
  }
  for (const MemorySide side : {MemorySide::host, MemorySide::device}) {
    const std::uint64_t need = needs.bytes_on(side);
    const auto& have = side == MemorySide::host ? budget.host_bytes : budget.device_bytes;
    const std::string& source = side == MemorySide::host ? budget.host_source : budget.device_source;
    if (need == 0 || !have || need <= *have) continue;
    return "needs " + readable_bytes(need) + " of " + side_name(side) + " memory per rank (" + list_parts(needs, side) +
           "), " + readable_bytes(*have) + " available to each rank: " + source;
  }
  return "";
}

std::optional<std::uint64_t> parse_mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) return static_cast<std::uint64_t>(kib) * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> host_memory_available(std::string* source) {
  std::ifstream file("/proc/meminfo");
  std::stringstream text;
  text << file.rdbuf();
  const auto available = parse_mem_available(text.str());
  const auto cgroup_left = cgroup_memory_left();
  if (cgroup_left && (!available || *cgroup_left < *available)) {
    *source = readable_bytes(*cgroup_left) + " left under this process's memory cgroup limit";
    return cgroup_left;
  }
  if (available) *source = readable_bytes(*available) + " MemAvailable";
  return available;
}

std::string readable_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  const bool whole = bytes % (std::uint64_t{1} << (10 * unit)) == 0;
  char text[32];
  std::snprintf(text, sizeof text, whole ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace gmb
