// GET /metrics over real HTTP: the exposition parses, and the counters move by exactly the
// traffic the test sends between two scrapes; the allow-list and the second listener.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/http/client.h"
#include "src/store/db.h"
#include "tests/integration/ops/exposition.h"
#include "tests/support/crmd_process.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::opstest {
namespace {

using nlohmann::json;
using testing::McpClient;
using testing::TestServer;

Exposition Scrape(TestServer& server) {
  auto r = server.Get("/metrics");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type").value_or(""), "text/plain; version=0.0.4; charset=utf-8");
  return Exposition(r.body);
}

std::string NewApiKey(TestServer& server) {
  auto k = server.app().services().governance->api_keys->Create("metrics-test");
  EXPECT_TRUE(k.has_value());
  return k ? k->secret : std::string();
}

TEST(Metrics, CountersMoveByExactlyTheTrafficSent) {
  TestServer server({.approval_policy = testing::AssistantMayConfirmAlone()});
  McpClient mcp(server, {.token = testing::MintTestToken(server)});
  ASSERT_TRUE(mcp.Initialize().ok());
  json created = mcp.CallToolOk("create_contact", {{"email", "ada@example.com"}});
  ASSERT_TRUE(created.is_object());
  const int64_t id = created["contact"]["id"];
  const std::string key = NewApiKey(server);

  Exposition before = Scrape(server);
  // The known traffic: 3 successful get_contact calls, 1 get_contact of a contact that
  // does not exist (tool error not_found), 1 request with a refused token, 1 REST read and
  // 1 REST read of an unknown contact (404 not_found).
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(mcp.CallToolOk("get_contact", {{"id", id}}).is_object());
  EXPECT_EQ(mcp.CallToolError("get_contact", {{"id", id + 1000}}).value("code", ""), "not_found");
  McpClient refused(server, {.token = "not-a-token", .validate = false});
  EXPECT_EQ(refused.Ping().status, 401);
  EXPECT_EQ(server.Get("/api/crm/v1/contact/ada%40example.com", {{"X-API-Key", key}}).status, 200);
  EXPECT_EQ(server.Get("/api/crm/v1/contact/nobody%40example.com", {{"X-API-Key", key}}).status,
            404);
  Exposition after = Scrape(server);

  auto delta = [&](const std::string& series) { return after[series] - before[series]; };
  EXPECT_EQ(delta(R"(crmd_mcp_tool_calls_total{tool="get_contact",outcome="ok"})"), 3);
  EXPECT_EQ(delta(R"(crmd_mcp_tool_calls_total{tool="get_contact",outcome="tool_error"})"), 1);
  EXPECT_EQ(delta(R"(crmd_mcp_tool_call_duration_seconds_count{tool="get_contact"})"), 4);
  EXPECT_EQ(delta(R"(crmd_mcp_requests_total{method="tools/call"})"), 4);
  EXPECT_EQ(delta(R"(crmd_mcp_tool_calls_total{tool="create_contact",outcome="ok"})"), 0);
  EXPECT_EQ(delta(R"(crmd_errors_total{face="mcp",code="not_found"})"), 1);
  EXPECT_EQ(delta(R"(crmd_bearer_refused_total{reason="invalid_token"})"), 1);
  EXPECT_EQ(delta(R"(crmd_bearer_refused_total{reason="missing"})"), 0);
  // The refused ping never reached the endpoint; the four calls did.
  EXPECT_EQ(delta(R"(crmd_mcp_requests_total{method="ping"})"), 0);
  EXPECT_EQ(delta(R"(crmd_http_requests_total{face="mcp",route="/mcp",status="2xx"})"), 4);
  EXPECT_EQ(delta(R"(crmd_http_requests_total{face="mcp",route="/mcp",status="4xx"})"), 1);
  EXPECT_EQ(delta(R"(crmd_http_request_duration_seconds_count{face="mcp",route="/mcp"})"), 5);
  EXPECT_EQ(
      delta(R"(crmd_rest_requests_total{method="GET",route="/contact/{email}",status="2xx"})"), 1);
  EXPECT_EQ(
      delta(R"(crmd_rest_requests_total{method="GET",route="/contact/{email}",status="4xx"})"), 1);
  EXPECT_EQ(delta(R"(crmd_errors_total{face="rest",code="not_found"})"), 1);
  EXPECT_EQ(delta(R"(crmd_http_requests_total{face="rest",route="/api/crm/v1/",status="2xx"})"), 1);
  EXPECT_EQ(delta(R"(crmd_http_requests_total{face="rest",route="/api/crm/v1/",status="4xx"})"), 1);
  // The first scrape is counted once it has answered, so the second one shows it.
  EXPECT_EQ(delta(R"(crmd_http_requests_total{face="ops",route="/metrics",status="2xx"})"), 1);
  EXPECT_EQ(delta(R"(crmd_oauth_tokens_issued_total{grant_type="authorization_code"})"), 0);

  // Values read at scrape time.
  EXPECT_GT(after["crmd_process_resident_memory_bytes"], 1024 * 1024);
  EXPECT_EQ(after["crmd_db_up"], 1);
  EXPECT_GT(delta(R"(crmd_db_transaction_duration_seconds_count{kind="read"})"), 0);
  EXPECT_EQ(after[R"(crmd_schema_migrations{level="pending"})"], 0);
  EXPECT_EQ(after[R"(crmd_schema_migrations{level="applied"})"],
            after[R"(crmd_schema_migrations{level="expected"})"]);
  for (const char* queue : {"webhook_deliveries", "campaign_sends", "automation_steps"}) {
    std::string labels = std::string(R"({queue=")") + queue + "\"}";
    EXPECT_TRUE(after.Has("crmd_job_queue_pending" + labels)) << queue;
    EXPECT_TRUE(after.Has("crmd_job_queue_lag_seconds" + labels)) << queue;
  }
  EXPECT_TRUE(after.Has(R"(crmd_webhook_endpoints{state="enabled"})"));
  if (server.app().services().db->dialect() == store::Dialect::kSqlite) {
    // The create before the first scrape was made durable by a sync of the WAL.
    EXPECT_GE(before["crmd_sqlite_wal_syncs_total"], 1);
    EXPECT_TRUE(after.Has(R"(crmd_sqlite_checkpoints_total{by="background"})"));
    EXPECT_TRUE(after.Has(R"(crmd_sqlite_checkpoints_total{by="leader"})"));
  } else {
    EXPECT_FALSE(after.Has("crmd_sqlite_wal_syncs_total"));
  }
}

// The SQLite engine's checkpoints are counted as they happen: 600 contacts with long
// names, one a commit, take the WAL past 1,000 pages, and the checkpoint thread is asked
// for one.
TEST(Metrics, SqliteCheckpointsAndWalSyncsAreCounted) {
  TestServer server;
  if (server.app().services().db->dialect() != store::Dialect::kSqlite) {
    Exposition e = Scrape(server);
    EXPECT_FALSE(e.Has(R"(crmd_sqlite_checkpoints_total{by="background"})"));
    return;
  }
  Exposition before = Scrape(server);
  const std::string name(90, 'n');
  auto& db = *server.app().services().db;
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(db.Write([&](store::Conn& c) -> Status {
      auto r = c.Exec(
          "INSERT INTO contacts (email, first_name, last_name, status, created_at, updated_at) "
          "VALUES (?, ?, ?, 'subscribed', 0, 0)",
          {"c" + std::to_string(i) + "@example.com", name, name});
      if (!r) return Fail(r.error());
      return Ok();
    }));
  }
  // Bounded: the checkpoint thread runs the one asked for on its own time.
  Exposition after = Scrape(server);
  for (int i = 0; i < 100 && after[R"(crmd_sqlite_checkpoints_total{by="background"})"] ==
                                 before[R"(crmd_sqlite_checkpoints_total{by="background"})"];
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = Scrape(server);
  }
  EXPECT_GT(after[R"(crmd_sqlite_checkpoints_total{by="background"})"],
            before[R"(crmd_sqlite_checkpoints_total{by="background"})"]);
  EXPECT_GE(after["crmd_sqlite_wal_syncs_total"] - before["crmd_sqlite_wal_syncs_total"], 1);
}

