// SPDX-License-Identifier: BSD-3-Clause
#include "network_tools.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "gmb/json.hpp"
#include "gmb/subprocess.hpp"
#include "network_ceiling.hpp"

namespace gmb {

namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool parse_number(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end && end != text.c_str() && *end == '\0';
}

std::string environment_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string not_on_path(const std::string& program) {
  return find_program(program).empty() ? program + " is not on PATH" : "";
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// The line a figure was read from, trimmed, for a refusal that quotes it.
std::string trimmed(const std::string& line) {
  const std::size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// A short tail of a tool's output for an error message.
std::string tail(const std::string& text) {
  const std::size_t keep = 300;
  return text.size() <= keep ? text : "..." + text.substr(text.size() - keep);
}

// iperf3: TCP streams for a time (-t, whole seconds) in writes of -l bytes with TCP_NODELAY (-N), as gmb-tcp
// writes (kStreamWriteBytes, or the message size where smaller); the receiver's figure from its JSON report (-J).
// Several streams run as as many iperf3 pairs at once: before 3.16 one iperf3 serves all its -P streams from one thread, which a second stream saturates
// long before a fast link (Debian 12's 3.12: 4.0 GB/s on one stream, 4.5 on -P 2, 7.3 as two processes).
class Iperf3 final : public NetworkTool {
 public:
  std::string name() const override { return "iperf3"; }
  std::string method() const override {
    return "iperf3 TCP streams (one iperf3 client and server per stream, all at once; -t seconds, -l write bytes as gmb-tcp "
           "writes, -N TCP_NODELAY as gmb-tcp sets); the "
           "bytes the receivers got over their time (the JSON reports' end.sum_received, bits/s = 1/8 byte/s, summed "
           "over the streams), one run per sample";
  }
  std::string unavailable() const override { return not_on_path("iperf3"); }
  bool parallel_streams() const override { return true; }
  bool one_process_per_stream() const override { return true; }
  ToolCommand server(const ToolRun&, int port) const override {
    return {{"iperf3", "-s", "-1", "-p", std::to_string(port)}, {}, device()};  // -1: one test, then exit
  }
  ToolCommand client(const ToolRun& run, int port, const std::string& address) const override {
    return {{"iperf3", "-c", address, "-p", std::to_string(port), "-P", std::to_string(run.streams), "-t", std::to_string(whole_seconds(run)),
             "-l", std::to_string(std::min(run.bytes, kStreamWriteBytes)), "-N", "-J"},
            {},
            device()};
  }
  ToolReading read(const std::string& output, const ToolRun&) const override {
    std::string error;
    const std::optional<Json> report = Json::parse(output, &error);
    if (!report) return {0, 0, "", "iperf3's output is not the JSON report -J prints (" + error + "): " + tail(output)};
    if (const Json* said = report->find("error"); said && said->as_string()) return {0, 0, "", "iperf3 said: " + *said->as_string()};
    const Json* end = report->find("end");
    const Json* received = end ? end->find("sum_received") : nullptr;
    const Json* bits = received ? received->find("bits_per_second") : nullptr;
    if (!bits || !bits->is_number())
      return {0, 0, "", "no end.sum_received.bits_per_second in iperf3's JSON report: " + tail(output)};
    const Json* bytes = received->find("bytes");
    const Json* seconds = received->find("seconds");
    const std::string printed = "end.sum_received: bits_per_second " + number_text(bits->as_number()) +
                                (bytes ? ", bytes " + number_text(bytes->as_number()) : "") +
                                (seconds ? ", seconds " + number_text(seconds->as_number()) : "");
    return {bits->as_number() / 8e9, bytes ? bytes->as_number() : 0, printed, ""};
  }
  std::vector<std::string> version_command() const override { return {"iperf3", "--version"}; }

  // iperf3 3.x reads -t as a whole number (0 would run forever): at least one second.
  static int whole_seconds(const ToolRun& run) { return std::max(1, static_cast<int>(std::ceil(run.seconds))); }

 private:
  static std::string device() { return "the kernel's route to the receiver's address (TCP)"; }
};

// Why this process's ucx_perftest cannot measure GPU buffers, "" when it can: asked of `ucx_perftest -h` once.
const std::string& ucx_perftest_gpu_buffers_problem() {
  static const std::string problem = [] {
    ChildProcess help({"ucx_perftest", "-h"}, {}, "ucx_perftest -h");
    const bool ended = help.wait(20);
    return ucx_perftest_gpu_buffers_problem_in(help.output(), ended ? (help.succeeded() ? "" : help.exit_description())
                                                                    : "it did not end within 20 s");
  }();
  return problem;
}

// UCX's ucx_perftest: tag_bw, a window of tag-matched sends, over UCX's network transports only (shared
// memory and CUDA IPC would reach the other "host" where two emulated hosts share one kernel); host buffers,
// or GPU buffers on both sides (-m cuda) where its UCX can allocate them.
class UcxPerftest final : public NetworkTool {
 public:
  std::string name() const override { return "ucx_perftest"; }
  std::string method() const override {
    return "ucx_perftest tag_bw (UCP tag-matched sends, a window in flight); the client's overall bandwidth per run "
           "(MB/s = 2^20 bytes/s), one run per sample";
  }
  std::string unavailable() const override { return not_on_path("ucx_perftest"); }
  bool measures_gpu_buffers() const override { return true; }
  std::string gpu_buffers_unavailable() const override {
    if (std::string why = unavailable(); !why.empty()) return why;
    return ucx_perftest_gpu_buffers_problem();
  }
  ToolCommand server(const ToolRun& run, int port) const override {
    return {{"ucx_perftest", "-p", std::to_string(port)}, environment(run), device(run)};
  }
  ToolCommand client(const ToolRun& run, int port, const std::string& address) const override {
    std::vector<std::string> argv = {"ucx_perftest", address, "-p", std::to_string(port), "-t", "tag_bw", "-s", std::to_string(run.bytes), "-n",
                                     std::to_string(run.iterations), "-w", std::to_string(std::max(1, run.iterations / 10))};
    if (run.device_memory) argv.insert(argv.end(), {"-m", "cuda"});  // both sides (the server takes the client's)
    return {argv, environment(run), device(run)};
  }
  ToolReading read(const std::string& output, const ToolRun&) const override {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = words(line);
      // Final: iterations, overhead 50%ile/average/overall (us), bandwidth average/overall (MB/s), rate ...
      double mb = 0;
      if (w.size() >= 7 && w[0] == "Final:" && parse_number(w[6], &mb)) return {mb * 1048576.0 / 1e9, 0, trimmed(line), ""};
    }
    return {0, 0, "", "no 'Final:' line with a bandwidth in ucx_perftest's output: " + tail(output)};
  }
  std::vector<std::string> version_command() const override { return {"ucx_info", "-v"}; }

 private:
  static std::map<std::string, std::string> environment(const ToolRun& run) {
    std::map<std::string, std::string> out;
    if (environment_value("UCX_TLS").empty()) out["UCX_TLS"] = "^sm,cuda_ipc";  // else the user's choice stands
    // ucx_perftest picks GPU (its rank 0 or 1) modulo the visible ones: shown one, it uses the rank's own.
    if (run.device_memory) out["CUDA_VISIBLE_DEVICES"] = run.cuda_device;
    return out;
  }
  static std::string device(const ToolRun& run) {
    const std::string chosen = environment_value("UCX_NET_DEVICES");
    const std::string tls = environment_value("UCX_TLS");
    return (chosen.empty() ? std::string("UCX's choice of network device") : "UCX_NET_DEVICES=" + chosen) +
           (tls.empty() ? ", UCX_TLS=^sm,cuda_ipc (network transports only)" : ", UCX_TLS=" + tls + " (as set)") +
           (run.device_memory ? ", GPU buffers (-m cuda) on CUDA device " + run.cuda_device : "");
  }
};

// The RDMA devices of this host (sysfs), sorted.
std::vector<std::string> verbs_devices() {
  std::vector<std::string> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband", error)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// perftest's ib_write_bw: RDMA writes over one verbs device, the one the library was told to use
// (UCX_NET_DEVICES, NCCL_IB_HCA: its first device) when it is present here, else the first.
class IbWriteBw final : public NetworkTool {
 public:
  std::string name() const override { return "ib_write_bw"; }
  std::string method() const override {
    return "ib_write_bw RDMA writes (one queue pair), host memory; the client's average bandwidth per run "
           "(--report_gbits: 1e9 bits/s), one run per sample";
  }
  std::string unavailable() const override {
    if (std::string why = not_on_path("ib_write_bw"); !why.empty()) return why;
    if (verbs_devices().empty()) return "no RDMA (verbs) device in /sys/class/infiniband";
    return "";
  }
  ToolCommand server(const ToolRun& run, int port) const override { return command(run, port); }
  ToolCommand client(const ToolRun& run, int port, const std::string& address) const override {
    ToolCommand c = command(run, port);
    c.argv.push_back(address);
    return c;
  }
  ToolReading read(const std::string& output, const ToolRun& run) const override {
    const std::size_t bytes = run.bytes;
    std::istringstream in(output);
    double to_GBps = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("BW average[") != std::string::npos) {
        to_GBps = line.find("Gb/sec") != std::string::npos ? 1.0 / 8.0 : 1048576.0 / 1e9;
        continue;
      }
      const std::vector<std::string> w = words(line);
      double size = 0, average = 0;
      // #bytes #iterations BW peak BW average MsgRate
      if (to_GBps > 0 && w.size() >= 4 && parse_number(w[0], &size) && size == static_cast<double>(bytes) && parse_number(w[3], &average))
        return {average * to_GBps, 0, trimmed(line), ""};
    }
    return {0, 0, "", "no result line for " + std::to_string(bytes) + " bytes under a 'BW average' heading in ib_write_bw's output: " + tail(output)};
  }
  std::vector<std::string> version_command() const override { return {"ib_write_bw", "--version"}; }
  int iterations(std::size_t bytes) const override { return std::max(5, NetworkTool::iterations(bytes)); }

 private:
  // The first device a device list names ("mlx5_0:1,mlx5_1:1", NCCL's "=mlx5_0"); "" for an exclusion list
  // ("^mlx5_1") or none.
  static std::string first_listed(const std::string& list) {
    std::string first = list.substr(0, list.find(','));
    if (first.empty() || first[0] == '^') return "";
    if (first[0] == '=') first.erase(0, 1);
    return first.substr(0, first.find(':'));
  }
  static std::string chosen_device() {
    const std::vector<std::string> present = verbs_devices();
    for (const char* variable : {"UCX_NET_DEVICES", "NCCL_IB_HCA"}) {
      const std::string first = first_listed(environment_value(variable));
      if (std::find(present.begin(), present.end(), first) != present.end()) return first;
    }
    return present.empty() ? "" : present.front();
  }
  static ToolCommand command(const ToolRun& run, int port) {
    const std::string device = chosen_device();
    return {{"ib_write_bw", "-d", device, "-p", std::to_string(port), "-s", std::to_string(run.bytes), "-n", std::to_string(run.iterations), "-F",
             "--report_gbits"},
            {},
            device};
  }
};

// libfabric's fi_pingpong over a reliable-datagram endpoint of one provider: FI_PROVIDER when set, else the
// first of the high-speed providers libfabric offers here (cxi, efa, verbs, psm3, opx), else tcp.
class FiPingpong final : public NetworkTool {
 public:
  std::string name() const override { return "fi_pingpong"; }
  std::string method() const override {
    return "fi_pingpong (libfabric, rdm endpoint): one message in flight, the client's MB/s (1e6 bytes/s) over its "
           "ping-pongs, one run per sample; a ping-pong, below a stream by a round trip per message";
  }
  std::string unavailable() const override {
    if (std::string why = not_on_path("fi_pingpong"); !why.empty()) return why;
    if (provider().empty()) return "libfabric offers none of the providers " + candidates_text() + " here (fi_info -p)";
    return "";
  }
  ToolCommand server(const ToolRun& run, int port) const override {
    const std::string p = provider();
    return {{"fi_pingpong", "-p", p, "-e", "rdm", "-B", std::to_string(port), "-S", std::to_string(run.bytes), "-I", std::to_string(run.iterations)},
            {},
            "provider " + p};
  }
  ToolCommand client(const ToolRun& run, int port, const std::string& address) const override {
    const std::string p = provider();
    return {{"fi_pingpong", "-p", p, "-e", "rdm", "-P", std::to_string(port), "-S", std::to_string(run.bytes), "-I", std::to_string(run.iterations),
             address},
            {},
            "provider " + p};
  }
  ToolReading read(const std::string& output, const ToolRun&) const override {
    std::istringstream in(output);
    bool heading = false;
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = words(line);
      if (!w.empty() && w[0] == "bytes" && line.find("MB/sec") != std::string::npos) {
        heading = true;
        continue;
      }
      // bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
      double mb = 0;
      if (heading && w.size() >= 6 && parse_number(w[5], &mb)) return {mb * 1e6 / 1e9, 0, trimmed(line), ""};
    }
    return {0, 0, "", "no result under an 'MB/sec' heading in fi_pingpong's output: " + tail(output)};
  }
  std::vector<std::string> version_command() const override { return {"fi_info", "--version"}; }
  int iterations(std::size_t bytes) const override { return std::min(2000, NetworkTool::iterations(bytes)); }

