#pragma once
// crmd's configuration. Sources, later overriding earlier: defaults, a JSON file
// (--config=PATH or CRMD_CONFIG), environment (CRMD_<KEY> upper-cased), flags (--key=value).
// Keys are the snake_case member names below.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd {

struct Config {
  // Listener
  std::string listen_address = "127.0.0.1";
  uint16_t port = 8080;
  std::string public_base_url;  // the OAuth issuer; default http://<listen_address>:<port>
  std::string tls_cert_file;    // PEM; HTTPS when both cert and key are set
  std::string tls_key_file;
  bool allow_insecure_http = false;  // allow plain HTTP on a non-loopback address
  // Threads running the listener's I/O (parsing, TLS, writing answers; they never block).
  // 0: one per core (WorkerPool::Cores()); the trade-off between reads and durable writes
  // is measured in docs/performance.md.
  int io_threads = 0;
  // The most handler threads. At most as many as there are cores run handlers at once; a
  // handler waiting for a durable commit (SQLite group commit: one fsync per batch of the
  // writers waiting) or a PostgreSQL answer gives its place to another meanwhile, so many
  // writers can wait on one commit (src/core/worker_pool.h, docs/performance.md).
  int worker_threads = 64;

  // Storage
  std::string database_url = "sqlite:crmd.db";  // or postgres://...
  // Optional hot standby of a PostgreSQL database_url for reads that tolerate lag (reports,
  // the dashboard, exports; src/store/replica.h). Empty: every read goes to database_url.
  std::string database_read_url;

  // Tokens (seconds)
  int64_t access_token_ttl = 3600;
  int64_t refresh_token_ttl = 30 * 24 * 3600;
  int64_t auth_code_ttl = 60;
  int64_t signing_key_rotation = 30 * 24 * 3600;

  // HTTP hygiene
  std::vector<std::string> allowed_origins;  // exact origins allowed on /mcp and forms
  // Hosts a request may name on every route (host: any port, host:port, *.domain, or *;
  // case-insensitive); others get 421. Empty: the host of public_base_url plus the loopback
  // names, any port (docs/http.md).
  std::vector<std::string> allowed_hosts;
  // Peers (IP addresses or CIDR ranges) whose X-Forwarded-For/-Proto/-Host and Forwarded
  // (RFC 7239) headers are believed. Empty: nobody's; the socket peer is the client.
  std::vector<std::string> trusted_proxies;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 1024 * 1024;
  int read_timeout_s = 30;
  int idle_timeout_s = 60;
  int max_connections = 10000;
  int shutdown_grace_s = 10;

  // Outbound fetches (Client ID Metadata Documents, webhooks): private/loopback targets.
  bool allow_private_network_targets = false;

  // OAuth dynamic client registration from every address together, per hour (each address
  // alone: 20 a minute); 0: no global cap. Clients never used for a grant are purged a day
  // after they registered.
  int registration_limit_per_hour = 1000;

  // MCP: sustained tools/call per second per principal (token bucket; <= 0 disables)
  double mcp_calls_per_second = 100;
  double mcp_calls_burst = 1000;
  // Check every tool result against its output schema before sending it. Costs about a
  // third of a simple call's CPU; the test servers and the e2e suite turn it on, so a
  // result that breaks its schema fails the tests rather than an assistant.
  bool mcp_validate_output = false;
  // MCP Apps: the views (ui://crmd/confirm, dashboard, contact) offered to clients that
  // declare the extension io.modelcontextprotocol/ui. Off: no client is offered them.
  bool mcp_apps = true;

  // REST
  std::string rest_root = "api";
  std::string rest_namespace = "crm";
  size_t rest_max_body_bytes = 256 * 1024;  // REST bodies over this: 413 problem JSON
  // A contact import's file (POST /api/crm/v1/imports, crmctl contacts import): over this it
  // is refused at once with 413 problem JSON.
  int64_t import_max_bytes = 256LL * 1024 * 1024;
  // How long a node holds an import it runs between batches: a node that died leaves its
  // import to another (or to itself restarted) after this.
  int64_t import_lease_s = 60;
  int form_rate_limit_per_minute = 30;   // keyless submissions per IP per form
  int hook_rate_limit_per_minute = 120;  // POST /hooks/{token} per client IP (0: no limit)

  // Outgoing webhooks (rest helper): worker poll interval, retry schedule, auto-disable.
  int webhook_poll_interval_ms = 1000;
  int64_t webhook_backoff_base_s = 30;   // first retry delay; doubles per attempt
  int64_t webhook_backoff_max_s = 3600;  // cap of one delay (a success after an outage
                                         // releases the waiting ones at once)
  // Give up on a delivery after retrying it this long: as long as the disable window below,
  // so an outage either ends in time for the backlog or disables the endpoint with its
  // backlog kept; no delivery is given up while its endpoint is merely failing.
  int64_t webhook_retry_horizon_s = 5 * 24 * 3600;
  int webhook_timeout_ms = 15000;      // per delivery attempt
  int64_t webhook_lease_grace_s = 30;  // an attempt's lease: timeout + this (then a crashed
                                       // node's delivery is retried elsewhere)
  // Auto-disable: an endpoint is disabled only when it has had no successful delivery for
  // webhook_disable_after_s (counted from its first failure after a success or an enable)
  // AND at least webhook_disable_after_failures failed attempts in that run. Its backlog
  // stays queued while it is disabled and is delivered once it is enabled again.
  int64_t webhook_disable_after_s = 5 * 24 * 3600;
  int webhook_disable_after_failures = 20;

