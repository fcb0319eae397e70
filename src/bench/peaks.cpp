// SPDX-License-Identifier: BSD-3-Clause
// gmb-bench peaks: native copy ceilings without MPI data movement (MPI only coordinates), the
// "achievable peak" every MPI figure is compared with. Copies are timed with GPU events while a
// busy kernel holds the stream, so that the copies are all queued before the clock starts and
// launch/queuing gaps are not measured (nvbandwidth's method).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "gmb/benchmark.hpp"
#include "gmb/error.hpp"
#include "gmb/numa.hpp"
#include "gmb/stats.hpp"
#include "network_ceiling.hpp"
#include "network_tools.hpp"

namespace gmb {

namespace {

// Long enough to enqueue the copies of one sample behind it.
constexpr double kHoldSeconds = 2e-3;
// Threads of the host copy by default: enough to saturate a socket's memory channels.
constexpr int kMaxHostThreads = 32;
// Parallel TCP streams of the network ceiling at most: a thread and a connection each.
constexpr int kMaxStreams = 64;

class Peaks final : public Benchmark {
 public:
  void add_options(ArgParser& p) override {
    p.value({"--samples"}, "N", "timed samples per ceiling (default 10)",
            [this](const std::string& v) { samples_ = parse_positive_int(v, "sample count"); });
    p.value({"--copies"}, "N", "copies per sample (default 8; the network's samples last --network-seconds instead)",
            [this](const std::string& v) { copies_ = parse_positive_int(v, "copy count"); });
    p.value({"--network-interface"}, "IF", "the interface whose IPv4 address the network ceiling's receiver listens on (default: the first non-loopback IPv4 address that is up)",
            [this](const std::string& v) { network_interface_ = v; });
    std::vector<std::string> tools = {"auto"};
    for (const auto& name : network_tool_names()) tools.push_back(name);
    p.choice_list({"--network-tools"}, tools, "network tool",
                  "which programs measure the network ceiling: auto (default: gmb-tcp and every other one both hosts can run) or a list of them",
                  [this](const std::vector<std::string>& v) {
                    network_tools_ = std::find(v.begin(), v.end(), "auto") != v.end() ? std::vector<std::string>{} : v;
                  });
    p.value({"--network-streams"}, "LIST", "the numbers of TCP streams at once gmb-tcp and iperf3 try, the best kept (default 1,2,4)",
            [this](const std::string& v) { network_streams_ = parse_stream_counts(v); });
    p.value({"--network-seconds"}, "S", "a network stream sample lasts at least S seconds (default 0.25; iperf3 runs whole seconds)",
            [this](const std::string& v) { network_seconds_ = parse_positive_seconds(v, "sample duration"); });
    p.value({"--host-threads"}, "N", "threads for the host-memory copy (default: the fastest of 1, 2, 4, ... up to the NUMA node's CPUs, at most 32)",
            [this](const std::string& v) { host_threads_ = parse_positive_int(v, "thread count"); });
  }
  void configure(const std::vector<std::string>& positionals, int, const Platform&) override {
    if (!positionals.empty()) throw UsageError("peaks takes no positional arguments");
  }
  std::string default_sizes() const override { return "64M"; }
  Json options_json() const override {
    return Json::object()
        .set("samples", samples_)
        .set("copies", copies_)
        .set("host_threads", host_threads_)
        .set("network_interface", network_interface_.empty() ? Json() : Json(network_interface_))
        .set("network_tools", network_tools_.empty() ? Json("auto") : Json(joined(network_tools_)))
        .set("network_streams", joined(network_streams_))
        .set("network_seconds", network_seconds_);
  }
  std::vector<TableColumn> columns() const override {
    return {{"operation", "operation", 0}, {"pair", "metrics.pair", 0}, {"GB/s", "bandwidth_GBps.median", 2}, {"p5_GB/s", "bandwidth_GBps.p5", 2}};
  }

