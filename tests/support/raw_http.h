#pragma once
// A raw TCP connection to a server on loopback, for tests that must send bytes no HTTP
// client would (bad framing, bare CR, obs-fold, ...) and see exactly what comes back,
// including whether the server closed the connection.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::testing {

struct RawResponse {
  std::string version;  // "HTTP/1.1"
  int status = 0;
  std::string head;   // status line and fields, as received
  std::string body;   // a chunked body decoded
  size_t chunks = 0;  // the chunks of a chunked body (the last, empty one not counted)

  // First field with this name (case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
};

class RawConnection {
 public:
  explicit RawConnection(uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // Sends all bytes (a peer that closed is not an error here: see Closed()).
  void Send(std::string_view bytes);
  // Reads one response (a 1xx too), framed by Content-Length; nullopt on EOF, reset or
  // timeout before it is complete.
  // A chunked one (Transfer-Encoding: chunked) is read to its last chunk and decoded;
  // nullopt when the connection ends before it.
  std::optional<RawResponse> Read(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Every byte until the server closes the connection (what Read left unread first).
  std::string ReadToClose(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // True when the server has closed the connection: nothing is left unread, and a further
  // request on it gets end-of-stream or a reset instead of an answer.
  bool Closed(std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  int fd_ = -1;
  std::string buffered_;
};

// The port of a base URL such as http://127.0.0.1:41234.
uint16_t PortOf(const std::string& base_url);

// One request, one response, on a fresh connection.
std::optional<RawResponse> RoundTrip(uint16_t port, std::string_view request);

}  // namespace crmd::testing
