// Campaign delivery end to end: a real crmd sends through SMTP (libcurl) to a real SMTP
// server (aiosmtpd, tests/unit/mail/python.h) on loopback; every message is parsed back
// by Python's email package and checked: headers, MIME structure, encoding, merge tags,
// List-Unsubscribe (RFC 2369/8058), DKIM (python3-dkim). Then what follows delivery:
// one-click unsubscribe from the parsed header, bounces at RCPT, temporary failures,
// resend to the undelivered, pause and resume, skip of the unsubscribed, relay reports.
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <thread>

#include "src/core/crypto.h"
#include "src/governance/api_keys.h"
#include "src/marketing/services.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/unit/mail/dkim_keys.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;

// Parses an .eml with Python's email package (policy=default) into JSON: the headers
// that matter, the MIME tree, the decoded text and HTML parts.
constexpr const char* kParse = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {k.lower(): str(msg[k]) for k in ['From', 'To', 'Subject', 'Message-ID', 'Date',
       'List-Unsubscribe', 'List-Unsubscribe-Post', 'MIME-Version', 'X-Crmd-Campaign',
       'DKIM-Signature'] if msg[k] is not None}
out['content_type'] = msg.get_content_type()
out['parts'] = [p.get_content_type() for p in msg.iter_parts()] if msg.is_multipart() else []
body = msg.get_body(preferencelist=('plain',))
out['text'] = body.get_content() if body else None
body = msg.get_body(preferencelist=('html',))
out['html'] = body.get_content() if body else None
out['defects'] = [str(d) for d in msg.defects]
print(json.dumps(out))
)PY";

json ParseEml(const std::string& path) {
  auto run = RunPython(kParse, {path});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  auto j = json::parse(run.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << run.output;
  return j;
}

constexpr const char* kDkimVerify = R"PY(
import dkim, sys
msg = open(sys.argv[1], 'rb').read()
txt = open(sys.argv[2], 'rb').read()
def dnsfunc(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    return txt if name.rstrip('.') == 'news._domainkey.example.com' else None
print('VERIFIED' if dkim.verify(msg, dnsfunc=dnsfunc) else 'FAILED')
)PY";

// The SMTP server starts before the crmd that sends to it. Like most relays today it offers
// SMTPUTF8 (RFC 6531).
struct SinkFirst {
  SmtpSink sink{"utf8"};
  mail::testing::TempDir keys;
  std::string key_file = keys.Write("dkim.pem", mail::testing::TestRsaKey().private_pem);
};

TestServerOptions SendingTo(const SinkFirst& s) {
  return TestServerOptions{
      .configure =
          [&s](Config& c) {
            c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
            c.mail_rate_per_second = 0;
            c.mail_concurrency = 2;
            c.mail_poll_interval_ms = 100;
            c.mail_from = "news@example.com";
            c.dkim_private_key_file = s.key_file;
            c.dkim_selector = "news";
            c.dkim_domain = "example.com";
          },
      // Temporary failures retry after a second and give up after the second attempt.
      .before_start =
          [](app::App::Services& s) {
            s.marketing->delivery->set_policy(
                {.lease_s = 30, .max_attempts = 2, .retry_base_s = 1, .retry_max_s = 1});
          }};
}

class Delivery : public SinkFirst, public MarketingTools {
 protected:
  Delivery() : MarketingTools(SendingTo(*this)) {}
  // A server made by `options` for this fixture's sink.
  explicit Delivery(TestServerOptions (*options)(const SinkFirst&))
      : MarketingTools(options(*this)) {}

  json Confirm(McpClient& c, const json& args) {
    json preview = Call(c, "activate_campaign", args);
    EXPECT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
    last_preview_ = preview;
    json done = Call(c, "confirm_action",
                     {{"confirmation_token", preview.value("confirmation_token", "")}});
    EXPECT_EQ(done.value("status", ""), "done") << done.dump();
    return done;
  }

  std::string CampaignStatus(int64_t id) {
    auto db = store::Open(server_.database_url(), 1);
    if (!db) return "";
    auto s = (*db)->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT status FROM campaigns WHERE id = ?", {id});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string("gone");
    });
    return s.value_or("");
  }

  // Waits up to `seconds` for the campaign to reach `status`.
  bool WaitStatus(int64_t id, const std::string& status, int seconds = 20) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (CampaignStatus(id) == status) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  int Received() const {
    int n = 0;
    while (std::ifstream(sink.dir() + "/" + Name(n + 1) + ".eml")) ++n;
    return n;
  }
  static std::string Name(int n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d", n);
    return buf;
  }
  std::string EmlPath(int n) const { return sink.dir() + "/" + Name(n) + ".eml"; }

  // Every received message parsed, by the recipient of its envelope.
  std::map<std::string, std::vector<json>> ByRecipient() {
    std::map<std::string, std::vector<json>> out;
    for (int i = 1; i <= Received(); ++i) {
      json meta = json::parse(sink.Meta(i), nullptr, false);
      json parsed = ParseEml(EmlPath(i));
      parsed["path"] = EmlPath(i);
      for (const auto& r : meta["rcpt_tos"]) out[r.get<std::string>()].push_back(parsed);
    }
    return out;
  }

  int64_t NewCampaign(McpClient& c, int64_t list, json extra = json::object()) {
    json fields = {
        {"name", "News " + std::to_string(list)},
        {"subject", "Hello {{first_name | \"there\"}}, café news ☕"},
        {"preheader", "This month at the café"},
        {"from_name", "Café Zoë"},
        {"from_email", "news@example.com"},
        {"html_body",
         "<html><body><p>Hi {{first_name | \"there\"}}, your plan is "
         "{{custom.plan | \"free\"}}.</p><p><a href=\"https://example.com/menu?a=1&amp;b=2\">"
         "Menu</a></p><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p></body></html>"},
        {"audience", {{"lists", {list}}}}};
    for (auto& [k, v] : extra.items()) fields[k] = v;
    json out = Call(c, "create_campaign", fields);
    return out["campaign"].value("id", int64_t{0});
  }

  json Report(McpClient& c, int64_t id, json recipients = nullptr) {
    json args = {{"id", id}};
    if (!recipients.is_null()) args["recipients"] = recipients;
    return Call(c, "get_campaign_report", args);
  }

  json last_preview_;
};

