// Regressions from black-box testing of the REST API: hostile JSON, secrets and
// Idempotency-Key, HEAD/OPTIONS, and error fields that name the right member.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "src/crm/services.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using nlohmann::json;

http::Headers JsonWith(const std::string& key) {
  return {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + key}};
}

TEST(RestHardening, DeeplyNestedJsonIs400AndTheServerStaysUp) {
  TestServer server;
  auto key = NewKey(server);
  const int n = 70000;  // crashed a worker's stack when it was serialised
  std::string body = R"({"email":"deep@example.com","custom_fields":{"a":)" + std::string(n, '[') +
                     std::string(n, ']') + "}}";
  auto r = server.Send("POST", Url("/contact"), body, JsonWith(key));
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(IsProblem(r));
  EXPECT_EQ(JsonBody(r)["code"], "json_too_deep");
  EXPECT_EQ(server.Get("/healthz").status, 200);
  EXPECT_FALSE(server.app().services().crm->contacts->GetByEmail("deep@example.com"));
}

TEST(RestHardening, AMemberGivenTwiceIs400) {
  TestServer server;
  auto key = NewKey(server);
  auto r = server.Send("POST", Url("/contact"),
                       R"({"email":"a@example.com","email":"b@example.com"})", JsonWith(key));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(JsonBody(r)["code"], "duplicate_member");
  EXPECT_NE(JsonBody(r)["detail"].get<std::string>().find("email"), std::string::npos);
  EXPECT_FALSE(server.app().services().crm->contacts->GetByEmail("b@example.com"));
}

TEST(RestHardening, ANulCharacterInAStringIs400AndWritesNothing) {
  // PostgreSQL's text cannot hold U+0000: it used to keep "Smith" of "Smith\u0000; extra"
  // and fold the tag "vip\u0000-not" into "vip", while SQLite kept every byte.
  TestServer server;
  auto key = NewKey(server);
  auto r =
      server.Send("POST", Url("/contact"),
                  R"({"email":"nul@example.com","last_name":"Smith\u0000; extra","tags":["vip"]})",
                  JsonWith(key));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_TRUE(IsProblem(r));
  EXPECT_EQ(JsonBody(r)["code"], "nul_character");
  EXPECT_NE(JsonBody(r)["detail"].get<std::string>().find("\\u0000"), std::string::npos) << r.body;
  EXPECT_FALSE(server.app().services().crm->contacts->GetByEmail("nul@example.com"));
  auto tags = server.app().services().db->Read(
      [&](store::Conn& c) { return c.QueryOne("SELECT COUNT(*) FROM tags"); });
  ASSERT_TRUE(tags && *tags);
  EXPECT_EQ((*tags)->Int(0), 0);
}

TEST(RestHardening, AnApiKeySecretIsNeverReplayedNorStored) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto h = Bearer(admin);
  h.push_back({"Idempotency-Key", "make-key-1"});
  auto first = server.PostJson(Url("/admin/api-keys"), {{"name", "zap"}}, h);
  ASSERT_EQ(first.status, 201) << first.body;
  std::string secret = JsonBody(first)["key"];
  auto again = server.PostJson(Url("/admin/api-keys"), {{"name", "zap"}}, h);
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.Header("Idempotent-Replayed").value_or(""), "true");
  EXPECT_FALSE(JsonBody(again).contains("key"));
  EXPECT_EQ(JsonBody(again)["id"], JsonBody(first)["id"]);
  EXPECT_EQ(again.body.find(secret), std::string::npos);
  auto stored = server.app().services().db->Read(
      [&](store::Conn& c) { return c.Query("SELECT response FROM idempotency_keys"); });
  ASSERT_TRUE(stored);
  ASSERT_FALSE(stored->empty());
  for (const auto& row : *stored) EXPECT_EQ(row.Str(0).find(secret), std::string::npos);
}