  int run(Context& ctx, RecordSink& sink) override {
    ctx_ = &ctx;
    sink_ = &sink;
    int exit_code = kExitOk;
    const bool gpu_usable = ctx.platform->gpu && ctx.platform->gpu_unavailable_reason.empty();
    // A rank holds two buffers of the size at a time: the two of a host copy, or the two device buffers
    // (and a pinned and a pageable one) of its GPU copies.
    const SizeVerdicts verdicts = size_verdicts(ctx, ctx.settings->sizes, [&](std::size_t bytes) {
      SizeNeeds needs;
      needs.add("2 host buffers", 2 * std::max<std::uint64_t>(bytes, 1), MemorySide::host);
      if (gpu_usable) needs.add("2 device buffers", 2 * std::max<std::uint64_t>(bytes, 1), MemorySide::device);
      return needs;
    });
    for (std::size_t index = 0; index < ctx.settings->sizes.size(); ++index) {
      bytes_ = std::max<std::size_t>(ctx.settings->sizes[index], 1);
      medians_.clear();
      if (deadline_reached(ctx)) {  // a plan's block: the sizes left, one record each
        for (std::size_t left = index; ctx.rank == 0 && left < ctx.settings->sizes.size(); ++left)
          sink.write_result(skipped_record(ctx, ctx.settings->sizes[left], "this size").set("operation", "all"));
        break;
      }
      if (const std::string& refusal = verdicts.refusals[index]; !refusal.empty()) {
        if (ctx.rank == 0) {
          emit_unsupported("host-copy", refusal);
          emit_unsupported("network", refusal);
          emit_unsupported("gpu-copies", refusal);
        }
        exit_code = kExitUnsupported;
        continue;
      }
      host_bandwidth();
      network_ceiling();
      // Without a GPU the host's ceiling is what peaks measures here: the GPU copies' record says why they are
      // missing, as the network's does on one host, and the run is no unsupported configuration (exit 0).
      const std::string why_not = agree_on_reason(ctx.comm, ctx.platform->gpu_unavailable_reason);
      if (!why_not.empty()) {
        if (ctx.rank == 0) emit_unsupported("gpu-copies", why_not);
        print_matrices();
        continue;
      }
      // One rank at a time, so that ranks sharing a host do not compete for its links.
      for (int r = 0; r < ctx.size; ++r) {
        if (r == ctx.rank) local_gpu_copies();
        GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      }
      if (ctx.rank == 0) peer_copies_in_one_process();
      GMB_MPI_CHECK(MPI_Barrier(ctx.comm));
      ipc_copies_between_ranks();
      print_matrices();
    }
    return exit_code;
  }

 private:
  GpuRuntime& gpu() const { return *ctx_->platform->gpu; }
  // The memory a copy needs, by what it is (device, pinned, pageable), never by a kind's name.
  const MemoryKind& kind(const MemoryByProperty& memory) const { return ctx_->platform->memory.require(memory); }

  // Bandwidth samples of `enqueue` (one copy of bytes_), timed with events on `stream`.
  std::vector<double> time_copies(GpuStream stream, bool hold, const std::function<void()>& enqueue) {
    EventOwner start(gpu()), stop(gpu());
    enqueue();  // warm-up: first-touch, peer mappings, lazy loading
    gpu().stream_synchronize(stream);
    Samples per_copy(static_cast<std::size_t>(samples_));
    for (int s = 0; s < samples_; ++s) {
      if (hold) gpu().busy_kernel(kHoldSeconds, stream);
      gpu().record_event(start.get(), stream);
      for (int c = 0; c < copies_; ++c) enqueue();
      gpu().record_event(stop.get(), stream);
      gpu().event_synchronize(stop.get());
      per_copy.add(gpu().elapsed_ms(start.get(), stop.get()) / 1e3 / copies_);
    }
    return per_copy.seconds();
  }

  // `metrics`: the record's metrics when the copy has more than its pair to say (the network copy). An external
  // tool's run moves its own number of messages (metrics.messages_per_run), one run per sample.
  void emit(const std::string& operation, const std::string& pair, const std::vector<double>& seconds,
            const PathInfo& path, const std::string& method, const Json& metrics = Json()) {
    const Json* per_run = metrics.is_null() ? nullptr : metrics.find("messages_per_run");
    const long long batch = per_run ? static_cast<long long>(per_run->as_number()) : copies_;
    Json record = result_record(*ctx_, bytes_)
                      .set("operation", operation)
                      .set("iterations", static_cast<long long>(seconds.size()) * batch)
                      .set("batch", batch)
                      .set("timing", method)
                      .set("time_us", summarize_transformed(seconds, [](double s) { return s * 1e6; }).to_json())
                      .set("bandwidth_GBps", summarize_transformed(seconds, [&](double s) { return bytes_ / s / 1e9; }).to_json())
                      .set("path", path.to_json())
                      .set("metrics", metrics.is_null() ? Json::object().set("pair", pair) : metrics);
    sink_->write_result(record);
    double& cell = medians_[operation][pair];  // the best where several tools measured one pair (the network's)
    cell = std::max(cell, bytes_ / summarize(seconds).median / 1e9);
  }