TEST_F(Delivery, CampaignReachesEveryRecipientOnceAsProperMime) {
  auto c = Client();
  int64_t list = AddList("Newsletter");
  int64_t ada = AddContact("ada@example.com");
  Exec(
      "UPDATE contacts SET first_name = 'Ada', last_name = 'Lovelace', custom_fields = ? WHERE id "
      "= ?",
      {std::string(R"({"plan":"pro <b>"})"), ada});
  InList(ada, list);
  InList(AddContact("bob@example.com"), list);
  InList(AddContact("cy@example.com"), list);
  InList(AddContact("gone@example.com", "unsubscribed"), list);  // never in the audience
  int64_t id = NewCampaign(*c, list);

  json preview = Call(*c, "activate_campaign", {{"id", id}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  EXPECT_EQ(preview["preview"]["audience_size"], 3);
  // The preview shows the message rendered for one real recipient (the first by id: Ada).
  json sample = preview["preview"]["sample_message"];
  EXPECT_EQ(sample["to"]["email"], "ada@example.com") << preview.dump();
  EXPECT_EQ(sample["subject"], "Hello Ada, café news ☕");
  EXPECT_NE(sample["html"].get<std::string>().find("pro &lt;b&gt;"), std::string::npos)
      << sample.dump();
  EXPECT_EQ(Received(), 0);  // a preview sends nothing
  {
    // Its links are inert: the unsubscribe link unsubscribes nobody.
    const std::string html = sample["html"];
    const std::string marker = server_.base_url() + "/u/";
    auto at = html.find(marker);
    ASSERT_NE(at, std::string::npos) << html;
    std::string path = html.substr(at + server_.base_url().size());
    path = path.substr(0, path.find('"'));
    auto r = server_.PostForm(path, "List-Unsubscribe=One-Click");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'subscribed'", {ada}),
              1);
  }
  Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});

  ASSERT_TRUE(WaitStatus(id, "sent")) << CampaignStatus(id);
  auto got = ByRecipient();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.count("gone@example.com"), 0u);
  std::set<std::string> ids;
  for (const auto& [rcpt, messages] : got) {
    ASSERT_EQ(messages.size(), 1u) << rcpt << " got " << messages.size();
    const json& m = messages[0];
    EXPECT_TRUE(m["defects"].empty()) << m.dump();
    EXPECT_EQ(m["content_type"], "multipart/alternative");
    EXPECT_EQ(m["parts"], json::array({"text/plain", "text/html"}));
    EXPECT_EQ(m["from"], "Café Zoë <news@example.com>");
    EXPECT_EQ(m["mime-version"], "1.0");
    EXPECT_EQ(m["x-crmd-campaign"], std::to_string(id));
    EXPECT_NE(m["date"].get<std::string>(), "");
    ids.insert(m["message-id"].get<std::string>());
    // RFC 8058: an http(s) link and the one-click POST marker.
    std::string unsub = m["list-unsubscribe"];
    EXPECT_EQ(unsub.rfind("<" + server_.base_url() + "/u/", 0), 0u) << unsub;
    EXPECT_EQ(m["list-unsubscribe-post"], "List-Unsubscribe=One-Click");
    // The unsubscribe merge tag in the body is the same link.
    EXPECT_NE(m["html"].get<std::string>().find(unsub.substr(1, unsub.size() - 2)),
              std::string::npos);
    // DKIM verified by an independent implementation.
    auto v = RunPython(kDkimVerify, {m["path"].get<std::string>(),
                                     keys.Write("txt", mail::testing::TestRsaKey().dns_txt)});
    EXPECT_NE(v.output.find("VERIFIED"), std::string::npos) << rcpt << ": " << v.output;
  }
  EXPECT_EQ(ids.size(), 3u);  // one Message-ID per recipient
  const json& ada_msg = got["ada@example.com"][0];
  EXPECT_EQ(ada_msg["subject"], "Hello Ada, café news ☕");
  EXPECT_EQ(ada_msg["to"], "Ada Lovelace <ada@example.com>");
  EXPECT_NE(ada_msg["html"].get<std::string>().find("your plan is pro &lt;b&gt;."),
            std::string::npos);
  EXPECT_NE(ada_msg["text"].get<std::string>().find("your plan is pro <b>."), std::string::npos)
      << ada_msg["text"];
  EXPECT_NE(ada_msg["text"].get<std::string>().find("https://example.com/menu?a=1&b=2"),
            std::string::npos);
  EXPECT_NE(got["bob@example.com"][0]["subject"].get<std::string>().find("Hello there,"),
            std::string::npos);

  json dash = Call(*c, "get_dashboard", json::object());
  EXPECT_EQ(dash["campaigns"]["delivery"]["sent"], 3) << dash["campaigns"].dump();
  json report = Report(*c, id, json::object());
  EXPECT_EQ(report["outcomes"]["queued"], 3) << report.dump();
  EXPECT_EQ(report["outcomes"]["sent"], 3);
  EXPECT_EQ(report["outcomes"]["pending"], 0);
  EXPECT_EQ(report["campaign"]["status"], "sent");
  EXPECT_FALSE(report["campaign"]["finished_at"].is_null());
  ASSERT_EQ(report["recipients"]["items"].size(), 3u);
  for (const auto& r : report["recipients"]["items"]) {
    EXPECT_EQ(r["status"], "sent");
    EXPECT_TRUE(ids.count(r["message_id"].get<std::string>())) << r.dump();
  }
}

