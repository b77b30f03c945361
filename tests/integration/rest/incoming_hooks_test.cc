// Incoming webhooks over loopback against a real crmd: admin CRUD (URL shown once, bad
// paths refused at configuration), and the public POST /hooks/{token}: contact created and
// updated with tags, lists and status, a missing required path named in errors[].field,
// HMAC (X-Crmd-Signature) required when configured, a malformed email, unknown and
// disabled tokens.
#include <gtest/gtest.h>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/core/crypto.h"
#include "src/crm/events.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using nlohmann::json;

const json kMapping = {
    {"email", "data.customer.emails[0].address"},
    {"first_name", {{"path", "data.customer.name.first"}, {"required", true}}},
    {"last_name", "data.customer.name.last"},
    {"custom_fields.plan", "data.plan.id"},
};

json Payload(const std::string& email, const std::string& first = "Ada") {
  return {
      {"type", "customer.created"},
      {"data",
       {{"customer",
         {{"emails", {{{"address", email}}}}, {"name", {{"first", first}, {"last", "Lovelace"}}}}},
        {"plan", {{"id", "pro"}}}}}};
}

struct HookFixture {
  explicit HookFixture(crmd::testing::TestServerOptions options = {})
      : server(std::move(options)), admin(NewKey(server, governance::ApiKeyRole::kAdmin, "admin")) {
    auto list = server.app().services().crm->lists->Create({.kind = "system", .subject = "test"},
                                                           "Customers", "");
    EXPECT_TRUE(list.has_value());
  }

  // Creates a hook through the admin API; answers the created body (with "url").
  json CreateHook(json body) {
    auto r = server.PostJson(std::string(kBase) + "/admin/incoming-hooks", body, Bearer(admin));
    EXPECT_EQ(r.status, 201) << r.body;
    return JsonBody(r);
  }
  // The path of a hook URL below base_url().
  std::string PathOf(const std::string& url) {
    EXPECT_EQ(url.rfind(server.base_url(), 0), 0u) << url;
    return url.substr(server.base_url().size());
  }
  http::ClientResponse Deliver(const std::string& url, const std::string& raw,
                               http::Headers headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    return server.Send("POST", PathOf(url), raw, std::move(headers));
  }
  http::ClientResponse Patch(int64_t id, const json& body) {
    auto h = Bearer(admin);
    h.emplace_back("Content-Type", "application/json");
    return server.Send("PATCH", std::string(kBase) + "/admin/incoming-hooks/" + std::to_string(id),
                       body.dump(), h);
  }
  crm::Contact ContactByEmail(const std::string& email) {
    auto c = server.app().services().crm->contacts->GetByEmail(email);
    EXPECT_TRUE(c.has_value()) << email;
    return c ? *c : crm::Contact{};
  }
  std::vector<std::string> OutboxTypes(int64_t contact_id) {
    std::vector<std::string> out;
    auto rows = server.app().services().db->Read([&](store::Conn& c) {
      return c.Query("SELECT event_type FROM outbox_events WHERE contact_id = ? ORDER BY id",
                     {contact_id});
    });
    EXPECT_TRUE(rows.has_value());
    if (rows)
      for (const auto& r : *rows) out.push_back(r.Str(0));
    return out;
  }

  TestServer server;
  std::string admin;
};

std::vector<std::string> Names(const std::vector<crm::NamedRef>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) out.push_back(r.name);
  return out;
}

TEST(IncomingHooks, CreateShowsTheUrlOnceAndListsOnlyThePrefix) {
  HookFixture f;
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  const std::string url = hook["url"];
  EXPECT_EQ(url.rfind(f.server.base_url() + "/api/crm/v1/hooks/crmd_hook_", 0), 0u) << url;
  const std::string token = url.substr(url.rfind('/') + 1);
  EXPECT_EQ(token.substr(0, 18), hook["token_prefix"]);
  EXPECT_EQ(hook["hmac"], false);
  EXPECT_EQ(hook["received_count"], 0);

  auto list = f.server.Get(std::string(kBase) + "/admin/incoming-hooks", Bearer(f.admin));
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(token), std::string::npos);  // never shown again
  auto items = JsonBody(list)["incoming_hooks"];
  ASSERT_EQ(items.size(), 1u);
  EXPECT_FALSE(items[0].contains("url"));
  EXPECT_EQ(items[0]["mapping"], kMapping);

  // Only the hash is stored.
  auto stored = f.server.app().services().db->Read(
      [](store::Conn& c) { return c.Query("SELECT token_hash FROM incoming_webhooks"); });
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ((*stored)[0].Str(0), crypto::HashSecret(token));
}

