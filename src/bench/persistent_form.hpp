// SPDX-License-Identifier: BSD-3-Clause
// The persistent form of a benchmark beside its regular form, in the same launch (--persistent on latency, bw,
// bibw, mbw, mlat and coll; METHODOLOGY "Persistent communication"). The benchmark measures the regular form,
// then the same configuration with persistent requests built once per size; this class knows which form is
// being measured and what the persistent form's records say about the two: "variant", and "persistent" with
// the call, the regular form's median at the size and the speedup. Host-only: no CUDA headers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "gmb/benchmark.hpp"

namespace gmb {

class PersistentForm {
 public:
  // Declares --persistent; `what` names the persistent calls and where they apply, for --help.
  void add_option(ArgParser& p, const std::string& what);
  bool requested() const { return requested_; }
  // Whether the sweep under way measures the persistent form.
  bool active() const { return !call_.empty(); }

  // Runs `sweep` (one sweep over the sizes, returning its exit status) in the regular form and, with
  // --persistent, again in the persistent form, whose records name `call` ("MPI_Allreduce_init"). Returns the worse
  // of the two statuses: a persistent form this library or build cannot run is recorded unsupported and the run
  // exits 3, as any run with a refused point does.
  int run(const Context& ctx, RecordSink& sink, const std::string& call, const std::function<int()>& sweep);

  // Every record of the persistent form, unsupported ones included (describe_configuration): "variant" and
  // "persistent" with the call and the regular form's median at the record's size, speedup null until measured.
  void describe(Json& record) const;
  // A measured record on rank 0, once its time_us is set: the regular form's median is kept for the
  // comparison; the persistent form's record gets its speedup.
  void add_figures(Json& record);

 private:
  // "persistent": the call, the regular form's median at `bytes` and the speedup (null while `persistent_us` is 0:
  // not measured).
  Json comparison(std::uint64_t bytes, double persistent_us) const;

  bool requested_ = false;
  std::string call_;  // the persistent form's call while it is measured; empty in the regular form
  std::map<std::uint64_t, double> regular_us_, persistent_us_;  // median time_us per size, rank 0
};

}  // namespace gmb
