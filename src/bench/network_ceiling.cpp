// SPDX-License-Identifier: BSD-3-Clause
#include "network_ceiling.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "gmb/error.hpp"
#include "gmb/network.hpp"
#include "gmb/provenance.hpp"
#include "gmb/stats.hpp"
#include "gmb/subprocess.hpp"
#include "gmb/tcp.hpp"
#include "gmb/timing.hpp"
#include "network_tools.hpp"

namespace gmb {

namespace {

// Messages are written and read in chunks of this size: large enough to keep the socket busy, small enough
// to stay in the socket buffers' reach.
constexpr std::size_t kChunkBytes = 4u << 20;
constexpr std::size_t kLatencyBytes = 8;
constexpr int kPingPongsPerSample = 100;

std::string where(const Context& ctx) {
  return "host " + ctx.ranks[static_cast<std::size_t>(ctx.rank)].host + ", rank " + std::to_string(ctx.rank);
}

const std::string& host_of(const Context& ctx, int rank) { return ctx.ranks[static_cast<std::size_t>(rank)].host; }

// The record's name of a pair: "rank0:h1->rank1:h2".
std::string pair_name(const Context& ctx, const NetworkPair& pair) {
  return "rank" + std::to_string(pair.sender) + ":" + host_of(ctx, pair.sender) + "->rank" + std::to_string(pair.receiver) + ":" +
         host_of(ctx, pair.receiver);
}

// The address the receiver listens on.
struct ChosenAddress {
  std::string interface, address, choice, refusal;
};

ChosenAddress choose_address(const Context& ctx, const std::string& wanted) {
  std::string error;
  const std::vector<InterfaceAddress> addresses = ipv4_addresses(&error);
  if (!error.empty()) return {"", "", "", error + " (on " + where(ctx) + ")"};
  for (const auto& a : addresses)
    if (wanted.empty() ? !a.loopback : a.interface == wanted)
      return {a.interface, a.address, wanted.empty() ? "the first non-loopback IPv4 address that is up" : "--network-interface " + wanted, ""};
  return {"", "", "",
          wanted.empty() ? "no non-loopback IPv4 address is up on " + where(ctx)
                         : "interface " + wanted + " (--network-interface) has no IPv4 address that is up on " + where(ctx)};
}

// The interface holding a local address; "" when none does.
std::string interface_of(const std::string& address) {
  std::string error;
  for (const auto& a : ipv4_addresses(&error))
    if (a.address == address) return a.interface;
  return "";
}

// The interface's link speed in GB/s (sysfs speed, Mb/s), or 0 when it is not known. Only a device on a bus
// has one: a virtual interface (veth, bridge) reports a speed it does not limit to.
double link_GBps(const std::string& interface) {
  std::error_code error;
  if (interface.empty() || !std::filesystem::exists("/sys/class/net/" + interface + "/device", error)) return 0;
  std::ifstream in("/sys/class/net/" + interface + "/speed");
  long long megabits = -1;
  if (!interface.empty() && in >> megabits && megabits > 0) return static_cast<double>(megabits) / 8000.0;
  return 0;
}

void send_message(TcpConnection& c, const std::vector<char>& data) {
  for (std::size_t off = 0; off < data.size(); off += kChunkBytes) c.send_all(data.data() + off, std::min(kChunkBytes, data.size() - off));
}

void receive_message(TcpConnection& c, std::vector<char>& data) {
  for (std::size_t off = 0; off < data.size(); off += kChunkBytes) c.receive_all(data.data() + off, std::min(kChunkBytes, data.size() - off));
}

std::vector<char> pattern(std::size_t bytes) {
  std::vector<char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>(i % 251);
  return data;
}

// The receiver's side: a warm-up message, then per sample `copies` messages and a 1-byte acknowledgement;
// then the ping-pong's echoes. The last message is checked byte for byte.
void receive_side(TcpConnection& c, const NetworkSettings& s, const std::string& where_text) {
  std::vector<char> data(s.bytes);
  char ack = 1;
  for (int sample = 0; sample <= s.samples; ++sample) {
    for (int k = 0; k < (sample == 0 ? 1 : s.copies); ++k) receive_message(c, data);
    c.send_all(&ack, 1);
  }
  if (data != pattern(s.bytes)) GMB_FATAL("gmb-tcp: the stream delivered wrong data (on " + where_text + ")");
  char small[kLatencyBytes];
  for (int k = 0; k < (s.samples + 1) * kPingPongsPerSample; ++k) {
    c.receive_all(small, sizeof small);
    c.send_all(small, sizeof small);
  }
}

struct SenderTimes {
  std::vector<double> stream, one_way;
};

SenderTimes send_side(TcpConnection& c, const NetworkSettings& s) {
  const std::vector<char> data = pattern(s.bytes);
  char ack = 0;
  send_message(c, data);  // warm-up: connection slow start, first touch
  c.receive_all(&ack, 1);
  Samples stream(static_cast<std::size_t>(s.samples)), one_way(static_cast<std::size_t>(s.samples));
  for (int sample = 0; sample < s.samples; ++sample)
    stream.time([&] {
      for (int k = 0; k < s.copies; ++k) send_message(c, data);
      c.receive_all(&ack, 1);
    }, s.copies);
  char small[kLatencyBytes] = {0};
  auto ping_pongs = [&] {
    for (int k = 0; k < kPingPongsPerSample; ++k) {
      c.send_all(small, sizeof small);
      c.receive_all(small, sizeof small);
    }
  };
  ping_pongs();  // warm-up
  for (int sample = 0; sample < s.samples; ++sample) one_way.time(ping_pongs, 2 * kPingPongsPerSample);
  return {stream.seconds(), one_way.seconds()};
}

NetworkResult sender_result(const Context& ctx, const NetworkPair& pair, const TcpConnection& c, const SenderTimes& times,
                            const std::vector<std::string>& receiver) {
  const std::string& sender_host = host_of(ctx, pair.sender);
  const std::string& receiver_host = host_of(ctx, pair.receiver);
  const std::string local = c.local_address(), local_interface = interface_of(local);
  NetworkResult r;
  r.seconds = times.stream;
  r.metrics = Json::object()
                  .set("pair", pair_name(ctx, pair))
                  .set("tool", "gmb-tcp")
                  .set("sender_host", sender_host)
                  .set("receiver_host", receiver_host)
                  .set("sender_interface", local_interface.empty() ? Json() : Json(local_interface))
                  .set("sender_device", local_interface.empty() ? local : local_interface)
                  .set("receiver_device", receiver[1])
                  .set("sender_address", local)
                  .set("receiver_interface", receiver[1])
                  .set("receiver_address", receiver[0])
                  .set("address_choice", "the receiver's address: " + receiver[2] + "; the sender's: the kernel's route to it")
                  .set("chunk_bytes", static_cast<long long>(kChunkBytes))
                  .set("one_way_latency_us", summarize_transformed(times.one_way, [](double s) { return s * 1e6; }).to_json())
                  .set("latency_method", std::to_string(kLatencyBytes) + "-byte ping-pong with TCP_NODELAY, host clock around " +
                                             std::to_string(kPingPongsPerSample) + " round trips; half a round trip");
  r.path = {"inter-node",
            "TCP from " + (local_interface.empty() ? local : local_interface + " (" + local + ")") + " on " + sender_host + " to " +
                receiver[1] + " (" + receiver[0] + ") on " + receiver_host,
            link_GBps(local_interface)};
  r.method = "host clock around messages written to one TCP connection (plain sockets, " + std::to_string(kChunkBytes >> 20) +
             " MiB writes) up to the receiver's 1-byte acknowledgement; per message";
  return r;
}

}  // namespace

std::vector<int> first_rank_of_each_host(const std::vector<RankFacts>& ranks) {
  std::vector<int> firsts;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const bool seen = std::any_of(firsts.begin(), firsts.end(), [&](int f) { return ranks[static_cast<std::size_t>(f)].host == ranks[r].host; });
    if (!seen) firsts.push_back(static_cast<int>(r));
  }
  return firsts;
}