TEST(IncomingHooks, PayloadCreatesThenUpdatesAContactWithTagsListsAndStatus) {
  HookFixture f;
  auto hook = f.CreateHook({{"name", "shop"},
                            {"mapping", kMapping},
                            {"applies",
                             {{"tags", {"from-shop", "vip"}},
                              {"lists", {"Customers"}},
                              {"status", "subscribed"},
                              {"type", "customer"}}}});
  auto r = f.Deliver(hook["url"], Payload("ada@Example.COM").dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["status"], "accepted");
  EXPECT_EQ(JsonBody(r)["outcome"], "created");

  auto c = f.ContactByEmail("ada@example.com");
  EXPECT_EQ(c.first_name, "Ada");
  EXPECT_EQ(c.last_name, "Lovelace");
  EXPECT_EQ(c.status, "subscribed");
  EXPECT_EQ(c.type, "customer");
  EXPECT_EQ(c.source, "webhook");
  EXPECT_EQ(c.custom_fields["plan"], "pro");
  EXPECT_EQ(Names(c.tags), (std::vector<std::string>{"from-shop", "vip"}));
  EXPECT_EQ(Names(c.lists), (std::vector<std::string>{"Customers"}));
  EXPECT_EQ(JsonBody(r)["contact_id"], c.id);

  // The same contact again with a new first name: an update, no duplicate.
  auto again = f.Deliver(hook["url"], Payload("ada@example.com", "Augusta").dump());
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonBody(again)["outcome"], "updated");
  EXPECT_EQ(f.ContactByEmail("ada@example.com").first_name, "Augusta");
  auto same = f.Deliver(hook["url"], Payload("ada@example.com", "Augusta").dump());
  EXPECT_EQ(JsonBody(same)["outcome"], "unchanged");

  // Events went to the outbox with the change (the contact service's own transaction).
  auto types = f.OutboxTypes(c.id);
  ASSERT_GE(types.size(), 4u);
  EXPECT_EQ(types[0], "contact.created");
  EXPECT_NE(std::find(types.begin(), types.end(), "contact.tag_added"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "contact.list_added"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "contact.updated"), types.end());

  auto got = f.server.Get(
      std::string(kBase) + "/admin/incoming-hooks/" + std::to_string(hook["id"].get<int64_t>()),
      Bearer(f.admin));
  EXPECT_EQ(JsonBody(got)["received_count"], 3);
  EXPECT_FALSE(JsonBody(got)["last_received_at"].is_null());
}

