// The bounce mailbox end to end: a real campaign goes through SMTP (aiosmtpd, which records
// the MAIL FROM) with VERP return paths; a DSN and an ARF report addressed to those paths
// are delivered into a real IMAP mailbox (dovecot on loopback, tests/.../dovecot.h), and
// crmd's poll turns them into a hard bounce and a complaint of the right contact and
// campaign. A mail it cannot attribute, and one with a forged return path, stay in the
// mailbox and are counted; a report seen again is not counted again.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "src/app/services.h"
#include "src/marketing/services.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/integration/tools_marketing/dovecot.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/browser.h"
#include "tests/support/wait.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::SmtpSink;
using nlohmann::json;

constexpr const char* kBounceDomain = "bounces.example.com";
constexpr const char* kAdminPassword = "console admin password 42";

struct SinkAndMailbox {
  SmtpSink sink;
  Dovecot dovecot;
};

TestServerOptions Bouncing(const SinkAndMailbox& s, bool pop3) {
  return TestServerOptions{.configure = [&s, pop3](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
    c.bounce_domain = kBounceDomain;
    c.bounce_mailbox_url = pop3 ? s.dovecot.Pop3Url() : s.dovecot.ImapUrl();
    c.bounce_poll_seconds = 1;
  }};
}

std::string Crlf(const std::string& s) { return std::regex_replace(s, std::regex("\n"), "\r\n"); }

// A Postfix-shaped DSN (RFC 3464) for a message whose envelope sender was `return_path`.
std::string Dsn(const std::string& id, const std::string& return_path, const std::string& rcpt,
                const std::string& message_id) {
  return Crlf(
      "From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\n"
      "To: " +
      return_path +
      "\n"
      "Subject: Undelivered Mail Returned to Sender\n"
      "Message-ID: <" +
      id +
      "@mx.example.org>\n"
      "MIME-Version: 1.0\n"
      "Content-Type: multipart/report; report-type=delivery-status;\n"
      "\tboundary=\"B1\"\n\n"
      "--B1\nContent-Type: text/plain\n\nUser unknown.\n\n"
      "--B1\nContent-Type: message/delivery-status\n\n"
      "Reporting-MTA: dns; mx.example.org\n\n"
      "Final-Recipient: rfc822; " +
      rcpt +
      "\n"
      "Action: failed\nStatus: 5.1.1\n"
      "Diagnostic-Code: smtp; 550 5.1.1 User unknown\n\n"
      "--B1\nContent-Type: text/rfc822-headers\n\n"
      "From: news@example.com\nTo: " +
      rcpt + "\nMessage-ID: " + message_id +
      "\n\n"
      "--B1--\n");
}

// An ARF complaint (RFC 5965) naming the envelope sender in Original-Mail-From.
std::string Arf(const std::string& id, const std::string& return_path, const std::string& rcpt) {
  return Crlf(
      "From: fbl@isp.example.net\nTo: abuse@example.com\nSubject: FW: complaint\n"
      "Message-ID: <" +
      id +
      "@isp.example.net>\nMIME-Version: 1.0\n"
      "Content-Type: multipart/report; report-type=feedback-report; boundary=\"F1\"\n\n"
      "--F1\nContent-Type: text/plain\n\nA user marked this as spam.\n\n"
      "--F1\nContent-Type: message/feedback-report\n\n"
      "Feedback-Type: abuse\nUser-Agent: Fbl/1.0\nVersion: 1\n"
      "Original-Mail-From: <" +
      return_path +
      ">\n"
      "Original-Rcpt-To: <" +
      rcpt +
      ">\n\n"
      "--F1\nContent-Type: message/rfc822\n\n"
      "Return-Path: <" +
      return_path + ">\nFrom: news@example.com\nTo: " + rcpt + "\nSubject: Hello\n\nHi\n--F1--\n");
}

class BounceMailbox : public SinkAndMailbox, public MarketingTools {
 protected:
  explicit BounceMailbox(bool pop3 = false) : MarketingTools(Bouncing(*this, pop3)) {}

  // Sends a campaign to the addresses; answers its id and, by address, the envelope sender
  // and Message-ID the SMTP server received.
  int64_t SendCampaign(const std::vector<int64_t>& contacts,
                       std::map<std::string, std::pair<std::string, std::string>>& got) {
    auto c = Client();
    int64_t list = AddList("News");
    for (int64_t k : contacts) InList(k, list);
    json made = Call(*c, "create_campaign",
                     {{"name", "Launch"},
                      {"subject", "Hello"},
                      {"from_email", "news@example.com"},
                      {"text_body", "Hi. Unsubscribe: {{unsubscribe_url}}"},
                      {"audience", {{"lists", {list}}}}});
    int64_t id = made["campaign"].value("id", int64_t{0});
    json preview = Call(*c, "activate_campaign", {{"id", id}});
    Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
    EXPECT_TRUE(sink.WaitFor(static_cast<int>(contacts.size())));
    auto ids = sink.MessageIdsByRecipient();
    for (int i = 1; i <= static_cast<int>(contacts.size()); ++i) {
      json meta = json::parse(sink.Meta(i), nullptr, false);
      std::string rcpt = meta["rcpt_tos"][0];
      got[rcpt] = {meta["mail_from"], ids[rcpt].empty() ? "" : ids[rcpt][0]};
    }
    return id;
  }

