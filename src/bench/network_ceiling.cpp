// SPDX-License-Identifier: BSD-3-Clause
#include "network_ceiling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
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

constexpr std::size_t kLatencyBytes = 8;
constexpr int kPingPongsPerSample = 100;
// Messages per stream and sample at most, however small the message (a bound on the calibration only).
constexpr long long kMaxMessages = 10'000'000;

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

std::vector<char> pattern(std::size_t bytes) {
  std::vector<char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>(i % 251);
  return data;
}

// Runs `body(k)` for k = 0 .. count-1, each in a thread of its own, and waits for all. A thread's failure
// (TcpError) is thrown here, in the calling thread, which ends the job with it.
void in_threads(int count, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  for (int k = 0; k < count; ++k)
    threads.emplace_back([&, k] {
      try {
        body(k);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(k)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) throw TcpError(e);
}

// One stream's part of a batch, on its connection: the sender's header (the batch's message count; 0 ends the
// stream count's measurement), its messages written kStreamWriteBytes at a time, the receiver's 1-byte acknowledgement.
class StreamConnection {
 public:
  StreamConnection(TcpConnection connection, std::size_t bytes)
      : c_(std::move(connection)), bytes_(bytes), pattern_(pattern(std::min(bytes, kStreamWriteBytes))), received_(pattern_.size()) {}
  TcpConnection& connection() { return c_; }

  void send_batch(long long messages) {
    send_header(messages);
    for (long long m = 0; m < messages; ++m)
      for (std::size_t off = 0; off < bytes_; off += pattern_.size()) c_.send_all(pattern_.data(), std::min(pattern_.size(), bytes_ - off));
    char ack = 0;
    c_.receive_all(&ack, 1);
  }
  void send_header(long long messages) { c_.send_all(&messages, sizeof messages); }

  // The receiver's side until the sender's header 0; the last piece of every batch is checked byte for byte.
  void receive_batches(const std::string& where_text) {
    for (;;) {
      long long messages = 0;
      c_.receive_all(&messages, sizeof messages);
      if (messages <= 0) return;
      std::size_t last = 0;
      for (long long m = 0; m < messages; ++m)
        for (std::size_t off = 0; off < bytes_; off += last) {
          last = std::min(received_.size(), bytes_ - off);
          c_.receive_all(received_.data(), last);
        }
      if (!std::equal(received_.begin(), received_.begin() + static_cast<std::ptrdiff_t>(last), pattern_.begin()))
        throw TcpError("gmb-tcp: the stream delivered wrong data (on " + where_text + ")");
      const char ack = 1;
      c_.send_all(&ack, 1);
    }
  }

 private:
  TcpConnection c_;
  std::size_t bytes_;
  const std::vector<char> pattern_;  // what every piece of a message is
  std::vector<char> received_;
};

// What gmb-tcp measured with one stream count: per-message seconds of all streams together, per sample, and
// the messages each stream sent per sample.
struct StreamFigure {
  int streams = 1;
  long long messages = 0;
  std::vector<double> seconds;
};

double median_GBps(const std::vector<double>& per_message_seconds, std::size_t bytes) {
  return static_cast<double>(bytes) / summarize(per_message_seconds).median / 1e9;
}

// The sender's side of one stream count: batches growing from one message per stream until one lasts
// --network-seconds (the calibration, which is the warm-up too: connection slow start, first touch), then the
// samples at that size.
StreamFigure send_streams(std::vector<StreamConnection>& streams, int count, const NetworkSettings& s) {
  auto batch = [&](long long messages) { return host_time([&] { in_threads(count, [&](int k) { streams[static_cast<std::size_t>(k)].send_batch(messages); }); }); };
  long long messages = 1;
  for (;;) {
    const double took = batch(messages);
    if (took >= s.seconds || messages >= kMaxMessages) break;
    const double grow = took > 0 ? 1.2 * s.seconds / took : 10;
    messages = std::min(kMaxMessages, static_cast<long long>(std::ceil(static_cast<double>(messages) * std::clamp(grow, 1.1, 10.0))));
  }
  StreamFigure figure{count, messages, {}};
  for (int sample = 0; sample < s.samples; ++sample) figure.seconds.push_back(batch(messages) / (static_cast<double>(messages) * count));
  for (int k = 0; k < count; ++k) streams[static_cast<std::size_t>(k)].send_header(0);
  return figure;
}

std::vector<double> ping_pong_seconds(TcpConnection& c, const NetworkSettings& s) {
  char small[kLatencyBytes] = {0};
  auto ping_pongs = [&] {
    for (int k = 0; k < kPingPongsPerSample; ++k) {
      c.send_all(small, sizeof small);
      c.receive_all(small, sizeof small);
    }
  };
  ping_pongs();  // warm-up
  Samples one_way(static_cast<std::size_t>(s.samples));
  for (int sample = 0; sample < s.samples; ++sample) one_way.time(ping_pongs, 2 * kPingPongsPerSample);
  return one_way.seconds();
}

void echo_ping_pongs(TcpConnection& c, const NetworkSettings& s) {
  char small[kLatencyBytes];
  for (int k = 0; k < (s.samples + 1) * kPingPongsPerSample; ++k) {
    c.receive_all(small, sizeof small);
    c.send_all(small, sizeof small);
  }
}

// Of the figures of several stream counts (each with `streams` and per-message `seconds`), the one with the best
// median; `by_streams` gets every count's median GB/s.
template <typename Figure>
const Figure& best_streams(const std::vector<Figure>& figures, std::size_t bytes, std::vector<std::pair<int, double>>* by_streams) {
  const Figure* best = &figures.front();
  for (const Figure& f : figures) {
    by_streams->emplace_back(f.streams, median_GBps(f.seconds, bytes));
    if (by_streams->back().second > median_GBps(best->seconds, bytes)) best = &f;
  }
  return *best;
}

// The record's account of a stream tool's runs: the stream count kept, every count's median GB/s where several
// were tried, and the length and messages of one run (a sample) at the count kept.
void set_stream_metrics(Json& metrics, const std::vector<std::pair<int, double>>& GBps_by_streams, int best, double seconds_per_run,
                        long long messages_per_run) {
  metrics.set("streams", best);
  if (GBps_by_streams.size() > 1) {
    Json tried = Json::object();
    for (const auto& [streams, GBps] : GBps_by_streams) tried.set(std::to_string(streams), GBps);
    metrics.set("streams_tried_GBps", tried);
  }
  metrics.set("seconds_per_run", seconds_per_run).set("messages_per_run", messages_per_run);
}

NetworkResult sender_result(const Context& ctx, const NetworkPair& pair, const TcpConnection& c, const std::vector<StreamFigure>& figures,
                            const std::vector<double>& one_way, const std::vector<std::string>& receiver, std::size_t bytes) {
  const std::string& sender_host = host_of(ctx, pair.sender);
  const std::string& receiver_host = host_of(ctx, pair.receiver);
  const std::string local = c.local_address(), local_interface = interface_of(local);
  std::vector<std::pair<int, double>> by_streams;
  const StreamFigure& best = best_streams(figures, bytes, &by_streams);
  const long long per_run = best.messages * best.streams;
  NetworkResult r;
  r.seconds = best.seconds;
  r.metrics = Json::object()
                  .set("pair", pair_name(ctx, pair))
                  .set("tool", "gmb-tcp")
                  .set("sender_host", sender_host)
                  .set("receiver_host", receiver_host)
                  .set("sender_interface", local_interface.empty() ? Json() : Json(local_interface))
                  .set("sender_device", local_interface.empty() ? local : local_interface)
                  .set("receiver_device", receiver[1])
                  .set("sender_address", local)
                  .set("receiver_address", receiver[0])
                  .set("receiver_interface", receiver[1])
                  .set("address_choice", "the receiver's address: " + receiver[2] + "; the sender's: the kernel's route to it")
                  .set("memory", "host")
                  .set("write_bytes", static_cast<long long>(std::min(bytes, kStreamWriteBytes)));
  set_stream_metrics(r.metrics, by_streams, best.streams, summarize(best.seconds).median * static_cast<double>(per_run), per_run);
  r.metrics.set("one_way_latency_us", summarize_transformed(one_way, [](double s) { return s * 1e6; }).to_json())
      .set("latency_method", std::to_string(kLatencyBytes) + "-byte ping-pong with TCP_NODELAY on the first connection, host clock around " +
                                 std::to_string(kPingPongsPerSample) + " round trips; half a round trip");
  r.path = {"inter-node",
            "TCP from " + (local_interface.empty() ? local : local_interface + " (" + local + ")") + " on " + sender_host + " to " +
                receiver[1] + " (" + receiver[0] + ") on " + receiver_host,
            link_GBps(local_interface)};
  r.method = "host clock around messages written to TCP connections at once (plain sockets, one thread each, " +
             std::to_string(std::min(bytes, kStreamWriteBytes) >> 10) + " KiB writes from one buffer), up to every receiver's 1-byte acknowledgement; " +
             "each sample at least the --network-seconds the calibration found; the stream count (--network-streams) with the best median " +
             "kept; per message of all streams together";
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
  // One connection per stream of the largest count; the first also carries the ping-pong.
  const int connections = *std::max_element(settings.streams.begin(), settings.streams.end());
  std::vector<StreamConnection> streams;
  for (int k = 0; k < connections; ++k) {
    TcpConnection c = ctx.rank == pair.receiver ? listener->accept_one() : tcp_connect(receiver[0], std::stoi(receiver[3]), where(ctx));
    c.no_delay();
    streams.emplace_back(std::move(c), settings.bytes);
  }
  if (ctx.rank == pair.receiver) {
    for (const int count : settings.streams)
      in_threads(count, [&](int k) { streams[static_cast<std::size_t>(k)].receive_batches(where(ctx)); });
    echo_ping_pongs(streams[0].connection(), settings);
    return result;
  }
  std::vector<StreamFigure> figures;
  for (const int count : settings.streams) figures.push_back(send_streams(streams, count, settings));
  const std::vector<double> one_way = ping_pong_seconds(streams[0].connection(), settings);
  return sender_result(ctx, pair, streams[0].connection(), figures, one_way, receiver, settings.bytes);
}

namespace {

// How long a server may take to listen, and a client's time beyond its data at 100 MB/s and its own run time,
// before the tool is taken as failed (stopped, and reported with its output).
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

// A broadcast the ranks wait on while a tool runs (seconds): polled with a pause between polls, since a busy-polling
// MPI_Bcast holds a core that the tool's processes on the same host need (the server's side and any rank outside
// the pair would otherwise spin for the whole run).
std::string broadcast_string_patiently(MPI_Comm comm, std::string value, int root) {
  auto wait = [](MPI_Request& request) {
    for (int done = 0;;) {
      GMB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      if (done) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  int length = static_cast<int>(value.size());
  MPI_Request request = MPI_REQUEST_NULL;
  GMB_MPI_CHECK(MPI_Ibcast(&length, 1, MPI_INT, root, comm, &request));
  wait(request);
  value.resize(static_cast<std::size_t>(length));
  GMB_MPI_CHECK(MPI_Ibcast(value.data(), length, MPI_CHAR, root, comm, &request));
  wait(request);
  return value;
}

// One server/client run of `tool`: on the receiver the servers, on the sender the clients, one pair, or one pair
// per stream at once where the tool takes a process per stream. Every rank of ctx.comm takes part in the two
// broadcasts and returns why the run failed ("" when it did not): a tool failed, hung, printed no figure, or
// printed an implausible one; the sender's reading also holds the bandwidth, summed over the pairs.
ToolReading tool_run(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, const ToolRun& run, const std::string& address,
                     std::string* client_text) {
  const int pairs = tool.one_process_per_stream() ? run.streams : 1;
  ToolRun each = run;
  if (pairs > 1) each.streams = 1;
  std::vector<std::unique_ptr<ChildProcess>> servers;
  std::string ready;  // the ports the servers listen on ("p1,p2"), or "!" and why one does not
  if (ctx.rank == pair.receiver) {
    std::vector<int> ports;
    for (int k = 0; k < pairs; ++k) {
      ports.push_back(TcpListener(address, where(ctx)).port());  // a port the kernel just found free
      const ToolCommand command = tool.server(each, ports.back());
      servers.push_back(std::make_unique<ChildProcess>(command.argv, command.environment, where(ctx)));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kServerStartSeconds);
    for (int k = 0; k < pairs && ready.empty(); ++k) {
      ChildProcess& server = *servers[static_cast<std::size_t>(k)];
      const int port = ports[static_cast<std::size_t>(k)];
      while (server.running() && !tcp_port_listening(port) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!tcp_port_listening(port))
        ready = "!the server `" + server.command_line() + "` on " + where(ctx) + " did not listen on port " + std::to_string(port) +
                " within " + std::to_string(static_cast<int>(kServerStartSeconds)) + " s (" +
                (server.running() ? "still running" : server.exit_description()) + "): " + server.output().substr(0, 400);
    }
    if (ready.empty())
      for (std::size_t k = 0; k < ports.size(); ++k) ready += (k ? "," : "") + std::to_string(ports[k]);
  }
  ready = broadcast_string(ctx.comm, ready, pair.receiver);
  ToolReading reading;
  if (ctx.rank == pair.sender) {
    if (ready[0] == '!') {
      reading.error = ready.substr(1);
    } else {
      std::vector<std::unique_ptr<ChildProcess>> clients;
      client_text->clear();
      std::istringstream ports(ready);
      for (std::string port; std::getline(ports, port, ',');) {  // all started before any is waited for
        const ToolCommand command = tool.client(each, std::stoi(port), address);
        *client_text += (client_text->empty() ? "" : " & ") + command_text(command.argv);
        clients.push_back(std::make_unique<ChildProcess>(command.argv, command.environment, where(ctx)));
      }
      const double seconds = kClientBaseSeconds + run.seconds + static_cast<double>(run.bytes) * run.iterations / 1e8;
      for (auto& client : clients) {
        ToolReading one;
        if (!client->wait(seconds)) {
          client->stop();
          one.error = "`" + client->command_line() + "` on " + where(ctx) + " did not finish within " + std::to_string(static_cast<int>(seconds)) + " s";
        } else if (!client->succeeded()) {
          // what the tool's reader makes of its output says most (iperf3's JSON report ends with its "error")
          const std::string said = tool.read(client->output(), each).error;
          one.error = "`" + client->command_line() + "` on " + where(ctx) + " ended with " + client->exit_description() + ": " +
                      (said.empty() ? client->output().substr(0, 600) : said);
        } else {
          one = tool.read(client->output(), each);
          if (one.error.empty()) one.error = implausible_reading(one);
        }
        if (reading.error.empty()) reading.error = one.error;
        reading.GBps += one.GBps;
        reading.bytes_moved += one.bytes_moved;
        reading.printed += (reading.printed.empty() ? "" : "; ") + one.printed;
      }
    }
  }
  reading.error = broadcast_string_patiently(ctx.comm, reading.error, pair.sender);
  for (auto& server : servers)
    if (!server->wait(10)) server->stop();  // a server left waiting after a failed client
  return reading;
}

// What both hosts of the pair say about running `tool` (or running it on GPU buffers):
// "" when both can, else the first reason, naming the host. Collective over ctx.comm.
std::string why_not_both(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, bool device_memory) {
  std::string why_not;
  for (const int side : {pair.sender, pair.receiver}) {
    std::string reason = ctx.rank != side ? "" : device_memory ? tool.gpu_buffers_unavailable() : tool.unavailable();
    if (!reason.empty()) reason += " on " + where(ctx);
    reason = broadcast_string(ctx.comm, reason, side);
    if (why_not.empty()) why_not = reason;
  }
  return why_not;
}

// The samples of one stream count: per-message seconds of all streams together, seconds per run and bytes per
// message; or why a run failed.
struct ToolFigure {
  int streams = 1;
  std::vector<double> seconds, run_seconds, messages;
  std::string command, error;  // the client's command line as run; why a run failed
};

ToolFigure tool_samples(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, const ToolRun& run, const std::string& address,
                        int samples) {
  ToolFigure figure{run.streams, {}, {}, {}, "", ""};
  for (int sample = 0; sample < samples; ++sample) {
    const ToolReading reading = tool_run(ctx, pair, tool, run, address, &figure.command);
    if (!reading.error.empty()) {
      figure.error = reading.error;
      return figure;
    }
    if (ctx.rank != pair.sender) continue;
    const double bytes = static_cast<double>(run.bytes);
    const double moved = reading.bytes_moved > 0 ? reading.bytes_moved : bytes * run.iterations * run.streams;
    figure.seconds.push_back(bytes / (reading.GBps * 1e9));
    figure.run_seconds.push_back(moved / (reading.GBps * 1e9));
    figure.messages.push_back(moved / bytes);
  }
  return figure;
}

}  // namespace

NetworkResult measure_with_tool(const Context& ctx, const NetworkPair& pair, const NetworkTool& tool, const NetworkSettings& settings) {
  NetworkResult result;
  // Both hosts must have the tool (and its device), and the receiver an address.
  std::string why_not = why_not_both(ctx, pair, tool, false);
  if (why_not.empty() && settings.device_memory) why_not = why_not_both(ctx, pair, tool, true);
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
  result.attempted = true;
  ToolRun run{settings.bytes, tool.iterations(settings.bytes), 1, settings.seconds, settings.device_memory, settings.cuda_device};
  std::string receiver_device = ctx.rank == pair.receiver ? tool.server(run, 0).device : "";
  receiver_device = broadcast_string(ctx.comm, receiver_device, pair.receiver);
  // Each stream count where the tool runs several; the best median kept.
  std::vector<ToolFigure> figures;
  for (const int streams : tool.parallel_streams() ? settings.streams : std::vector<int>{1}) {
    run.streams = streams;
    figures.push_back(tool_samples(ctx, pair, tool, run, offer, settings.samples));
    if (!figures.back().error.empty()) {
      result.refusal = figures.back().error;
      return result;
    }
  }
  if (ctx.rank != pair.sender) return result;
  std::vector<std::pair<int, double>> by_streams;
  const ToolFigure& best = best_streams(figures, settings.bytes, &by_streams);
  run.streams = best.streams;
  const std::string& sender_host = host_of(ctx, pair.sender);
  const std::string& receiver_host = host_of(ctx, pair.receiver);
  const ToolCommand client = tool.client(run, 0, offer);
  const std::string version = tool_version(tool, where(ctx));
  result.seconds = best.seconds;
  result.metrics = Json::object()
                       .set("pair", pair_name(ctx, pair))
                       .set("tool", tool.name())
                       .set("tool_version", version.empty() ? Json() : Json(version))
                       .set("sender_host", sender_host)
                       .set("receiver_host", receiver_host)
                       .set("sender_device", client.device)
                       .set("receiver_device", receiver_device)
                       .set("receiver_address", offer)
                       .set("memory", settings.device_memory ? "device" : "host")
                       .set("command", best.command)
                       .set("tool_environment", environment_json(client.environment));
  const long long per_run = std::max(1LL, std::llround(summarize(best.messages).median));
  set_stream_metrics(result.metrics, by_streams, best.streams, summarize(best.run_seconds).median, per_run);
  result.path = {"inter-node", tool.name() + " from " + sender_host + " to " + receiver_host + " (" + client.device + ")", 0};
  result.method = tool.method() + (settings.device_memory ? "; GPU buffers on both sides" : "; host buffers");
  return result;
}

}  // namespace gmb
