#include "tests/support/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "src/core/http_types.h"

namespace crmd::testing {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms > 0 ? static_cast<int>(ms) : 0;
}

}  // namespace

std::optional<std::string> RawResponse::Header(std::string_view name) const {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    std::string_view line(head.data() + start,
                          (end == std::string::npos ? head.size() : end) - start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && http::IEquals(line.substr(0, colon), name)) {
      auto v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
    pos = end;
  }
  return std::nullopt;
}

RawConnection::RawConnection(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

void RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty() && fd_ >= 0) {
    ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::optional<RawResponse> RawConnection::Read(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  auto fill = [&]() -> bool {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, RemainingMs(deadline)) <= 0) return false;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = buffered_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  RawResponse r;
  r.head = buffered_.substr(0, end);
  size_t sp = r.head.find(' ');
  r.version = r.head.substr(0, sp);
  r.status = sp == std::string::npos ? 0 : std::atoi(r.head.c_str() + sp + 1);
  if (auto te = r.Header("Transfer-Encoding"); te && http::IEquals(*te, "chunked")) {
    size_t at = end + 4;
    for (;;) {
      size_t eol;
      while ((eol = buffered_.find("\r\n", at)) == std::string::npos)
        if (!fill()) return std::nullopt;
      size_t size = std::strtoul(buffered_.c_str() + at, nullptr, 16);
      while (buffered_.size() < eol + 2 + size + 2)
        if (!fill()) return std::nullopt;
      at = eol + 2 + size + 2;
      if (size == 0) break;  // the last chunk, and an empty trailer section
      r.body.append(buffered_, eol + 2, size);
      ++r.chunks;
    }
    buffered_.erase(0, at);
    return r;
  }
  size_t length = 0;
  if (auto cl = r.Header("Content-Length")) length = std::strtoul(cl->c_str(), nullptr, 10);
  while (buffered_.size() < end + 4 + length)
    if (!fill()) return std::nullopt;
  r.body = buffered_.substr(end + 4, length);
  buffered_.erase(0, end + 4 + length);
  return r;
}

std::string RawConnection::ReadToClose(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string out = std::move(buffered_);
  buffered_.clear();
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, RemainingMs(deadline)) <= 0) return out;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool RawConnection::Closed(std::chrono::milliseconds timeout) {
  if (!buffered_.empty()) return false;  // the server said more than one answer
  Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto deadline = Clock::now() + timeout;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, RemainingMs(deadline)) <= 0) return false;  // still open, silent
  char buf[256];
  ssize_t n = recv(fd_, buf, sizeof buf, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

uint16_t PortOf(const std::string& base_url) {
  return static_cast<uint16_t>(std::atoi(base_url.c_str() + base_url.rfind(':') + 1));
}

std::optional<RawResponse> RoundTrip(uint16_t port, std::string_view request) {
  RawConnection c(port);
  if (!c.connected()) return std::nullopt;
  c.Send(request);
  return c.Read();
}

}  // namespace crmd::testing
