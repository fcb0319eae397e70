// SPDX-License-Identifier: BSD-3-Clause
// gmb-bench doctor: is this MPI library GPU-aware (static answers and the proof), does it survive device
// buffers freed and allocated again, what memory kinds and GPUs each rank has, and over which path each
// pair of ranks' GPUs talk.
#include <cstdio>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/network.hpp"
#include "gmb/provenance.hpp"
#include "network_ceiling.hpp"
#include "network_tools.hpp"

namespace gmb {

namespace {

// Whether the library still moves device memory correctly when buffers are freed and allocated again (what
// --fresh-buffers does per size, and what applications do): {"status": passed|failed|not run, "detail"}.
Json fresh_buffer_check(const Context& ctx, bool asked) {
  Json out = Json::object();
  if (!asked) return out.set("status", "not run").set("detail", "not asked (--awareness-only)");
  const MemoryKind* device = ctx.platform->memory.find(kDeviceMemory);
  if (ctx.awareness->verdict != Awareness::aware || !device || !device->available())
    return out.set("status", "not run").set("detail", "only for a library proven CUDA-aware, with device memory");
  const std::string problem = check_fresh_device_buffers(ctx.comm, *device);
  if (problem.empty())
    return out.set("status", "passed")
        .set("detail", "windows of 1 B to 64 MiB device-to-device messages on buffers allocated per exchange, twice: "
                       "every byte arrived");
  return out.set("status", "failed")
      .set("detail", problem + ". Benchmarks allocate once per launch and are not affected; --fresh-buffers runs and "
                               "applications that free and reallocate device buffers are");
}

// host -> the network ceiling tools' lines of its first rank.
Json tools_by_host(const Context& ctx, const std::vector<std::vector<std::string>>& tools) {
  Json out = Json::object();
  for (const int r : first_rank_of_each_host(ctx.ranks)) {
    Json lines = Json::array();
    for (const auto& line : tools[static_cast<std::size_t>(r)]) lines.push(line);
    out.set(ctx.ranks[static_cast<std::size_t>(r)].host, lines);
  }
  return out;
}

class Doctor final : public Benchmark {
 public:
  void add_options(ArgParser& p) override {
    // The proof alone: a check of settings one by one (gmb tune) needs the validated exchange, not the stress of
    // buffers allocated again, which may hang for its whole timeout
    p.flag({"--awareness-only"}, "only the CUDA-awareness proof (no check of device buffers freed and allocated again)",
           &awareness_only_);
  }
  Json options_json() const override { return Json::object().set("awareness_only", awareness_only_); }
  void configure(const std::vector<std::string>& positionals, int, const Platform&) override {
    if (!positionals.empty()) throw UsageError("doctor takes no positional arguments");
  }
  std::vector<TableColumn> columns() const override { return {}; }

  int run(Context& ctx, RecordSink& sink) override {
    const Json fresh = fresh_buffer_check(ctx, !awareness_only_);
    const auto network = gather_fields(ctx.comm, network_summary(rank_network_facts(ctx)));
    const auto tools = gather_fields(ctx.comm, network_tool_availability());
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
                                          .set("fresh_buffers", fresh)
                                          .set("memory_kinds", kinds)
                                          .set("gpu", gpus ? Json("usable") : Json(ctx.platform->gpu_unavailable_reason))
                                          .set("paths", paths)
                                          .set("network_tools", tools_by_host(ctx, tools)));
    sink.write_result(record);
    sink.note("GPU awareness: " + std::string(to_string(ctx.awareness->verdict)) + " (" + ctx.awareness->summary + ")");
    for (const auto& [name, value] : *ctx.awareness->evidence.as_object())
      sink.note("  " + name + ": " + (value.as_string() ? *value.as_string() : value.dump()));
    sink.note("device buffers freed and allocated again: " + *fresh.find("status")->as_string() + " (" +
              *fresh.find("detail")->as_string() + ")");
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
    for (std::size_t r = 0; r < network.size(); ++r) {
      const std::string rank = "network of rank " + std::to_string(r);
      if (r > 0 && network[r] == network[r - 1] && ctx.ranks[r].host == ctx.ranks[r - 1].host) {
        sink.note(rank + ": as rank " + std::to_string(r - 1));
        continue;
      }
      sink.note(rank + " (the context record's ranks[].network holds the details):");
      for (const auto& line : network[r]) sink.note("  " + line);
    }
    // The network ceiling's tools, once per host (the first rank there says it).
    const bool one_host = network_pairs(ctx.ranks).empty();
    for (const int r : first_rank_of_each_host(ctx.ranks)) {
      sink.note("network ceiling tools on host " + ctx.ranks[static_cast<std::size_t>(r)].host +
                (one_host ? " (this job runs on one host: peaks measures the network only with ranks on two hosts)" : "") + ":");
      for (const auto& line : tools[static_cast<std::size_t>(r)]) sink.note("  " + line);
    }
    return kExitOk;
  }

 private:
  bool awareness_only_ = false;
};

const Registration doctor_registration({"doctor", "GPU awareness of the MPI library (static answers + proof), kinds, GPU paths",
                                        1, 0, false, [] { return std::make_unique<Doctor>(); },
                                        {Family::doctor, {}, std::nullopt}});

}  // namespace

}  // namespace gmb
