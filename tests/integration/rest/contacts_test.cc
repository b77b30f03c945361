// POST /contact, GET /contact/{email}, DELETE /contact/delete/{email} over loopback, with
// keys, validation, the status machine, outbox events and Idempotency-Key.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "src/crm/services.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using nlohmann::json;

// Event types written to the outbox for one contact id, oldest first.
std::vector<std::string> Events(TestServer& server, int64_t contact_id) {
  auto rows = server.app().services().db->Read([&](store::Conn& c) {
    return c.Query("SELECT event_type FROM outbox_events WHERE contact_id = ? ORDER BY id",
                   {contact_id});
  });
  std::vector<std::string> out;
  if (rows)
    for (const auto& r : *rows) out.push_back(r.Str(0));
  return out;
}

int64_t CountContacts(TestServer& server) {
  auto n = server.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM contacts");
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  return n ? *n : -1;
}

class RestContacts : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = NewKey(server_);
    auto list = server_.app().services().crm->lists->Create({.kind = "cli"}, "Newsletter", "");
    ASSERT_TRUE(list) << list.error().message;
  }
  TestServer server_;
  std::string key_;
};

TEST_F(RestContacts, PostCreatesThen200UpdatesGetReadsDeleteRemoves) {
  json body = {{"email", "Ada.Lovelace@Example.COM"},
               {"first_name", "Ada"},
               {"last_name", "Lovelace"},
               {"phone", "+44 20 7946 0000"},
               {"status", "subscribed"},
               {"type", "customer"},
               {"tags", {"vip", "founder"}},
               {"lists", {"Newsletter"}},
               {"custom_fields", {{"company", "Analytical Engines"}}}};
  auto created = server_.PostJson(Url("/contact"), body, Bearer(key_));
  ASSERT_EQ(created.status, 201) << created.body;
  auto cj = JsonBody(created);
  EXPECT_TRUE(cj["created"]);
  EXPECT_EQ(cj["contact"]["email"], "ada.lovelace@example.com");
  EXPECT_EQ(cj["contact"]["type"], "customer");
  EXPECT_EQ(cj["contact"]["tags"].size(), 2u);
  EXPECT_EQ(cj["contact"]["lists"][0]["name"], "Newsletter");
  EXPECT_EQ(created.Header("Location").value_or(""), Url("/contact/ada.lovelace%40example.com"));
  int64_t id = cj["contact"]["id"];

  auto updated = server_.PostJson(
      Url("/contact"), {{"email", "ada.lovelace@example.com"}, {"first_name", "Augusta"}},
      Bearer(key_));
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_FALSE(JsonBody(updated)["created"]);
  EXPECT_EQ(JsonBody(updated)["contact"]["id"], id);
  EXPECT_EQ(JsonBody(updated)["contact"]["first_name"], "Augusta");
  EXPECT_EQ(JsonBody(updated)["contact"]["last_name"], "Lovelace");  // absent: unchanged

  // The path email is percent-decoded and normalised.
  auto got = server_.Get(Url("/contact/ADA.LOVELACE%40EXAMPLE.com"), Bearer(key_));
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(JsonBody(got)["contact"]["custom_fields"]["company"], "Analytical Engines");
  EXPECT_EQ(JsonBody(got)["contact"]["tags"].size(), 2u);

  auto del =
      server_.Send("DELETE", Url("/contact/delete/ada.lovelace@example.com"), "", Bearer(key_));
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(JsonBody(del)["contact"]["id"], id);
  EXPECT_EQ(server_.Get(Url("/contact/ada.lovelace@example.com"), Bearer(key_)).status, 404);
  auto again =
      server_.Send("DELETE", Url("/contact/delete/ada.lovelace@example.com"), "", Bearer(key_));
  EXPECT_EQ(again.status, 404);
  EXPECT_TRUE(IsProblem(again));

  auto events = Events(server_, id);
  auto has = [&](const std::string& t) {
    return std::find(events.begin(), events.end(), t) != events.end();
  };
  EXPECT_TRUE(has("contact.created"));
  EXPECT_TRUE(has("contact.tag_added"));
  EXPECT_TRUE(has("contact.list_added"));
  EXPECT_TRUE(has("contact.updated"));
  EXPECT_TRUE(has("contact.deleted"));
}

