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

namespace {

// Pageable host memory from the C heap, page aligned like most application buffers.
class PageableHostBuffer final : public Buffer {
 public:
  explicit PageableHostBuffer(std::size_t bytes) : Buffer(allocate(bytes), bytes) {}
  ~PageableHostBuffer() override { std::free(data_); }
  void fill(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed); }
  void poison(std::size_t bytes, std::uint32_t seed) override { fill_pattern(data_, bytes, seed, true); }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    return find_pattern_mismatch(data_, bytes, seed);
  }

 private:
  static void* allocate(std::size_t bytes) {
    const std::size_t page = 4096;
    const std::size_t rounded = ((bytes ? bytes : 1) + page - 1) / page * page;
    void* p = std::aligned_alloc(page, rounded);
    if (!p) throw Unsupported("cannot allocate " + std::to_string(bytes) + " bytes of pageable host memory");
    return p;
  }
};

}  // namespace

void register_host_memory(MemoryKinds& kinds) {
  kinds.add({"host", "pageable host memory (malloc)", false, false, "",
             [](std::size_t bytes) -> std::unique_ptr<Buffer> { return std::make_unique<PageableHostBuffer>(bytes); }});
}

}  // namespace gmb