// A node whose rate sends fewer messages in one lease than a batch holds: 2 messages a
// second, recipients leased for 4 s, two sending threads.
TestServerOptions SlowlyTo(const SinkFirst& s) {
  TestServerOptions o = SendingTo(s);
  o.configure = [&s, configure = o.configure](Config& c) {
    configure(c);
    c.mail_rate_per_second = 2;
    c.mail_lease_s = 4;
  };
  o.before_start = [](app::App::Services& s) {
    s.marketing->delivery->set_policy(
        {.lease_s = 4, .max_attempts = 2, .retry_base_s = 1, .retry_max_s = 1});
  };
  return o;
}

class SlowRelay : public Delivery {
 protected:
  SlowRelay() : Delivery(SlowlyTo) {}
};

// 12 recipients at 2 a second take 6 s, and a lease lasts 4 s. A thread that leased a
// batch of 10 and then waited its turn for each message was still sending after the
// leases ran out, when the other thread leased the same recipients again and sent them
// too. A message now starts only while half its lease is left, and a round leases no more
// than the rate sends in that time.
TEST_F(SlowRelay, EveryRecipientGetsOneMessageWhenTheRateIsSlowerThanTheLeases) {
  auto c = Client();
  int64_t list = AddList("Slow");
  for (int i = 0; i < 12; ++i) InList(AddContact("r" + std::to_string(i) + "@example.com"), list);
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent", 90)) << CampaignStatus(id);
  auto got = ByRecipient();
  EXPECT_EQ(got.size(), 12u);
  for (const auto& [rcpt, messages] : got)
    EXPECT_EQ(messages.size(), 1u) << rcpt << " got " << messages.size();
  EXPECT_EQ(Received(), 12);
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["sent"], 12) << report.dump();
  EXPECT_EQ(report["outcomes"]["failed"], 0);
}