TEST_F(RestContacts, UnknownEmailIs404Problem) {
  auto r = server_.Get(Url("/contact/nobody%40example.com"), Bearer(key_));
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(IsProblem(r));
  EXPECT_EQ(JsonBody(r)["code"], "not_found");
}

TEST_F(RestContacts, MalformedEmailIs422NamingEmailAndWritesNothing) {
  auto r = server_.PostJson(Url("/contact"), {{"email", "not-an-email"}, {"first_name", "X"}},
                            Bearer(key_));
  ASSERT_EQ(r.status, 422) << r.body;
  auto j = JsonBody(r);
  EXPECT_EQ(j["code"], "validation_failed");
  EXPECT_EQ(j["errors"][0]["field"], "email");
  EXPECT_EQ(j["errors"][0]["code"], "invalid_email");
  EXPECT_EQ(CountContacts(server_), 0);
}

TEST_F(RestContacts, BadShapesAre422WithTheirFields) {
  auto missing = server_.PostJson(Url("/contact"), {{"first_name", "X"}}, Bearer(key_));
  EXPECT_EQ(missing.status, 422);
  EXPECT_EQ(JsonBody(missing)["errors"][0]["field"], "email");
  auto unknown = server_.PostJson(Url("/contact"), {{"email", "a@example.com"}, {"nickname", "x"}},
                                  Bearer(key_));
  EXPECT_EQ(unknown.status, 422);
  EXPECT_EQ(JsonBody(unknown)["errors"][0]["field"], "nickname");
  auto status = server_.PostJson(Url("/contact"), {{"email", "a@example.com"}, {"status", "happy"}},
                                 Bearer(key_));
  EXPECT_EQ(status.status, 422);
  EXPECT_EQ(JsonBody(status)["errors"][0]["field"], "status");
  auto list = server_.PostJson(
      Url("/contact"), {{"email", "a@example.com"}, {"lists", {"No Such List"}}}, Bearer(key_));
  EXPECT_EQ(list.status, 422) << list.body;
  EXPECT_EQ(JsonBody(list)["errors"][0]["field"], "lists");
  EXPECT_EQ(CountContacts(server_), 0);  // nothing half-applied
}

TEST_F(RestContacts, StatusMachineRefusesBouncedToSubscribedWith409) {
  ASSERT_EQ(server_
                .PostJson(Url("/contact"), {{"email", "b@example.com"}, {"status", "subscribed"}},
                          Bearer(key_))
                .status,
            201);
  ASSERT_EQ(server_
                .PostJson(Url("/contact"), {{"email", "b@example.com"}, {"status", "bounced"}},
                          Bearer(key_))
                .status,
            200);
  auto back = server_.PostJson(
      Url("/contact"), {{"email", "b@example.com"}, {"status", "subscribed"}, {"first_name", "B"}},
      Bearer(key_));
  EXPECT_EQ(back.status, 409) << back.body;
  EXPECT_EQ(JsonBody(back)["code"], "invalid_transition");
  auto now = server_.Get(Url("/contact/b@example.com"), Bearer(key_));
  EXPECT_EQ(JsonBody(now)["contact"]["status"], "bounced");
  EXPECT_EQ(JsonBody(now)["contact"]["first_name"], "");  // the refused request changed nothing
}

