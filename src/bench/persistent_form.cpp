// SPDX-License-Identifier: BSD-3-Clause
#include "persistent_form.hpp"

#include <algorithm>
#include <cstdio>

#include "gmb/error.hpp"
#include "gmb/sizes.hpp"

namespace gmb {

namespace {

// The record's median time_us, or nothing (an unsupported point, a record without figures).
const Json* median_us(const Json& record) { return lookup_path(record, "time_us.median"); }

std::uint64_t bytes_of(const Json& record) {
  const Json* bytes = record.find("bytes");
  return bytes ? static_cast<std::uint64_t>(bytes->as_number()) : 0;
}

}  // namespace

void PersistentForm::add_option(ArgParser& p, const std::string& what) {
  p.flag({"--persistent"},
         "then measure the same sizes with persistent requests built once per size (" + what +
             ") and compare them with the regular calls",
         &requested_);
}

int PersistentForm::run(const Context& ctx, RecordSink& sink, const std::string& call, const std::function<int()>& sweep) {
  regular_us_.clear();
  persistent_us_.clear();
  call_.clear();
  int exit_code = sweep();
  if (!requested_) return exit_code;
  call_ = call;
  if (ctx.rank == 0) sink.note("persistent form: " + call + ", started and completed every iteration");
  const int code = sweep();
  call_.clear();
  if (ctx.rank == 0) {
    for (const auto& [bytes, persistent] : persistent_us_) {
      const auto regular = regular_us_.find(bytes);
      if (regular == regular_us_.end() || !(persistent > 0)) continue;
      char text[160];
      std::snprintf(text, sizeof text, "persistent vs regular at %s: %.2f us vs %.2f us (speedup %.2f)",
                    format_size(bytes).c_str(), persistent, regular->second, regular->second / persistent);
      sink.note(text);
    }
  }
  return std::max(exit_code, code);
}

void PersistentForm::describe(Json& record) const {
  if (!active()) return;
  record.set("variant", "persistent").set("persistent", comparison(bytes_of(record), 0));
}

void PersistentForm::add_figures(Json& record) {
  const Json* median = median_us(record);
  if (!median || !median->is_number()) return;
  const std::uint64_t bytes = bytes_of(record);
  if (active()) {
    persistent_us_[bytes] = median->as_number();
    record.set("persistent", comparison(bytes, median->as_number()));
  } else {
    regular_us_[bytes] = median->as_number();
  }
}

Json PersistentForm::comparison(std::uint64_t bytes, double persistent_us) const {
  const auto regular = regular_us_.find(bytes);
  const bool compared = regular != regular_us_.end() && persistent_us > 0;
  return Json::object()
      .set("call", call_)
      .set("regular_time_us", regular == regular_us_.end() ? Json() : Json(regular->second))
      // Regular median / persistent median: above 1, the persistent form is faster.
      .set("speedup", compared ? Json(regular->second / persistent_us) : Json());
}

}  // namespace gmb
