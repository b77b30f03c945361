// Automations, sequences and double opt-in end to end: a real crmd (in process) sends
// through SMTP to a real SMTP server (aiosmtpd) on loopback; contacts arrive through the
// REST API, so their events go through the outbox like any signup; every message is
// parsed back with Python's email package. docs/marketing.md, docs/mail.md.
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "src/governance/api_keys.h"
#include "src/governance/settings.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/wait.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;
using Clock_ = std::chrono::steady_clock;

constexpr const char* kParseRunMessage = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {k.lower(): str(msg[k]) for k in ['From', 'To', 'Subject', 'Message-ID',
       'List-Unsubscribe', 'List-Unsubscribe-Post', 'X-Crmd-Automation', 'X-Crmd-Sequence']
       if msg[k] is not None}
body = msg.get_body(preferencelist=('plain',))
out['text'] = body.get_content() if body else None
body = msg.get_body(preferencelist=('html',))
out['html'] = body.get_content() if body else None
out['defects'] = [str(d) for d in msg.defects]
print(json.dumps(out))
)PY";

struct RunSinkFirst {
  SmtpSink sink;
};

TestServerOptions RunsSendingTo(const RunSinkFirst& s) {
  return TestServerOptions{.configure = [&s](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
  }};
}

class Runs : public RunSinkFirst, public MarketingTools {
 protected:
  Runs() : MarketingTools(RunsSendingTo(*this)) {
    auto key = server_.app().services().governance->api_keys->Create(
        "signup", governance::ApiKeyRole::kIntegration);
    EXPECT_TRUE(key.has_value());
    if (key) auth_ = {{"Authorization", "Bearer " + key->secret}};
  }

  // A signup over REST (POST /contact): its events go through the outbox.
  int64_t Signup(const json& body) {
    auto r = server_.PostJson("/api/crm/v1/contact", body, auth_);
    EXPECT_TRUE(r.status == 200 || r.status == 201) << r.status << " " << r.body;
    auto j = json::parse(r.body, nullptr, false);
    if (j.is_discarded()) return 0;
    if (j.contains("contact")) return j["contact"].value("id", int64_t{0});
    return j.value("id", int64_t{0});
  }