 private:
  static const std::vector<std::string>& candidates() {
    static const std::vector<std::string> names = {"cxi", "efa", "verbs", "psm3", "opx", "tcp"};
    return names;
  }
  static std::string candidates_text() {
    std::string text;
    for (const auto& c : candidates()) text += (text.empty() ? "" : ", ") + c;
    return text;
  }
  // Asked of fi_info once per process: the answer does not change during a run.
  static std::string provider() {
    static const std::string chosen = [] {
      if (const std::string set = environment_value("FI_PROVIDER"); !set.empty()) return set;
      if (find_program("fi_info").empty()) return std::string("tcp");  // fi_pingpong without fi_info: try tcp
      for (const auto& p : candidates()) {
        ChildProcess probe({"fi_info", "-p", p, "-e", "rdm"}, {}, "fi_info");
        if (probe.wait(20) && probe.succeeded()) return p;
      }
      return std::string();
    }();
    return chosen;
  }
};

}  // namespace

std::vector<std::string> ucx_perftest_memory_types_in(const std::string& help) {
  std::vector<std::string> types;
  std::istringstream in(help);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = words(line);
    if (!w.empty() && w[0] == "-m") {
      listing = true;
      continue;
    }
    if (!listing) continue;
    if (!w.empty() && w[0][0] == '-') break;                  // the next option
    if (w.size() >= 2 && w[1] == "-") types.push_back(w[0]);  // "cuda - NVIDIA GPU memory"
  }
  return types;
}

