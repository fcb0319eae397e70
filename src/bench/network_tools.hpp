// SPDX-License-Identifier: BSD-3-Clause
// The programs other than gmb-bench that measure the network's own ceiling between two hosts, each run as a
// server on the receiving host and a client on the sending one: iperf3 (TCP streams, several in parallel),
// UCX's ucx_perftest (tag-matching stream over UCX's network transports, host or device buffers), perftest's
// ib_write_bw (RDMA writes over a verbs device) and libfabric's fi_pingpong (ping-pong over a libfabric
// provider). Each says whether it can run on this host and why not, builds its two command lines and reads the
// client's output; a figure no link can carry is refused (implausible_reading), never stored.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gmb {

struct ToolCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;  // set for the tool only, beside the rank's own environment
  std::string device;                              // the device it uses, in words for the record
};

// What one run of a tool moves: `bytes` per message, `iterations` messages (tools that count messages),
// `streams` connections at once and `seconds` long (tools that run for a time: iperf3), from and into host
// memory or, with `device_memory`, the GPU's memory (CUDA_VISIBLE_DEVICES=`cuda_device` for the tool).
struct ToolRun {
  std::size_t bytes = 0;
  int iterations = 1, streams = 1;
  double seconds = 1;
  bool device_memory = false;
  std::string cuda_device;
};

// What the client printed, read: bandwidth per message (GB/s, 1e9 bytes), the bytes it says it moved (0 where
// it does not say), the text the figure was read from (for a refusal), or why it could not be read.
struct ToolReading {
  double GBps = 0;
  double bytes_moved = 0;
  std::string printed, error;
};

class NetworkTool {
 public:
  virtual ~NetworkTool() = default;
  virtual std::string name() const = 0;
  // How it measures, for the record's timing method.
  virtual std::string method() const = 0;
  // "" when it can run on this host; otherwise why not (the program is not on PATH, no device).
  virtual std::string unavailable() const = 0;
  // Whether it can measure GPU buffers at all (ucx_perftest -m cuda); if so, gpu_buffers_unavailable() says
  // "" when it can on this host, otherwise why not.
  virtual bool measures_gpu_buffers() const { return false; }
  virtual std::string gpu_buffers_unavailable() const { return ""; }
  // Whether it runs several streams at once (ToolRun::streams); the others run one.
  virtual bool parallel_streams() const { return false; }
  // Whether several streams run as as many server/client pairs at once, one stream each, rather than as one pair:
  // a tool that serves all its streams from one thread makes that thread the limit, not the link.
  virtual bool one_process_per_stream() const { return false; }
  virtual ToolCommand server(const ToolRun& run, int port) const = 0;
  virtual ToolCommand client(const ToolRun& run, int port, const std::string& server_address) const = 0;
  virtual ToolReading read(const std::string& client_output, const ToolRun& run) const = 0;
  // The command that prints its version (its first line goes in the record); empty when there is none.
  virtual std::vector<std::string> version_command() const = 0;
  // Messages per run for `bytes`: enough data to reach the link's rate, few enough to keep a run short.
  virtual int iterations(std::size_t bytes) const;
};

// No link carries more than this: ten times the fastest per-direction rate of any interconnect known (NVLink 5,
// 900 GB/s per GPU; the fastest network cards move 800 Gb/s, 100 GB/s). A tool printing more printed nonsense.
constexpr double kPlausibleNetworkGBps = 10000;

// Why a reading is no figure of a link, "" when it is one: not a finite number, not above 0, or above
// kPlausibleNetworkGBps; the reason quotes what the tool printed.
std::string implausible_reading(const ToolReading& reading);

// The memory types a `ucx_perftest -h` text lists under -m ("host", "cuda", "cuda-managed" ...): those its UCX
// can allocate (a UCX built without CUDA lists host only).
std::vector<std::string> ucx_perftest_memory_types_in(const std::string& help);

// Why a ucx_perftest cannot measure GPU buffers (-m cuda), "" when it can, from its `-h` text and how `-h` ended
// (help_failure: "" when it exited 0, else how it ended): its UCX lists no cuda memory type, or the program did
// not run at all (a shared library missing), which is said as such.
std::string ucx_perftest_gpu_buffers_problem_in(const std::string& help, const std::string& help_failure);

// Every external tool, in the order they run.
const std::vector<std::unique_ptr<NetworkTool>>& external_network_tools();

// One line per network ceiling tool on this host: "gmb-tcp: always", "ucx_perftest: usable, ...",
// "ib_write_bw: not usable: no RDMA (verbs) device ...", for the doctor.
std::vector<std::string> network_tool_availability();

// The names --network-tools accepts besides "auto": gmb-tcp and the external tools.
std::vector<std::string> network_tool_names();

}  // namespace gmb
