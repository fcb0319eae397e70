// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/buffer_pool.hpp"

#include <algorithm>

namespace gmb {

namespace {

// The first `bytes` of memory the pool holds. Filling, checking and placing go to the memory's own
// kind (kernels for device memory, the CPU for host memory), within the view's length.
class BufferView final : public Buffer {
 public:
  BufferView(std::shared_ptr<Buffer> memory, std::size_t bytes)
      : Buffer(memory->data(), bytes), memory_(std::move(memory)) {}
  void fill(std::size_t bytes, std::uint32_t seed) override { memory_->fill(bytes, seed); }
  void poison(std::size_t bytes, std::uint32_t seed) override { memory_->poison(bytes, seed); }
  std::optional<std::size_t> first_mismatch(std::size_t bytes, std::uint32_t seed) const override {
    return memory_->first_mismatch(bytes, seed);
  }
  void place(Placement where, std::size_t bytes) override { memory_->place(where, bytes); }

 private:
  std::shared_ptr<Buffer> memory_;
};

}  // namespace

const char* to_string(BufferAllocation allocation) {
  return allocation == BufferAllocation::fresh_per_size ? "fresh-per-size" : "once-per-launch";
}

std::unique_ptr<Buffer> BufferPool::take(const MemoryKind& kind, std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (allocation_ == BufferAllocation::fresh_per_size) return kind.allocate(bytes);
  const Held* best = smallest_free(kind, bytes);
  if (!best) {
    held_.push_back({kind.name, side_of(kind), std::shared_ptr<Buffer>(kind.allocate(bytes))});
    best = &held_.back();
  }
  return std::make_unique<BufferView>(best->memory, bytes);
}

std::size_t BufferPool::free_bytes(MemorySide side) const {
  std::size_t sum = 0;
  for (const Held& h : held_)
    if (h.side == side && h.free()) sum += h.memory->bytes();
  return sum;
}

std::size_t BufferPool::held_bytes() const {
  std::size_t sum = 0;
  for (const Held& h : held_) sum += h.memory->bytes();
  return sum;
}

const BufferPool::Held* BufferPool::smallest_free(const MemoryKind& kind, std::size_t bytes) const {
  const Held* best = nullptr;
  for (const Held& h : held_)
    if (h.kind == kind.name && h.free() && h.memory->bytes() >= bytes && (!best || h.memory->bytes() < best->memory->bytes()))
      best = &h;
  return best;
}

}  // namespace gmb