std::vector<NetworkPair> network_pairs(const std::vector<RankFacts>& ranks) {
  const std::vector<int> firsts = first_rank_of_each_host(ranks);
  std::vector<NetworkPair> pairs;
  for (std::size_t a = 0; a < firsts.size(); ++a)
    for (std::size_t b = a + 1; b < firsts.size(); ++b) pairs.push_back({firsts[a], firsts[b]});
  return pairs;
}

NetworkResult measure_network(const Context& ctx, const NetworkPair& pair, const NetworkSettings& settings) {
  std::unique_ptr<TcpListener> listener;
  std::string offer;  // the receiver's "address\ninterface\nchoice\nport", or "!" and why not
  if (ctx.rank == pair.receiver) {
    const ChosenAddress chosen = choose_address(ctx, settings.interface);
    if (chosen.refusal.empty()) {
      listener = std::make_unique<TcpListener>(chosen.address, where(ctx));
      offer = chosen.address + "\n" + chosen.interface + "\n" + chosen.choice + "\n" + std::to_string(listener->port());
    } else {
      offer = "!" + chosen.refusal;
    }
  }
  offer = broadcast_string(ctx.comm, offer, pair.receiver);
  NetworkResult result;
  if (ctx.rank != pair.sender && ctx.rank != pair.receiver) return result;
  if (offer[0] == '!') {
    result.refusal = offer.substr(1);
    return result;
  }
  std::vector<std::string> receiver;
  for (std::size_t start = 0, end = 0; end != std::string::npos; start = end + 1) {
    end = offer.find('\n', start);
    receiver.push_back(offer.substr(start, end == std::string::npos ? std::string::npos : end - start));
  }
  if (ctx.rank == pair.receiver) {
    TcpConnection c = listener->accept_one();
    c.no_delay();
    receive_side(c, settings, where(ctx));
    return result;
  }
  TcpConnection c = tcp_connect(receiver[0], std::stoi(receiver[3]), where(ctx));
  c.no_delay();
  return sender_result(ctx, pair, c, send_side(c, settings), receiver);
}