TEST_F(Delivery, OneClickUnsubscribeFromTheParsedHeader) {
  auto c = Client();
  int64_t list = AddList("L");
  int64_t ada = AddContact("ada@example.com");
  InList(ada, list);
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent"));
  json m = ByRecipient()["ada@example.com"].at(0);
  std::string header = m["list-unsubscribe"];
  std::string url = header.substr(1, header.size() - 2);
  std::string path = url.substr(server_.base_url().size());

  // GET shows a page and changes nothing (link scanners follow links).
  auto page = server_.Get(path);
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<form method=\"post\">"), std::string::npos);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'subscribed'", {ada}),
            1);

  // What a mail client sends for RFC 8058.
  auto done = server_.PostForm(path, "List-Unsubscribe=One-Click");
  EXPECT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'unsubscribed'", {ada}),
            1);
  EXPECT_GE(Count("SELECT COUNT(*) FROM outbox_events WHERE contact_id = ?", {ada}), 1);
  // Twice is still once.
  EXPECT_EQ(server_.PostForm(path, "List-Unsubscribe=One-Click").status, 200);
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["unsubscribed"], 1) << report.dump();

  // A forged or truncated token: an HTML page, nothing changes, the token is not echoed.
  auto bad =
      server_.PostForm(path.substr(0, path.size() - 3) + "AAA", "List-Unsubscribe=One-Click");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body.find(path.substr(3)), std::string::npos);
}

TEST_F(Delivery, BounceAtRcptFailsOneRecipientAndMarksTheContactBounced) {
  auto c = Client();
  int64_t list = AddList("L");
  InList(AddContact("ok@example.com"), list);
  int64_t bad = AddContact("reject-me@example.com");
  InList(bad, list);
  int64_t later = AddContact("later-please@example.com");
  InList(later, list);
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  // The 451 recipient is retried once a second later, then given up: the campaign is sent
  // only when every recipient has a final state.
  ASSERT_TRUE(WaitStatus(id, "sent", 30)) << CampaignStatus(id);
  auto got = ByRecipient();
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(got.count("ok@example.com"), 1u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'bounced'", {bad}), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'subscribed'", {later}),
            1);

  json report = Report(*c, id, {{"status", "failed"}});
  EXPECT_EQ(report["outcomes"]["sent"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["failed"], 2);
  EXPECT_EQ(report["outcomes"]["bounced"], 1);
  // The refusal at RCPT was never a sent message: the one the relay took is delivered.
  EXPECT_EQ(report["totals"]["sent"], 1);
  EXPECT_EQ(report["totals"]["delivered"], 1);
  EXPECT_DOUBLE_EQ(report["rates"]["delivery"].get<double>(), 0.5);  // of sent + refused at RCPT
  EXPECT_DOUBLE_EQ(report["rates"]["bounce"].get<double>(), 0.5);
  ASSERT_EQ(report["recipients"]["items"].size(), 2u);
  for (const auto& r : report["recipients"]["items"]) {
    if (r["email"] == "reject-me@example.com") {
      EXPECT_EQ(r["smtp_code"], 550) << r.dump();
      // The relay's reason as it gave it.
      EXPECT_NE(r["reason"].get<std::string>().find("550 5.1.1 No such user here"),
                std::string::npos)
          << r.dump();
    } else {
      EXPECT_EQ(r["email"], "later-please@example.com");
      EXPECT_EQ(r["attempts"], 2) << r.dump();
      EXPECT_NE(r["reason"].get<std::string>().find("gave up"), std::string::npos) << r.dump();
    }
  }

  // Resend to the undelivered: only the one still subscribed, confirmed, in round 2.
  json preview = Call(*c, "activate_campaign", {{"id", id}, {"resend", "undelivered"}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  EXPECT_EQ(preview["action"], "resend_campaign");
  EXPECT_EQ(preview["preview"]["recipients"], 1);
  json done = Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  EXPECT_EQ(done["result"]["requeued"], 1) << done.dump();
  ASSERT_TRUE(WaitStatus(id, "sent", 30));
  json after = Report(*c, id, {{"status", "failed"}});
  ASSERT_EQ(after["recipients"]["items"].size(), 2u) << after.dump();
  for (const auto& r : after["recipients"]["items"]) {
    if (r["email"] == "later-please@example.com") {
      EXPECT_EQ(r["round"], 2) << r.dump();
    }
  }
  EXPECT_EQ(ByRecipient().size(), 1u);  // the sink still answers 451: nothing new arrived
}

TEST_F(Delivery, ALineBreakInAContactsNameDoesNotStopItsMessage) {
  auto c = Client();
  int64_t list = AddList("L");
  // What a CSV import or a form leaves behind: a trailing newline, a CRLF inside.
  int64_t john = AddContact("john@example.com");
  Exec("UPDATE contacts SET first_name = ?, last_name = ? WHERE id = ?",
       {std::string("John\n"), std::string("Smith\r\nBcc: victim@evil.example"), john});
  InList(john, list);
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent")) << CampaignStatus(id);
  auto got = ByRecipient();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got["john@example.com"].size(), 1u);
  const json& m = got["john@example.com"][0];
  EXPECT_TRUE(m["defects"].empty()) << m.dump();
  // On one line, quoted (the colon), and no header of its own: the Bcc stays in the name.
  EXPECT_EQ(m["to"], "\"John Smith Bcc: victim@evil.example\" <john@example.com>") << m.dump();
  EXPECT_EQ(m["subject"], "Hello John, café news ☕");
  std::ifstream eml(m["path"].get<std::string>(), std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(eml)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(raw.empty());
  EXPECT_EQ(raw.find("\nBcc:"), std::string::npos) << raw.substr(0, 800);
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["sent"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["failed"], 0);
  // The contact's data is kept as it was given.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND first_name = ?",
                  {john, std::string("John\n")}),
            1);
}

