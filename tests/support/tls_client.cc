#include "tests/support/tls_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "src/core/text.h"

namespace crmd::testing {
namespace {

SSL* S(void* p) { return static_cast<SSL*>(p); }

std::string OpenSslError() {
  char buf[256];
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown TLS error";
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

}  // namespace

TlsConnection::TlsConnection(uint16_t port, const std::string& ca_file, const std::string& host) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ctx_ = ctx;
  if (!ctx || SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) != 1) {
    error_ = "cannot load CA " + ca_file + ": " + OpenSslError();
    return;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    error_ = "connect failed";
    return;
  }
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd_);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  in_addr ip{};
  if (inet_pton(AF_INET, host.c_str(), &ip) == 1) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
  if (SSL_connect(ssl) != 1) {
    error_ = "handshake failed: " + OpenSslError() +
             " (verify: " + X509_verify_cert_error_string(SSL_get_verify_result(ssl)) + ")";
    SSL_free(ssl);
    return;
  }
  ssl_ = ssl;
}

TlsConnection::~TlsConnection() {
  if (ssl_) {
    SSL_shutdown(S(ssl_));
    SSL_free(S(ssl_));
  }
  if (ctx_) SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
  if (fd_ >= 0) close(fd_);
}

std::string TlsConnection::Fingerprint() const {
  if (!ssl_) return "";
  X509* cert = SSL_get1_peer_certificate(S(ssl_));
  if (!cert) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(cert, EVP_sha256(), md, &n);
  X509_free(cert);
  std::string hex;
  char b[3];
  for (unsigned int i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex;
}

std::optional<TlsResponse> TlsConnection::Request(const std::string& method,
                                                  const std::string& path,
                                                  const std::string& headers,
                                                  const std::string& body) {
  if (!ssl_) return std::nullopt;
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers;
  if (!body.empty() || method == "POST")
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  if (SSL_write(S(ssl_), req.data(), static_cast<int>(req.size())) != static_cast<int>(req.size()))
    return std::nullopt;
  auto fill = [&]() -> bool {
    char buf[16384];
    int n = SSL_read(S(ssl_), buf, sizeof buf);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = buffered_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  TlsResponse r;
  std::string head = buffered_.substr(0, end);
  buffered_.erase(0, end + 4);
  size_t line_end = head.find("\r\n");
  std::string status_line = head.substr(0, line_end);
  if (status_line.size() < 12) return std::nullopt;
  r.status = std::stoi(status_line.substr(9, 3));
  size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    if (e == std::string::npos) e = head.size();
    std::string line = head.substr(pos, e - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.erase(v.begin());
      r.headers[text::AsciiLower(line.substr(0, colon))] = v;
    }
    pos = e + 2;
  }
  size_t length = 0;
  if (auto cl = r.Header("content-length")) length = std::stoul(*cl);
  while (buffered_.size() < length)
    if (!fill()) return std::nullopt;
  r.body = buffered_.substr(0, length);
  buffered_.erase(0, length);
  return r;
}

}  // namespace crmd::testing