  // Email (docs/mail.md). smtp_url empty: messages are written as .eml files to mail_dir.
  std::string smtp_url;               // smtp://[user:pass@]host[:port] or smtps://...
  std::string mail_from;              // default sender; empty: crmd@<public_base_url host>
  double mail_rate_per_second = 20;   // per node; 0 = unthrottled
  int mail_concurrency = 2;           // SMTP connections (sending threads) per node
  std::string mail_dir = "var/mail";  // where the file transport writes
  int mail_poll_interval_ms = 1000;   // send queue and automation steps poll
  int64_t mail_lease_s = 120;  // a recipient or step being worked on: retried elsewhere after
  // Provider event receivers (docs/mail.md): how far a signed timestamp may be from now,
  // and how long processed event ids are remembered (at least the window, so a replayed
  // token is never forgotten while its timestamp still passes).
  int64_t mail_receiver_window_s = 300;
  int64_t mail_receiver_retention_s = 604800;
  // Bounce mailbox (docs/mail.md): messages go out with the envelope sender
  // bounce+<token>@bounce_domain when it is set; bounce_mailbox_url (imap://, imaps://,
  // pop3://, pop3s://, with user and password) is polled every bounce_poll_seconds for the
  // DSNs and feedback reports that come back. The URL's password is never logged.
  std::string bounce_domain;
  std::string bounce_mailbox_url;
  int64_t bounce_poll_seconds = 60;
  std::string dkim_private_key_file;  // PEM, RSA; DKIM is on when all three are set
  std::string dkim_selector;
  std::string dkim_domain;
  // The DNS server ("a.b.c.d:port") that email validation and the pre-send check ask;
  // empty: the system's resolver.
  std::string dns_server;
  // Housekeeping (src/jobs/housekeeping.h): expired rows are deleted every interval.
  int64_t housekeeping_interval_s = 600;  // 0 disables the background sweep
  int64_t retention_days = 30;            // confirmations and webhook attempts kept this long

  // Operations (docs/operations.md): GET /metrics (Prometheus text format) answers only
  // clients in these IP addresses / CIDR ranges (the client as trusted_proxies resolve
  // it); others get 403. Empty: nobody.
  std::vector<std::string> metrics_allow = {"127.0.0.0/8", "::1"};
  // "host:port" of a second listener that serves only /metrics, /healthz and /readyz
  // (metrics_allow applies there too); empty: none, /metrics is on the main port only.
  std::string metrics_listen_address;

  // Logging
  std::string log_level = "info";   // trace, debug, info, warn, error
  std::string log_format = "json";  // json (JSON lines) or text

  bool Tls() const { return !tls_cert_file.empty() && !tls_key_file.empty(); }
  // Issuer without a trailing slash.
  std::string Issuer() const;
  // The protected resource: <issuer>/mcp
  std::string McpResource() const { return Issuer() + "/mcp"; }

  // Sets one key from its text form.
  Status Set(const std::string& key, const std::string& value);
  // Every key Set accepts, in the order `crmd --help` lists them.
  static std::vector<std::string_view> Keys();
  // Checks cross-field rules (plain HTTP only on loopback unless overridden, ...).
  Status Validate() const;
  // bounce_domain a host name; bounce_mailbox_url imap(s):// or pop3(s):// and only with a
  // bounce_domain (without VERP nothing that comes back could be attributed).
  Status CheckBounceMailbox() const;
};

// Loads from file, environment and argv (flags not of the form --key=value are returned
// in `rest` for the caller, e.g. subcommands). An unknown key in the file or a flag is an
// error (a typo); an unknown CRMD_* environment variable is not (deployments set their own
// for their scripts): it is reported in `warnings`, naming the variable, and ignored.
Result<Config> LoadConfig(int argc, char** argv, std::vector<std::string>* rest = nullptr,
                          std::vector<std::string>* warnings = nullptr);

// "host:port" or "[v6]:port" (metrics_listen_address): the host without brackets and a port
// in 0..65535 written in digits only.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};
Result<HostPort> SplitHostPort(const std::string& address);

// dns_server: empty, or an IPv4 address and a port 1..65535 ("127.0.0.1:5353").
Status ValidateDnsServer(const std::string& server);

bool IsLoopbackAddress(const std::string& host);

}  // namespace crmd
