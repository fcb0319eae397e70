// SPDX-License-Identifier: BSD-3-Clause
// The buffers of one launch. Benchmarks take their buffers from the pool instead of allocating them.
//
// By default memory is allocated once per launch and reused across sizes, as applications (and OMB,
// nccl-tests) do: the runner first sets a sweep up at its largest size, so the first allocation of
// each buffer is the largest it will need, and every size then gets a view of it. Memory taken once is
// never given back before the launch ends: a library that caches what it learnt about an address
// (registrations, IPC mappings) must never see that address freed and allocated again mid-run.
// `--fresh-buffers` is the stress mode: every buffer is allocated when taken and freed when dropped.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gmb/memory.hpp"

namespace gmb {

enum class BufferAllocation { once_per_launch, fresh_per_size };
// How records spell it: "once-per-launch", "fresh-per-size".
const char* to_string(BufferAllocation allocation);

class BufferPool {
 public:
  explicit BufferPool(BufferAllocation allocation = BufferAllocation::once_per_launch) : allocation_(allocation) {}
  BufferAllocation allocation() const { return allocation_; }

  // A buffer of `bytes` (at least 1) of `kind`: in once-per-launch mode a view of memory the pool holds
  // (the smallest free one that is large enough, else newly allocated and kept); its memory is free for
  // the next taker once the returned buffer is destroyed. Throws Unsupported like MemoryKind::allocate.
  std::unique_ptr<Buffer> take(const MemoryKind& kind, std::size_t bytes);

  // Bytes of memory on `side` the pool holds and nobody uses: a sweep can take them without allocating.
  std::size_t free_bytes(MemorySide side) const;

  // Bytes of memory of every kind the pool holds, in use or free.
  std::size_t held_bytes() const;

 private:
  struct Held {
    std::string kind;
    MemorySide side;
    std::shared_ptr<Buffer> memory;  // the pool's reference; a view in use holds a second one
    bool free() const { return memory.use_count() == 1; }
  };
  // The smallest free memory of `kind` that holds `bytes`; nullptr when none.
  const Held* smallest_free(const MemoryKind& kind, std::size_t bytes) const;
  BufferAllocation allocation_;
  std::vector<Held> held_;
};

}  // namespace gmb