TEST(IncomingHooks, StatusMachineIsEnforced) {
  HookFixture f;
  auto hook = f.CreateHook(
      {{"name", "resubscribe"}, {"mapping", kMapping}, {"applies", {{"status", "subscribed"}}}});
  auto c = f.server.app().services().crm->contacts->Create(
      {.kind = "system", .subject = "test"},
      {.email = "gone@example.com", .status = "unsubscribed"});
  ASSERT_TRUE(c.has_value());
  // unsubscribed -> subscribed needs explicit consent, which a webhook does not carry.
  auto r = f.Deliver(hook["url"], Payload("gone@example.com").dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(JsonBody(r)["code"], "invalid_transition");
  EXPECT_EQ(f.ContactByEmail("gone@example.com").status, "unsubscribed");
  EXPECT_EQ(f.ContactByEmail("gone@example.com").first_name, "");  // nothing applied
}

TEST(IncomingHooks, MissingRequiredPathIs422NamingThePath) {
  HookFixture f;
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  json no_first = Payload("x@example.com");
  no_first["data"]["customer"]["name"].erase("first");
  auto r = f.Deliver(hook["url"], no_first.dump());
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_TRUE(IsProblem(r));
  auto body = JsonBody(r);
  EXPECT_EQ(body["code"], "validation_failed");
  ASSERT_EQ(body["errors"].size(), 1u);
  EXPECT_EQ(body["errors"][0]["field"], "data.customer.name.first");
  EXPECT_EQ(body["errors"][0]["code"], "required");

  json no_email = Payload("x@example.com");
  no_email["data"]["customer"]["emails"] = json::array();
  auto r2 = f.Deliver(hook["url"], no_email.dump());
  ASSERT_EQ(r2.status, 422);
  EXPECT_EQ(JsonBody(r2)["errors"][0]["field"], "data.customer.emails[0].address");
  // Optional paths may be missing.
  json no_last = Payload("y@example.com");
  no_last["data"]["customer"]["name"].erase("last");
  EXPECT_EQ(f.Deliver(hook["url"], no_last.dump()).status, 200);
  EXPECT_FALSE(f.server.app().services().crm->contacts->GetByEmail("x@example.com").has_value());
}

TEST(IncomingHooks, MalformedEmailIs422) {
  HookFixture f;
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  auto r = f.Deliver(hook["url"], Payload("not-an-email").dump());
  ASSERT_EQ(r.status, 422) << r.body;
  auto body = JsonBody(r);
  EXPECT_EQ(body["code"], "validation_failed");
  EXPECT_EQ(body["errors"][0]["field"], "data.customer.emails[0].address");
  EXPECT_EQ(body["errors"][0]["code"], "invalid_email");
  json numeric = Payload("x");
  numeric["data"]["customer"]["emails"][0]["address"] = 42;
  auto r2 = f.Deliver(hook["url"], numeric.dump());
  EXPECT_EQ(r2.status, 422);
  EXPECT_EQ(JsonBody(r2)["errors"][0]["code"], "invalid_type");
}

TEST(IncomingHooks, HmacIsRequiredWhenConfigured) {
  HookFixture f;
  const std::string secret = "shared-secret-0123456789";
  auto hook = f.CreateHook({{"name", "signed"}, {"mapping", kMapping}, {"hmac_secret", secret}});
  EXPECT_EQ(hook["hmac"], true);
  EXPECT_FALSE(hook.contains("hmac_secret"));
  const std::string raw = Payload("signed@example.com").dump();
  const std::string good = "sha256=" + crypto::Hex(crypto::HmacSha256(secret, raw));

  auto missing = f.Deliver(hook["url"], raw);
  EXPECT_EQ(missing.status, 401);
  EXPECT_TRUE(IsProblem(missing));
  EXPECT_EQ(JsonBody(missing)["code"], "invalid_signature");
  auto wrong =
      f.Deliver(hook["url"], raw,
                {{"X-Crmd-Signature",
                  "sha256=" + crypto::Hex(crypto::HmacSha256("other-secret-xxxxxxxx", raw))}});
  EXPECT_EQ(wrong.status, 401);
  auto tampered =
      f.Deliver(hook["url"], Payload("evil@example.com").dump(), {{"X-Crmd-Signature", good}});
  EXPECT_EQ(tampered.status, 401);
  auto bare_hex = f.Deliver(hook["url"], raw, {{"X-Crmd-Signature", good.substr(7)}});
  EXPECT_EQ(bare_hex.status, 401);
  EXPECT_FALSE(
      f.server.app().services().crm->contacts->GetByEmail("signed@example.com").has_value());

  auto ok = f.Deliver(hook["url"], raw, {{"X-Crmd-Signature", good}});
  EXPECT_EQ(ok.status, 200) << ok.body;
  f.ContactByEmail("signed@example.com");

  // Removing the secret makes the signature optional again.
  auto patched = f.Patch(hook["id"], {{"hmac_secret", nullptr}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(JsonBody(patched)["hmac"], false);
  EXPECT_EQ(f.Deliver(hook["url"], Payload("plain@example.com").dump()).status, 200);
}

TEST(IncomingHooks, UnknownAndDisabledTokensAre404) {
  HookFixture f;
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  const std::string url = hook["url"];
  const std::string raw = Payload("a@example.com").dump();
  for (const std::string& bad :
       {std::string(kBase) + "/hooks/nope",
        std::string(kBase) +
            "/hooks/crmd_hook_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        f.PathOf(url).substr(0, f.PathOf(url).size() - 1) + (url.back() == 'A' ? "B" : "A")}) {
    auto h = http::Headers{{"Content-Type", "application/json"}};
    auto r = f.server.Send("POST", bad, raw, h);
    EXPECT_EQ(r.status, 404) << bad;
    EXPECT_TRUE(IsProblem(r));
    EXPECT_EQ(JsonBody(r)["code"], "not_found");
  }
  ASSERT_EQ(f.Patch(hook["id"], {{"enabled", false}}).status, 200);
  auto disabled = f.Deliver(url, raw);
  EXPECT_EQ(disabled.status, 404);
  ASSERT_EQ(f.Patch(hook["id"], {{"enabled", true}}).status, 200);
  EXPECT_EQ(f.Deliver(url, raw).status, 200);
  // GET on the hook URL: 405 with Allow.
  auto get = f.server.Get(f.PathOf(url));
  EXPECT_EQ(get.status, 405);
}

TEST(IncomingHooks, BadPathsAndConfigurationAreRefusedAtCreation) {
  HookFixture f;
  auto post = [&](const json& body) {
    return f.server.PostJson(std::string(kBase) + "/admin/incoming-hooks", body, Bearer(f.admin));
  };
  auto r = post({{"name", "bad"}, {"mapping", {{"email", "data.customer.emails[x].address"}}}});
  ASSERT_EQ(r.status, 422) << r.body;
  EXPECT_TRUE(IsProblem(r));
  EXPECT_EQ(JsonBody(r)["errors"][0]["field"], "mapping.email");
  EXPECT_NE(JsonBody(r)["errors"][0]["message"].get<std::string>().find("character 22"),
            std::string::npos)
      << r.body;
  struct Case {
    json body;
    const char* field;
  };
  for (const Case& c :
       {Case{{{"mapping", kMapping}}, "name"}, Case{{{"name", "x"}}, "mapping"},
        Case{{{"name", "x"}, {"mapping", {{"first_name", "a"}}}}, "mapping.email"},
        Case{{{"name", "x"}, {"mapping", {{"email", "a"}, {"password", "b"}}}}, "mapping.password"},
        Case{{{"name", "x"}, {"mapping", kMapping}, {"applies", {{"status", "happy"}}}},
             "applies.status"},
        Case{{{"name", "x"}, {"mapping", kMapping}, {"applies", {{"lists", {"No Such List"}}}}},
             "applies.lists"},
        Case{{{"name", "x"}, {"mapping", kMapping}, {"hmac_secret", "short"}}, "hmac_secret"},
        Case{{{"name", "x"}, {"mapping", kMapping}, {"token", "mine"}}, "token"}}) {
    auto res = post(c.body);
    EXPECT_EQ(res.status, 422) << c.body.dump() << " " << res.body;
    EXPECT_EQ(JsonBody(res)["errors"][0]["field"], c.field) << res.body;
  }
  auto list = f.server.Get(std::string(kBase) + "/admin/incoming-hooks", Bearer(f.admin));
  EXPECT_EQ(JsonBody(list)["incoming_hooks"].size(), 0u);
}

TEST(IncomingHooks, AdminEndpointsNeedTheAdminRoleAndDeleteRemovesTheUrl) {
  HookFixture f;
  auto integration = NewKey(f.server);
  auto denied = f.server.Get(std::string(kBase) + "/admin/incoming-hooks", Bearer(integration));
  EXPECT_EQ(denied.status, 403);
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  const std::string path =
      std::string(kBase) + "/admin/incoming-hooks/" + std::to_string(hook["id"].get<int64_t>());
  auto del = f.server.Send("DELETE", path, "", Bearer(f.admin));
  ASSERT_EQ(del.status, 200);
  EXPECT_EQ(f.server.Get(path, Bearer(f.admin)).status, 404);
  EXPECT_EQ(f.Deliver(hook["url"], Payload("a@example.com").dump()).status, 404);
}

TEST(IncomingHooks, SecretsNeverReachTheIdempotencyStore) {
  HookFixture f;
  auto h = Bearer(f.admin);
  h.emplace_back("Idempotency-Key", "create-hook-1");
  const json body = {{"name", "shop"}, {"mapping", kMapping}};
  auto first = f.server.PostJson(std::string(kBase) + "/admin/incoming-hooks", body, h);
  auto second = f.server.PostJson(std::string(kBase) + "/admin/incoming-hooks", body, h);
  ASSERT_EQ(first.status, 201);
  ASSERT_EQ(second.status, 201);
  // Replayed (one hook), but without the URL: it is shown once and never stored.
  EXPECT_EQ(second.Header("Idempotent-Replayed").value_or(""), "true");
  EXPECT_EQ(JsonBody(second)["id"], JsonBody(first)["id"]);
  EXPECT_FALSE(JsonBody(second).contains("url"));
  auto list = f.server.Get(std::string(kBase) + "/admin/incoming-hooks", Bearer(f.admin));
  EXPECT_EQ(JsonBody(list)["incoming_hooks"].size(), 1u);

  const std::string url = JsonBody(first)["url"];
  auto delivered =
      f.Deliver(url, Payload("idem@example.com").dump(), {{"Idempotency-Key", "evt-1"}});
  EXPECT_EQ(delivered.status, 200);
  EXPECT_FALSE(delivered.Header("Idempotent-Replayed").has_value());
  const std::string secret_part = url.substr(url.rfind('/') + 1 + 18);
  auto rows = f.server.app().services().db->Read(
      [](store::Conn& c) { return c.Query("SELECT scope, response FROM idempotency_keys"); });
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->size(), 1u);  // the creation only, not the delivery
  for (const auto& r : *rows) {
    EXPECT_EQ(r.Str(0).find(secret_part), std::string::npos) << r.Str(0);
    EXPECT_EQ(r.Str(1).find(secret_part), std::string::npos);
  }
}

// Issue 13: the public receiving route is limited per client IP (hook_rate_limit_per_minute),
// counting the client a trusted proxy forwarded; the limit answers before the token is
// looked up, so guessing tokens is throttled too.
TEST(IncomingHooks, ReceivingIsLimitedPerClientIpWithRetryAfter_Rfc6585_4) {
  HookFixture f({.configure = [](Config& c) {
    c.hook_rate_limit_per_minute = 3;
    c.trusted_proxies = {"127.0.0.1"};
  }});
  auto hook = f.CreateHook({{"name", "shop"}, {"mapping", kMapping}});
  const std::string url = hook["url"];
  auto deliver_as = [&](const std::string& client, const std::string& target,
                        const std::string& email) {
    return f.Deliver(target, Payload(email).dump(), {{"X-Forwarded-For", client}});
  };
  for (int i = 0; i < 3; ++i) {
    auto ok = deliver_as("198.51.100.1", url, "limit" + std::to_string(i) + "@example.com");
    ASSERT_EQ(ok.status, 200) << ok.body;
  }
  auto limited = deliver_as("198.51.100.1", url, "limit9@example.com");
  EXPECT_EQ(limited.status, 429) << limited.body;
  EXPECT_EQ(limited.Header("Content-Type").value_or(""), "application/problem+json");
  EXPECT_EQ(JsonBody(limited)["code"], "rate_limited");
  ASSERT_TRUE(limited.Header("Retry-After"));
  const int retry_after = std::stoi(std::string(*limited.Header("Retry-After")));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 65);  // a request counts for 60 to 65 s (src/rest/ip_limiter.h)
  // Guessing: an unknown token from the same client is refused by the limit, not looked up.
  const std::string guessed = url.substr(0, url.rfind('/') + 1) + "crmd_hook_guessed";
  EXPECT_EQ(deliver_as("198.51.100.1", guessed, "guess@example.com").status, 429);
  // Another client behind the same proxy has its own allowance.
  EXPECT_EQ(deliver_as("198.51.100.2", url, "other@example.com").status, 200);
  EXPECT_EQ(deliver_as("198.51.100.2", guessed, "guess@example.com").status, 404);
  EXPECT_FALSE(
      f.server.app().services().crm->contacts->GetByEmail("limit9@example.com").has_value());
  EXPECT_TRUE(f.server.app().services().crm->contacts->GetByEmail("other@example.com").has_value());
}

}  // namespace
}  // namespace crmd::resttest