  std::string Status(int64_t contact) {
    auto rows = db_->Read([&](store::Conn& c) {
      return c.QueryOne("SELECT status FROM contacts WHERE id = ?", {contact});
    });
    return rows && *rows ? (*rows)->Str(0) : "";
  }

  void RunsTheWholeStory();
};

void BounceMailbox::RunsTheWholeStory() {
  ASSERT_TRUE(dovecot.running()) << dovecot.Log();
  int64_t ada = AddContact("ada@example.com"), bob = AddContact("bob@example.com"),
          cy = AddContact("cy@example.com");
  std::map<std::string, std::pair<std::string, std::string>> sent;
  int64_t id = SendCampaign({ada, bob, cy}, sent);
  ASSERT_EQ(sent.size(), 3u);
  // Every message went out with its own VERP return path as the envelope sender.
  const std::string& ada_path = sent["ada@example.com"].first;
  const std::string& bob_path = sent["bob@example.com"].first;
  const std::string& cy_path = sent["cy@example.com"].first;
  for (auto [k, path] : {std::pair{ada, ada_path}, {bob, bob_path}, {cy, cy_path}}) {
    std::string prefix = "bounce+c" + std::to_string(id) + "-" + std::to_string(k) + "-";
    EXPECT_EQ(path.rfind(prefix, 0), 0u) << path;
    EXPECT_EQ(path.substr(path.find('@') + 1), kBounceDomain) << path;
  }
  // A forged path: cy's reference with another MAC (a mail "for" cy that crmd did not make).
  std::string forged = "bounce+c" + std::to_string(id) + "-" + std::to_string(cy) +
                       "-aaaaaaaaaaaaaaaa@" + kBounceDomain;
  ASSERT_NE(forged, cy_path);

  ASSERT_TRUE(
      dovecot.Append(Dsn("dsn-1", ada_path, "ada@example.com", sent["ada@example.com"].second)));
  ASSERT_TRUE(dovecot.Append(Arf("arf-1", bob_path, "bob@example.com")));
  ASSERT_TRUE(dovecot.Append(Crlf("From: someone@example.org\nTo: " + std::string("bounce@") +
                                  kBounceDomain +
                                  "\nSubject: Out of office\n"
                                  "Message-ID: <ooo-1@example.org>\n\nBack on Monday.\n")));
  ASSERT_TRUE(dovecot.Append(Dsn("dsn-forged", forged, "cy@example.com", "<x@y>")));

  ASSERT_TRUE(
      WaitUntil([&] { return Status(ada) == "bounced" && Status(bob) == "complained"; }, 30))
      << Status(ada) << " " << Status(bob) << "\n"
      << dovecot.Log();
  ASSERT_TRUE(WaitUntil([&] { return dovecot.Count() == 2; }, 15)) << dovecot.Count();
  EXPECT_EQ(Status(cy), "subscribed");  // the forged report moved nobody
  EXPECT_EQ(Count("SELECT bounced FROM campaign_stats WHERE campaign_id = ?", {id}), 1);
  EXPECT_EQ(Count("SELECT complained FROM campaign_stats WHERE campaign_id = ?", {id}), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ? AND "
                  "contact_id = ? AND bounced_at IS NOT NULL",
                  {id, ada}),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ? AND "
                  "contact_id = ? AND complained_at IS NOT NULL",
                  {id, bob}),
            1);
  // The two left are recorded and counted, each once however many polls saw them (a poll
  // may have run between the appends: wait for the one that saw all four).
  ASSERT_TRUE(WaitUntil(
      [&] { return Count("SELECT COUNT(*) FROM bounce_mailbox_unattributed") == 2; }, 15));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // two more polls
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bounce_mailbox_unattributed"), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bounce_mailbox_unattributed WHERE report_id IN "
                  "('<ooo-1@example.org>', '<dsn-forged@mx.example.org>')"),
            2);
  auto metrics = server_.Get("/metrics");
  EXPECT_NE(metrics.body.find("crmd_bounce_mailbox_unattributed 2"), std::string::npos)
      << metrics.body.substr(0, 2000);
  EXPECT_EQ(metrics.body.find(dovecot.password()), std::string::npos);
  // The operator sees them with crmctl, and the mailbox's URL without its password.
  CtlRun ctl =
      Crmctl("'--database_url=" + server_.database_url() + "' --bounce_domain=" + kBounceDomain +
                 " '--bounce_mailbox_url=" + dovecot.ImapUrl() + "' mail mailbox",
             false);
  ASSERT_EQ(ctl.status, 0) << ctl.out;
  json shown = json::parse(ctl.out, nullptr, false);
  EXPECT_EQ(shown.value("unattributed_count", -1), 2) << ctl.out;
  EXPECT_EQ(shown["unattributed"].size(), 2u);
  EXPECT_EQ(ctl.out.find(dovecot.password()), std::string::npos) << ctl.out;
  EXPECT_NE(ctl.out.find("imap://127.0.0.1:"), std::string::npos) << ctl.out;

  // And an administrator on the console's Mail receivers page.
  ASSERT_TRUE(server_.app().services().users->Create("admin@example.com", kAdminPassword, true));
  Browser browser(server_);
  ASSERT_EQ(SignInToConsole(browser, "admin@example.com", kAdminPassword).status, 200);
  Page page = browser.Get("/console/mail-receivers");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<strong id=\"unattributed-count\">2</strong>"), std::string::npos)
      << page.body;
  EXPECT_NE(page.body.find("Out of office"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("ooo-1@example.org"), std::string::npos) << page.body;
  EXPECT_EQ(page.body.find(dovecot.password()), std::string::npos);

  // Another node on the same database polls only once this one's lease has run out.
  auto& services = server_.app().services();
  jobs::BouncePoller other(*services.db, *services.bounce_mailbox, *services.clock,
                           {.mailbox_url = dovecot.ImapUrl()});
  auto skipped = other.RunOnce();
  ASSERT_TRUE(skipped.has_value()) << skipped.error().message;
  EXPECT_EQ(skipped->applied + skipped->duplicate + skipped->unattributed + skipped->errors, 0);

  // The same DSN again (a retry of the reporting server): deleted, not counted twice.
  ASSERT_TRUE(
      dovecot.Append(Dsn("dsn-1", ada_path, "ada@example.com", sent["ada@example.com"].second)));
  ASSERT_TRUE(WaitUntil([&] { return dovecot.Count() == 2; }, 15));
  EXPECT_EQ(Count("SELECT bounced FROM campaign_stats WHERE campaign_id = ?", {id}), 1);
}

