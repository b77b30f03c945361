// The admin REST endpoints for outgoing webhooks, over loopback against a real crmd, with
// a real receiver: create (secret once), list, get, patch, disable, delete, the delivery
// log with its attempts, manual redelivery, and the SSRF refusal of internal targets.
#include <gtest/gtest.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/governance/api_keys.h"
#include "src/governance/audit.h"
#include "tests/integration/rest/rest_fixture.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/support/test_server.h"

namespace crmd::webhooktest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using crmd::testing::TestServerOptions;
using resttest::Bearer;
using resttest::IsProblem;
using resttest::kBase;

void FastAdminWebhooks(Config& c) {
  c.webhook_poll_interval_ms = 100;
  c.webhook_backoff_base_s = 1;
  c.webhook_backoff_max_s = 2;
  c.webhook_timeout_ms = 3000;
}

struct AdminFixture {
  explicit AdminFixture(TestServerOptions options = {.configure = FastAdminWebhooks})
      : server(std::move(options)),
        admin(resttest::NewKey(server, governance::ApiKeyRole::kAdmin, "admin")) {}

  http::ClientResponse Post(const std::string& path, const nlohmann::json& body) {
    return server.PostJson(std::string(kBase) + path, body, Bearer(admin));
  }
  http::ClientResponse Get(const std::string& path) {
    return server.Get(std::string(kBase) + path, Bearer(admin));
  }
  http::ClientResponse Patch(const std::string& path, const nlohmann::json& body) {
    auto h = Bearer(admin);
    h.emplace_back("Content-Type", "application/json");
    return server.Send("PATCH", std::string(kBase) + path, body.dump(), h);
  }
  http::ClientResponse Delete(const std::string& path) {
    return server.Send("DELETE", std::string(kBase) + path, "", Bearer(admin));
  }

  TestServer server;
  std::string admin;
};

// Adds a contact through the contact service: one contact.created event in the outbox.
void NewContact(TestServer& server, const std::string& email) {
  auto c = server.app().services().crm->contacts->Create({.kind = "system", .subject = "test"},
                                                         {.email = email});
  ASSERT_TRUE(c.has_value()) << c.error().message;
}