TEST(RestHardening, AdminKeyEndpointsRefuseUnknownMembers) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  auto r = server.PostJson(Url("/admin/api-keys"), {{"name", "e"}, {"status", "disabled"}},
                           Bearer(admin));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(JsonBody(r)["errors"][0]["field"], "status");
  EXPECT_EQ(JsonBody(r)["errors"][0]["code"], "unknown_member");
  auto list = server.app().services().governance->api_keys->List();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 1u);  // only the admin key: nothing was created
  auto p = server.Send("PATCH", Url("/admin/api-keys/" + std::to_string((*list)[0].id)),
                       R"({"status":"enabled","role":"integration"})", JsonWith(admin));
  EXPECT_EQ(p.status, 422);
}

TEST(RestHardening, HeadIsServedWhereGetIsWithoutABody) {
  TestServer server;
  auto key = NewKey(server);
  ASSERT_EQ(server.PostJson(Url("/contact"), {{"email", "h@example.com"}}, Bearer(key)).status,
            201);
  auto get = server.Get(Url("/contact/h@example.com"), Bearer(key));
  auto head = server.Send("HEAD", Url("/contact/h@example.com"), "", Bearer(key));
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.Header("Content-Length").value_or(""), std::to_string(get.body.size()));
  EXPECT_EQ(server.Send("HEAD", Url("/openapi.json")).status, 200);
  auto put = server.Send("PUT", Url("/contact/h@example.com"), "", Bearer(key));
  EXPECT_EQ(put.Header("Allow").value_or(""), "GET, HEAD");
}

TEST(RestHardening, ErrorsNameTheMemberTheyAreAbout) {
  TestServer server;
  auto key = NewKey(server);
  auto tag =
      server.PostJson(Url("/contact"), {{"email", "t@example.com"}, {"tags", {999}}}, Bearer(key));
  EXPECT_EQ(tag.status, 422) << tag.body;
  EXPECT_EQ(JsonBody(tag)["errors"][0]["field"], "tags");
  auto longtag = server.PostJson(Url("/contact"),
                                 {{"email", "t@example.com"}, {"tags", {std::string(1000, 'x')}}},
                                 Bearer(key));
  EXPECT_EQ(longtag.status, 422);
  EXPECT_EQ(JsonBody(longtag)["errors"][0]["field"], "tags");
}

TEST(RestHardening, ReplayedCreateKeepsItsLocation) {
  TestServer server;
  auto key = NewKey(server);
  auto h = Bearer(key);
  h.push_back({"Idempotency-Key", "loc-1"});
  auto first = server.PostJson(Url("/contact"), {{"email", "loc@example.com"}}, h);
  auto again = server.PostJson(Url("/contact"), {{"email", "loc@example.com"}}, h);
  ASSERT_EQ(first.status, 201);
  EXPECT_EQ(again.Header("Idempotent-Replayed").value_or(""), "true");
  EXPECT_EQ(again.Header("Location").value_or("-"), first.Header("Location").value_or(""));
}