TEST_F(BounceMailbox, ImapDsnAndArfBecomeBounceAndComplaintOfTheirCampaign_Rfc3464_Rfc5965) {
  RunsTheWholeStory();
}

class BounceMailboxPop3 : public BounceMailbox {
 protected:
  BounceMailboxPop3() : BounceMailbox(true) {}
};

TEST_F(BounceMailboxPop3, Pop3MailboxWorksTheSame) { RunsTheWholeStory(); }

// Every line crmd logs while it lives.
struct MailboxLogCapture {
  MailboxLogCapture() : previous(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(lines)));
    spdlog::set_level(spdlog::level::info);
  }
  ~MailboxLogCapture() {
    spdlog::set_default_logger(previous);
    spdlog::set_level(spdlog::level::warn);
  }
  std::string Text() {
    spdlog::default_logger()->flush();
    return lines.str();
  }
  std::ostringstream lines;
  std::shared_ptr<spdlog::logger> previous;
};

TEST(BounceMailboxPoll, AMailboxThatRefusesTheLoginIsLoggedWithoutItsPassword) {
  MailboxLogCapture log;
  Dovecot dovecot;
  ASSERT_TRUE(dovecot.running()) << dovecot.Log();
  const std::string wrong = "wrong-pass-987654321";
  std::string url = dovecot.ImapUrl();
  url.replace(url.find(dovecot.password()), dovecot.password().size(), wrong);
  TestServer server({.configure = [&](Config& c) {
    c.bounce_domain = kBounceDomain;
    c.bounce_mailbox_url = url;
    c.bounce_poll_seconds = 1;
  }});
  ASSERT_TRUE(WaitUntil(
      [&] { return log.Text().find("bounce_mailbox_poll_failed") != std::string::npos; }, 20))
      << log.Text();
  const std::string text = log.Text();
  EXPECT_EQ(text.find(wrong), std::string::npos);
  EXPECT_NE(text.find("imap://127.0.0.1:"), std::string::npos) << text;
  auto metrics = server.Get("/metrics");
  EXPECT_NE(metrics.body.find("crmd_bounce_mailbox_polls_total{outcome=\"unavailable\"}"),
            std::string::npos);
  EXPECT_EQ(metrics.body.find(wrong), std::string::npos);
}

}  // namespace
}  // namespace crmd::testing