TEST(AdminWebhooks, CreateShowsTheSecretOnceThenListGetPatchDelete) {
  Receiver receiver;
  AdminFixture f;
  auto created = f.Post("/admin/webhooks", {{"url", receiver.url()},
                                            {"events", {"contact.created", "contact.deleted"}},
                                            {"description", "crm sync"}});
  ASSERT_EQ(created.status, 201) << created.body;
  auto ep = JsonBody(created);
  const std::string secret = ep.value("secret", "");
  EXPECT_EQ(secret.rfind("whsec_", 0), 0u);
  EXPECT_EQ(ep["url"], receiver.url());
  EXPECT_EQ(ep["events"], (nlohmann::json{"contact.created", "contact.deleted"}));
  EXPECT_EQ(ep["enabled"], true);
  const int64_t id = ep["id"];
  const std::string path = "/admin/webhooks/" + std::to_string(id);

  auto list = f.Get("/admin/webhooks");
  ASSERT_EQ(list.status, 200);
  auto items = JsonBody(list)["webhooks"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["id"], id);
  EXPECT_FALSE(items[0].contains("secret"));
  EXPECT_EQ(list.body.find(secret), std::string::npos);

  auto one = f.Get(path);
  ASSERT_EQ(one.status, 200);
  EXPECT_FALSE(JsonBody(one).contains("secret"));

  auto patched = f.Patch(path, {{"events", {"contact.updated"}}, {"description", "v2"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(JsonBody(patched)["events"], nlohmann::json{"contact.updated"});
  EXPECT_EQ(JsonBody(patched)["description"], "v2");

  auto disabled = f.Patch(path, {{"enabled", false}});
  ASSERT_EQ(disabled.status, 200);
  EXPECT_EQ(JsonBody(disabled)["enabled"], false);
  EXPECT_EQ(JsonBody(disabled)["disabled_reason"], "disabled by an operator");
  auto enabled = f.Patch(path, {{"enabled", true}});
  EXPECT_EQ(JsonBody(enabled)["enabled"], true);
  EXPECT_TRUE(JsonBody(enabled)["disabled_reason"].is_null());
  // Both changes are in the audit log, as made by the admin key (issue 13).
  auto audit = f.server.app().services().governance->audit->Recent(10);
  ASSERT_TRUE(audit.has_value());
  std::vector<std::string> actions;
  for (const auto& r : *audit) {
    if (r.entry.target_type != "webhook_endpoint") continue;
    actions.push_back(r.entry.action);
    EXPECT_EQ(r.actor.kind, "api_key");
    EXPECT_EQ(r.entry.target_ids, std::vector<int64_t>{id});
  }
  EXPECT_EQ(actions,
            (std::vector<std::string>{"enable_webhook_endpoint", "disable_webhook_endpoint"}));

  auto bad = f.Patch(path, {{"events", {"contact.exploded"}}});
  EXPECT_EQ(bad.status, 422);
  EXPECT_TRUE(IsProblem(bad));
  EXPECT_EQ(JsonBody(bad)["errors"][0]["field"], "events");

  auto gone = f.Delete(path);
  ASSERT_EQ(gone.status, 200);
  EXPECT_EQ(JsonBody(gone)["deleted"]["id"], id);
  EXPECT_EQ(f.Get(path).status, 404);
  EXPECT_EQ(f.Delete(path).status, 404);
}

TEST(AdminWebhooks, IdempotentCreationReplaysWithoutTheSecret) {
  AdminFixture f;
  auto h = Bearer(f.admin);
  h.emplace_back("Idempotency-Key", "create-endpoint-1");
  const nlohmann::json body = {{"url", "https://hooks.example.com/x"},
                               {"events", {"contact.created"}}};
  auto first = f.server.PostJson(std::string(kBase) + "/admin/webhooks", body, h);
  auto second = f.server.PostJson(std::string(kBase) + "/admin/webhooks", body, h);
  ASSERT_EQ(first.status, 201);
  ASSERT_EQ(second.status, 201);
  EXPECT_EQ(second.Header("Idempotent-Replayed").value_or(""), "true");
  EXPECT_EQ(JsonBody(second)["id"], JsonBody(first)["id"]);
  EXPECT_FALSE(JsonBody(second).contains("secret"));
  EXPECT_EQ(JsonBody(f.Get("/admin/webhooks"))["webhooks"].size(), 1u);
  const std::string secret = JsonBody(first)["secret"];
  auto rows = f.server.app().services().db->Read(
      [](store::Conn& c) { return c.Query("SELECT response FROM idempotency_keys"); });
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->size(), 1u);
  for (const auto& r : *rows) EXPECT_EQ(r.Str(0).find(secret.substr(6)), std::string::npos);
}

TEST(AdminWebhooks, NeedTheAdminRole) {
  AdminFixture f;
  auto integration = resttest::NewKey(f.server);
  auto r = f.server.Get(std::string(kBase) + "/admin/webhooks", Bearer(integration));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(JsonBody(r)["code"], "insufficient_role");
  EXPECT_EQ(f.server.Get(std::string(kBase) + "/admin/webhook-deliveries").status, 401);
}

TEST(AdminWebhooks, ValidationNamesTheField) {
  AdminFixture f;
  auto no_url = f.Post("/admin/webhooks", {{"events", {"contact.created"}}});
  EXPECT_EQ(no_url.status, 422);
  EXPECT_EQ(JsonBody(no_url)["errors"][0]["field"], "url");
  auto ftp =
      f.Post("/admin/webhooks", {{"url", "ftp://example.com/x"}, {"events", {"contact.created"}}});
  EXPECT_EQ(ftp.status, 422);
  EXPECT_EQ(JsonBody(ftp)["errors"][0]["field"], "url");
  auto no_events = f.Post("/admin/webhooks",
                          {{"url", "https://example.com/x"}, {"events", nlohmann::json::array()}});
  EXPECT_EQ(no_events.status, 422);
  EXPECT_EQ(JsonBody(no_events)["errors"][0]["field"], "events");
  auto unknown =
      f.Post("/admin/webhooks",
             {{"url", "https://example.com/x"}, {"events", {"contact.created"}}, {"colour", 1}});
  EXPECT_EQ(unknown.status, 422);
  EXPECT_EQ(JsonBody(unknown)["errors"][0]["field"], "colour");
}

TEST(AdminWebhooks, PrivateAndLoopbackTargetsAreRefusedUnlessAllowed) {
  AdminFixture f({.configure = [](Config& c) { c.allow_private_network_targets = false; }});
  for (const char* url : {"http://127.0.0.1:9/hook", "http://localhost/hook", "http://10.1.2.3/x",
                          "http://192.168.1.1/x", "http://[::1]/x", "http://169.254.169.254/latest",
                          "http://crm.internal/x"}) {
    auto r = f.Post("/admin/webhooks", {{"url", url}, {"events", {"contact.created"}}});
    EXPECT_EQ(r.status, 422) << url;
    EXPECT_TRUE(IsProblem(r)) << url;
    auto body = JsonBody(r);
    EXPECT_EQ(body["code"], "target_not_allowed") << url;
    EXPECT_EQ(body["type"], "urn:crmd:problem:target_not_allowed");
    EXPECT_EQ(body["errors"][0]["field"], "url");
  }
  auto list = f.Get("/admin/webhooks");
  EXPECT_EQ(JsonBody(list)["webhooks"].size(), 0u);
  // The same check on PATCH.
  auto ok = f.Post("/admin/webhooks",
                   {{"url", "https://hooks.example.com/x"}, {"events", {"contact.created"}}});
  ASSERT_EQ(ok.status, 201) << ok.body;
  auto r = f.Patch("/admin/webhooks/" + std::to_string(JsonBody(ok)["id"].get<int64_t>()),
                   {{"url", "http://127.0.0.1/x"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(JsonBody(r)["code"], "target_not_allowed");
}

TEST(AdminWebhooks, LoopbackTargetAllowedByConfig) {
  Receiver receiver;
  AdminFixture f;  // TestServer allows private targets
  auto r = f.Post("/admin/webhooks", {{"url", receiver.url()}, {"events", {"contact.created"}}});
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST(AdminWebhooks, TheDeliveryLogPagesNewestFirstWithNextBeforeId) {
  Receiver receiver;
  AdminFixture f;
  auto created =
      f.Post("/admin/webhooks", {{"url", receiver.url()}, {"events", {"contact.created"}}});
  ASSERT_EQ(created.status, 201) << created.body;
  for (int i = 0; i < 5; ++i) NewContact(f.server, "page" + std::to_string(i) + "@example.com");
  ASSERT_TRUE(receiver.WaitFor([](const auto& reqs) { return reqs.size() >= 5; }));
  std::vector<int64_t> seen;
  std::string query = "/admin/webhook-deliveries?limit=2";
  for (int page = 0; page < 5; ++page) {
    auto r = f.Get(query);
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = JsonBody(r);
    for (const auto& d : body["deliveries"]) seen.push_back(d["id"].get<int64_t>());
    if (body["next_before_id"].is_null()) break;
    EXPECT_EQ(body["deliveries"].size(), 2u) << body.dump();
    EXPECT_EQ(body["next_before_id"], body["deliveries"].back()["id"]) << body.dump();
    query = "/admin/webhook-deliveries?limit=2&before_id=" +
            std::to_string(body["next_before_id"].get<int64_t>());
  }
  // Every delivery once, newest first, and the last page says so.
  ASSERT_EQ(seen.size(), 5u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i - 1], seen[i]);
  EXPECT_EQ(f.Get("/admin/webhook-deliveries?before_id=0").status, 422);
  // A page that holds exactly what is left is the last one.
  auto whole = JsonBody(f.Get("/admin/webhook-deliveries?limit=5"));
  EXPECT_EQ(whole["deliveries"].size(), 5u) << whole.dump();
  EXPECT_TRUE(whole["next_before_id"].is_null()) << whole.dump();
}

TEST(AdminWebhooks, DeliveryLogShowsAttemptsAndRedeliverySendsTheSameMessageAgain) {
  Receiver receiver;
  receiver.set_status(500);  // the first attempt fails
  AdminFixture f;
  auto created =
      f.Post("/admin/webhooks", {{"url", receiver.url()}, {"events", {"contact.created"}}});
  ASSERT_EQ(created.status, 201);
  const int64_t endpoint_id = JsonBody(created)["id"];
  NewContact(f.server, "log@example.com");
  ASSERT_TRUE(receiver.WaitFor([](const auto& reqs) { return !reqs.empty(); }));
  receiver.set_status(200);

  // Wait until the retry succeeded.
  nlohmann::json delivery;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    auto log = f.Get("/admin/webhook-deliveries?endpoint_id=" + std::to_string(endpoint_id));
    ASSERT_EQ(log.status, 200) << log.body;
    auto items = JsonBody(log)["deliveries"];
    if (items.size() == 1 && items[0]["status"] == "succeeded") {
      delivery = items[0];
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(delivery.is_null()) << "the delivery never succeeded";
  EXPECT_EQ(delivery["event_type"], "contact.created");
  EXPECT_GE(delivery["attempts"].get<int>(), 2);
  const int64_t delivery_id = delivery["id"];

  auto filtered = f.Get("/admin/webhook-deliveries?status=failed");
  EXPECT_EQ(JsonBody(filtered)["deliveries"].size(), 0u);
  // Filters that cannot mean anything are refused, not ignored.
  for (const char* bad :
       {"endpoint_id=x", "status=bogus", "limit=0", "limit=100000", "limit=abc", "colour=red"}) {
    auto r = f.Get(std::string("/admin/webhook-deliveries?") + bad);
    EXPECT_EQ(r.status, 422) << bad;
    EXPECT_EQ(JsonBody(r)["code"], "validation_failed") << bad;
  }

  auto detail = f.Get("/admin/webhook-deliveries/" + std::to_string(delivery_id));
  ASSERT_EQ(detail.status, 200);
  auto attempts = JsonBody(detail)["attempt_log"];
  ASSERT_GE(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["status_code"], 500);
  EXPECT_EQ(attempts[attempts.size() - 1]["status_code"], 200);

  const size_t before = receiver.requests().size();
  auto again = f.Post("/admin/webhook-deliveries/" + std::to_string(delivery_id) + "/redeliver",
                      nlohmann::json::object());
  ASSERT_EQ(again.status, 202) << again.body;
  EXPECT_EQ(JsonBody(again)["status"], "pending");
  ASSERT_TRUE(receiver.WaitFor([&](const auto& reqs) { return reqs.size() > before; }));
  auto reqs = receiver.requests();
  // The same webhook-id and the same bytes: receivers dedupe on the id.
  EXPECT_EQ(reqs.back().Header("webhook-id"), reqs.front().Header("webhook-id"));
  EXPECT_EQ(reqs.back().body, reqs.front().body);

  EXPECT_EQ(f.Post("/admin/webhook-deliveries/999999/redeliver", nlohmann::json::object()).status,
            404);
  EXPECT_EQ(f.Get("/admin/webhook-deliveries/999999").status, 404);
}

}  // namespace
}  // namespace crmd::webhooktest