TEST(Metrics, TokenEndpointCountsRefusalsByOAuthError) {
  TestServer server;
  Exposition before = Scrape(server);
  auto r =
      server.PostForm("/oauth/token", "grant_type=authorization_code&code=nope&client_id=nobody");
  EXPECT_GE(r.status, 400);
  auto r2 = server.PostForm("/oauth/token", "grant_type=password&username=a&password=b");
  EXPECT_GE(r2.status, 400);
  Exposition after = Scrape(server);
  double refused = 0;
  for (const char* e : {"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
                        "unsupported_grant_type", "other"})
    refused += after[std::string(R"(crmd_oauth_token_refused_total{error=")") + e + "\"}"] -
               before[std::string(R"(crmd_oauth_token_refused_total{error=")") + e + "\"}"];
  EXPECT_EQ(refused, 2);
  double issued = 0;
  for (const char* g : {"authorization_code", "refresh_token", "client_credentials", "other"})
    issued += after[std::string(R"(crmd_oauth_tokens_issued_total{grant_type=")") + g + "\"}"];
  EXPECT_EQ(issued, 0);
}

TEST(Metrics, RefusedToAddressesOutsideMetricsAllow) {
  TestServer server({.configure = [](Config& c) { c.metrics_allow = {"192.0.2.0/24"}; }});
  auto r = server.Get("/metrics");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body.find("crmd_"), std::string::npos) << "no metric leaks into the refusal";
  // /healthz and /readyz stay open.
  EXPECT_EQ(server.Get("/healthz").status, 200);
}

