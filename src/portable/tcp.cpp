// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/tcp.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>


namespace gmb {

namespace {

[[noreturn]] void socket_failure(const std::string& what, const std::string& where) {
  throw TcpError("gmb-tcp: " + what + " failed on " + where + ": " + std::strerror(errno));
}

sockaddr_in ipv4_socket_address(const std::string& address, int port, const std::string& where) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
    throw TcpError("gmb-tcp: '" + address + "' is not an IPv4 address (on " + where + ")");
  return a;
}

}  // namespace

TcpConnection::~TcpConnection() {
  if (fd_ >= 0) close(fd_);
}

void TcpConnection::no_delay() {
  const int on = 1;
  if (setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) socket_failure("setsockopt(TCP_NODELAY)", where_);
}

void TcpConnection::send_all(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t sent = send(fd_, p, bytes, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) socket_failure("send of " + std::to_string(bytes) + " bytes", where_);
    p += sent;
    bytes -= static_cast<std::size_t>(sent);
  }
}

void TcpConnection::receive_all(void* data, std::size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = recv(fd_, p, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) throw TcpError("gmb-tcp: the peer closed the connection with " + std::to_string(bytes) + " bytes still expected (on " + where_ + ")");
    if (got < 0) socket_failure("recv of " + std::to_string(bytes) + " bytes", where_);
    p += got;
    bytes -= static_cast<std::size_t>(got);
  }
}

std::string TcpConnection::local_address() const {
  sockaddr_in a{};
  socklen_t length = sizeof a;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length) != 0) socket_failure("getsockname", where_);
  char text[INET_ADDRSTRLEN] = {0};
  if (!inet_ntop(AF_INET, &a.sin_addr, text, sizeof text)) socket_failure("inet_ntop", where_);
  return text;
}

TcpListener::TcpListener(const std::string& address, std::string where) : address_(address), where_(std::move(where)) {
  sockaddr_in a = ipv4_socket_address(address, 0, where_);
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) socket_failure("socket(AF_INET, SOCK_STREAM)", where_);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) socket_failure("bind to " + address + " port 0", where_);
  if (listen(fd_, 1) != 0) socket_failure("listen on " + address, where_);
  socklen_t length = sizeof a;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length) != 0) socket_failure("getsockname of the listener on " + address, where_);
  port_ = ntohs(a.sin_port);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) close(fd_);
}

TcpConnection TcpListener::accept_one() {
  int fd = -1;
  do fd = accept(fd_, nullptr, nullptr);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) socket_failure("accept on " + address_ + ":" + std::to_string(port_), where_);
  return TcpConnection(fd, where_);
}

TcpConnection tcp_connect(const std::string& address, int port, const std::string& where) {
  const sockaddr_in a = ipv4_socket_address(address, port, where);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) socket_failure("socket(AF_INET, SOCK_STREAM)", where);
  TcpConnection connection(fd, where);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) socket_failure("connect to " + address + ":" + std::to_string(port), where);
  return connection;
}

}  // namespace gmb
