// Test sends (activate_campaign test_recipients, REST POST /campaigns/{id}/test): a real
// crmd sends through SMTP to a real SMTP server (aiosmtpd) on loopback; the message is
// parsed back by Python's email package and its DKIM signature verified by python3-dkim.
// Only console users' addresses and those in settings test_recipients_allowed receive one;
// the campaign does not change.
#include "src/governance/api_keys.h"
#include "src/governance/settings.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/unit/mail/dkim_keys.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;

constexpr const char* kParseTestEml = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {k.lower(): str(msg[k]) for k in ['From', 'To', 'Subject', 'Message-ID', 'X-Crmd-Test',
       'List-Unsubscribe', 'DKIM-Signature', 'X-Crmd-Campaign'] if msg[k] is not None}
body = msg.get_body(preferencelist=('html',))
out['html'] = body.get_content() if body else None
out['defects'] = [str(d) for d in msg.defects]
print(json.dumps(out))
)PY";

constexpr const char* kVerifyTestDkim = R"PY(
import dkim, sys
msg = open(sys.argv[1], 'rb').read()
txt = open(sys.argv[2], 'rb').read()
def dnsfunc(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return txt if name.rstrip('.') == 'news._domainkey.example.com' else None
print('VERIFIED' if dkim.verify(msg, dnsfunc=dnsfunc) else 'FAILED')
)PY";

struct TestSink {
  SmtpSink sink;
  mail::testing::TempDir keys;
  std::string key_file = keys.Write("dkim.pem", mail::testing::TestRsaKey().private_pem);
};

TestServerOptions SendingTests(const TestSink& s) {
  return TestServerOptions{
      .configure =
          [&s](Config& c) {
            c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
            c.mail_rate_per_second = 0;
            c.mail_poll_interval_ms = 100;
            c.mail_from = "news@example.com";
            c.dkim_private_key_file = s.key_file;
            c.dkim_selector = "news";
            c.dkim_domain = "example.com";
          },
      .before_start =
          [](app::App::Services& s) {
            ASSERT_TRUE(s.users->Create("owner@example.com", "a long enough password 1", true));
          }};
}

class TestSends : public TestSink, public MarketingTools {
 protected:
  TestSends() : MarketingTools(SendingTests(*this)) {}

  int64_t Campaign(McpClient& c, int64_t list) {
    json out = Call(c, "create_campaign",
                    {{"name", "Spring"},
                     {"subject", "Hello {{first_name | \"there\"}}"},
                     {"from_name", "Café Zoë"},
                     {"from_email", "news@example.com"},
                     {"html_body",
                      "<p>Hi {{first_name | \"there\"}} ({{custom.plan | \"free\"}})</p>"
                      "<p><a href=\"https://example.com/menu\">Menu</a> <a "
                      "href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"},
                     {"audience", {{"lists", {list}}}}});
    return out["campaign"].value("id", int64_t{0});
  }

