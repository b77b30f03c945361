#pragma once
// The server's TLS context (src/http/server.cc): loaded from the configured PEM files at
// Listen() and again on SIGHUP (renewed certificates). A connection keeps the context it
// was accepted with; new ones get the current one. Thread-safe.
#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <string>

#include "src/core/result.h"

namespace crmd::http {

class TlsContexts {
 public:
  TlsContexts(std::string cert_file, std::string key_file)
      : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}

  // Both files are set: the server speaks HTTPS.
  bool Configured() const { return !cert_file_.empty() && !key_file_.empty(); }
  // Loads the context (TLS 1.2 and later) and makes it the current one; on failure the
  // current one stays in use. Without files, does nothing (`reload` says so in the log).
  Status Load(bool reload);
  // Null when not configured.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

 private:
  const std::string cert_file_;
  const std::string key_file_;
  mutable std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // guarded by mu_
};

}  // namespace crmd::http
