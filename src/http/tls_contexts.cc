#include "src/http/tls_contexts.h"

#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include "src/core/log.h"

namespace crmd::http {

namespace ssl = boost::asio::ssl;

Status TlsContexts::Load(bool reload) {
  if (!Configured()) {
    if (reload)
      spdlog::info(R"("event":"tls_reload_skipped","detail":"no tls_cert_file/tls_key_file")");
    return Ok();
  }
  auto tls = std::make_shared<ssl::context>(ssl::context::tls_server);
  tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  tls->use_certificate_chain_file(cert_file_, ec);
  if (!ec) tls->use_private_key_file(key_file_, ssl::context::pem, ec);
  // A renewed certificate with the old key (or a half-written pair) is refused here,
  // rather than failing every handshake afterwards.
  if (!ec && SSL_CTX_check_private_key(tls->native_handle()) != 1)
    return Fail(Errc::kInvalidArgument,
                "cannot load TLS certificate/key: the key does not match the certificate");
  if (ec) return Fail(Errc::kInvalidArgument, "cannot load TLS certificate/key: " + ec.message());
  {
    std::lock_guard lock(mu_);
    current_ = std::move(tls);
  }
  if (reload) spdlog::info(R"("event":"tls_reloaded","cert":"{}")", JsonEscape(cert_file_));
  return Ok();
}

std::shared_ptr<ssl::context> TlsContexts::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

}  // namespace crmd::http
