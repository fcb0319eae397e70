// SPDX-License-Identifier: BSD-3-Clause
#include "network_tools.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "gmb/subprocess.hpp"

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

// A short tail of a tool's output for an error message.
std::string tail(const std::string& text) {
  const std::size_t keep = 300;
  return text.size() <= keep ? text : "..." + text.substr(text.size() - keep);
}

// UCX's ucx_perftest: tag_bw, a window of tag-matched sends, over UCX's network transports only (shared
// memory and CUDA IPC would reach the other "host" where two emulated hosts share one kernel).
class UcxPerftest final : public NetworkTool {
 public:
  std::string name() const override { return "ucx_perftest"; }
  std::string method() const override {
    return "ucx_perftest tag_bw (UCP tag-matched sends, a window in flight), host memory; the client's overall "
           "bandwidth per run (MB/s = 2^20 bytes/s), one run per sample";
  }
  std::string unavailable() const override { return not_on_path("ucx_perftest"); }
  ToolCommand server(std::size_t, int, int port) const override {
    return {{"ucx_perftest", "-p", std::to_string(port)}, environment(), device()};
  }
  ToolCommand client(std::size_t bytes, int iterations, int port, const std::string& address) const override {
    return {{"ucx_perftest", address, "-p", std::to_string(port), "-t", "tag_bw", "-s", std::to_string(bytes), "-n",
             std::to_string(iterations), "-w", std::to_string(std::max(1, iterations / 10))},
            environment(),
            device()};
  }
  ToolReading read(const std::string& output, std::size_t) const override {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = words(line);
      // Final: iterations, overhead 50%ile/average/overall (us), bandwidth average/overall (MB/s), rate ...
      double mb = 0;
      if (w.size() >= 7 && w[0] == "Final:" && parse_number(w[6], &mb) && mb > 0) return {mb * 1048576.0 / 1e9, ""};
    }
    return {0, "no 'Final:' line with a bandwidth in ucx_perftest's output: " + tail(output)};
  }
  std::vector<std::string> version_command() const override { return {"ucx_info", "-v"}; }

 private:
  static std::map<std::string, std::string> environment() {
    if (!environment_value("UCX_TLS").empty()) return {};  // the user's choice of transports stands
    return {{"UCX_TLS", "^sm,cuda_ipc"}};
  }
  static std::string device() {
    const std::string chosen = environment_value("UCX_NET_DEVICES");
    const std::string tls = environment_value("UCX_TLS");
    return (chosen.empty() ? std::string("UCX's choice of network device") : "UCX_NET_DEVICES=" + chosen) +
           (tls.empty() ? ", UCX_TLS=^sm,cuda_ipc (network transports only)" : ", UCX_TLS=" + tls + " (as set)");
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
  ToolCommand server(std::size_t bytes, int iterations, int port) const override { return command(bytes, iterations, port); }
  ToolCommand client(std::size_t bytes, int iterations, int port, const std::string& address) const override {
    ToolCommand c = command(bytes, iterations, port);
    c.argv.push_back(address);
    return c;
  }
  ToolReading read(const std::string& output, std::size_t bytes) const override {
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
      if (to_GBps > 0 && w.size() >= 4 && parse_number(w[0], &size) && static_cast<std::size_t>(size) == bytes &&
          parse_number(w[3], &average) && average > 0)
        return {average * to_GBps, ""};
    }
    return {0, "no result line for " + std::to_string(bytes) + " bytes under a 'BW average' heading in ib_write_bw's output: " + tail(output)};
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
  static ToolCommand command(std::size_t bytes, int iterations, int port) {
    const std::string device = chosen_device();
    return {{"ib_write_bw", "-d", device, "-p", std::to_string(port), "-s", std::to_string(bytes), "-n", std::to_string(iterations), "-F",
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
  ToolCommand server(std::size_t bytes, int iterations, int port) const override {
    const std::string p = provider();
    return {{"fi_pingpong", "-p", p, "-e", "rdm", "-B", std::to_string(port), "-S", std::to_string(bytes), "-I", std::to_string(iterations)}, {}, "provider " + p};
  }
  ToolCommand client(std::size_t bytes, int iterations, int port, const std::string& address) const override {
    const std::string p = provider();
    return {{"fi_pingpong", "-p", p, "-e", "rdm", "-P", std::to_string(port), "-S", std::to_string(bytes), "-I", std::to_string(iterations), address},
            {},
            "provider " + p};
  }
  ToolReading read(const std::string& output, std::size_t) const override {
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
      if (heading && w.size() >= 6 && parse_number(w[5], &mb) && mb > 0) return {mb * 1e6 / 1e9, ""};
    }
    return {0, "no result under an 'MB/sec' heading in fi_pingpong's output: " + tail(output)};
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

int NetworkTool::iterations(std::size_t bytes) const {
  const std::size_t per_run = 256u << 20;  // bytes per run
  return static_cast<int>(std::clamp<std::size_t>(per_run / std::max<std::size_t>(bytes, 1), 5, 20000));
}

const std::vector<std::unique_ptr<NetworkTool>>& external_network_tools() {
  static const std::vector<std::unique_ptr<NetworkTool>> tools = [] {
    std::vector<std::unique_ptr<NetworkTool>> t;
    t.push_back(std::make_unique<UcxPerftest>());
    t.push_back(std::make_unique<IbWriteBw>());
    t.push_back(std::make_unique<FiPingpong>());
    return t;
  }();
  return tools;
}

std::vector<std::string> network_tool_availability() {
  std::vector<std::string> lines = {"gmb-tcp: always (the engine's own TCP stream)"};
  for (const auto& tool : external_network_tools()) {
    const std::string why_not = tool->unavailable();
    lines.push_back(tool->name() + ": " + (why_not.empty() ? "usable, " + tool->client(1, 1, 0, "").device : "not usable: " + why_not));
  }
  return lines;
}

std::vector<std::string> network_tool_names() {
  std::vector<std::string> names = {"gmb-tcp"};
  for (const auto& t : external_network_tools()) names.push_back(t->name());
  return names;
}

}  // namespace gmb