TEST(RestHardening, FormsNameContactLimitsAsFormFieldsAndPlainOptionsAnswers) {
  TestServer server;
  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  json def = {{"name", "f"},
              {"fields",
               {{{"name", "email"}, {"type", "Email"}, {"required", true}},
                {{"name", "first_name"}, {"type", "Input"}}}},
              {"allowed_origins", {"*"}}};
  auto created = server.PostJson(Url("/admin/forms"), def, Bearer(admin));
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = JsonBody(created)["public_id"];
  auto r = server.PostJson(
      Url("/form/submit/" + id),
      {{"fields", {{"email", "f@example.com"}, {"first_name", std::string(500, 'a')}}}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(JsonBody(r)["errors"][0]["field"], "fields.first_name");
  auto opt = server.Send("OPTIONS", Url("/form/submit/" + id));
  EXPECT_EQ(opt.status, 204);
  EXPECT_EQ(opt.Header("Allow").value_or(""), "POST, OPTIONS");
}

TEST(RestHardening, IdsOfDeletedContactsAndKeysAreNeverReused) {
  TestServer server;
  auto key = NewKey(server);
  auto a = server.PostJson(Url("/contact"), {{"email", "reuse1@example.com"}}, Bearer(key));
  ASSERT_EQ(a.status, 201);
  int64_t first = JsonBody(a)["contact"]["id"];
  ASSERT_EQ(
      server.Send("DELETE", Url("/contact/delete/reuse1@example.com"), "", Bearer(key)).status,
      200);
  auto b = server.PostJson(Url("/contact"), {{"email", "reuse2@example.com"}}, Bearer(key));
  ASSERT_EQ(b.status, 201);
  EXPECT_GT(JsonBody(b)["contact"]["id"].get<int64_t>(), first);

  auto& keys = *server.app().services().governance->api_keys;
  auto k1 = keys.Create("one", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(k1);
  ASSERT_TRUE(keys.Delete(k1->key.id));
  auto k2 = keys.Create("two", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(k2);
  EXPECT_GT(k2->key.id, k1->key.id);

  // Lists, forms and webhook endpoints too.
  auto& lists = *server.app().services().crm->lists;
  auto l1 = lists.Create({.kind = "cli"}, "Gone", "");
  ASSERT_TRUE(l1);
  ASSERT_TRUE(server.app().services().db->Write(
      [&](store::Conn& c) { return c.Exec("DELETE FROM lists WHERE id = ?", {l1->id}); }));
  auto l2 = lists.Create({.kind = "cli"}, "Next", "");
  ASSERT_TRUE(l2);
  EXPECT_GT(l2->id, l1->id);

  auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
  json form = {{"name", "f"}, {"fields", {{{"name", "email"}, {"type", "Email"}}}}};
  int64_t f1 = JsonBody(server.PostJson(Url("/admin/forms"), form, Bearer(admin)))["id"];
  ASSERT_EQ(
      server.Send("DELETE", Url("/admin/forms/" + std::to_string(f1)), "", Bearer(admin)).status,
      200);
  int64_t f2 = JsonBody(server.PostJson(Url("/admin/forms"), form, Bearer(admin)))["id"];
  EXPECT_GT(f2, f1);

  json hook = {{"url", "http://127.0.0.1:9/h"}, {"events", {"contact.created"}}};
  int64_t w1 = JsonBody(server.PostJson(Url("/admin/webhooks"), hook, Bearer(admin)))["id"];
  ASSERT_EQ(
      server.Send("DELETE", Url("/admin/webhooks/" + std::to_string(w1)), "", Bearer(admin)).status,
      200);
  int64_t w2 = JsonBody(server.PostJson(Url("/admin/webhooks"), hook, Bearer(admin)))["id"];
  EXPECT_GT(w2, w1);
}

TEST(RestHardening, TheAccessLogNeverHoldsAnIncomingHookToken) {
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured));
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);  // the access log is written at info
  std::string token;
  {
    TestServer server({.configure = [](Config& c) { c.log_level = "info"; }});
    auto admin = NewKey(server, governance::ApiKeyRole::kAdmin);
    auto hook = server.PostJson(Url("/admin/incoming-hooks"),
                                {{"name", "shop"}, {"mapping", {{"email", "e"}}}}, Bearer(admin));
    ASSERT_EQ(hook.status, 201) << hook.body;
    std::string url = JsonBody(hook)["url"];
    token = url.substr(url.rfind('/') + 1);
    auto r = server.PostJson(url.substr(server.base_url().size()), {{"e", "log@example.com"}});
    EXPECT_EQ(r.status, 200) << r.body;
  }
  spdlog::set_default_logger(previous);
  spdlog::set_level(spdlog::level::warn);
  std::string log = captured.str();
  ASSERT_NE(log.find("/hooks/" + token.substr(0, 18)), std::string::npos) << log.substr(0, 2000);
  EXPECT_EQ(log.find(token), std::string::npos);
}

}  // namespace
}  // namespace crmd::resttest