  void emit_unsupported(const std::string& operation, const std::string& reason, const PathInfo* path = nullptr) {
    Json record = unsupported_record(*ctx_, bytes_, reason).set("operation", operation);
    if (path) record.set("path", path->to_json());
    sink_->write_result(record);
  }

  // Results are written by rank 0; other ranks send theirs there.
  void report(const std::string& operation, const std::string& pair, const std::vector<double>& seconds,
              const PathInfo& path, const std::string& method, const Json& metrics = Json()) {
    if (ctx_->rank == 0) emit(operation, pair, seconds, path, method, metrics);
    else pending_.push_back({operation, pair, seconds, path, method, "", metrics.is_null() ? "" : metrics.dump()});
  }
  void report_unsupported(const std::string& operation, const std::string& reason, const PathInfo& path) {
    if (ctx_->rank == 0) emit_unsupported(operation, reason, &path);
    else pending_.push_back({operation, "", {}, path, "", reason, ""});
  }

  // The readable view of this size's records: one matrix per copy family (rows: source, columns:
  // destination; host-copy: rows are the NUMA node whose CPUs copy, columns the node holding the memory),
  // median GB/s, as nvbandwidth prints them.
  void print_matrices() {
    if (ctx_->rank != 0) return;
    for (const auto& [operation, cells] : medians_) {
      std::vector<std::string> rows, columns;
      auto add = [](std::vector<std::string>& list, const std::string& v) {
        if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
      };
      for (const auto& [pair, value] : cells) {
        const auto arrow = pair.find("->");
        add(rows, pair.substr(0, arrow));
        add(columns, arrow == std::string::npos ? operation : pair.substr(arrow + 2));
      }
      std::sort(rows.begin(), rows.end());
      std::sort(columns.begin(), columns.end());
      std::size_t width = 9;
      for (const auto& v : rows) width = std::max(width, v.size() + 1);
      for (const auto& v : columns) width = std::max(width, v.size() + 1);
      auto cell = [&](const std::string& text) { return std::string(width - std::min(width, text.size()), ' ') + text; };
      sink_->note(operation + ", median GB/s at " + std::to_string(bytes_) + " bytes (rows: source, columns: destination" +
                  (operation.rfind("network", 0) == 0 ? "; the best tool" : "") + ")");
      std::string header = cell("");
      for (const auto& c : columns) header += cell(c);
      sink_->note(header);
      for (const auto& r : rows) {
        std::string line = cell(r);
        for (const auto& c : columns) {
          const auto it = cells.find(c == operation ? r : r + "->" + c);
          char value[32];
          std::snprintf(value, sizeof value, "%.1f", it == cells.end() ? 0.0 : it->second);
          line += cell(it == cells.end() ? "-" : value);
        }
        sink_->note(line);
      }
    }
  }

  void flush_pending_to_rank0() {
    // Each rank in turn tells rank 0 how many results it holds, then sends them field by field.
    for (int r = 1; r < ctx_->size; ++r) {
      int count = ctx_->rank == r ? static_cast<int>(pending_.size()) : 0;
      GMB_MPI_CHECK(MPI_Bcast(&count, 1, MPI_INT, r, ctx_->comm));
      for (int k = 0; k < count; ++k) {
        Pending p = ctx_->rank == r ? pending_[static_cast<std::size_t>(k)] : Pending{};
        for (std::string* field : {&p.operation, &p.pair, &p.path.path_class, &p.path.link, &p.method, &p.reason, &p.metrics})
          *field = bcast(*field, r);
        int n = static_cast<int>(p.seconds.size());
        GMB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, r, ctx_->comm));
        p.seconds.resize(static_cast<std::size_t>(n));
        GMB_MPI_CHECK(MPI_Bcast(p.seconds.data(), n, MPI_DOUBLE, r, ctx_->comm));
        GMB_MPI_CHECK(MPI_Bcast(&p.path.nominal_GBps, 1, MPI_DOUBLE, r, ctx_->comm));
        if (ctx_->rank != 0) continue;
        if (p.reason.empty()) emit(p.operation, p.pair, p.seconds, p.path, p.method, p.metrics.empty() ? Json() : Json::verbatim(p.metrics));
        else emit_unsupported(p.operation, p.reason, &p.path);
      }
    }
    pending_.clear();
  }