TEST_F(Delivery, AContactWithAnInternationalizedAddressGetsItsMessage_Rfc6531) {
  auto c = Client(std::string(kAllMarketingScopes) + ",contacts:write");
  int64_t list = AddList("L");
  const std::string zoe = "zo\xc3\xab@example.com";                 // zoë@example.com
  const std::string taro = "\xe5\xa4\xaa\xe9\x83\x8e@example.com";  // 太郎@example.com
  for (const std::string& email : {zoe, taro}) {  // as an assistant would add them
    json made = Call(*c, "create_contact", {{"email", email}, {"lists", {list}}});
    ASSERT_TRUE(made.contains("contact")) << made.dump();
    EXPECT_EQ(made["contact"]["email"], email) << made.dump();
  }
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent")) << CampaignStatus(id);
  auto got = ByRecipient();
  ASSERT_EQ(got.size(), 2u);
  for (const std::string& rcpt : {zoe, taro}) {
    ASSERT_EQ(got[rcpt].size(), 1u) << rcpt;
    const json& m = got[rcpt][0];
    EXPECT_TRUE(m["defects"].empty()) << m.dump();
    EXPECT_NE(m.value("to", "").find(rcpt), std::string::npos) << m.dump();
    auto v = RunPython(kDkimVerify, {m["path"].get<std::string>(),
                                     keys.Write("txt", mail::testing::TestRsaKey().dns_txt)});
    EXPECT_NE(v.output.find("VERIFIED"), std::string::npos) << rcpt << ": " << v.output;
  }
  for (int i = 1; i <= Received(); ++i) {
    json meta = json::parse(sink.Meta(i), nullptr, false);
    EXPECT_NE(meta["mail_options"].dump().find("SMTPUTF8"), std::string::npos) << meta.dump();
  }
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["sent"], 2) << report.dump();
  EXPECT_EQ(report["outcomes"]["failed"], 0) << report.dump();
}

TEST_F(Delivery, ContactUnsubscribedBeforeItsTurnIsSkipped) {
  auto c = Client(std::string(kAllMarketingScopes) + ",contacts:write");
  int64_t list = AddList("L");
  int64_t stay = AddContact("stay@example.com");
  int64_t leave = AddContact("leave@example.com");
  InList(stay, list);
  InList(leave, list);
  // Scheduled two seconds ahead: the audience is snapshotted now, sent later.
  auto at = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() +
                                                 std::chrono::seconds(3));
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
  int64_t id = NewCampaign(*c, list, {{"send_at", when}});
  Confirm(*c, {{"id", id}});
  EXPECT_EQ(last_preview_["preview"]["new_status"], "scheduled");
  EXPECT_EQ(CampaignStatus(id), "scheduled");
  // Parked until its time: the queue's index walk never meets a scheduled campaign's rows.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ? AND due_at >= ?",
                  {id, int64_t{4'000'000'000'000'000'000}}),
            2);
  Call(*c, "set_contact_status", {{"id", leave}, {"status", "unsubscribed"}});
  ASSERT_TRUE(WaitStatus(id, "sent", 20)) << CampaignStatus(id);
  auto got = ByRecipient();
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(got.count("stay@example.com"), 1u);
  json report = Report(*c, id, {{"status", "skipped"}});
  EXPECT_EQ(report["outcomes"]["skipped"], 1) << report.dump();
  ASSERT_EQ(report["recipients"]["items"].size(), 1u);
  EXPECT_EQ(report["recipients"]["items"][0]["reason"], "contact is unsubscribed");
}