namespace {

// How long a server may take to listen, and a client's time beyond its data at 100 MB/s, before the tool is
// taken as failed (stopped, and reported with its output).
constexpr double kServerStartSeconds = 20;
constexpr double kClientBaseSeconds = 30;

// The first line a tool's version command prints ("" when there is none), asked once per process: every record
// of the tool names it.
std::string tool_version(const NetworkTool& tool, const std::string& where_text) {
  static std::map<std::string, std::string> known;
  if (const auto found = known.find(tool.name()); found != known.end()) return found->second;
  const std::vector<std::string> argv = tool.version_command();
  std::string text;
  if (!argv.empty() && !find_program(argv[0]).empty()) {
    ChildProcess version(argv, {}, where_text);
    if (version.wait(10)) text = version.output();
  }
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return known[tool.name()] = text;
}

Json environment_json(const std::map<std::string, std::string>& environment) {
  Json out = Json::object();
  for (const auto& [name, value] : environment) out.set(name, value);
  return out;
}

// One server/client run of `tool`: on the receiver the server, on the sender the client. Every rank of
// ctx.comm takes part in the two broadcasts and returns why the run failed ("" when it did not); the sender's
// reading also holds the bandwidth.
ToolReading tool_run(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, std::size_t bytes,
                     const std::string& address, std::string* client_text) {
  const int iterations = tool.iterations(bytes);
  std::unique_ptr<ChildProcess> server;
  std::string ready;  // the port the server listens on, or "!" and why it does not
  if (ctx.rank == pair.receiver) {
    const int port = TcpListener(address, where(ctx)).port();  // a port the kernel just found free
    const ToolCommand command = tool.server(bytes, iterations, port);
    server = std::make_unique<ChildProcess>(command.argv, command.environment, where(ctx));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kServerStartSeconds);
    while (server->running() && !tcp_port_listening(port) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (tcp_port_listening(port)) ready = std::to_string(port);
    else
      ready = "!the server `" + server->command_line() + "` on " + where(ctx) + " did not listen on port " + std::to_string(port) +
              " within " + std::to_string(static_cast<int>(kServerStartSeconds)) + " s (" + (server->running() ? "still running" : server->exit_description()) +
              "): " + server->output().substr(0, 400);
  }
  ready = broadcast_string(ctx.comm, ready, pair.receiver);
  ToolReading reading;
  if (ctx.rank == pair.sender) {
    if (ready[0] == '!') {
      reading.error = ready.substr(1);
    } else {
      const ToolCommand command = tool.client(bytes, iterations, std::stoi(ready), address);
      *client_text = command_text(command.argv);
      ChildProcess client(command.argv, command.environment, where(ctx));
      const double seconds = kClientBaseSeconds + static_cast<double>(bytes) * iterations / 1e8;
      if (!client.wait(seconds)) {
        client.stop();
        reading.error = "`" + client.command_line() + "` on " + where(ctx) + " did not finish within " + std::to_string(static_cast<int>(seconds)) + " s";
      } else if (!client.succeeded()) {
        reading.error = "`" + client.command_line() + "` on " + where(ctx) + " ended with " + client.exit_description() + ": " + client.output().substr(0, 600);
      } else {
        reading = tool.read(client.output(), bytes);
      }
    }
  }
  reading.error = broadcast_string(ctx.comm, reading.error, pair.sender);
  if (server && !server->wait(10)) server->stop();  // a server left waiting after a failed client
  return reading;
}

}  // namespace