std::string ucx_perftest_gpu_buffers_problem_in(const std::string& help, const std::string& help_failure) {
  const std::vector<std::string> types = ucx_perftest_memory_types_in(help);
  if (std::find(types.begin(), types.end(), "cuda") != types.end()) return "";
  if (types.empty()) {  // no -m listing at all: the program did not run (a shared library missing, a crash)
    std::string said;
    std::istringstream in(help);
    for (std::string line; said.empty() && std::getline(in, line);) said = line.substr(0, 300);
    return "`ucx_perftest -h` did not run" + (help_failure.empty() ? std::string() : " (" + help_failure + ")") +
           (said.empty() ? std::string(", printing nothing") : ": " + said);
  }
  std::string listed;
  for (const auto& t : types) listed += (listed.empty() ? "" : ", ") + t;
  return "its UCX cannot allocate GPU memory: `ucx_perftest -h` lists no cuda memory type (-m: " + listed +
         "; a UCX built without CUDA)";
}

int NetworkTool::iterations(std::size_t bytes) const {
  const std::size_t per_run = 256u << 20;  // bytes per run
  return static_cast<int>(std::clamp<std::size_t>(per_run / std::max<std::size_t>(bytes, 1), 5, 20000));
}

const std::vector<std::unique_ptr<NetworkTool>>& external_network_tools() {
  static const std::vector<std::unique_ptr<NetworkTool>> tools = [] {
    std::vector<std::unique_ptr<NetworkTool>> t;
    t.push_back(std::make_unique<Iperf3>());
    t.push_back(std::make_unique<UcxPerftest>());
    t.push_back(std::make_unique<IbWriteBw>());
    t.push_back(std::make_unique<FiPingpong>());
    return t;
  }();
  return tools;
}