TEST_F(Delivery, RelayReportsBounceAndComplaintOverRest) {
  auto c = Client();
  int64_t list = AddList("L");
  int64_t a = AddContact("a@example.com");
  int64_t b = AddContact("b@example.com");
  InList(a, list);
  InList(b, list);
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent"));
  auto mail = ByRecipient();
  std::string a_mid = mail["a@example.com"].at(0)["message-id"];

  auto key = server_.app().services().governance->api_keys->Create(
      "relay", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(key.has_value());
  http::Headers auth = {{"Authorization", "Bearer " + key->secret}};
  auto r = server_.PostJson(
      "/api/crm/v1/mail/events",
      {{"events",
        {{{"email", "A@Example.com"}, {"type", "complaint"}, {"message_id", a_mid}},
         {{"email", "b@example.com"}, {"type", "bounce"}},
         {{"email", "nobody@example.com"}, {"type", "bounce"}}}}},
      auth);
  ASSERT_EQ(r.status, 200) << r.body;
  json body = JsonBody(r);
  EXPECT_EQ(body["results"][0]["status"], "complained");
  EXPECT_EQ(body["results"][0]["campaign_id"], id);
  EXPECT_EQ(body["results"][1]["status"], "bounced");
  // An address no contact holds is suppressed all the same.
  EXPECT_EQ(body["results"][2]["applied"], true) << r.body;
  EXPECT_EQ(body["results"][2]["suppressed"], true) << r.body;
  EXPECT_TRUE(body["results"][2]["contact_id"].is_null()) << r.body;
  auto admin = server_.app().services().governance->api_keys->Create(
      "admin", governance::ApiKeyRole::kAdmin);
  ASSERT_TRUE(admin.has_value());
  auto entry = server_.Get("/api/crm/v1/suppressions?email=nobody@example.com",
                           {{"Authorization", "Bearer " + admin->secret}});
  ASSERT_EQ(entry.status, 200) << entry.body;
  ASSERT_EQ(JsonBody(entry)["suppressions"].size(), 1u) << entry.body;
  EXPECT_EQ(JsonBody(entry)["suppressions"][0]["reason"], "hard_bounce") << entry.body;
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["complained"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["bounced"], 1);
  // A bounce reported after the relay took the message takes it off the delivered.
  EXPECT_EQ(report["totals"]["sent"], 2);
  EXPECT_EQ(report["totals"]["delivered"], 1);
  EXPECT_DOUBLE_EQ(report["rates"]["bounce"].get<double>(), 0.5);

  // Bad input: problem JSON naming the field, nothing applied.
  auto bad = server_.PostJson("/api/crm/v1/mail/events",
                              {{"email", "a@example.com"}, {"type", "spam"}}, auth);
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_NE(bad.body.find("\"type\""), std::string::npos);
  // Without a key: 401.
  EXPECT_EQ(
      server_.PostJson("/api/crm/v1/mail/events", {{"email", "a@example.com"}, {"type", "bounce"}})
          .status,
      401);

  // The per-recipient log over REST.
  auto log =
      server_.Get("/api/crm/v1/campaigns/" + std::to_string(id) + "/recipients?status=sent", auth);
  ASSERT_EQ(log.status, 200) << log.body;
  json lj = JsonBody(log);
  EXPECT_EQ(lj["counts"]["sent"], 2);
  EXPECT_EQ(lj["recipients"].size(), 2u);
}

// A provider's signed event names the message by its Message-ID as the provider writes it
// (Mailgun: without angle brackets), and the campaign of that message is the one counted,
// not the contact's latest.
TEST_F(Delivery, ASignedProviderEventCountsForTheCampaignOfItsMessageId) {
  auto c = Client();
  int64_t list = AddList("L");
  InList(AddContact("p@example.com"), list);
  int64_t first = NewCampaign(*c, list);
  Confirm(*c, {{"id", first}});
  ASSERT_TRUE(WaitStatus(first, "sent"));
  std::string mid = ByRecipient()["p@example.com"].at(0)["message-id"];
  int64_t second = NewCampaign(*c, list);
  Confirm(*c, {{"id", second}});
  ASSERT_TRUE(WaitStatus(second, "sent"));
  ASSERT_EQ(mid.front(), '<');

  const std::string signing_key = "key-delivery-test-0123456789abcdef";
  auto configured = server_.app().services().marketing->receivers->Configure(
      "mailgun", {.signing_key = signing_key});
  ASSERT_TRUE(configured.has_value()) << configured.error().message;
  const std::string ts = std::to_string(std::time(nullptr)), token = "delivery-test-token-0001";
  json body = {{"signature",
                {{"timestamp", ts},
                 {"token", token},
                 {"signature", crypto::Hex(crypto::HmacSha256(signing_key, ts + token))}}},
               {"event-data",
                {{"event", "complained"},
                 {"id", "evt-delivery-1"},
                 {"recipient", "p@example.com"},
                 {"message", {{"headers", {{"message-id", mid.substr(1, mid.size() - 2)}}}}}}}};
  auto r = server_.PostJson("/api/crm/v1/mail/events/mailgun", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["campaign_id"], first) << r.body;
  EXPECT_EQ(JsonBody(r)["results"][0]["status"], "complained") << r.body;
  EXPECT_EQ(Report(*c, first)["outcomes"]["complained"], 1);
  EXPECT_EQ(Report(*c, second)["outcomes"]["complained"], 0);
}

TEST_F(Delivery, TrackedOpensAndClicksCountOnceAndRedirectOnlyWhereTheMessagePointed) {
  auto c = Client();
  int64_t list = AddList("L");
  InList(AddContact("t@example.com"), list);
  int64_t id = NewCampaign(*c, list, {{"track_opens", true}, {"track_clicks", true}});
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent"));
  std::string html = ByRecipient()["t@example.com"].at(0)["html"];
  auto find_url = [&](const std::string& marker) {
    size_t p = html.find(server_.base_url() + marker);
    EXPECT_NE(p, std::string::npos) << html;
    if (p == std::string::npos) return std::string();
    size_t end = html.find('"', p);
    std::string url = html.substr(p, end - p);
    size_t amp;
    while ((amp = url.find("&amp;")) != std::string::npos) url.replace(amp, 5, "&");
    return url.substr(server_.base_url().size());
  };
  std::string open = find_url("/t/o/");
  std::string click = find_url("/t/c/");
  EXPECT_EQ(html.find("href=\"https://example.com/menu"), std::string::npos);  // rewritten
  auto pixel = server_.Get(open);
  EXPECT_EQ(pixel.status, 200);
  EXPECT_EQ(*pixel.Header("Content-Type"), "image/gif");
  server_.Get(open);
  auto go = server_.Get(click);
  EXPECT_EQ(go.status, 302);
  EXPECT_EQ(*go.Header("Location"), "https://example.com/menu?a=1&b=2");
  // The same token with another target is refused: no open redirect.
  std::string evil = click.substr(0, click.find("?u=")) + "?u=https%3A%2F%2Fevil.example%2F";
  auto refused = server_.Get(evil);
  EXPECT_EQ(refused.status, 400);
  EXPECT_FALSE(refused.Header("Location").has_value());
  json report = Report(*c, id);
  EXPECT_EQ(report["outcomes"]["opened"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["clicked"], 1);
}

TEST_F(Delivery, MergeValuesInLinksAreOnlyWebOrMailUrlsAndAreNeverSigned) {
  auto c = Client();
  int64_t list = AddList("L");
  // What anyone can put in a custom field through a public form.
  int64_t js = AddContact("js@example.com");
  Exec("UPDATE contacts SET custom_fields = ? WHERE id = ?",
       {std::string(R"j({"site":" JavaScript:alert(document.domain)"})j"), js});
  int64_t web = AddContact("web@example.com");
  Exec("UPDATE contacts SET custom_fields = ? WHERE id = ?",
       {std::string(R"({"site":"https://evil.example/phish"})"), web});
  InList(js, list);
  InList(web, list);
  int64_t id = NewCampaign(
      *c, list,
      {{"track_clicks", true},
       {"html_body",
        "<html><body><p><a href=\"{{custom.site | \"https://example.com/\"}}\">Your site</a> "
        "<img src='{{custom.site}}' alt=''> <a href=\"https://example.com/menu\">Menu</a></p>"
        "<p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p></body></html>"}});
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent")) << CampaignStatus(id);
  auto got = ByRecipient();
  ASSERT_EQ(got.size(), 2u);
  std::string js_html = got["js@example.com"].at(0)["html"];
  std::string web_html = got["web@example.com"].at(0)["html"];
  // A javascript: value renders as a missing one: the fallback, and an empty src.
  EXPECT_EQ(js_html.find("alert"), std::string::npos) << js_html;
  EXPECT_NE(js_html.find("<img src='' alt=''>"), std::string::npos) << js_html;
  // A web address from a merge value is sent as it is, not as a crmd-signed redirect.
  EXPECT_NE(web_html.find("href=\"https://evil.example/phish\""), std::string::npos) << web_html;
  EXPECT_NE(web_html.find("src='https://evil.example/phish'"), std::string::npos) << web_html;
  EXPECT_EQ(web_html.find("evil.example%2F"), std::string::npos) << web_html;
  EXPECT_EQ(web_html.find("evil.example%2f"), std::string::npos) << web_html;
  // The sender's own link is still tracked.
  EXPECT_EQ(web_html.find("href=\"https://example.com/menu\""), std::string::npos) << web_html;
  EXPECT_NE(web_html.find("/t/c/"), std::string::npos) << web_html;
  // The fallback is the sender's text, so it is tracked like any link the sender wrote.
  EXPECT_NE(js_html.find("u=https%3A%2F%2Fexample.com%2F\""), std::string::npos) << js_html;
}

TEST_F(Delivery, RecipientsCsvGivesEveryRecipientsFinalState) {
  auto c = Client();
  int64_t list = AddList("L");
  InList(AddContact("ok@example.com"), list);
  int64_t bad = AddContact("reject-me@example.com");
  InList(bad, list);
  Exec("UPDATE contacts SET first_name = ? WHERE id = ?", {std::string("=1+1"), bad});
  int64_t id = NewCampaign(*c, list);
  Confirm(*c, {{"id", id}});
  ASSERT_TRUE(WaitStatus(id, "sent", 30)) << CampaignStatus(id);
  auto key = server_.app().services().governance->api_keys->Create("export",
                                                                   governance::ApiKeyRole::kAdmin);
  ASSERT_TRUE(key);
  http::Headers auth = {{"Authorization", "Bearer " + key->secret}};
  std::string path = "/api/crm/v1/campaigns/" + std::to_string(id) + "/recipients";
  auto r = server_.Get(path + "?format=csv", auth);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type").value_or(""), "text/csv; charset=utf-8");
  const std::string header =
      "email,first_name,last_name,status,reason,attempts,round,message_id,smtp_code,sent_at,"
      "opened_at,clicked_at,bounced_at,complained_at,unsubscribed_at\r\n";
  ASSERT_EQ(r.body.rfind(header, 0), 0u) << r.body;
  size_t ok = r.body.find("\r\nok@example.com,");
  size_t rejected = r.body.find("\r\nreject-me@example.com,'=1+1,");
  ASSERT_NE(ok, std::string::npos) << r.body;
  ASSERT_NE(rejected, std::string::npos) << r.body;
  std::string ok_row = r.body.substr(ok + 2, r.body.find("\r\n", ok + 2) - ok - 2);
  std::string bad_row =
      r.body.substr(rejected + 2, r.body.find("\r\n", rejected + 2) - rejected - 2);
  EXPECT_NE(ok_row.find(",sent,"), std::string::npos) << ok_row;
  EXPECT_NE(ok_row.find("@example.com>"), std::string::npos) << ok_row;  // the Message-ID
  EXPECT_NE(ok_row.find("Z,"), std::string::npos) << ok_row;             // sent_at
  EXPECT_NE(bad_row.find(",failed,"), std::string::npos) << bad_row;
  EXPECT_NE(bad_row.find(",550,"), std::string::npos) << bad_row;
  // Pages: one row each, the header once.
  auto first = server_.Get(path + "?format=csv&limit=1", auth);
  ASSERT_EQ(first.status, 200);
  ASSERT_TRUE(first.Header("Crmd-Next-Cursor").has_value());
  auto second = server_.Get(
      path + "?format=csv&limit=1&cursor=" + std::string(*first.Header("Crmd-Next-Cursor")), auth);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(first.body + second.body, r.body);
  EXPECT_EQ(server_.Get(path, auth).status, 200);  // the JSON log, as before
  EXPECT_EQ(server_.Get(path + "?format=xml", auth).status, 422);
  EXPECT_EQ(server_.Get("/api/crm/v1/campaigns/99999/recipients?format=csv", auth).status, 404);
}

TEST_F(Delivery, ContentBrokenBehindTheServiceBackPausesTheCampaignInsteadOfSending) {
  auto c = Client();
  int64_t list = AddList("L");
  InList(AddContact("a@example.com"), list);
  auto at = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() +
                                                 std::chrono::seconds(2));
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
  int64_t id = NewCampaign(*c, list, {{"send_at", when}});
  Confirm(*c, {{"id", id}});
  // Saved content is always checked; a row changed by hand is not.
  Exec("UPDATE campaigns SET subject = 'Hi {{first_name', revision = revision + 1 WHERE id = ?",
       {id});
  ASSERT_TRUE(WaitStatus(id, "paused", 20)) << CampaignStatus(id);
  EXPECT_EQ(Received(), 0);
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ? AND status = 'pending'",
            {id}),
      1);
}

TEST_F(Delivery, UnknownMergeTagIsRefusedWhenSaved) {
  auto c = Client();
  json err =
      ExpectToolError(*c, "create_campaign", {{"name", "x"}, {"subject", "Hi {{frist_name}}"}},
                      "validation_failed");
  EXPECT_NE(err.dump().find("frist_name"), std::string::npos) << err.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns"), 0);
  // The same for an automation's send_email step and a sequence's emails.
  err = ExpectToolError(
      *c, "create_automation",
      {{"name", "a"},
       {"trigger", {{"type", "contact_created"}}},
       {"steps", {{{"type", "send_email"}, {"subject", "Hi"}, {"text_body", "Yo {{lats_name}}"}}}}},
      "validation_failed");
  EXPECT_NE(err.dump().find("lats_name"), std::string::npos) << err.dump();
  err = ExpectToolError(
      *c, "create_sequence",
      {{"name", "s"}, {"emails", {{{"subject", "Hi {{email"}, {"text_body", "b"}}}}},
      "validation_failed");
  EXPECT_NE(err.dump().find("emails[0].subject"), std::string::npos) << err.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sequences"), 0);
}

}  // namespace
}  // namespace crmd::testing
