// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/description.hpp"

#include "gmb/benchmark.hpp"
#include "gmb/ceilings.hpp"
#include "gmb/collectives.hpp"
#include "gmb/mpi_features.hpp"
#include "gmb/mpi_library.hpp"
#include "gmb/platform.hpp"
#include "gmb/provenance.hpp"
#include "gmb/transfer.hpp"

namespace gmb {

namespace {

// Each option once, with every name it answers to: what a campaign may pass to the engine.
Json describe_options(const ArgParser& parser) {
  Json options = Json::array();
  for (const auto& o : parser.options()) {
    Json option = Json::object().set("names", Json::array_of(o.names)).set("value", o.value);
    if (!o.metavar.empty()) option.set("metavar", o.metavar);
    if (!o.choices.empty()) option.set("choices", Json::array_of(o.choices));
    if (o.list) option.set("list", true);
    options.push(option);
  }
  return options;
}

// A text, or null where there is none.
Json text_or_null(const char* text) { return text ? Json(text) : Json(); }

Json describe_omb(const std::optional<OmbCounterpart>& omb) {
  if (!omb) return Json();
  return Json::object()
      .set("program", omb->program)
      .set("min_size", omb->min_size)
      .set("max_size", omb->max_size)
      .set("collective", omb->collective)
      .set("host_by_default", omb->host_by_default);
}

Json describe_benchmark(const BenchmarkInfo& b) {
  Json metrics = Json::array();
  for (const Statistic s : b.records.metrics) metrics.push(statistic_name(s));
  const auto bench = b.make();
  ArgParser own;
  bench->add_options(own);
  return Json::object()
      .set("name", b.name)
      .set("summary", b.summary)
      .set("min_ranks", b.min_ranks)
      .set("max_ranks", b.max_ranks)
      .set("even_ranks", b.even_ranks)
      .set("family", family_name(b.records.family))
      .set("metrics", metrics)
      .set("headline", b.records.headline ? Json(statistic_name(*b.records.headline)) : Json())
      .set("transports", Json::array_of(b.records.transports))
      .set("operations", b.records.operations)
      .set("adaptive", bench->takes_precision())
      .set("directions", text_or_null(directions_name(b.directions)))
      .set("overlap", b.overlap)
      .set("omb", describe_omb(b.omb))
      .set("options", describe_options(own));
}

// A kind, or one of its placements ("managed:host"): the placement's base kind's properties.
Json describe_kind(const MemoryKind& k, Placement placement, const std::string& description) {
  const bool placed = placement != Placement::none;
  Json kind = Json::object()
                  .set("name", placed ? k.name + ":" + placement_name(placement) : k.name)
                  .set("description", description)
                  .set("available", k.available());
  if (!k.available()) kind.set("reason", k.unavailable_reason);
  return kind.set("gpu_memory", k.gpu_memory)
      .set("gpu_backed", k.gpu_backed)
      .set("placeable", k.placeable)
      .set("host_accessible", k.host_accessible)
      .set("page_locked", k.page_locked)
      .set("pageable", k.pageable)
      .set("placement", placed ? Json(placement_name(placement)) : Json())
      .set("base", k.name);
}

Json describe_collective(const coll::Collective& c) {
  return Json::object()
      .set("name", c.name)
      .set("mpi_call", c.blocking_name)
      .set("nonblocking_call", c.nonblocking_name ? Json(c.nonblocking_name) : Json())
      .set("persistent_call", c.init ? Json(c.persistent_name) : Json())  // null: built without persistent collectives
      .set("rooted", c.rooted)
      .set("reduction", c.reduction)
      .set("counts", coll::counts_json(c))
      .set("busbw_factor", c.busbw.formula ? Json(c.busbw.formula) : Json())
      .set("nccl", Json::object()
                       .set("call", c.nccl.call ? Json(c.nccl.call) : Json())
                       .set("reason", c.nccl.call ? Json() : Json(c.nccl.missing)));
}

// Which property picks a strategy's staging memory, by name (the harness finds the kind by the same property).
const char* property_name(bool MemoryKind::*property) {
  if (property == &MemoryKind::gpu_memory) return "gpu_memory";
  if (property == &MemoryKind::page_locked) return "page_locked";
  if (property == &MemoryKind::pageable) return "pageable";
  return "?";
}

// A strategy and how it moves a message: which side copies through staging memory (the GPU-backed side, or the
// host-memory side that it relays through its GPU) and of which memory.
Json describe_strategy(const StrategyInfo& s) {
  Json strategy = Json::object().set("name", s.name).set("description", s.description).set("chunked", s.chunked);
  if (!s.staging) return strategy.set("staged_side", Json()).set("staging", Json());
  return strategy.set("staged_side", s.relays_host_side ? "host" : "gpu_backed")
      .set("staging", Json::object().set("property", property_name(s.staging->property)).set("what", s.staging->what));
}

Json describe_ceiling(const CopyCeiling& c) {
  Json bounds = Json::array();
  for (const char* path : c.bounds) bounds.push(path);
  return Json::object()
      .set("operation", c.operation)
      .set("bounds", bounds)
      .set("direction", text_or_null(c.direction))
      .set("host_memory", text_or_null(c.host_memory))
      .set("stream_from_bytes", c.stream_from_bytes ? Json(static_cast<long long>(c.stream_from_bytes)) : Json())
      .set("buffers", text_or_null(c.buffers));
}

// What every size-sweep run does unless told otherwise (the options' defaults).
Json describe_run_defaults() {
  const RunSettings defaults;
  return Json::object()
      .set("iters", defaults.iters)
      .set("warmup", defaults.warmup)
      .set("iters_large", defaults.iters_large)
      .set("warmup_large", defaults.warmup_large)
      .set("large_size", defaults.large_size)
      .set("max_seconds", RunSettings::kDefaultMaxSeconds)
      .set("min_samples", RunSettings::kMinSamples)
      .set("window", RunSettings::kDefaultWindow);
}

}  // namespace

std::string mpi_library_version_text() {
  std::string text;
  if (mpi_library_version(text) != MPI_SUCCESS) return "unknown (MPI_Get_library_version failed)";
  return text;
}

Json engine_description(const Platform& platform, const ArgParser& common_options) {
  const BuildInfo& build = build_info();
  Json benchmarks = Json::array(), kinds = Json::array(), collectives = Json::array(), strategies = Json::array(),
       ceilings = Json::array();
  for (const auto& b : Registry::instance().all()) benchmarks.push(describe_benchmark(b));
  for (const auto& k : platform.memory.all()) {
    kinds.push(describe_kind(k, Placement::none, k.description));
    // Placed variants are what --send/--recv/--mem accept: "managed:host", "managed:device".
    if (k.placeable) {
      kinds.push(describe_kind(k, Placement::host, k.description + ", on the host (CPU touch) when MPI is called"));
      kinds.push(describe_kind(k, Placement::device, k.description + ", on the device (kernel touch) when MPI is called"));
    }
  }
  for (const auto& c : coll::collectives()) collectives.push(describe_collective(c));
  for (const auto& s : transfer_strategies()) strategies.push(describe_strategy(s));
  for (const auto& c : copy_ceilings()) ceilings.push(describe_ceiling(c));
  // "plan": gmb-bench plan runs several benchmarks in one launch (plan.hpp), with per-block deadlines
  Json features = Json::object()
                      .set("cuda", build.cuda)
                      .set("nccl", build.nccl)
                      .set("gpu_usable", platform.gpu_unavailable_reason.empty())
                      .set("plan", true);
  if (!platform.gpu_unavailable_reason.empty()) features.set("gpu_reason", platform.gpu_unavailable_reason);
  if (platform.nccl.available()) features.set("nccl_version", platform.nccl.version);
  else features.set("nccl_reason", platform.nccl.unavailable_reason);
  return Json::object()
      .set("schema", kDescriptionSchema)
      .set("version", build.version)
      .set("git_revision", build.git_revision)
      .set("mpi", Json::object()
                      .set("library_version", mpi_library_version_text())
                      .set("library_object", loaded_mpi_library().to_json())
                      .set("features", mpi_features_json()))
      .set("options", describe_options(common_options))
      .set("run_defaults", describe_run_defaults())
      .set("benchmarks", benchmarks)
      .set("memory_kinds", kinds)
      .set("collectives", collectives)
      .set("strategies", strategies)
      .set("ceilings", ceilings)
      .set("environment_prefixes", Json::array_of(recorded_environment_prefixes()))
      .set("features", features);
}

}  // namespace gmb