std::string implausible_reading(const ToolReading& reading) {
  std::string why;
  if (!std::isfinite(reading.GBps)) why = "not a finite number";
  else if (reading.GBps <= 0) why = "not above 0";
  else if (reading.GBps > kPlausibleNetworkGBps)
    why = "above " + number_text(kPlausibleNetworkGBps) + " GB/s, ten times the fastest link of any interconnect";
  if (why.empty()) return "";
  return "printed an implausible figure (" + number_text(reading.GBps) + " GB/s: " + why + "): " + reading.printed;
}

std::vector<std::string> network_tool_availability() {
  std::vector<std::string> lines = {"gmb-tcp: always (the engine's own TCP streams)"};
  for (const auto& tool : external_network_tools()) {
    const std::string why_not = tool->unavailable();
    if (!why_not.empty()) {
      lines.push_back(tool->name() + ": not usable: " + why_not);
      continue;
    }
    std::string line = tool->name() + ": usable, " + tool->client(ToolRun{}, 0, "").device;
    if (tool->measures_gpu_buffers()) {
      const std::string why = tool->gpu_buffers_unavailable();
      line += "; GPU buffers: " + (why.empty() ? std::string("yes") : "no, " + why);
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> network_tool_names() {
  std::vector<std::string> names = {"gmb-tcp"};
  for (const auto& t : external_network_tools()) names.push_back(t->name());
  return names;
}

}  // namespace gmb
