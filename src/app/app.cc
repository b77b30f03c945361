#include "src/app/app.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "src/app/services.h"
#include "src/http/client.h"

namespace crmd::app {

App::App() : s_(std::make_unique<Services>()) {}
App::~App() {
  if (s_ && s_->server) s_->server->Stop();
}

const Config& App::config() const { return s_->config; }
App::Services& App::services() { return *s_; }

namespace {

void AddHealthRoutes(App::Services& s) {
  s.router.Exact("/healthz", [](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    return http::Response::Json(200, {{"status", "ok"}});
  });
  s.router.Exact("/readyz", [&s](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    auto ok = s.db->Read([](store::Conn& c) -> Result<bool> {
      auto row = c.QueryOne("SELECT 1");
      if (!row) return Fail(row.error());
      return true;
    });
    if (!ok) return http::Response::Json(503, {{"status", "unavailable"}});
    return http::Response::Json(200, {{"status", "ready"}});
  });
}

}  // namespace

Result<std::unique_ptr<App>> App::Create(Config config) {
  std::unique_ptr<App> app(new App());
  Services& s = *app->s_;
  s.config = std::move(config);
  s.clock = std::make_unique<SystemClock>();
  s.random = std::make_unique<SecureRandom>();
  s.http_client = http::MakeHttpClient();

  auto db = store::Open(s.config.database_url, s.config.worker_threads + 2);
  if (!db) return Fail(db.error());
  s.db = std::move(*db);

  s.server = std::make_unique<http::Server>(
      http::ServerOptions{
          .address = s.config.listen_address,
          .port = s.config.port,
          .tls_cert_file = s.config.tls_cert_file,
          .tls_key_file = s.config.tls_key_file,
          .io_threads = s.config.io_threads,
          .worker_threads = s.config.worker_threads,
          .max_header_bytes = s.config.max_header_bytes,
          .max_body_bytes = s.config.max_body_bytes,
          .read_timeout_s = s.config.read_timeout_s,
          .idle_timeout_s = s.config.idle_timeout_s,
          .max_connections = s.config.max_connections,
          .shutdown_grace_s = s.config.shutdown_grace_s,
          .access_log = spdlog::get_level() <= spdlog::level::info,
      },
      [&s](const http::Request& req) { return s.router.Dispatch(req); });
  // Bind now so that a port-0 listener's real port is known before the issuer is fixed.
  auto port = s.server->Listen();
  if (!port) return Fail(port.error());
  if (s.config.public_base_url.empty()) s.config.port = *port;

  AddHealthRoutes(s);

  // --- module wiring (each module adds its own section below) ---

  return app;
}

Result<uint16_t> App::Start() {
  s_->server->Run();
  spdlog::info(R"("event":"listening","issuer":"{}")", s_->config.Issuer());
  return s_->config.port;
}

void App::Stop() { s_->server->Stop(); }
void App::Wait() { s_->server->Wait(); }
void App::StopOnSignals() { s_->server->StopOnSignals(); }

}  // namespace crmd::app