TEST(Metrics, AllowListJudgesTheClientATrustedProxyForwards) {
  // Behind a proxy on loopback, the proxy's own address must not open /metrics to the
  // clients it forwards.
  TestServer server({.configure = [](Config& c) { c.trusted_proxies = {"127.0.0.1"}; }});
  EXPECT_EQ(server.Get("/metrics", {{"X-Forwarded-For", "203.0.113.9"}}).status, 403);
  EXPECT_EQ(server.Get("/metrics", {{"X-Forwarded-For", "127.0.0.1"}}).status, 200);
}

TEST(Metrics, ConfirmationsCountedByStepAndOutcome) {
  TestServer server({.approval_policy = testing::AssistantMayConfirmAlone()});
  McpClient mcp(server, {.token = testing::MintTestToken(server)});
  ASSERT_TRUE(mcp.Initialize().ok());
  json created = mcp.CallToolOk("create_contact", {{"email", "gone@example.com"}});
  ASSERT_TRUE(created.is_object());
  Exposition before = Scrape(server);
  json preview = mcp.CallToolOk("delete_contacts", {{"ids", {created["contact"]["id"]}}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  const std::string token = preview.value("confirmation_token", "");
  ASSERT_TRUE(mcp.CallToolOk("confirm_action", {{"confirmation_token", token}}).is_object());
  // The same token again: used up.
  EXPECT_EQ(mcp.CallToolError("confirm_action", {{"confirmation_token", token}}).value("code", ""),
            "confirmation_invalid");
  Exposition after = Scrape(server);
  auto delta = [&](const std::string& series) { return after[series] - before[series]; };
  EXPECT_EQ(delta(R"(crmd_confirmations_total{step="preview",outcome="issued"})"), 1);
  EXPECT_EQ(delta(R"(crmd_confirmations_total{step="preview",outcome="issued_needs_approval"})"),
            0);
  EXPECT_EQ(delta(R"(crmd_confirmations_total{step="confirm",outcome="done"})"), 1);
  EXPECT_EQ(delta(R"(crmd_confirmations_total{step="confirm",outcome="confirmation_invalid"})"), 1);
  EXPECT_EQ(delta(R"(crmd_errors_total{face="mcp",code="confirmation_invalid"})"), 1);
}

TEST(Metrics, WebhookEndpointsByState) {
  TestServer server;
  auto& endpoints = *server.app().services().webhook_endpoints;
  auto a = endpoints.Create(
      {.url = "http://127.0.0.1:9/a", .events = std::vector<std::string>{"contact.created"}});
  auto b = endpoints.Create(
      {.url = "http://127.0.0.1:9/b", .events = std::vector<std::string>{"contact.created"}});
  ASSERT_TRUE(a.has_value() && b.has_value());
  // An operator disables one: "disabled", not "disabled_after_failures".
  ASSERT_TRUE(endpoints.Update(b->first.id, {.enabled = false}).has_value());
  Exposition m = Scrape(server);
  EXPECT_EQ(m[R"(crmd_webhook_endpoints{state="enabled"})"], 1);
  EXPECT_EQ(m[R"(crmd_webhook_endpoints{state="disabled"})"], 1);
  EXPECT_EQ(m[R"(crmd_webhook_endpoints{state="disabled_after_failures"})"], 0);
}

TEST(Metrics, EmptyAllowListRefusesEveryone) {
  TestServer server({.configure = [](Config& c) { c.metrics_allow.clear(); }});
  EXPECT_EQ(server.Get("/metrics").status, 403);
}

TEST(Metrics, SecondListenerServesOnlyOperationsRoutes) {
  const uint16_t port = testing::FreePort();
  TestServer server({.configure = [port](Config& c) {
    c.metrics_listen_address = "127.0.0.1:" + std::to_string(port);
  }});
  auto client = http::MakeHttpClient();
  auto get = [&](const std::string& path) {
    auto r = client->Send(
        {.url = "http://127.0.0.1:" + std::to_string(port) + path, .allow_private = true});
    EXPECT_TRUE(r.has_value());
    return r ? *r : http::ClientResponse{};
  };
  auto metrics = get("/metrics");
  EXPECT_EQ(metrics.status, 200);
  Exposition parsed(metrics.body);
  EXPECT_GT(parsed.size(), 10u);
  EXPECT_EQ(get("/readyz").status, 200);
  EXPECT_EQ(get("/healthz").status, 200);
  EXPECT_EQ(get("/mcp").status, 404);
  EXPECT_EQ(get("/.well-known/oauth-authorization-server").status, 404);
}

TEST(Metrics, BadMetricsAllowEntryRefusesToStart) {
  Config cfg;
  cfg.database_url = "sqlite::memory:";
  cfg.port = 0;
  cfg.metrics_allow = {"not-an-address"};
  auto app = app::App::Create(cfg);
  ASSERT_FALSE(app.has_value());
  EXPECT_NE(app.error().message.find("metrics_allow"), std::string::npos);
}

}  // namespace
}  // namespace crmd::opstest