NetworkResult measure_with_tool(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, const NetworkSettings& settings) {
  NetworkResult result;
  // Both hosts must have the tool (and its device).
  std::string why_not;
  for (const int side : {pair.sender, pair.receiver}) {
    std::string reason = ctx.rank == side ? tool.unavailable() : "";
    if (!reason.empty()) reason += " on " + where(ctx);
    reason = broadcast_string(ctx.comm, reason, side);
    if (why_not.empty()) why_not = reason;
  }
  std::string offer;  // the receiver's address, or "!" and why there is none
  if (why_not.empty() && ctx.rank == pair.receiver) {
    const ChosenAddress chosen = choose_address(ctx, settings.interface);
    offer = chosen.refusal.empty() ? chosen.address : "!" + chosen.refusal;
  }
  if (why_not.empty()) {
    offer = broadcast_string(ctx.comm, offer, pair.receiver);
    if (offer[0] == '!') why_not = offer.substr(1);
  }
  if (!why_not.empty()) {
    result.refusal = why_not;
    return result;
  }
  std::string receiver_device = ctx.rank == pair.receiver ? tool.server(settings.bytes, 1, 0).device : "";
  receiver_device = broadcast_string(ctx.comm, receiver_device, pair.receiver);
  std::vector<double> seconds;
  std::string client_text;
  for (int sample = 0; sample < settings.samples; ++sample) {
    const ToolReading reading = tool_run(ctx, pair, tool, settings.bytes, offer, &client_text);
    if (!reading.error.empty()) {
      result.refusal = reading.error;
      return result;
    }
    if (ctx.rank == pair.sender) seconds.push_back(static_cast<double>(settings.bytes) / (reading.GBps * 1e9));
  }
  if (ctx.rank != pair.sender) return result;
  const std::string& sender_host = host_of(ctx, pair.sender);
  const std::string& receiver_host = host_of(ctx, pair.receiver);
  const ToolCommand client = tool.client(settings.bytes, tool.iterations(settings.bytes), 0, offer);
  const std::string version = tool_version(tool, where(ctx));
  result.seconds = seconds;
  result.metrics = Json::object()
                       .set("pair", pair_name(ctx, pair))
                       .set("tool", tool.name())
                       .set("tool_version", version.empty() ? Json() : Json(version))
                       .set("sender_host", sender_host)
                       .set("receiver_host", receiver_host)
                       .set("sender_device", client.device)
                       .set("receiver_device", receiver_device)
                       .set("receiver_address", offer)
                       .set("memory", "host")
                       .set("command", client_text)
                       .set("tool_environment", environment_json(client.environment))
                       .set("messages_per_run", tool.iterations(settings.bytes));
  result.path = {"inter-node", tool.name() + " from " + sender_host + " to " + receiver_host + " (" + client.device + ")", 0};
  result.method = tool.method();
  return result;
}

}  // namespace gmb
