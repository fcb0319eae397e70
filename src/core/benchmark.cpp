// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/benchmark.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "gmb/collectives.hpp"
#include "gmb/error.hpp"

namespace gmb {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(BenchmarkInfo info) { benchmarks_.push_back(std::move(info)); }

const BenchmarkInfo* Registry::find(const std::string& name) const {
  for (const auto& b : benchmarks_)
    if (b.name == name) return &b;
  return nullptr;
}

const char* directions_name(Directions d) {
  switch (d) {
    case Directions::none: return nullptr;
    case Directions::uni: return "uni";
    case Directions::bi: return "bi";
  }
  return nullptr;
}

Positionals pair_letters() {
  return {"SEND RECV",
          "OMB's buffer letters of the two sides, e.g. D D: H host, P pinned, D device, M managed, MH / MD managed on "
          "the host / device (or --send KIND --recv KIND)",
          true};
}

Positionals collective_operations() {
  return {"OP", "an operation (" + coll::collective_names() + "), a comma-separated list of them, or all"};
}

const char* family_name(Family family) {
  switch (family) {
    case Family::pt2pt: return "pt2pt";
    case Family::multi_pair: return "multi-pair";
    case Family::collective: return "collective";
    case Family::nbc: return "nbc";
    case Family::managed: return "managed";
    case Family::rma: return "rma";
    case Family::partitioned: return "partitioned";
    case Family::halo: return "halo";
    case Family::peaks: return "peaks";
    case Family::doctor: return "doctor";
  }
  return "?";
}

const char* statistic_name(Statistic statistic) {
  switch (statistic) {
    case Statistic::time_us: return "time_us";
    case Statistic::bandwidth_GBps: return "bandwidth_GBps";
    case Statistic::busbw_GBps: return "busbw_GBps";
    case Statistic::message_rate_Mps: return "message_rate_Mps";
  }
  return "?";
}

const std::vector<Statistic>& all_statistics() {
  static const std::vector<Statistic> all = {Statistic::time_us, Statistic::bandwidth_GBps, Statistic::busbw_GBps,
                                             Statistic::message_rate_Mps};
  return all;
}

PathInfo Context::path_between(int rank_a, bool gpu_backed_a, int rank_b, bool gpu_backed_b) const {
  LinkQuery link;
  if (platform && platform->gpu && platform->gpu_unavailable_reason.empty())
    link = [this](const std::string& a, const std::string& b) { return platform->gpu->link_between(a, b); };
  return classify_path(ranks.at(static_cast<std::size_t>(rank_a)), gpu_backed_a, ranks.at(static_cast<std::size_t>(rank_b)),
                       gpu_backed_b, link);
}

PathInfo Context::path_among(const std::vector<bool>& gpu_backed) const {
  std::map<std::string, int> pairs_per_class;
  PathInfo shared;
  for (int a = 0; a < size; ++a)
    for (int b = a + 1; b < size; ++b) {
      const PathInfo p = path_between(a, gpu_backed.at(static_cast<std::size_t>(a)), b, gpu_backed.at(static_cast<std::size_t>(b)));
      if (pairs_per_class.empty() || (p.nominal_GBps > 0 && p.nominal_GBps < shared.nominal_GBps)) shared = p;
      ++pairs_per_class[p.path_class];
    }
  if (pairs_per_class.size() <= 1) return shared;  // one rank: an empty path
  PathInfo mixed;
  mixed.path_class = "mixed";
  for (const auto& [name, count] : pairs_per_class)
    mixed.link += (mixed.link.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  return mixed;
}

std::string rank_count_problem(const BenchmarkInfo& info, int world_size) {
  const std::string have = " (launched with " + std::to_string(world_size) + ")";
  if (info.max_ranks && info.min_ranks == info.max_ranks && world_size != info.min_ranks)
    return info.name + " needs exactly " + std::to_string(info.min_ranks) + " ranks" + have;
  if (world_size < info.min_ranks) return info.name + " needs at least " + std::to_string(info.min_ranks) + " ranks" + have;
  if (info.max_ranks && world_size > info.max_ranks)
    return info.name + " needs at most " + std::to_string(info.max_ranks) + " ranks" + have;
  if (info.even_ranks && world_size % 2) return info.name + " needs an even number of ranks" + have;
  return "";
}

void add_precision_options(ArgParser& parser, RunSettings& settings) {
  parser.value({"--precision"}, "FRACTION",
               "adaptive repetitions: stop a size once the 95% confidence interval of its median is within "
               "+-FRACTION of it (0.03 or 3%), or at a cap: --iters / --iters-large iterations, --max-seconds "
               "(default: fixed iterations)",
               [&settings](const std::string& v) { settings.precision = parse_precision(v); });
  parser.value({"--max-seconds"}, "S",
               "with --precision: the timed seconds a size may take before it stops unconverged (default 1)",
               [&settings](const std::string& v) { settings.max_seconds = parse_positive_seconds(v, "time cap"); });
}

bool measures_bandwidth(const BenchmarkInfo& info) {
  return info.directions != Directions::none && info.records.headline == Statistic::bandwidth_GBps;
}

std::string size_meaning_problem(const BenchmarkInfo& info, std::uint64_t bytes) {
  if (bytes == 0 && measures_bandwidth(info)) return "a bandwidth of 0-byte messages is not defined; latency measures 0 B";
  return "";
}

std::string precision_problem(const BenchmarkInfo& info, const Benchmark& bench, const RunSettings& settings) {
  if (settings.max_seconds > 0 && !settings.adaptive())
    return "--max-seconds caps adaptive repetitions and needs --precision (without it every size runs its fixed "
           "--iters / --iters-large iterations)";
  if (settings.adaptive() && !bench.takes_precision()) {
    std::string takers;
    for (const auto& b : Registry::instance().all())
      if (b.make()->takes_precision()) takers += (takers.empty() ? "" : ", ") + b.name;
    return "--precision: " + info.name + " does not time its points through the size-sweep runner, the one loop "
           "that repeats adaptively (accepted by: " + takers + ")";
  }
  return "";
}

Json result_record(const Context& ctx, std::size_t bytes) {
  return Json::object()
      .set("schema", "gmb.record/1")
      .set("type", "result")
      .set("run_id", ctx.run_id)
      .set("benchmark", ctx.benchmark)
      .set("status", "ok")
      .set("bytes", bytes);
}

Json unsupported_record(const Context& ctx, std::size_t bytes, const std::string& reason) {
  return result_record(ctx, bytes).set("status", "unsupported").set("reason", reason);
}

bool deadline_reached(const Context& ctx) {
  if (ctx.deadline <= 0) return false;
  int past = ctx.rank == 0 && MPI_Wtime() >= ctx.deadline ? 1 : 0;
  GMB_MPI_CHECK(MPI_Bcast(&past, 1, MPI_INT, 0, ctx.comm));
  if (past) ctx.deadline_passed = true;
  return past != 0;
}

std::string deadline_reason(const std::string& what) {
  return "the plan's deadline for this block passed before " + what;
}

Json skipped_record(const Context& ctx, std::size_t bytes, const std::string& what) {
  return result_record(ctx, bytes).set("status", "skipped").set("reason", deadline_reason(what));
}

void set_validation(Json& record, bool validated, const std::string& error, const std::string& what) {
  if (!validated) {
    record.set("validation", "off");
  } else if (error.empty()) {
    record.set("validation", "passed");
  } else {
    record.set("validation", "failed").set("validation_error", error).set("status", "failed");
    std::fprintf(stderr, "gmb-bench: validation failed (%s): %s\n", what.c_str(), error.c_str());
  }
}

std::uint32_t validation_seed(std::size_t size_index, int checked) {
  return static_cast<std::uint32_t>(size_index * 1000003u + static_cast<std::uint32_t>(checked) + 1u);
}

void reserve_buffers(const Context& ctx, const std::vector<std::uint64_t>& sizes,
                     const std::function<void(std::size_t bytes)>& setup, const std::function<void()>& teardown) {
  if (ctx.buffers->allocation() != BufferAllocation::once_per_launch) return;
  std::vector<std::uint64_t> largest_first(sizes);
  std::sort(largest_first.rbegin(), largest_first.rend());
  largest_first.erase(std::unique(largest_first.begin(), largest_first.end()), largest_first.end());
  for (const std::uint64_t bytes : largest_first) {
    // Every rank tries the same sizes in the same order: setups may be collective.
    const std::string problem = agreed_refusal(ctx.comm, [&] { setup(bytes); });
    teardown();
    if (problem.empty()) return;
  }
}

MemoryBudget memory_budget(const Context& ctx) {
  MemoryBudget budget;
  budget.limit = ctx.settings ? ctx.settings->memory_limit : 0;
  const RankFacts me = ctx.ranks.empty() ? RankFacts{} : ctx.ranks.at(static_cast<std::size_t>(ctx.rank));
  int on_host = 0, on_gpu = 0;
  for (const RankFacts& r : ctx.ranks) {
    on_host += r.host == me.host ? 1 : 0;
    on_gpu += on_one_gpu(r, me) ? 1 : 0;
  }
  auto sharing = [](int ranks, const std::string& where, std::uint64_t reusable) {
    std::string text = " less a " + std::to_string(kMemoryMarginPercent) + "% margin, shared by " + std::to_string(std::max(ranks, 1)) +
                       (ranks > 1 ? " ranks" : " rank") + where;
    if (reusable) text += ", plus " + readable_bytes(reusable) + " this rank already holds for reuse";
    return text;
  };
  std::string source;
  if (const auto available = host_memory_available(&source)) {
    const std::uint64_t reusable = ctx.buffers ? ctx.buffers->free_bytes(MemorySide::host) : 0;
    budget.host_bytes = share_of(*available, on_host, reusable);
    budget.host_source = source + sharing(on_host, " on host " + me.host, reusable);
  }
  if (ctx.platform && ctx.platform->gpu && ctx.platform->gpu_unavailable_reason.empty()) {
    const std::uint64_t free_bytes = ctx.platform->gpu->free_memory();
    const std::uint64_t reusable = ctx.buffers ? ctx.buffers->free_bytes(MemorySide::device) : 0;
    budget.device_bytes = share_of(free_bytes, on_gpu, reusable);
    budget.device_source = readable_bytes(free_bytes) + " free on GPU " + me.gpu_pci + sharing(on_gpu, " of it", reusable);
  }
  return budget;
}

SizeVerdicts size_verdicts(const Context& ctx, const std::vector<std::uint64_t>& sizes,
                           const std::function<SizeNeeds(std::size_t bytes)>& needs_at) {
  const MemoryBudget budget = memory_budget(ctx);
  const BenchmarkInfo* info = Registry::instance().find(ctx.benchmark);
  SizeVerdicts verdicts;
  for (const std::uint64_t bytes : sizes) {
    std::string refusal = info ? size_meaning_problem(*info, bytes) : "";
    if (refusal.empty()) refusal = size_refusal(needs_at(bytes), budget);
    // Every rank must agree: a rank that skipped a size its peers measure would leave them waiting.
    verdicts.refusals.push_back(agree_on_reason(ctx.comm, refusal));
    if (verdicts.refusals.back().empty()) verdicts.measurable.push_back(bytes);
  }
  return verdicts;
}

}  // namespace gmb
