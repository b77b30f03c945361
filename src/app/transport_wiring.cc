// The transport of a node: the database (with its metrics), the public listener, health
// and metrics routes, and the optional operations listener (metrics_listen_address).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "src/app/services.h"
#include "src/app/wiring.h"
#include "src/console/approvals.h"
#include "src/console/links.h"
#include "src/core/worker_pool.h"
#include "src/http/allowed_hosts.h"
#include "src/http/forwarding.h"
#include "src/store/replica.h"

namespace crmd::app {
// Database connections a node opens at most: one per handler thread that may hold one at
// once, capped at 16 + 2. Handler threads beyond the cap wait for a connection in a
// BlockingRegion (src/core/worker_pool.h; both engines), so a PostgreSQL server's
// max_connections is sized by nodes, not by worker_threads (docs/postgres.md).
int DbPoolSize(const Config& c) { return std::min(c.worker_threads, 16) + 2; }

namespace {

// The routes whose path carries a credential after a fixed prefix: the links in messages
// and the approval pages. Incoming webhook tokens the access log finds by their form.
std::vector<std::string> SecretPathPrefixes() {
  std::vector<std::string> out(std::begin(console::kLinkPrefixes),
                               std::end(console::kLinkPrefixes));
  out.emplace_back(console::kApprovalPagePrefix);
  return out;
}

}  // namespace

Status WireTransport(App::Services& s) {
  auto metrics_allow = http::ProxyTrust::Parse(s.config.metrics_allow);
  if (!metrics_allow)
    return Fail(Errc::kInvalidArgument,
                "metrics_allow: an entry is not an IP address or CIDR range",
                metrics_allow.error().message);
  auto allow = std::make_shared<const http::ProxyTrust>(std::move(*metrics_allow));

  auto db = store::Open(s.config.database_url, DbPoolSize(s.config));
  if (!db) return Fail(db.error());
  s.db = std::move(*db);
  s.db->set_metrics(store::DbMetrics{
      .read_seconds = &s.metrics->Histogram(
          "crmd_db_transaction_duration_seconds",
          "Database transactions (waiting for a connection included).", {{"kind", "read"}}),
      .write_seconds =
          &s.metrics->Histogram("crmd_db_transaction_duration_seconds", "", {{"kind", "write"}}),
      .in_flight = &s.metrics->Gauge("crmd_db_transactions_in_flight",
                                     "Transactions running or waiting for a pooled connection."),
      .failed = &s.metrics->Counter("crmd_db_transactions_failed_total",
                                    "Transactions that returned an error and were rolled back."),
      .group_commit_seconds = &s.metrics->Histogram(
          "crmd_db_group_commit_duration_seconds",
          "SQLite: one group commit (a batch of concurrent writes in one transaction), its "
          "fsync included; writes per commit = write transactions / this count."),
  });

  if (!s.config.database_read_url.empty()) {
    auto routed = store::OpenReplicaRouted(
        s.config.database_read_url, *s.db, DbPoolSize(s.config),
        &s.metrics->Counter("crmd_db_read_replica_fallbacks_total",
                            "Reads the standby (database_read_url) could not serve, run on the "
                            "primary instead."));
    if (!routed) return Fail(routed.error());
    s.read_db = std::move(*routed);
  }

  s.server = std::make_unique<http::Server>(
      http::ServerOptions{
          .address = s.config.listen_address,
          .port = s.config.port,
          .tls_cert_file = s.config.tls_cert_file,
          .tls_key_file = s.config.tls_key_file,
          .io_threads = s.config.io_threads > 0 ? s.config.io_threads : WorkerPool::Cores(),
          .worker_threads = s.config.worker_threads,
          .max_header_bytes = s.config.max_header_bytes,
          .max_body_bytes = s.config.max_body_bytes,
          // A CSV upload to REST imports is stored as it arrives, never held whole.
          .stream_body =
              [&s](std::string_view method, std::string_view path, std::string_view type) {
                return rest::StreamsRequestBody(s.config, method, path, type);
              },
          .read_timeout_s = s.config.read_timeout_s,
          .idle_timeout_s = s.config.idle_timeout_s,
          .max_connections = s.config.max_connections,
          .shutdown_grace_s = s.config.shutdown_grace_s,
          .access_log = spdlog::get_level() <= spdlog::level::info,
          // The issuer's host does not depend on the port, so a port-0 listener's default
          // is right before Listen() knows the port.
          .allowed_hosts = s.config.allowed_hosts.empty()
                               ? http::DefaultAllowedHosts(s.config.Issuer())
                               : s.config.allowed_hosts,
          .trusted_proxies = s.config.trusted_proxies,
          .secret_path_prefixes = SecretPathPrefixes(),
      },
      [&s](const http::Request& req) { return s.router.Dispatch(req); });
  // Bind now so that a port-0 listener's real port is known before the issuer is fixed.
  auto port = s.server->Listen();
  if (!port) return Fail(port.error());
  if (s.config.public_base_url.empty()) s.config.port = *port;

  AddHealthRoutes(s, s.router);
  AddMetricsRoute(s, s.router, allow);
  AddCollectors(s);
  if (!s.config.metrics_listen_address.empty()) {
    // Config::Validate() has refused a malformed address already; this is for a Config
    // built in code.
    auto hp = SplitHostPort(s.config.metrics_listen_address);
    if (!hp) return Fail(hp.error());
    AddHealthRoutes(s, s.ops_router);
    AddMetricsRoute(s, s.ops_router, allow);
    s.ops_server = std::make_unique<http::Server>(
        http::ServerOptions{.address = hp->host,
                            .port = hp->port,
                            .io_threads = 1,
                            .worker_threads = 1,
                            .max_body_bytes = 1024,
                            .max_connections = 64,
                            .shutdown_grace_s = s.config.shutdown_grace_s,
                            .access_log = false,
                            .trusted_proxies = s.config.trusted_proxies},
        [&s](const http::Request& req) { return s.ops_router.Dispatch(req); });
    if (auto bound = s.ops_server->Listen(); !bound) return Fail(bound.error());
  }
  return Ok();
}

}  // namespace crmd::app
