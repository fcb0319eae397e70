// SPDX-License-Identifier: BSD-3-Clause
// peaks' "network" copy: the engine's own inter-node ceiling, TCP streams (one or several at once) and an 8-byte
// ping-pong between two ranks on different hosts over plain sockets (tool "gmb-tcp"); and the same pair measured
// by an external tool (network_tools.hpp). MPI carries only the receiver's address.
#pragma once

#include <string>
#include <vector>

#include "gmb/benchmark.hpp"

namespace gmb {

// The first rank of each host, in rank order: the rank that speaks for its host.
std::vector<int> first_rank_of_each_host(const std::vector<RankFacts>& ranks);

// The first rank of each host, for every pair of hosts (in the order of their first ranks): sender, receiver.
struct NetworkPair {
  int sender = 0, receiver = 0;
};
std::vector<NetworkPair> network_pairs(const std::vector<RankFacts>& ranks);

// A TCP stream's messages are written from and read into a buffer of this size (a larger message is several writes
// of it), with TCP_NODELAY: gmb-tcp's streams and iperf3's (-l, -N), so that the two measure the same stream. A
// buffer the caches hold measures the network, not the host's memory; the size is gmb's, not iperf3's 128 KiB
// default, which on a virtual Ethernet pair moved less than its -l 256K -N did.
constexpr std::size_t kStreamWriteBytes = 256u << 10;

struct NetworkSettings {
  std::size_t bytes = 0;
  int samples = 10;
  std::vector<int> streams = {1, 2, 4};  // --network-streams: the stream counts tried (gmb-tcp, iperf3); the best kept
  double seconds = 0.25;                 // --network-seconds: a stream tool's sample lasts at least this long
  std::string interface;                 // --network-interface; "" for the first non-loopback IPv4 address that is up
  bool device_memory = false;            // GPU buffers on both sides (tools that can: ucx_perftest -m cuda)
  std::string cuda_device;               // this rank's GPU as CUDA_VISIBLE_DEVICES names it, for such a tool
};

// On the pair's sender: per-message stream seconds (of all streams together), the metrics of the record (pair,
// tool, hosts, devices, streams, seconds per run; gmb-tcp: interfaces, addresses, one-way latency), its path and
// timing method; or the reason it could not be measured.
struct NetworkResult {
  std::vector<double> seconds;
  Json metrics;
  PathInfo path;
  std::string method, refusal;
  bool attempted = false;  // both hosts could run the tool and it ran: a refusal is its run's failure
};

// Collective over ctx.comm (the address exchange); the pair's two ranks measure, the others return at once.
NetworkResult measure_network(const Context& ctx, const NetworkPair& pair, const NetworkSettings& settings);

// The same with an external tool (network_tools.hpp) run as a server on the receiver's host and a client on
// the sender's, once per sample; the refusal says why when either host cannot run it or a run fails (with the
// tool's output). Collective over ctx.comm.
class NetworkTool;
NetworkResult measure_with_tool(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, const NetworkSettings& settings);

}  // namespace gmb