  json Parsed(int n) {
    auto run = RunPython(kParseTestEml, {sink.dir() + "/" + Name(n) + ".eml"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return json::parse(run.output, nullptr, false);
  }
  json Meta(int n) { return json::parse(sink.Meta(n), nullptr, false); }
  static std::string Name(int n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d", n);
    return buf;
  }

  // Lets `entries` receive test sends, as a person does with crmctl.
  void Allow(const json& entries) {
    auto& settings = *server_.app().services().governance->settings;
    auto cur = settings.Get();
    ASSERT_TRUE(cur.has_value());
    ASSERT_TRUE(settings.Update({.kind = "cli", .subject = "test"}, cur->revision,
                                {{"test_recipients_allowed", entries}}));
  }
};

TEST_F(TestSends, ReachesOnlyTheTestAddressesAsItWillGoOutWithDkim) {
  auto c = Client();
  int64_t list = AddList("Newsletter");
  int64_t ada = AddContact("ada@example.com");
  Exec("UPDATE contacts SET first_name = 'Ada', custom_fields = ? WHERE id = ?",
       {std::string(R"({"plan":"pro"})"), ada});
  InList(ada, list);
  InList(AddContact("bob@example.com"), list);
  int64_t id = Campaign(*c, list);
  Allow({"qa@example.org"});

  json sent = Call(*c, "activate_campaign",
                   {{"id", id}, {"test_recipients", {"Owner@Example.com", "qa@example.org"}}});
  ASSERT_EQ(sent.value("status", ""), "test_sent") << sent.dump();
  EXPECT_EQ(sent["sent_to"], json::array({"owner@example.com", "qa@example.org"}));
  EXPECT_EQ(sent["merged_from"]["kind"], "contact");
  EXPECT_EQ(sent["merged_from"]["email"], "ada@example.com");

  ASSERT_TRUE(sink.WaitFor(2));
  std::set<std::string> rcpts, ids;
  for (int n = 1; n <= 2; ++n) {
    json meta = Meta(n);
    ASSERT_EQ(meta["rcpt_tos"].size(), 1u) << meta.dump();
    rcpts.insert(meta["rcpt_tos"][0].get<std::string>());
    json m = Parsed(n);
    EXPECT_TRUE(m["defects"].empty()) << m.dump();
    EXPECT_EQ(m["subject"], "[Test] Hello Ada") << m.dump();
    EXPECT_EQ(m["to"], meta["rcpt_tos"][0]) << m.dump();
    EXPECT_EQ(m["from"], "Café Zoë <news@example.com>");
    EXPECT_EQ(m["x-crmd-test"], "yes");
    EXPECT_EQ(m["x-crmd-campaign"], std::to_string(id));
    EXPECT_NE(m["html"].get<std::string>().find("Hi Ada (pro)"), std::string::npos) << m.dump();
    EXPECT_EQ(m["list-unsubscribe"].get<std::string>().rfind("<" + server_.base_url() + "/u/", 0),
              0u);
    ids.insert(m["message-id"].get<std::string>());
    auto v = RunPython(kVerifyTestDkim, {sink.dir() + "/" + Name(n) + ".eml",
                                         keys.Write("txt", mail::testing::TestRsaKey().dns_txt)});
    EXPECT_NE(v.output.find("VERIFIED"), std::string::npos) << v.output;
  }
  EXPECT_EQ(rcpts, (std::set<std::string>{"owner@example.com", "qa@example.org"}));
  EXPECT_EQ(ids.size(), 2u);
  // Nothing changed: still a draft, no recipient recorded, nothing more sent.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'draft'", {id}), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?", {id}), 0);
  EXPECT_EQ(sink.MessageCount(), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'test_send_campaign'"), 1);
}

TEST_F(TestSends, GivenFieldsFillTheMergeTags) {
  auto c = Client();
  int64_t id = Campaign(*c, AddList("Empty"));
  json sent = Call(*c, "activate_campaign",
                   {{"id", id},
                    {"test_recipients", {"owner@example.com"}},
                    {"test_fields", {{"first_name", "Zoë"}, {"custom", {{"plan", "gold"}}}}}});
  ASSERT_EQ(sent.value("status", ""), "test_sent") << sent.dump();
  EXPECT_EQ(sent["merged_from"]["kind"], "fields");
  ASSERT_TRUE(sink.WaitFor(1));
  json m = Parsed(1);
  EXPECT_EQ(m["subject"], "[Test] Hello Zoë");
  EXPECT_NE(m["html"].get<std::string>().find("Hi Zoë (gold)"), std::string::npos) << m.dump();
}

TEST_F(TestSends, StrangersAreRefusedNamingTheSettingAndNothingIsSent) {
  auto c = Client();
  int64_t list = AddList("Newsletter");
  InList(AddContact("ada@example.com"), list);
  int64_t id = Campaign(*c, list);
  json e = ExpectToolError(*c, "activate_campaign",
                           {{"id", id}, {"test_recipients", {"owner@example.com", "x@evil.test"}}},
                           "validation_failed");
  EXPECT_NE(e.dump().find("test_recipients_allowed"), std::string::npos) << e.dump();
  EXPECT_NE(e.dump().find("x@evil.test"), std::string::npos) << e.dump();
  // Six addresses, or none, are refused by the schema before any work.
  ExpectToolError(
      *c, "activate_campaign",
      {{"id", id},
       {"test_recipients", {"a@x.org", "b@x.org", "c@x.org", "d@x.org", "e@x.org", "f@x.org"}}},
      "validation_failed");
  ExpectToolError(*c, "activate_campaign", {{"id", id}, {"test_recipients", json::array()}},
                  "validation_failed");
  // A domain entry lets the whole domain in.
  Allow({"@evil.test"});
  json sent = Call(*c, "activate_campaign", {{"id", id}, {"test_recipients", {"x@evil.test"}}});
  EXPECT_EQ(sent.value("status", ""), "test_sent") << sent.dump();
  ASSERT_TRUE(sink.WaitFor(1));
  EXPECT_EQ(sink.MessageCount(), 1u);
  // The assistant cannot widen the list itself.
  auto& svc = *server_.app().services().governance->settings;
  auto cur = svc.Get();
  ASSERT_TRUE(cur.has_value());
  auto changed = svc.Update({.kind = "oauth", .subject = "alice", .client_id = "client-a"},
                            cur->revision, {{"test_recipients_allowed", {"@anywhere.test"}}});
  ASSERT_FALSE(changed.has_value());
  EXPECT_EQ(changed.error().code, Errc::kPermissionDenied);
}

TEST_F(TestSends, RestSendsATestWithProblemJsonOnErrors) {
  auto c = Client();
  int64_t list = AddList("Newsletter");
  InList(AddContact("ada@example.com"), list);
  int64_t id = Campaign(*c, list);
  auto key = server_.app().services().governance->api_keys->Create(
      "ci", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(key.has_value());
  http::Headers auth = {{"Authorization", "Bearer " + key->secret}};
  const std::string path = "/api/crm/v1/campaigns/" + std::to_string(id) + "/test";

  auto r = server_.PostJson(path, {{"test_recipients", {"owner@example.com"}}}, auth);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["status"], "test_sent");
  ASSERT_TRUE(sink.WaitFor(1));
  EXPECT_EQ(Parsed(1)["subject"], "[Test] Hello there");

  r = server_.PostJson(path, {{"test_recipients", {"stranger@example.net"}}}, auth);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(r.Header("content-type").value_or(""), "application/problem+json");
  EXPECT_NE(r.body.find("test_recipients_allowed"), std::string::npos) << r.body;
  r = server_.PostJson(path, {{"test_fields", json::object()}}, auth);
  EXPECT_EQ(r.status, 422) << r.body;
  r = server_.PostJson("/api/crm/v1/campaigns/999999/test",
                       {{"test_recipients", {"owner@example.com"}}}, auth);
  EXPECT_EQ(r.status, 404) << r.body;
  r = server_.PostJson(path, {{"test_recipients", {"owner@example.com"}}});
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(sink.MessageCount(), 1u);
}

}  // namespace
}  // namespace crmd::testing
