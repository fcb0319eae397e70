// SPDX-License-Identifier: BSD-3-Clause
// Plain TCP sockets for the engine's own network ceiling (peaks' "network" copy, tool "gmb-tcp"): MPI only
// tells the two ranks each other's address; the data never passes through it. Every failed system call
// throws TcpError with what failed, the address and `where` (host and rank), which ends the job.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace gmb {

// A failed socket call. An exception rather than an abort in place, so that a thread of a multi-stream
// measurement hands it to the rank's main thread, which ends the job with it.
struct TcpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TcpConnection {
 public:
  TcpConnection(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  ~TcpConnection();
  TcpConnection(TcpConnection&& other) noexcept : fd_(other.fd_), where_(std::move(other.where_)) { other.fd_ = -1; }
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  // Small messages leave at once (TCP_NODELAY), as the ping-pong needs.
  void no_delay();
  void send_all(const void* data, std::size_t bytes);
  void receive_all(void* data, std::size_t bytes);
  // The local IPv4 address the kernel chose for this connection (the route to the peer).
  std::string local_address() const;

 private:
  int fd_;
  std::string where_;
};

// A socket listening on `address` (IPv4) at a port the kernel picks.
class TcpListener {
 public:
  TcpListener(const std::string& address, std::string where);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  int port() const { return port_; }
  TcpConnection accept_one();

 private:
  int fd_ = -1, port_ = 0;
  std::string address_, where_;
};

TcpConnection tcp_connect(const std::string& address, int port, const std::string& where);

}  // namespace gmb
