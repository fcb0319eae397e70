// SPDX-License-Identifier: BSD-3-Clause
// Whether a size can be measured here, decided before anything is allocated for it: the count one
// MPI-3 call can carry (a C int) and the memory each rank needs against what it may use. A size
// beyond either limit becomes an unsupported record with the reason; the others are measured.
//
// Benchmarks say what they need at a size (SizeNeeds: every buffer a rank holds at once, host and
// device apart, and the largest count of one call); the decision and its wording live here only.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmb/memory.hpp"

namespace gmb {

// The largest count or displacement one MPI-3 call takes (an int).
constexpr std::uint64_t kMaxMpiCount = INT_MAX;
// Share of the available memory never planned for: the MPI library, the CUDA context and the
// rest of the system allocate too while a benchmark runs.
constexpr int kMemoryMarginPercent = 10;
// Host bookkeeping smaller than this (requests, samples) is left to the margin, and out of the reasons.
constexpr std::uint64_t kBookkeepingWithinMargin = std::uint64_t{1} << 20;
// What one operation in flight costs a rank beyond its buffers: the request and the MPI library's state for it, held
// until it completes. Open MPI 4.1 (ob1, shared memory) holds about 0.9 KiB per 8-byte MPI_Isend or MPI_Irecv in flight
// (100000 of them: 86 MiB per rank); rounded up. Windows of messages, chunks, partitions and one-sided operations scale
// it: a window of 100000000 needs 95 GiB per rank.
constexpr std::uint64_t kBytesPerOperationInFlight = 1024;

// What one rank needs to measure one size.
struct SizeNeeds {
  struct Part {
    std::string what;  // "send", "recv", "validation image" ...
    std::uint64_t bytes = 0;
    MemorySide side = MemorySide::host;
  };
  std::vector<Part> parts;  // every buffer the rank holds at once at this size
  std::string refusal;      // a per-call limit the size exceeds (the first found), or ""

  void add(const std::string& what, std::uint64_t bytes, MemorySide side);
  void add(const std::string& what, std::uint64_t bytes, const MemoryKind& kind) { add(what, bytes, side_of(kind)); }
  // Refuses the size when `count` elements of `element_bytes` each are over one call's count.
  void check_count(std::uint64_t count, std::size_t element_bytes, const std::string& call);
  // Refuses the size for another per-call limit, saying why (the first refusal is kept).
  void refuse(const std::string& reason);
  // Host memory that scales with an option rather than the size (samples with --iters), counted once it is no longer
  // within the margin (kBookkeepingWithinMargin).
  void add_bookkeeping(const std::string& what, std::uint64_t bytes);
  // `operations` in flight at once ("requests", "MPI_Put operations"): bookkeeping of kBytesPerOperationInFlight each.
  void add_in_flight(std::uint64_t operations, const std::string& what);
  std::uint64_t bytes_on(MemorySide side) const;
  std::uint64_t total_bytes() const;
};

// Why `count` elements of `element_bytes` cannot go to one MPI-3 call `call`, or "".
std::string count_limit_reason(std::uint64_t count, std::size_t element_bytes, const std::string& call);
// Why `requests` requests cannot be completed by one `call` (MPI_Waitall, MPI_Startall: the count is an int), or "".
std::string request_count_reason(std::uint64_t requests, const std::string& call);

// The memory one rank may use, and where that figure comes from (for reasons).
struct MemoryBudget {
  // Bytes this rank may use on each side; nullopt where unknown (no /proc/meminfo, no GPU).
  std::optional<std::uint64_t> host_bytes, device_bytes;
  std::string host_source, device_source;  // "11.3 GiB MemAvailable less a 10% margin, shared by 2 ranks on host X"
  std::uint64_t limit = 0;                 // --memory-limit, both sides together; 0: none
};

// `available` bytes less the margin, divided among `ranks` ranks, plus `reusable` bytes the rank
// already holds for reuse.
std::uint64_t share_of(std::uint64_t available, int ranks, std::uint64_t reusable);

// Why a rank with `budget` cannot measure a size that needs `needs`, or "" when it can.
std::string size_refusal(const SizeNeeds& needs, const MemoryBudget& budget);

// Bytes of host memory free for new allocations: MemAvailable of /proc/meminfo, lowered to what the
// memory cgroup still allows (a container's limit; MemAvailable shows the whole machine's); nullopt
// when unknown. `source` says which figure it is.
std::optional<std::uint64_t> host_memory_available(std::string* source);
// MemAvailable of /proc/meminfo's text, in bytes.
std::optional<std::uint64_t> parse_mem_available(const std::string& meminfo);

// "12.0 GiB", "4 GiB", "512 B": sizes in reasons.
std::string readable_bytes(std::uint64_t bytes);

}  // namespace gmb
