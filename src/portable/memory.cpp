// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/memory.hpp"

#include <cstdlib>

#include "gmb/error.hpp"

namespace gmb {

void fill_pattern(void* data, std::size_t bytes, std::uint32_t seed, bool complement) {
  auto* p = static_cast<std::uint8_t*>(data);
  const std::uint8_t flip = complement ? 0xff : 0x00;
  for (std::size_t k = 0; k < bytes; ++k) p[k] = pattern_byte(k, seed) ^ flip;
}

std::optional<std::size_t> find_pattern_mismatch(const void* data, std::size_t bytes, std::uint32_t seed) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::size_t k = 0; k < bytes; ++k)
    if (p[k] != pattern_byte(k, seed)) return k;
  return std::nullopt;
}

void MemoryKinds::add(MemoryKind kind) {
  for (auto& k : kinds_) {
    if (k.name == kind.name) {
      k = std::move(kind);
      return;
    }
  }
  kinds_.push_back(std::move(kind));
}

const MemoryKind* MemoryKinds::find(const std::string& name) const {
  for (const auto& k : kinds_)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> MemoryKinds::names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.push_back(k.name);
  return out;
}

const MemoryKind& MemoryKinds::known(const std::string& name) const {
  if (const MemoryKind* kind = find(name)) return *kind;
  std::string accepted;
  for (const auto& k : kinds_) accepted += (accepted.empty() ? "" : ", ") + k.name;
  throw UsageError("unknown memory kind '" + name + "' (accepted: " + accepted + ")");
}

const MemoryKind& MemoryKinds::require(const std::string& name) const {
  const MemoryKind& kind = known(name);
  if (!kind.available()) throw Unsupported("memory kind '" + name + "' is not available: " + kind.unavailable_reason);
  return kind;
}

const MemoryKind* MemoryKinds::find_by(bool MemoryKind::*property) const {
  for (const auto& k : kinds_)
    if (k.*property) return &k;
  return nullptr;
}

const MemoryKind& MemoryKinds::require_by(bool MemoryKind::*property, const std::string& what) const {
  const MemoryKind* kind = find_by(property);
  if (!kind) throw Unsupported("no memory kind here is " + what);
  return require(kind->name);
}

namespace {

// Pageable host memory from the C heap, page aligned like most application buffers.
class PageableHostBuffer final : public HostAddressableBuffer {
 public:
  explicit PageableHostBuffer(std::size_t bytes) : HostAddressableBuffer(allocate(bytes), bytes) {}
  ~PageableHostBuffer() override { std::free(data_); }

 private:
  static void* allocate(std::size_t bytes) {
    const std::size_t page = 4096;
    const std::size_t rounded = ((bytes ? bytes : 1) + page - 1) / page * page;
    void* p = std::aligned_alloc(page, rounded);
    if (!p) throw Unsupported("cannot allocate " + std::to_string(bytes) + " bytes of pageable host memory");
    return p;
  }
};

// A kind with its name, description and allocator (empty: unavailable, with `unavailable_reason`);
// the caller sets its properties.
MemoryKind kind_named(const char* name, const char* description, const std::string& unavailable_reason,
                      std::function<std::unique_ptr<Buffer>(std::size_t bytes)> allocate) {
  MemoryKind kind;
  kind.name = name;
  kind.description = description;
  kind.unavailable_reason = unavailable_reason;
  kind.allocate = std::move(allocate);
  return kind;
}

}  // namespace

void register_host_memory(MemoryKinds& kinds) {
  MemoryKind host = kind_named("host", "pageable host memory (malloc)", "", [](std::size_t bytes) -> std::unique_ptr<Buffer> {
    return std::make_unique<PageableHostBuffer>(bytes);
  });
  host.host_accessible = host.pageable = true;
  kinds.add(std::move(host));
}

void register_gpu_memory_kinds(MemoryKinds& kinds, const std::string& unavailable_reason, const GpuAllocators& allocators) {
  MemoryKind pinned = kind_named("pinned", "page-locked host memory (cudaMallocHost)", unavailable_reason, allocators.pinned);
  pinned.host_accessible = pinned.page_locked = true;
  kinds.add(std::move(pinned));

  MemoryKind device = kind_named("device", "GPU memory (cudaMalloc)", unavailable_reason, allocators.device);
  device.gpu_memory = device.gpu_backed = true;
  kinds.add(std::move(device));

  MemoryKind managed = kind_named("managed", "CUDA unified memory (cudaMallocManaged)", unavailable_reason, allocators.managed);
  managed.gpu_backed = managed.placeable = managed.host_accessible = true;
  kinds.add(std::move(managed));
}

}  // namespace gmb
