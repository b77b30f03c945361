#pragma once
// The HTTP(S) listener. Transport only: it reads a request (header limit, body limit
// checked on the headers so an oversized body is refused with 413 before it is read, read
// and idle timeouts, a connection cap), hands a plain Request to the Handler on the worker
// pool (never on an I/O thread; src/core/worker_pool.h) and writes the Response. Before routing it
// refuses a request that breaks RFC 9112 (request_checks.h) or names a host not allowed (421), and
// tells the handler who the client is, believing forwarding fields from trusted proxies
// only (forwarding.h). Graceful Stop(): stop accepting, let in-flight requests finish
// within the grace period, close idle connections.
//
// Thread-safe: Start/Stop/Wait may be called from any thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"
#include "src/core/result.h"

namespace crmd::http {

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;          // 0: any free port (tests)
  std::string tls_cert_file;  // PEM chain; HTTPS when both are set
  std::string tls_key_file;
  int io_threads = 1;
  // The most handler threads, counting those waiting outside the process (a commit, a
  // PostgreSQL answer); at most as many as the machine has cores run handlers at once
  // (src/core/worker_pool.h).
  int worker_threads = 2;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1024 * 1024;
  // Requests whose content the handler reads as it arrives (Request::body_stream) instead
  // of the listener reading it whole first, asked of a request with a Content-Length (a
  // chunked one is read whole) with its method, path and Content-Type (empty when absent).
  // max_body_bytes does not apply to them: the handler holds the length to its own limit
  // (BodyStream::length) before it reads. Unset: none.
  std::function<bool(std::string_view method, std::string_view path, std::string_view content_type)>
      stream_body;
  int read_timeout_s = 30;
  int idle_timeout_s = 60;
  int max_connections = 10000;
  int shutdown_grace_s = 10;
  bool access_log = true;
  // Hosts a request may name; any other gets 421 (src/http/allowed_hosts.h). Empty: any
  // host. The composition root passes config.allowed_hosts or DefaultAllowedHosts().
  std::vector<std::string> allowed_hosts;
  // Peers whose X-Forwarded-*/Forwarded fields are believed (src/http/forwarding.h): IP
  // addresses or CIDR ranges. Empty: nobody's.
  std::vector<std::string> trusted_proxies;
  // Paths whose remainder after one of these prefixes is a credential (an unsubscribe,
  // opt-in or tracking link's token, an approval id): the access log shows the prefix and
  // "[redacted]" (LoggablePath, src/http/server_text.h). Incoming webhook tokens are cut
  // wherever they appear.
  std::vector<std::string> secret_path_prefixes;
};

class Server {
 public:
  Server(ServerOptions options, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens (connections queue in the backlog); returns the bound port. Fails
  // (kInvalidArgument) on a bad allowed_hosts or trusted_proxies entry.
  Result<uint16_t> Listen();
  // Starts accepting and serving. REQUIRES: Listen() succeeded.
  void Run();
  // Listen() then Run().
  Result<uint16_t> Start();
  // Graceful shutdown; returns once every connection is closed or the grace has passed.
  void Stop();
  // Blocks until Stop() completes (from another thread or a signal).
  void Wait();
  // Stops gracefully on SIGINT/SIGTERM; on SIGHUP reads the TLS certificate and key again
  // (ReloadTls).
  void StopOnSignals();
  // Reads tls_cert_file/tls_key_file again: new connections get the new certificate,
  // established ones keep theirs (nothing is dropped). On failure (unreadable files, a key
  // that does not match) the current certificate stays in use and the error is returned.
  // A no-op without TLS.
  Status ReloadTls();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace crmd::http