  size_t Messages() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(sink.dir()))
      if (e.path().extension() == ".eml") ++n;
    return n;
  }

  json Parsed(int n) {
    auto run = RunPython(kParseRunMessage, {sink.dir() + "/" + Name(n) + ".eml"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    auto j = json::parse(run.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << run.output;
    return j;
  }

  static std::string Name(int n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d", n);
    return buf;
  }

  void Confirm(McpClient& c, const std::string& tool, const json& args) {
    json preview = Call(c, tool, args);
    ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
    json done = Call(c, "confirm_action",
                     {{"confirmation_token", preview.value("confirmation_token", "")}});
    ASSERT_EQ(done.value("status", ""), "done") << done.dump();
  }

  std::string ContactStatus(int64_t id) {
    auto k = server_.app().services().crm->contacts->Get(id);
    return k ? k->status : "";
  }

  template <typename F>
  bool WaitUntil(int seconds, F f) {
    return crmd::testing::WaitUntil(f, seconds);
  }

  http::Headers auth_;
};

int64_t Millis(Clock_::time_point a, Clock_::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

TEST_F(Runs, AutomationWithAWaitRunsItsStepsInOrderAndStopsOnDeactivation) {
  auto c = Client();
  int64_t vip = AddTag("vip"), done = AddTag("done");
  json made = Call(
      *c, "create_automation",
      {{"name", "Welcome"},
       {"trigger", {{"type", "tag_added"}, {"tag_id", vip}}},
       {"steps",
        json::array({{{"type", "send_email"},
                      {"subject", "Hello {{first_name | \"there\"}}"},
                      {"html_body", "<p>Hi {{first_name}}, {{email}}</p> {{unsubscribe_url}}"}},
                     {{"type", "wait"}, {"seconds", 2}},
                     {{"type", "add_tag"}, {"tag_id", done}},
                     {{"type", "send_email"},
                      {"subject", "Second"},
                      {"text_body", "Two days later, {{first_name}} {{unsubscribe_url}}"}}})}});
  int64_t id = made["automation"]["id"];
  Confirm(*c, "activate_automation", {{"id", id}});

  int64_t ada = Signup({{"email", "ada@example.com"}, {"first_name", "Ada"}, {"tags", {vip}}});
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 1; }));
  auto first_at = Clock_::now();
  json one = Parsed(1);
  EXPECT_EQ(one["subject"], "Hello Ada");
  EXPECT_NE(one.value("to", "").find("ada@example.com"), std::string::npos);
  EXPECT_NE(one.value("html", "").find("Hi Ada, ada@example.com"), std::string::npos);
  EXPECT_EQ(one["x-crmd-automation"], std::to_string(id));
  EXPECT_NE(one.value("list-unsubscribe", "").find("/u/"), std::string::npos);
  EXPECT_EQ(one["list-unsubscribe-post"], "List-Unsubscribe=One-Click");
  EXPECT_TRUE(one["defects"].empty()) << one.dump();
  // The wait is a due time: the tag and the second email come after it, in order.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contact_tags WHERE tag_id = ?", {done}), 0);
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 2; }));
  EXPECT_GE(Millis(first_at, Clock_::now()), 900);
  json two = Parsed(2);
  EXPECT_EQ(two["subject"], "Second");
  EXPECT_NE(two.value("text", "").find("Two days later, Ada"), std::string::npos);
  EXPECT_NE(two["message-id"], one["message-id"]);
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM contact_tags WHERE tag_id = ? AND contact_id = ?", {done, ada}),
      1);
  ASSERT_TRUE(WaitUntil(5, [&] {
    return Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'completed'") == 1;
  }));
  json report = Call(*c, "get_automation_report", {{"id", id}});
  EXPECT_EQ(report["enrolments"]["total"], 1) << report.dump();
  EXPECT_EQ(report["enrolments"]["completed"], 1);
  EXPECT_EQ(report["steps"][0]["sent"], 1);
  EXPECT_EQ(report["steps"][1]["done"], 1);
  EXPECT_EQ(report["steps"][2]["done"], 1);
  EXPECT_EQ(report["steps"][3]["sent"], 1);

  // Deactivated during the wait: nothing after it runs.
  int64_t bob = Signup({{"email", "bob@example.com"}, {"first_name", "Bob"}, {"tags", {vip}}});
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 3; }));
  EXPECT_EQ(Parsed(3)["subject"], "Hello Bob");
  json off = Call(*c, "deactivate_automation", {{"id", id}});
  EXPECT_EQ(off["automation"]["status"], "inactive") << off.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  EXPECT_EQ(Messages(), 3u);
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM contact_tags WHERE tag_id = ? AND contact_id = ?", {done, bob}),
      0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'cancelled'"), 1);
  // No new enrolments either.
  Signup({{"email", "carol@example.com"}, {"first_name", "Carol"}, {"tags", {vip}}});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(Messages(), 3u);
  report = Call(*c, "get_automation_report", {{"id", id}});
  EXPECT_EQ(report["enrolments"]["total"], 2);
  EXPECT_EQ(report["enrolments"]["cancelled"], 1);
}

