// SPDX-License-Identifier: BSD-3-Clause
// The programs other than gmb-bench that measure the network's own ceiling between two hosts, each run as a
// server on the receiving host and a client on the sending one: UCX's ucx_perftest (tag-matching stream over
// UCX's network transports), perftest's ib_write_bw (RDMA writes over a verbs device) and libfabric's
// fi_pingpong (ping-pong over a libfabric provider). Each says whether it can run on this host and why not,
// builds its two command lines and reads the client's output.
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

// What the client printed, read: bandwidth per message (GB/s, 1e9 bytes), or why it could not be read.
struct ToolReading {
  double GBps = 0;
  std::string error;
};

class NetworkTool {
 public:
  virtual ~NetworkTool() = default;
  virtual std::string name() const = 0;
  // How it measures, for the record's timing method.
  virtual std::string method() const = 0;
  // "" when it can run on this host; otherwise why not (the program is not on PATH, no device).
  virtual std::string unavailable() const = 0;
  virtual ToolCommand server(std::size_t bytes, int iterations, int port) const = 0;
  virtual ToolCommand client(std::size_t bytes, int iterations, int port, const std::string& server_address) const = 0;
  virtual ToolReading read(const std::string& client_output, std::size_t bytes) const = 0;
  // The command that prints its version (its first line goes in the record); empty when there is none.
  virtual std::vector<std::string> version_command() const = 0;
  // Messages per run for `bytes`: enough data to reach the link's rate, few enough to keep a run short.
  virtual int iterations(std::size_t bytes) const;
};

// Every external tool, in the order they run.
const std::vector<std::unique_ptr<NetworkTool>>& external_network_tools();

// One line per network ceiling tool on this host: "gmb-tcp: always", "ucx_perftest: /usr/bin/ucx_perftest",
// "ib_write_bw: not usable: no RDMA (verbs) device ...", for the doctor.
std::vector<std::string> network_tool_availability();

// The names --network-tools accepts besides "auto": gmb-tcp and the external tools.
std::vector<std::string> network_tool_names();

}  // namespace gmb
