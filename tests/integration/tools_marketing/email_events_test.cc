// The email.* webhook events end to end: a real campaign goes through SMTP (aiosmtpd) on
// loopback, its open pixel, tracked link and one-click unsubscribe are followed over HTTP,
// a relay reports a complaint, and a real HTTP receiver gets the events. An endpoint that
// lists them gets each outcome once; one with the 8 contact events (the default) gets none.
#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "src/crm/events.h"
#include "src/marketing/services.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/integration/webhooks/receiver.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;

// The HTML part and the List-Unsubscribe header of an .eml, decoded by Python's email package.
constexpr const char* kHtmlOf = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
body = msg.get_body(preferencelist=('html',))
print(json.dumps({'html': body.get_content() if body else '',
                  'unsubscribe': str(msg['List-Unsubscribe'] or ''),
                  'message_id': str(msg['Message-ID'] or '')}))
)PY";

struct SinkAndHooks {
  SmtpSink sink;
  webhooktest::Receiver opted_in;  // lists the email.* events
  webhooktest::Receiver contacts_only;
};

TestServerOptions SendingToHooks(const SinkAndHooks& s) {
  return TestServerOptions{.configure = [&s](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
    c.webhook_poll_interval_ms = 100;
    c.webhook_timeout_ms = 3000;
  }};
}

class EmailEvents : public SinkAndHooks, public MarketingTools {
 protected:
  EmailEvents() : MarketingTools(SendingToHooks(*this)) {}

  // The events of `type` the receiver got, their data by recipient address.
  static std::map<std::string, json> Got(webhooktest::Receiver& r, const std::string& type) {
    std::map<std::string, json> out;
    for (const auto& req : r.requests()) {
      json body = json::parse(req.body, nullptr, false);
      if (body.value("type", "") == type) out[body["data"].value("email", "")] = body["data"];
    }
    return out;
  }
  static size_t CountOf(webhooktest::Receiver& r, const std::string& prefix) {
    size_t n = 0;
    for (const auto& req : r.requests()) {
      json body = json::parse(req.body, nullptr, false);
      if (body.value("type", "").rfind(prefix, 0) == 0) ++n;
    }
    return n;
  }
};

std::string PathOf(const std::string& url, const std::string& base) {
  return url.rfind(base, 0) == 0 ? url.substr(base.size()) : url;
}

TEST_F(EmailEvents, OptedInEndpointGetsEachOutcomeOnceAndTheDefaultEndpointNone) {
  auto& s = server_.app().services();
  std::vector<std::string> email_events, contact_events;
  for (const auto& e : crm::events::kEmail) email_events.emplace_back(e.name);
  for (const auto& e : crm::events::kAll) contact_events.emplace_back(e.name);
  ASSERT_TRUE(s.webhook_endpoints->Create({.url = opted_in.url(), .events = email_events}));
  ASSERT_TRUE(s.webhook_endpoints->Create({.url = contacts_only.url(), .events = contact_events}));

  auto c = Client();
  int64_t list = AddList("News");
  int64_t ada = AddContact("ada@example.com");
  InList(ada, list);
  InList(AddContact("reject-me@example.com"), list);  // 550 at RCPT: a hard bounce
  json made = Call(*c, "create_campaign",
                   {{"name", "Launch"},
                    {"subject", "Hello"},
                    {"from_email", "news@example.com"},
                    {"html_body",
                     "<p><a href=\"https://example.com/menu\">Menu</a> "
                     "<a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"},
                    {"track_opens", true},
                    {"track_clicks", true},
                    {"audience", {{"lists", {list}}}}});
  int64_t id = made["campaign"].value("id", int64_t{0});
  json preview = Call(*c, "activate_campaign", {{"id", id}});
  Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  ASSERT_TRUE(sink.WaitFor(1));

  auto parsed = RunPython(kHtmlOf, {sink.dir() + "/0001.eml"});
  json m = json::parse(parsed.output, nullptr, false);
  ASSERT_TRUE(m.is_object()) << parsed.output;
  const std::string html = m["html"], base = server_.base_url();
  std::smatch open, click;
  ASSERT_TRUE(std::regex_search(html, open, std::regex("src=\"([^\"]*/t/o/[^\"]*)\""))) << html;
  ASSERT_TRUE(std::regex_search(html, click, std::regex("href=\"([^\"]*/t/c/[^\"]*)\""))) << html;
  auto unquote = [](std::string u) { return std::regex_replace(u, std::regex("&amp;"), "&"); };
  EXPECT_EQ(server_.Get(PathOf(unquote(open[1]), base)).status, 200);
  EXPECT_EQ(server_.Get(PathOf(unquote(click[1]), base)).status, 302);
  EXPECT_EQ(server_.Get(PathOf(unquote(open[1]), base)).status, 200);  // a second open: no event
  std::string unsub = m["unsubscribe"];
  unsub = unsub.substr(1, unsub.find('>') - 1);
  EXPECT_EQ(server_.PostForm(PathOf(unsub, base), "List-Unsubscribe=One-Click").status, 200);
  auto fb = s.marketing->delivery->Feedback({.kind = "system", .subject = "test"},
                                            "ada@example.com", "complaint", m["message_id"]);
  ASSERT_TRUE(fb.has_value()) << fb.error().message;

  const std::vector<std::string> kinds = {"email.sent",         "email.bounced",
                                          "email.opened",       "email.clicked",
                                          "email.unsubscribed", "email.complained"};
  ASSERT_TRUE(opted_in.WaitFor([&](const auto&) { return CountOf(opted_in, "email.") >= 6; }))
      << opted_in.requests().size();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // nothing more comes
  EXPECT_EQ(CountOf(opted_in, "email."), 6u);
  for (const auto& k : kinds) EXPECT_EQ(Got(opted_in, k).size(), 1u) << k;
  json sent = Got(opted_in, "email.sent")["ada@example.com"];
  EXPECT_EQ(sent["campaign_id"], id);
  EXPECT_EQ(sent["contact_id"], ada);
  EXPECT_EQ(sent["source"], "campaign");
  EXPECT_EQ(sent["message_id"], m["message_id"]);
  json bounced = Got(opted_in, "email.bounced")["reject-me@example.com"];
  EXPECT_EQ(bounced["bounce"], "hard");
  EXPECT_EQ(bounced["via"], "smtp");
  EXPECT_EQ(bounced["smtp_code"], 550);
  EXPECT_EQ(Got(opted_in, "email.clicked")["ada@example.com"]["url"], "https://example.com/menu");
  EXPECT_EQ(Got(opted_in, "email.unsubscribed")["ada@example.com"]["via"], "link");
  json complained = Got(opted_in, "email.complained")["ada@example.com"];
  EXPECT_EQ(complained["campaign_id"], id);
  EXPECT_EQ(complained["message_id"], m["message_id"]);
  EXPECT_EQ(CountOf(opted_in, "contact."), 0u);

  // The other endpoint got the contact events of the same story (statuses moved), and
  // none of the email events.
  ASSERT_TRUE(contacts_only.WaitFor(
      [&](const auto&) { return CountOf(contacts_only, "contact.status_updated") >= 2; }));
  EXPECT_EQ(CountOf(contacts_only, "email."), 0u);
}

TEST_F(EmailEvents, AnEndpointCannotListAnUnknownEmailEvent) {
  auto& s = server_.app().services();
  auto bad = s.webhook_endpoints->Create({.url = opted_in.url(), .events = {{"email.read"}}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("email.read"), std::string::npos);
}

}  // namespace
}  // namespace crmd::testing