TEST_F(Runs, EachTriggerEventEnrolsOnceAndAnEditAppliesToNewEnrolmentsOnly) {
  auto c = Client();
  int64_t vip = AddTag("vip");
  json made = Call(*c, "create_automation",
                   {{"name", "On signup"},
                    {"trigger", {{"type", "contact_created"}}},
                    {"steps", json::array({{{"type", "wait"}, {"seconds", 2}},
                                           {{"type", "send_email"},
                                            {"subject", "Old"},
                                            {"text_body", "x {{unsubscribe_url}}"}}})}});
  int64_t id = made["automation"]["id"];
  Confirm(*c, "activate_automation", {{"id", id}});
  Signup({{"email", "ann@example.com"}});
  ASSERT_TRUE(WaitUntil(5, [&] { return Count("SELECT COUNT(*) FROM automation_runs") == 1; }));
  // The active automation is edited while ann waits: ann keeps "Old", new signups get "New".
  json got = Call(*c, "get_automation", {{"id", id}});
  json edited = Call(*c, "update_automation",
                     {{"id", id},
                      {"expected_revision", got["automation"]["revision"]},
                      {"steps", json::array({{{"type", "send_email"},
                                              {"subject", "New"},
                                              {"text_body", "y {{unsubscribe_url}}"}}})}});
  ASSERT_EQ(edited["automation"]["status"], "active") << edited.dump();
  Signup({{"email", "ben@example.com"}, {"tags", {vip}}});  // one event of its type only
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(Messages(), 2u);
  std::map<std::string, std::string> by_to;
  for (int n = 1; n <= 2; ++n) {
    json m = Parsed(n);
    by_to[m.value("to", "")] = m.value("subject", "");
  }
  EXPECT_EQ(by_to["ann@example.com"], "Old");
  EXPECT_EQ(by_to["ben@example.com"], "New");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 2);
}

TEST_F(Runs, SequenceEmailsArriveWithTheirDelaysPauseHoldsThemUnsubscribeEndsThem) {
  auto c = Client();
  int64_t drip = AddList("drip");
  json made = Call(
      *c, "create_sequence",
      {{"name", "Drip"},
       {"list_id", drip},
       {"emails",
        json::array({{{"subject", "S1 {{first_name}}"}, {"text_body", "one"}, {"delay_seconds", 0}},
                     {{"subject", "S2"}, {"text_body", "two"}, {"delay_seconds", 2}}})}});
  int64_t id = made["sequence"]["id"];
  json on = Call(*c, "set_sequence_status", {{"id", id}, {"status", "active"}});
  ASSERT_EQ(on["sequence"]["status"], "active") << on.dump();

  // By list membership: the first email at once, the second after its delay.
  Signup({{"email", "ada@example.com"}, {"first_name", "Ada"}, {"lists", {drip}}});
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 1; }));
  auto first_at = Clock_::now();
  json s1 = Parsed(1);
  EXPECT_EQ(s1["subject"], "S1 Ada");
  EXPECT_EQ(s1["x-crmd-sequence"], std::to_string(id));
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 2; }));
  EXPECT_GE(Millis(first_at, Clock_::now()), 900);
  EXPECT_EQ(Parsed(2)["subject"], "S2");

  // By the tool argument; paused between the two emails: the second is held until resumed.
  int64_t bob = Signup({{"email", "bob@example.com"}, {"first_name", "Bob"}});
  json seq = Call(*c, "get_sequence", {{"id", id}});
  json enrolled = Call(*c, "update_sequence",
                       {{"id", id},
                        {"expected_revision", seq["sequence"]["revision"]},
                        {"enroll_contact_ids", {bob}}});
  ASSERT_TRUE(enrolled.contains("sequence")) << enrolled.dump();
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 3; }));
  EXPECT_EQ(Parsed(3)["subject"], "S1 Bob");
  json paused = Call(*c, "set_sequence_status", {{"id", id}, {"status", "paused"}});
  ASSERT_EQ(paused["sequence"]["status"], "paused") << paused.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_EQ(Messages(), 3u);
  json resumed = Call(*c, "set_sequence_status", {{"id", id}, {"status", "active"}});
  ASSERT_EQ(resumed["sequence"]["status"], "active") << resumed.dump();
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 4; }));
  EXPECT_EQ(Parsed(4)["subject"], "S2");

  // Unsubscribed from the first email's one-click link: the second never comes.
  int64_t carol =
      Signup({{"email", "carol@example.com"}, {"first_name", "Carol"}, {"lists", {drip}}});
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 5; }));
  json s1c = Parsed(5);
  EXPECT_EQ(s1c["subject"], "S1 Carol");
  std::string link = s1c.value("list-unsubscribe", "");
  ASSERT_GE(link.size(), 2u);
  std::string url = link.substr(1, link.find('>') - 1);
  ASSERT_EQ(url.rfind(server_.base_url(), 0), 0u) << url;
  auto r = server_.PostForm(url.substr(server_.base_url().size()), "List-Unsubscribe=One-Click");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(ContactStatus(carol), "unsubscribed");
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  EXPECT_EQ(Messages(), 5u);
  json after = Call(*c, "get_sequence", {{"id", id}});
  EXPECT_EQ(after["sequence"]["enrolments"]["enrolled"], 3) << after.dump();
  EXPECT_EQ(after["sequence"]["enrolments"]["sent"], 5);
  EXPECT_EQ(after["sequence"]["enrolments"]["completed"], 2);
  EXPECT_EQ(after["sequence"]["enrolments"]["exited"], 1);
}

