// SPDX-License-Identifier: BSD-3-Clause
// The rules of the one-sided (RMA) benchmarks (docs/methodology.md "One-sided communication (RMA)"),
// apart from MPI: the operations, synchronisation modes and window creations they accept, which sizes an
// operation can measure, and the integer values --validate writes and expects. The benchmarks themselves
// (rma_latency, rma_bw, rma_bibw) are src/bench/rma.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gmb::rma {

enum class Op { put, get, acc, get_acc, fop, cas };
// fence: MPI_Win_fence epochs; lock: MPI_Win_lock/unlock per iteration; flush: one lock for the whole size,
// MPI_Win_flush per iteration; pscw: MPI_Win_post/start/complete/wait.
enum class Sync { fence, lock, flush, pscw };
// create: MPI_Win_create over the benchmark's buffer (any memory kind); allocate: MPI_Win_allocate (the
// library allocates the window, in host memory).
enum class WindowCreation { create, allocate };

struct OpInfo {
  Op op;
  const char* name;            // as --op and records spell it: "put"
  const char* call;            // "MPI_Put"
  const char* datatype;        // records' rma.datatype: "byte" (MPI_BYTE), "int" (MPI_INT), "int64" (MPI_INT64_T)
  std::size_t element_bytes;   // 1, 4, 8
  bool single_element;         // fop, cas: one element per call, so they measure element_bytes only
  bool fetches;                // the origin receives data: get (into its buffer), get_acc, fop, cas (into a result buffer)
  bool has_result_buffer;      // a result buffer apart from the operand (get_acc, fop, cas)
};
// Every operation, in the order --help lists them.
const std::vector<OpInfo>& operations();
const OpInfo& info(Op op);

// "put", ... for the accepted operations, separated by `separator`.
std::string op_names(const std::vector<Op>& accepted, const std::string& separator);
// Throws UsageError naming the accepted values.
Op parse_op(const std::string& text, const std::vector<Op>& accepted);
Sync parse_sync(const std::string& text);
WindowCreation parse_window_creation(const std::string& text);
const char* sync_name(Sync sync);
const char* window_creation_name(WindowCreation creation);
// Passive target (lock, flush): only the origin calls MPI in an iteration; the target's data is checked
// after a barrier, inside a lock of its own window.
inline bool passive(Sync sync) { return sync == Sync::lock || sync == Sync::flush; }

// Why `op` cannot move `bytes` in one call, or "": integer operations need a positive multiple of their
// element, fop and cas exactly one element.
std::string size_problem(Op op, std::size_t bytes);
// Elements of the operation's datatype in `bytes` (what the call's count is).
inline std::size_t element_count(Op op, std::size_t bytes) { return bytes / info(op).element_bytes; }

// --validate for the integer operations (acc, get_acc, fop, cas): element `index` of an image written with
// `seed`. Both are small and non-negative, so every sum is exact in an int.
std::int64_t operand_value(std::size_t index, std::uint32_t seed);         // what the origin adds / swaps in
std::int64_t initial_target_value(std::size_t index, std::uint32_t seed);  // the target's window before
// What a result buffer holds before the checked iteration: no operation fetches it (every value is >= 0).
constexpr std::int64_t kUnfetched = -1;

// After one operation on an element: the target's new value and what the origin fetched (get_acc, fop and
// cas fetch the old value). cas compares against the target's own initial value, so that it swaps.
struct Expected {
  std::int64_t target = 0;
  std::int64_t fetched = 0;
};
Expected expected_after(Op op, std::int64_t operand, std::int64_t initial);

}  // namespace gmb::rma