  std::string bcast(std::string s, int root) {
    int n = static_cast<int>(s.size());
    GMB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, root, ctx_->comm));
    s.resize(static_cast<std::size_t>(n));
    GMB_MPI_CHECK(MPI_Bcast(s.data(), n, MPI_CHAR, root, ctx_->comm));
    return s;
  }

  std::string gpu_name(int rank) const { return "rank" + std::to_string(rank) + ":" + ctx_->ranks[static_cast<std::size_t>(rank)].gpu_pci; }

  // Copy-engine and SM copies on this rank's GPU.
  void local_gpu_copies() {
    StreamOwner stream(gpu());
    auto device_a = kind(kDeviceMemory).allocate(bytes_);
    auto device_b = kind(kDeviceMemory).allocate(bytes_);
    auto pinned = kind(kPinnedHostMemory).allocate(bytes_);
    auto pageable = kind(kPageableHostMemory).allocate(bytes_);
    device_a->fill(bytes_, 1);
    pinned->fill(bytes_, 2);
    pageable->fill(bytes_, 3);
    const std::string me = gpu_name(ctx_->rank);
    const PathInfo host_device{"host-device", "copy engine over the host link", 0};
    const PathInfo same_gpu{"same-gpu", "inside " + me, 0};
    const std::string held = "GPU events around copies queued behind a busy kernel; per copy";
    const std::string unheld = "GPU events around the copies (pageable: no hold, the host blocks per copy); per copy";
    const GpuStream s = stream.get();
    report("h2d-pinned", "host->" + me, time_copies(s, true, [&] { gpu().copy_async(device_a->data(), pinned->data(), bytes_, s); }), host_device, held);
    report("d2h-pinned", me + "->host", time_copies(s, true, [&] { gpu().copy_async(pinned->data(), device_a->data(), bytes_, s); }), host_device, held);
    report("h2d-pageable", "host->" + me, time_copies(s, false, [&] { gpu().copy_async(device_a->data(), pageable->data(), bytes_, s); }), host_device, unheld);
    report("d2h-pageable", me + "->host", time_copies(s, false, [&] { gpu().copy_async(pageable->data(), device_a->data(), bytes_, s); }), host_device, unheld);
    report("d2d", me + "->" + me, time_copies(s, true, [&] { gpu().copy_async(device_b->data(), device_a->data(), bytes_, s); }), same_gpu, held);
    report("d2d-sm", me + "->" + me, time_copies(s, true, [&] { gpu().sm_copy(device_b->data(), device_a->data(), bytes_, s); }), same_gpu, held + " (SM copy kernel)");
  }

  // Every ordered pair of GPUs visible to rank 0, in one process: copy engine and SM copies.
  void peer_copies_in_one_process() {
    std::string error;
    const int count = gpu().device_count(&error);
    const int home = gpu().current_device_index();
    for (int src = 0; src < count; ++src) {
      for (int dst = 0; dst < count; ++dst) {
        if (src == dst) continue;
        const GpuInfo a = gpu().device_info(src), b = gpu().device_info(dst);
        const std::string pair = "gpu" + std::to_string(src) + "->gpu" + std::to_string(dst);
        if (!gpu().enable_peer_access(src, dst) || !gpu().enable_peer_access(dst, src)) {
          emit_unsupported("p2p-ce", pair + ": no peer access between the two GPUs");
          continue;
        }
        const GpuLink link = gpu().link_between(a.pci_bus_id, b.pci_bus_id);
        const PathInfo path{link.kind, link.detail, link.nominal_GBps};
        gpu().select_device(dst);
        auto target = kind(kDeviceMemory).allocate(bytes_);
        gpu().select_device(src);
        auto source = kind(kDeviceMemory).allocate(bytes_);
        source->fill(bytes_, 4);
        {
          StreamOwner stream(gpu());
          const GpuStream s = stream.get();
          report("p2p-ce", pair, time_copies(s, true, [&] { gpu().copy_async(target->data(), source->data(), bytes_, s); }), path,
                 "copy engine, one process, peer access; GPU events behind a busy kernel; per copy");
          report("p2p-sm", pair, time_copies(s, true, [&] { gpu().sm_copy(target->data(), source->data(), bytes_, s); }), path,
                 "SM copy kernel writing peer memory, one process; GPU events behind a busy kernel; per copy");
        }
        if (auto bad = target->first_mismatch(bytes_, 4))
          GMB_FATAL("peer copy " + pair + " delivered wrong data at byte " + std::to_string(*bad));
        source.reset();
        gpu().select_device(dst);
        target.reset();
        gpu().select_device(home);
      }
    }
  }

  // Every ordered pair of ranks on one host: rank `src` writes into rank `dst`'s buffer through
  // CUDA IPC, as a CUDA-aware MPI does for large intra-node messages.
  void ipc_copies_between_ranks() {
    auto mine = kind(kDeviceMemory).allocate(bytes_);
    mine->fill(bytes_, 5);
    const std::string handle = gpu().ipc_export(mine->data());
    for (int src = 0; src < ctx_->size; ++src) {
      for (int dst = 0; dst < ctx_->size; ++dst) {
        if (src == dst || ctx_->ranks[static_cast<std::size_t>(src)].host != ctx_->ranks[static_cast<std::size_t>(dst)].host) continue;
        const std::string peer_handle = bcast(ctx_->rank == dst ? handle : std::string(), dst);
        if (ctx_->rank == src) {
          const PathInfo path = ctx_->path_between(src, true, dst, true);
          if (path.path_class == "same-gpu") {
            // cudaIpcOpenMemHandle refuses a handle from the same device: nothing to measure.
          } else {
            void* peer = gpu().ipc_open(peer_handle);
            auto source = kind(kDeviceMemory).allocate(bytes_);
            source->fill(bytes_, 6);
            StreamOwner stream(gpu());
            const GpuStream s = stream.get();
            report("p2p-ipc", gpu_name(src) + "->" + gpu_name(dst),
                   time_copies(s, true, [&] { gpu().copy_async(peer, source->data(), bytes_, s); }), path,
                   "copy engine into another process's buffer through CUDA IPC; GPU events behind a busy kernel; per copy");
            gpu().synchronize();
            gpu().ipc_close(peer);
          }
        }
        GMB_MPI_CHECK(MPI_Barrier(ctx_->comm));
      }
    }
    flush_pending_to_rank0();
  }

  // The network between the first ranks of every two hosts, one pair and one tool at a time: the engine's own
  // TCP streams and the external tools (--network-tools), over host buffers ("network"), then over GPU buffers
  // on both sides by the tools that measure them ("network-device": where the pair has GPUs or such a tool could
  // run). Each measured record lists the tools that did not measure that pair and why; a pair none could measure
  // gets one unsupported record with every reason. On one host, the reason nothing is measured.
  void network_ceiling() {
    const PathInfo inter_node{"inter-node", "the network between two hosts", 0};
    const std::vector<NetworkPair> pairs = network_pairs(ctx_->ranks);
    if (pairs.empty()) {
      if (ctx_->rank == 0)
        emit_unsupported("network", "all " + std::to_string(ctx_->size) + " ranks run on one host (" + ctx_->ranks[0].host +
                                        "): the network ceiling needs ranks on two hosts", &inter_node);
      return;
    }
    NetworkSettings settings{bytes_, samples_, network_streams_, network_seconds_, network_interface_, false, cuda_device()};
    const std::vector<std::string> names = network_tools_.empty() ? network_tool_names() : network_tools_;
    std::vector<std::string> gpu_tools;
    for (const auto& name : names)
      if (name != "gmb-tcp" && external_tool(name).measures_gpu_buffers()) gpu_tools.push_back(name);
    for (const NetworkPair& pair : pairs) {
      settings.device_memory = false;
      measure_pair("network", pair, names, settings, true);
      const bool gpus = !ctx_->ranks[static_cast<std::size_t>(pair.sender)].gpu_pci.empty() &&
                        !ctx_->ranks[static_cast<std::size_t>(pair.receiver)].gpu_pci.empty();
      settings.device_memory = true;
      measure_pair("network-device", pair, gpu_tools, settings, gpus);
      GMB_MPI_CHECK(MPI_Barrier(ctx_->comm));
    }
    flush_pending_to_rank0();
  }

  // One pair, one buffer placement, every tool of `names` in turn. `always_record`: a pair none could measure gets
  // an unsupported record even where no tool could run (else only where one ran and failed).
  void measure_pair(const std::string& operation, const NetworkPair& pair, const std::vector<std::string>& names,
                    const NetworkSettings& settings, bool always_record) {
    const PathInfo inter_node{"inter-node", "the network between two hosts", 0};
    std::vector<NetworkResult> measured;
    Json not_used = Json::object();
    std::string reasons;
    bool attempted = false;
    for (const std::string& name : names) {
      NetworkResult result = name == "gmb-tcp" ? measure_network(*ctx_, pair, settings) : measure_with_tool(*ctx_, pair, external_tool(name), settings);
      attempted = attempted || result.attempted;
      if (ctx_->rank != pair.sender) continue;
      if (result.refusal.empty()) {
        measured.push_back(std::move(result));
      } else {
        not_used.set(name, result.refusal);
        reasons += (reasons.empty() ? "" : "; ") + name + ": " + result.refusal;
      }
    }
    if (ctx_->rank != pair.sender) return;
    if (measured.empty() && (always_record || attempted))
      report_unsupported(operation, "no tool measured the network" + std::string(settings.device_memory ? " with GPU buffers" : "") + ": " +
                                        (reasons.empty() ? "none of --network-tools measures GPU buffers" : reasons),
                         inter_node);
    for (NetworkResult& result : measured) {
      result.metrics.set("tools_not_used", not_used);
      report(operation, *result.metrics.find("pair")->as_string(), result.seconds, result.path, result.method, result.metrics);
    }
  }

  // This rank's GPU as CUDA_VISIBLE_DEVICES names it, for a tool measuring GPU buffers: its UUID where the engine
  // knows it, else the first GPU visible to the rank.
  std::string cuda_device() const {
    const std::string& uuid = ctx_->ranks[static_cast<std::size_t>(ctx_->rank)].gpu_uuid;
    if (!uuid.empty()) return uuid;
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string first = visible ? std::string(visible).substr(0, std::string(visible).find(',')) : "";
    return first.empty() ? "0" : first;
  }

  static const NetworkTool& external_tool(const std::string& name) {
    for (const auto& tool : external_network_tools())
      if (tool->name() == name) return *tool;
    throw UsageError("unknown network tool " + name);  // --network-tools admits only known names
  }

  // --network-streams: whole numbers from 1 to kMaxStreams, in order, each once.
  static std::vector<int> parse_stream_counts(const std::string& value) {
    std::vector<int> counts;
    std::stringstream items(value);
    for (std::string item; std::getline(items, item, ',');) {
      char* end = nullptr;
      const long count = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || count < 1 || count > kMaxStreams)
        throw UsageError("bad stream count '" + item + "' in '" + value + "' (accepted: a comma-separated list of whole numbers from 1 to " +
                         std::to_string(kMaxStreams) + ", e.g. 1,2,4)");
      if (std::find(counts.begin(), counts.end(), count) == counts.end()) counts.push_back(static_cast<int>(count));
    }
    if (counts.empty()) throw UsageError("an empty list (accepted: a comma-separated list of whole numbers from 1 to " + std::to_string(kMaxStreams) + ", e.g. 1,2,4)");
    return counts;
  }

  template <typename T>
  static std::string joined(const std::vector<T>& items) {
    std::ostringstream text;
    for (std::size_t k = 0; k < items.size(); ++k) text << (k ? "," : "") << items[k];
    return text.str();
  }

  // STREAM-like copy of host memory by several threads (each thread copies its own slice), on the
  // first rank of every host: for every NUMA node with CPUs (who copies) and every node with memory
  // (where both buffers live), so that local and cross-socket host bandwidth are both measured.
  void host_bandwidth() {
    const auto& me = ctx_->ranks[static_cast<std::size_t>(ctx_->rank)];
    const std::vector<int> firsts = first_rank_of_each_host(ctx_->ranks);
    if (std::find(firsts.begin(), firsts.end(), ctx_->rank) != firsts.end()) {
      std::vector<NumaNode> nodes = numa_nodes();
      if (nodes.empty()) {  // no NUMA information: one node with every online CPU
        NumaNode all{0, {}, true};
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c) all.cpus.push_back(static_cast<int>(c));
        nodes.push_back(all);
      }
      const bool one_node = nodes.size() == 1;
      for (const auto& cpu_node : nodes) {
        if (cpu_node.cpus.empty()) continue;
        for (const auto& memory_node : nodes)
          if (memory_node.has_memory) host_copy(me.host, cpu_node, memory_node, one_node);
      }
    }
    flush_pending_to_rank0();
  }

  void host_copy(const std::string& host, const NumaNode& cpu_node, const NumaNode& memory_node, bool one_node) {
    // The node's CPUs, whatever the launcher bound this rank to: the ceiling is the node's, not one core's.
    const std::vector<int>& cpus = cpu_node.cpus;
    const std::vector<int> thread_counts = host_thread_counts(static_cast<int>(cpus.size()));
    const std::string pair = "numa" + std::to_string(cpu_node.id) + "->numa" + std::to_string(memory_node.id);
    const bool local = cpu_node.id == memory_node.id;
    const std::string operation = local ? "host-copy" : "host-copy-remote";
    const PathInfo path{local ? "host" : "cross-socket",
                        local ? "host memory on NUMA node " + std::to_string(memory_node.id)
                              : "CPUs of NUMA node " + std::to_string(cpu_node.id) + ", memory on node " + std::to_string(memory_node.id),
                        0};
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t length = (bytes_ + page - 1) / page * page;
    MappedHostMemory a(length), b(length);
    std::string problem = a.error.empty() ? b.error : a.error;
    if (problem.empty() && !one_node) {
      problem = bind_memory_to_node(a.data, length, memory_node.id);
      if (problem.empty()) problem = bind_memory_to_node(b.data, length, memory_node.id);
    }
    if (!problem.empty()) {
      report_unsupported(operation, pair + " on " + host + ": " + problem, path);
      return;
    }
    std::memset(a.data, 1, length);  // first touch of every page (placed by the binding above)
    // Per thread count, the samples; the ceiling is the count whose median copy is fastest.
    std::vector<double> best;
    double best_median = 0;
    int best_threads = 0;
    for (const int threads : thread_counts) {
      HostCopyCrew crew(threads, cpus, b.data, a.data, bytes_);
      crew.copy(1);  // the destination's first touch, and the threads' binding
      if (!crew.bind_problem().empty()) {
        report_unsupported(operation, pair + " on " + host + ": " + crew.bind_problem(), path);
        return;
      }
      Samples per_copy(static_cast<std::size_t>(samples_));
      for (int s = 0; s < samples_; ++s) per_copy.time([&] { crew.copy(copies_); }, copies_);
      const double median = summarize(per_copy.seconds()).median;
      if (best.empty() || median < best_median) {
        best = per_copy.seconds();
        best_median = median;
        best_threads = threads;
      }
    }
    const std::string copiers = std::to_string(best_threads) + (best_threads == 1 ? " thread" : " threads");
    report(operation, pair, best, path,
           "host clock around memcpy by " + copiers + " bound to NUMA node " + std::to_string(cpu_node.id) +
               thread_choice(thread_counts) + ", both buffers on node " + std::to_string(memory_node.id) + " (" + host +
               "; bytes copied: read+write traffic is twice that)");
  }

  // --host-threads N: N alone. Otherwise 1, 2, 4, ... up to the node's CPUs (at most kMaxHostThreads): many threads
  // saturate the memory channels at large sizes, but waking them costs more than a small copy takes, where fewer win.
  std::vector<int> host_thread_counts(int node_cpus) const {
    if (host_threads_) return {host_threads_};
    const int most = std::clamp(node_cpus, 1, kMaxHostThreads);
    std::vector<int> counts;
    for (int t = 1; t < most; t *= 2) counts.push_back(t);
    counts.push_back(most);
    return counts;
  }
  static std::string thread_choice(const std::vector<int>& counts) {
    if (counts.size() == 1) return "";
    std::string list;
    for (const int t : counts) list += (list.empty() ? "" : ", ") + std::to_string(t);
    return " (the fastest of " + list + " threads)";
  }

  // Threads that copy their slices of a host buffer when asked, created (and bound) once: a sample
  // times copies, not thread creation, which dominated 1 MiB copies by 32 threads (0.7 GB/s).
  class HostCopyCrew {
   public:
    HostCopyCrew(int threads, const std::vector<int>& cpus, void* dst, const void* src, std::size_t bytes) {
      const std::size_t slice = (bytes + threads - 1) / threads;
      for (int t = 0; t < threads; ++t) {
        const std::size_t off = std::min(bytes, slice * t), len = std::min(slice, bytes - off);
        workers_.emplace_back([this, &cpus, dst, src, off, len] { work(cpus, static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, len); });
      }
    }
    ~HostCopyCrew() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      start_.notify_all();
      for (auto& w : workers_) w.join();
    }
    HostCopyCrew(const HostCopyCrew&) = delete;
    HostCopyCrew& operator=(const HostCopyCrew&) = delete;

    // Every thread copies its slice `repetitions` times; returns when all have.
    void copy(int repetitions) {
      std::unique_lock<std::mutex> lock(mutex_);
      repetitions_ = repetitions;
      busy_ = static_cast<int>(workers_.size());
      ++round_;
      start_.notify_all();
      done_.wait(lock, [this] { return busy_ == 0; });
    }
    std::string bind_problem() {
      std::lock_guard<std::mutex> lock(mutex_);
      return bind_problem_;
    }

   private:
    void work(const std::vector<int>& cpus, char* dst, const char* src, std::size_t len) {
      const std::string bound = bind_this_thread(cpus);
      long seen = 0;
      for (;;) {
        int repetitions = 0;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!bound.empty()) bind_problem_ = bound;
          start_.wait(lock, [&] { return stop_ || round_ != seen; });
          if (stop_) return;
          seen = round_;
          repetitions = repetitions_;
        }
        for (int r = 0; r < repetitions; ++r) std::memcpy(dst, src, len);
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0) done_.notify_one();
      }
    }

    std::mutex mutex_;
    std::condition_variable start_, done_;
    long round_ = 0;
    int repetitions_ = 0, busy_ = 0;
    bool stop_ = false;
    std::string bind_problem_;
    std::vector<std::thread> workers_;
  };

  // Anonymous pages, so that they can be bound to a NUMA node before the first touch.
  struct MappedHostMemory {
    explicit MappedHostMemory(std::size_t bytes) : length(bytes) {
      data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (data == MAP_FAILED) {
        data = nullptr;
        error = "mmap of " + std::to_string(length) + " bytes failed: " + std::strerror(errno);
      }
    }
    ~MappedHostMemory() {
      if (data) munmap(data, length);
    }
    MappedHostMemory(const MappedHostMemory&) = delete;
    MappedHostMemory& operator=(const MappedHostMemory&) = delete;
    void* data = nullptr;
    std::size_t length;
    std::string error;
  };

  struct Pending {
    std::string operation, pair;
    std::vector<double> seconds;
    PathInfo path;
    std::string method;
    std::string reason;   // not empty: an unsupported result
    std::string metrics;  // the record's metrics, as dumped JSON; empty: the pair alone
  };

  int samples_ = 10, copies_ = 8, host_threads_ = 0;
  std::string network_interface_;
  std::vector<std::string> network_tools_;  // empty: auto
  std::vector<int> network_streams_ = {1, 2, 4};
  double network_seconds_ = 0.25;
  std::size_t bytes_ = 0;
  Context* ctx_ = nullptr;
  RecordSink* sink_ = nullptr;
  std::vector<Pending> pending_;
  std::map<std::string, std::map<std::string, double>> medians_;  // rank 0: operation -> pair -> GB/s
};

const Registration peaks_registration({"peaks", "native copy ceilings: host<->device, device, peer (CE, SM, IPC), host memory, network (gmb-tcp, iperf3, ucx_perftest, ib_write_bw, fi_pingpong)",
                                       1, 0, false, [] { return std::make_unique<Peaks>(); },
                                       {Family::peaks, {Statistic::time_us, Statistic::bandwidth_GBps}, Statistic::bandwidth_GBps}});

}  // namespace

}  // namespace gmb
