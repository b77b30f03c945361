#pragma once
// A TLS client connection for tests of crmd over HTTPS: OpenSSL, verifying the server's
// certificate against a test CA file and the name it is given, one HTTP/1.1 request at a
// time on the same connection (keep-alive), and the SHA-256 fingerprint of the
// certificate the server presented. Not thread-safe; one per thread.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace crmd::testing {

struct TlsResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; the last of duplicates
  std::string body;
  std::optional<std::string> Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

class TlsConnection {
 public:
  // Connects to 127.0.0.1:port and completes the handshake, verifying the chain against
  // `ca_file` and the certificate against `host` (a DNS name or an IP address).
  TlsConnection(uint16_t port, const std::string& ca_file, const std::string& host = "127.0.0.1");
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  bool ok() const { return ssl_ != nullptr; }
  const std::string& error() const { return error_; }
  // The presented leaf certificate's SHA-256 over its DER, lower-case hex.
  std::string Fingerprint() const;
  // Sends `method path` with `headers` (CRLF-terminated lines) and `body`, keeps the
  // connection open, and reads one Content-Length-framed response; nullopt on a closed
  // connection or a timeout.
  std::optional<TlsResponse> Request(const std::string& method, const std::string& path,
                                     const std::string& headers = "", const std::string& body = "");

 private:
  int fd_ = -1;
  void* ctx_ = nullptr;  // SSL_CTX*
  void* ssl_ = nullptr;  // SSL*
  std::string error_;
  std::string buffered_;
};

}  // namespace crmd::testing