// A contact deleted while a campaign waits to send to it and an automation and a sequence
// hold it: every report stops counting it as open (the rows go with the contact; the
// counters the reports read are closed in the deletion's transaction).
TEST_F(Runs, ASequenceEmailRefusedAtRcptBouncesTheContactAndSuppressesItsAddress) {
  auto c = Client();
  int64_t drip = AddList("drip");
  json made = Call(*c, "create_sequence",
                   {{"name", "Drip"},
                    {"list_id", drip},
                    {"emails", json::array({{{"subject", "S1"}, {"text_body", "one"}},
                                            {{"subject", "S2"}, {"text_body", "two"}}})}});
  int64_t id = made["sequence"]["id"];
  ASSERT_EQ(
      Call(*c, "set_sequence_status", {{"id", id}, {"status", "active"}})["sequence"]["status"],
      "active");
  int64_t gone = Signup({{"email", "reject-me@example.com"}, {"lists", {drip}}});
  int64_t ada = Signup({{"email", "ada@example.com"}, {"lists", {drip}}});
  // The relay refuses the address itself (550 at RCPT): a hard bounce, as for a campaign.
  ASSERT_TRUE(WaitUntil(15, [&] { return ContactStatus(gone) == "bounced"; }))
      << ContactStatus(gone);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM suppressions WHERE contact_id = ? AND reason = "
                  "'hard_bounce'",
                  {gone}),
            1);
  // Ada gets both emails; the bounced contact gets no second attempt.
  ASSERT_TRUE(WaitUntil(15, [&] { return Messages() >= 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Messages(), 2u);
  EXPECT_EQ(ContactStatus(ada), "subscribed");

  // Each email is the contact's own message in its data export: Ada's two as sent with
  // the Message-IDs she got, the refused one as failed with the relay's answer.
  auto admin = server_.app().services().governance->api_keys->Create(
      "admin", governance::ApiKeyRole::kAdmin);
  ASSERT_TRUE(admin.has_value());
  auto exported = [&](const std::string& email) {
    auto r = server_.Get("/api/crm/v1/contact/" + email + "/export",
                         {{"Authorization", "Bearer " + admin->secret}});
    EXPECT_EQ(r.status, 200) << r.body;
    json messages = json::array();
    for (const auto& m : json::parse(r.body, nullptr, false).value("messages", json::array()))
      if (m.value("source", "") == "sequence") messages.push_back(m);
    return messages;
  };
  json mine = exported("ada@example.com");
  ASSERT_EQ(mine.size(), 2u) << mine.dump();
  std::set<std::string> got = {Parsed(1)["message-id"], Parsed(2)["message-id"]};
  for (const auto& m : mine) {
    EXPECT_EQ(m["status"], "sent") << m.dump();
    EXPECT_EQ(m["sequence_id"], id) << m.dump();
    EXPECT_EQ(got.count(m.value("message_id", "")), 1u) << m.dump();
  }
  EXPECT_EQ(mine[0]["subject"], "S1");
  EXPECT_EQ(mine[1]["subject"], "S2");
  json refused = exported("reject-me@example.com");
  ASSERT_EQ(refused.size(), 1u) << refused.dump();
  EXPECT_EQ(refused[0]["status"], "failed");
  EXPECT_NE(refused[0].value("reason", "").find("550"), std::string::npos) << refused.dump();
}

TEST_F(Runs, DeletingAContactClosesWhatItHadOpenInEveryReport) {
  auto c = Client(std::string(kAllMarketingScopes) + ",contacts:read,contacts:delete");
  int64_t vip = AddTag("vip"), drip = AddList("drip");
  json automation = Call(*c, "create_automation",
                         {{"name", "Slow welcome"},
                          {"trigger", {{"type", "tag_added"}, {"tag_id", vip}}},
                          {"steps", json::array({{{"type", "wait"}, {"seconds", 3600}},
                                                 {{"type", "send_email"},
                                                  {"subject", "Later"},
                                                  {"text_body", "x {{unsubscribe_url}}"}}})}});
  int64_t automation_id = automation["automation"]["id"];
  Confirm(*c, "activate_automation", {{"id", automation_id}});
  json sequence =
      Call(*c, "create_sequence",
           {{"name", "Slow drip"},
            {"list_id", drip},
            {"emails",
             json::array({{{"subject", "S1"}, {"text_body", "one"}, {"delay_seconds", 3600}}})}});
  int64_t sequence_id = sequence["sequence"]["id"];
  ASSERT_EQ(Call(*c, "set_sequence_status",
                 {{"id", sequence_id}, {"status", "active"}})["sequence"]["status"],
            "active");
  int64_t ada = Signup({{"email", "ada@example.com"}, {"tags", {vip}}, {"lists", {drip}}});
  int64_t bob = Signup({{"email", "bob@example.com"}, {"tags", {vip}}, {"lists", {drip}}});
  ASSERT_GT(ada, 0);
  ASSERT_GT(bob, 0);
  ASSERT_TRUE(WaitUntil(10, [&] {
    return Count("SELECT COUNT(*) FROM automation_runs") == 2 &&
           Count("SELECT COUNT(*) FROM sequence_runs") == 2;
  }));
  json campaign = Call(*c, "create_campaign",
                       {{"name", "Next year"},
                        {"subject", "Hello"},
                        {"text_body", "Hi. Unsubscribe: {{unsubscribe_url}}"},
                        {"audience", {{"lists", {drip}}}},
                        {"send_at", "2099-01-01T00:00:00Z"}});
  int64_t campaign_id = campaign["campaign"]["id"];
  Confirm(*c, "activate_campaign", {{"id", campaign_id}});

  json before = Call(*c, "get_campaign_report", {{"id", campaign_id}});
  ASSERT_EQ(before["outcomes"]["pending"], 2) << before.dump();
  ASSERT_EQ(Call(*c, "get_automation_report", {{"id", automation_id}})["enrolments"]["active"], 2);
  ASSERT_EQ(Call(*c, "get_sequence", {{"id", sequence_id}})["sequence"]["enrolments"]["active"], 2);

  // The preview says what the deletion ends for the contact.
  json preview = Call(*c, "delete_contacts", {{"ids", {ada}}});
  ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
  const json& shown = preview["preview"]["contacts"][0];
  EXPECT_EQ(shown["pending_campaign_sends"], 1) << preview.dump();
  EXPECT_EQ(shown["active_automation_runs"], 1) << preview.dump();
  EXPECT_EQ(shown["active_sequence_enrolments"], 1) << preview.dump();
  json deleted =
      Call(*c, "confirm_action", {{"confirmation_token", preview.value("confirmation_token", "")}});
  ASSERT_EQ(deleted.value("status", ""), "done") << deleted.dump();

  json report = Call(*c, "get_campaign_report", {{"id", campaign_id}});
  EXPECT_EQ(report["outcomes"]["queued"], 2) << report.dump();
  EXPECT_EQ(report["outcomes"]["pending"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["skipped"], 1) << report.dump();
  json runs = Call(*c, "get_automation_report", {{"id", automation_id}});
  EXPECT_EQ(runs["enrolments"]["total"], 2) << runs.dump();
  EXPECT_EQ(runs["enrolments"]["active"], 1) << runs.dump();
  EXPECT_EQ(runs["enrolments"]["exited"], 1) << runs.dump();
  json drips = Call(*c, "get_sequence", {{"id", sequence_id}})["sequence"]["enrolments"];
  EXPECT_EQ(drips["active"], 1) << drips.dump();
  EXPECT_EQ(drips["exited"], 1) << drips.dump();
  // Paused and activated again: the activation adds no one, and the counters still hold
  // the deleted recipient as skipped and the other as pending.
  json paused = Call(*c, "pause_campaign", {{"id", campaign_id}});
  ASSERT_EQ(paused["campaign"]["status"], "paused") << paused.dump();
  Confirm(*c, "activate_campaign", {{"id", campaign_id}});
  report = Call(*c, "get_campaign_report", {{"id", campaign_id}});
  EXPECT_EQ(report["campaign"]["status"], "scheduled") << report.dump();
  EXPECT_EQ(report["outcomes"]["queued"], 2) << report.dump();
  EXPECT_EQ(report["outcomes"]["pending"], 1) << report.dump();
  EXPECT_EQ(report["outcomes"]["skipped"], 1) << report.dump();
  // The second contact goes too: nothing is left open, and the first is not counted twice.
  Confirm(*c, "delete_contacts", {{"ids", {bob}}});
  report = Call(*c, "get_campaign_report", {{"id", campaign_id}});
  EXPECT_EQ(report["outcomes"]["pending"], 0) << report.dump();
  EXPECT_EQ(report["outcomes"]["skipped"], 2) << report.dump();
  runs = Call(*c, "get_automation_report", {{"id", automation_id}});
  EXPECT_EQ(runs["enrolments"]["active"], 0) << runs.dump();
  EXPECT_EQ(runs["enrolments"]["exited"], 2) << runs.dump();
  drips = Call(*c, "get_sequence", {{"id", sequence_id}})["sequence"]["enrolments"];
  EXPECT_EQ(drips["active"], 0) << drips.dump();
  EXPECT_EQ(drips["exited"], 2) << drips.dump();
}

TEST_F(Runs, DoubleOptInSignupOverRestGetsAConfirmationEmailWhoseLinkSubscribes) {
  auto& settings = *server_.app().services().governance->settings;
  auto doc = settings.Get();
  ASSERT_TRUE(doc.has_value());
  ASSERT_TRUE(settings.Update({.kind = "user", .subject = "alice"}, doc->revision,
                              {{"double_opt_in", true}, {"business", {{"name", "Acme {Tools}"}}}}));
  int64_t id = Signup({{"email", "dora@example.com"}, {"first_name", "Dora"}});
  EXPECT_EQ(ContactStatus(id), "pending");
  ASSERT_TRUE(WaitUntil(10, [&] { return Messages() >= 1; }));
  json m = Parsed(1);
  EXPECT_EQ(m["subject"], "Please confirm your subscription");
  EXPECT_NE(m.value("to", "").find("dora@example.com"), std::string::npos);
  EXPECT_NE(m.value("text", "").find("Acme {Tools}"), std::string::npos);
  EXPECT_FALSE(m.contains("list-unsubscribe"));
  std::string text = m.value("text", "");
  size_t at = text.find(server_.base_url() + "/confirm/");
  ASSERT_NE(at, std::string::npos) << text;
  std::string url = text.substr(at, text.find_first_of(" \r\n", at) - at);
  std::string path = url.substr(server_.base_url().size());
  EXPECT_EQ(server_.Get(path).status, 200);  // a page with a button: a scanner subscribes nobody
  EXPECT_EQ(ContactStatus(id), "pending");
  auto r = server_.PostForm(path, "");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(ContactStatus(id), "subscribed");
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM optin_emails WHERE contact_id = ? AND status = 'sent'", {id}), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Messages(), 1u);  // one confirmation only
}

}  // namespace
}  // namespace crmd::testing
