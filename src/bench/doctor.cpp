// gmb-bench doctor: is this MPI library GPU-aware (static answers and the proof), what memory kinds
// and GPUs each rank has, and over which path each pair of ranks' GPUs talk.
#include <cstdio>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"

namespace gmb {

namespace {

class Doctor final : public Benchmark {
 public:
  void configure(const std::vector<std::string>& positionals, int, const Platform&) override {
    if (!positionals.empty()) throw UsageError("doctor takes no positional arguments");
  }
  std::vector<TableColumn> columns() const override { return {}; }

  int run(Context& ctx, RecordSink& sink) override {
    if (ctx.rank != 0) return kExitOk;
    Json kinds = Json::object();
    for (const auto& k : ctx.platform->memory.all()) kinds.set(k.name, k.available() ? "available" : k.unavailable_reason);
    Json paths = Json::array();
    const bool gpus = ctx.platform->gpu_unavailable_reason.empty();
    for (int a = 0; a < ctx.size; ++a)
      for (int b = a + 1; b < ctx.size; ++b)
        paths.push(Json::object().set("ranks", Json::array().push(a).push(b)).set("path", ctx.path_between(a, gpus, b, gpus).to_json()));
    const Json verdict = Json::object()
                             .set("verdict", to_string(ctx.awareness->verdict))
                             .set("summary", ctx.awareness->summary)
                             .set("evidence", ctx.awareness->evidence);
    Json record = result_record(ctx, 0)
                      .set("ranks", ctx.size)
                      .set("metrics", Json::object()
                                          .set("gpu_awareness", verdict)
                                          .set("memory_kinds", kinds)
                                          .set("gpu", gpus ? Json("usable") : Json(ctx.platform->gpu_unavailable_reason))
                                          .set("paths", paths));
    sink.write_result(record);
    sink.note("GPU awareness: " + std::string(to_string(ctx.awareness->verdict)) + " (" + ctx.awareness->summary + ")");
    for (const auto& [name, value] : *ctx.awareness->evidence.as_object())
      sink.note("  " + name + ": " + (value.as_string() ? *value.as_string() : value.dump()));
    for (const auto& k : ctx.platform->memory.all())
      sink.note("memory kind " + k.name + ": " + (k.available() ? "available" : k.unavailable_reason));
    for (std::size_t r = 0; r < ctx.ranks.size(); ++r)
      sink.note("rank " + std::to_string(r) + ": host " + ctx.ranks[r].host +
                (ctx.ranks[r].gpu_pci.empty() ? ", no GPU" : ", GPU " + ctx.ranks[r].gpu_pci + " " + ctx.ranks[r].gpu_uuid));
    for (int a = 0; a < ctx.size; ++a)
      for (int b = a + 1; b < ctx.size; ++b) {
        const PathInfo p = ctx.path_between(a, gpus, b, gpus);
        sink.note("ranks " + std::to_string(a) + "-" + std::to_string(b) + ": " + p.path_class + " (" + p.link + ")");
      }
    return kExitOk;
  }
};

const Registration doctor_registration({"doctor", "GPU awareness of the MPI library (static answers + proof), kinds, GPU paths",
                                        1, 0, false, [] { return std::make_unique<Doctor>(); }});

}  // namespace

}  // namespace gmb
