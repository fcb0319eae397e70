// SPDX-License-Identifier: BSD-3-Clause
// Memory kinds as a table of allocators. Core registers "host" (pageable); the CUDA module registers
// "pinned", "device" and "managed" at start-up, or they are registered unavailable with the reason.
// Benchmarks never test for CUDA: they ask the table for a kind and get a buffer or Unsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gmb {

// Where managed memory should be when MPI touches it (METHODOLOGY "Unified memory placements").
enum class Placement { none, host, device };

class Buffer {
 public:
  virtual ~Buffer() = default;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

  // Writes the validation pattern for `seed` into the first `bytes` bytes (the producer's write).
  virtual void fill(std::size_t bytes, std::uint32_t seed) = 0;
  // Writes the bitwise complement of `seed`'s pattern, so that every byte is wrong until the
  // expected data arrives (a message that never lands cannot pass validation).
  virtual void poison(std::size_t bytes, std::uint32_t seed) = 0;
  // Offset of the first byte that differs from the pattern for `seed`, or nullopt.
  virtual std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const = 0;
  // Makes the contents resident where `where` says (managed memory only; others ignore it).
  virtual void place(Placement where, std::size_t bytes) { (void)where; (void)bytes; }

 protected:
  Buffer(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}
  void* data_;
  std::size_t bytes_;
};

struct MemoryKind {
  std::string name;         // "host", "pinned", "device", "managed"
  std::string description;  // one line for `gmb-bench list`
  // True when the pointer is GPU memory that a CUDA-unaware MPI must never be handed.
  bool gpu_memory = false;
  // True for memory the GPU owns or migrates (device, managed): what transfer strategies stage.
  bool gpu_backed = false;
  // Empty when available; otherwise why not (shown to the user as is).
  std::string unavailable_reason;
  // Allocates `bytes` (at least 1); throws Unsupported when it cannot (no device, out of memory).
  std::function<std::unique_ptr<Buffer>(std::size_t bytes)> allocate;
  // True when Buffer::place() moves it (managed memory): the kind accepts ":host" / ":device".
  bool placeable = false;
  // True when the CPU can read and write it through the pointer (host, pinned, managed): data is
  // written and checked with the CPU; otherwise it goes through the GPU runtime.
  bool host_accessible = false;
  // True for page-locked host memory (pinned): what asynchronous GPU copies need to overlap.
  bool page_locked = false;
  // True for ordinary pageable host memory (malloc): the host side of the pageable copies and staging.
  bool pageable = false;

  bool available() const { return unavailable_reason.empty(); }
};

// Whose memory a kind uses up: device and managed memory count against the GPU (managed memory placed
// on the device must fit there), host and pinned memory against the host.
enum class MemorySide { host, device };
inline MemorySide side_of(const MemoryKind& kind) { return kind.gpu_backed ? MemorySide::device : MemorySide::host; }

// Memory asked for by what it is, never by a kind's name: the first kind with `property`.
struct MemoryByProperty {
  bool MemoryKind::*property;
  const char* what;  // for messages: "page-locked host memory"
};
inline constexpr MemoryByProperty kDeviceMemory{&MemoryKind::gpu_memory, "device memory"};
inline constexpr MemoryByProperty kPinnedHostMemory{&MemoryKind::page_locked, "page-locked host memory"};
inline constexpr MemoryByProperty kPageableHostMemory{&MemoryKind::pageable, "pageable host memory"};

class MemoryKinds {
 public:
  void add(MemoryKind kind);  // replaces a kind of the same name
  // The kind, or nullptr when no kind has that name.
  const MemoryKind* find(const std::string& name) const;
  // The kind, available or not; throws UsageError naming the accepted kinds when unknown.
  const MemoryKind& known(const std::string& name) const;
  // The kind; throws Unsupported with the reason when unavailable, UsageError when unknown.
  const MemoryKind& require(const std::string& name) const;
  // For code that needs memory by what it is, not by name: the first kind with `property` set
  // (e.g. &MemoryKind::page_locked), available or not; nullptr when none has it.
  const MemoryKind* find_by(bool MemoryKind::*property) const;
  // The same kind; throws Unsupported with its reason when unavailable, or naming `what` when none exists.
  const MemoryKind& require_by(bool MemoryKind::*property, const std::string& what) const;
  const MemoryKind* find(const MemoryByProperty& memory) const { return find_by(memory.property); }
  const MemoryKind& require(const MemoryByProperty& memory) const { return require_by(memory.property, memory.what); }
  const std::vector<MemoryKind>& all() const { return kinds_; }
  std::vector<std::string> names() const;

 private:
  std::vector<MemoryKind> kinds_;
};

// The byte the validation pattern holds at `offset` for `seed`. Varies with both, so a stale
// buffer from an earlier iteration or a shifted copy is caught.
inline std::uint8_t pattern_byte(std::size_t offset, std::uint32_t seed) {
  std::uint64_t x = offset * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::uint8_t>((x >> 32) ^ (x >> 56));
}
// Fills / checks host-addressable memory with the pattern (used for host, pinned and managed).
// `complement` writes the bitwise complement (poison).
void fill_pattern(void* data, std::size_t bytes, std::uint32_t seed, bool complement = false);
std::optional<std::size_t> find_pattern_mismatch(const void* data, std::size_t bytes, std::uint32_t seed);

// A buffer the CPU reads and writes through its pointer (pageable and pinned host memory): the pattern is
// written and checked on the CPU.
class HostAddressableBuffer : public Buffer {
 public:
  void fill(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed); }
  void poison(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed, true); }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    return find_pattern_mismatch(data_, bytes, seed);
  }

 protected:
  using Buffer::Buffer;
};

// Registers the pageable "host" kind.
void register_host_memory(MemoryKinds& kinds);

// The GPU kinds, declared here once for both builds: "pinned", "device" and "managed" with their
// properties, allocated by the CUDA module's allocators, or unavailable with `unavailable_reason`
// (a host-only build, no usable device: allocators left empty).
struct GpuAllocators {
  std::function<std::unique_ptr<Buffer>(std::size_t bytes)> pinned, device, managed;
};
void register_gpu_memory_kinds(MemoryKinds& kinds, const std::string& unavailable_reason, const GpuAllocators& allocators);

}  // namespace gmb