TEST_F(RestContacts, MissingUnknownAndDisabledKeysAre401) {
  EXPECT_EQ(server_.Get(Url("/contact/a@example.com")).status, 401);
  EXPECT_EQ(server_.PostJson(Url("/contact"), {{"email", "a@example.com"}}).status, 401);
  auto& keys = *server_.app().services().governance->api_keys;
  auto k = keys.Create("to-disable", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(k);
  EXPECT_EQ(
      server_.PostJson(Url("/contact"), {{"email", "a@example.com"}}, Bearer(k->secret)).status,
      201);
  ASSERT_TRUE(keys.SetEnabled(k->key.id, false));
  auto r =
      server_.PostJson(Url("/contact"), {{"email", "c@example.com"}}, {{"X-API-Key", k->secret}});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(JsonBody(r)["code"], "invalid_api_key");
  EXPECT_EQ(CountContacts(server_), 1);
}

TEST_F(RestContacts, OversizeBodyIs413AndWrongContentTypeIs415) {
  json big = {{"email", "a@example.com"},
              {"custom_fields", {{"blob", std::string(300 * 1024, 'x')}}}};
  auto large = server_.PostJson(Url("/contact"), big, Bearer(key_));
  EXPECT_EQ(large.status, 413);
  EXPECT_TRUE(IsProblem(large));
  auto ct = server_.Send("POST", Url("/contact"), "email=a@example.com",
                         {{"Content-Type", "application/x-www-form-urlencoded"}, Bearer(key_)[0]});
  EXPECT_EQ(ct.status, 415);
  EXPECT_EQ(CountContacts(server_), 0);
}

TEST_F(RestContacts, IdempotencyKeyReplaysTheFirstAnswerAndRefusesAnotherBody) {
  auto headers = Bearer(key_);
  headers.push_back({"Idempotency-Key", "order-7731"});
  auto first = server_.PostJson(Url("/contact"),
                                {{"email", "i@example.com"}, {"first_name", "One"}}, headers);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_FALSE(first.Header("Idempotent-Replayed"));
  // Meanwhile the contact changes through another request without a key.
  ASSERT_EQ(server_
                .PostJson(Url("/contact"), {{"email", "i@example.com"}, {"first_name", "Two"}},
                          Bearer(key_))
                .status,
            200);
  auto repeat = server_.PostJson(Url("/contact"),
                                 {{"email", "i@example.com"}, {"first_name", "One"}}, headers);
  EXPECT_EQ(repeat.status, 201);
  EXPECT_EQ(repeat.Header("Idempotent-Replayed").value_or(""), "true");
  EXPECT_EQ(repeat.body, first.body);
  EXPECT_EQ(
      JsonBody(server_.Get(Url("/contact/i@example.com"), Bearer(key_)))["contact"]["first_name"],
      "Two");
  auto other = server_.PostJson(Url("/contact"), {{"email", "j@example.com"}}, headers);
  EXPECT_EQ(other.status, 422);
  EXPECT_EQ(JsonBody(other)["code"], "idempotency_key_reused");
  auto bad = Bearer(key_);
  bad.push_back({"Idempotency-Key", std::string(300, 'k')});
  EXPECT_EQ(server_.PostJson(Url("/contact"), {{"email", "k@example.com"}}, bad).status, 400);
  EXPECT_EQ(CountContacts(server_), 1);
}

TEST_F(RestContacts, ConcurrentRepeatsOfOneIdempotencyKeyCreateOneContact) {
  std::vector<std::thread> threads;
  std::atomic<int> created{0}, replayed_or_busy{0}, other{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      auto h = Bearer(key_);
      h.push_back({"Idempotency-Key", "same-key"});
      auto r = server_.PostJson(Url("/contact"), {{"email", "race@example.com"}}, h);
      if (r.status == 201 && !r.Header("Idempotent-Replayed"))
        ++created;
      else if (r.status == 201 || r.status == 409)
        ++replayed_or_busy;
      else
        ++other;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(replayed_or_busy.load(), 7);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(CountContacts(server_), 1);
}

TEST(RestPaths, RootAndNamespaceAreConfigurable) {
  TestServer server({.configure = [](Config& c) {
    c.rest_root = "wp-json";
    c.rest_namespace = "mint-crm";
  }});
  auto key = NewKey(server);
  auto r =
      server.PostJson("/wp-json/mint-crm/v1/contact", {{"email", "wp@example.com"}}, Bearer(key));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(server.Get("/wp-json/mint-crm/v1/contact/wp@example.com", Bearer(key)).status, 200);
  EXPECT_EQ(server.Get(Url("/contact/wp@example.com"), Bearer(key)).status, 404);
  auto doc = JsonBody(server.Get("/wp-json/mint-crm/v1/openapi.json"));
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_EQ(doc["servers"][0]["url"], "/wp-json/mint-crm/v1");
}

TEST(RestLimits, BodyOverTheServerLimitIs413ProblemBeforeItIsRead) {
  TestServer server({.configure = [](Config& c) { c.max_body_bytes = 64 * 1024; }});
  auto key = NewKey(server);
  json big = {{"email", "big@example.com"},
              {"custom_fields", {{"blob", std::string(100 * 1024, 'x')}}}};
  auto r = server.PostJson(Url("/contact"), big, Bearer(key));
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(IsProblem(r));
  EXPECT_EQ(JsonBody(r)["code"], "payload_too_large");
  EXPECT_EQ(CountContacts(server), 0);
}

}  // namespace
}  // namespace crmd::resttest
