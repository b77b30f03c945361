// The preference centre behind every message's unsubscribe link (docs/mail.md), over real
// HTTP against a real crmd that sends through SMTP to a local sink: the page lists the
// contact's public lists; its POST needs the page's CSRF value (bound to the link token);
// a list left there is remembered (state 'unsubscribed'): its campaigns skip the contact
// and the tools do not add it back, while the other lists' campaigns still arrive.
#include <chrono>
#include <regex>
#include <thread>

#include "tests/integration/tools_marketing/fixture.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::SmtpSink;
using nlohmann::json;

struct PrefsSinkFirst {
  SmtpSink sink;
};

TestServerOptions PrefsSendingTo(const PrefsSinkFirst& s) {
  return TestServerOptions{.configure = [&s](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
  }};
}

constexpr const char* kPrefsScopes =
    "campaigns:read,campaigns:write,campaigns:activate,lists:read,lists:write,contacts:write";

class Preferences : public PrefsSinkFirst, public MarketingTools {
 protected:
  Preferences() : MarketingTools(PrefsSendingTo(*this)) {}

  int64_t PublicList(McpClient& c, const std::string& name, const std::string& description,
                     bool is_public = true) {
    json out = Call(c, "create_list",
                    {{"name", name}, {"description", description}, {"public", is_public}});
    EXPECT_EQ(out["list"].value("public", !is_public), is_public) << out.dump();
    return out["list"].value("id", int64_t{0});
  }

  // Creates, activates and confirms a campaign to `list`; waits until it is sent.
  int64_t SendTo(McpClient& c, int64_t list, const std::string& subject) {
    json made = Call(c, "create_campaign",
                     {{"name", subject},
                      {"subject", subject},
                      {"from_email", "news@example.com"},
                      {"html_body", "<p>" + subject +
                                        "</p><p><a href=\"{{unsubscribe_url}}\">"
                                        "Unsubscribe</a></p>"},
                      {"audience", {{"lists", {list}}}}});
    int64_t id = made["campaign"].value("id", int64_t{0});
    json preview = Call(c, "activate_campaign", {{"id", id}});
    EXPECT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
    json done = Call(c, "confirm_action",
                     {{"confirmation_token", preview.value("confirmation_token", "")}});
    EXPECT_EQ(done.value("status", ""), "done") << done.dump();
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until &&
           Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'sent'", {id}) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status = 'sent'", {id}), 1);
    return id;
  }

  // The subjects each recipient received, in order of arrival.
  std::map<std::string, std::vector<std::string>> Subjects() const {
    std::map<std::string, std::vector<std::string>> out;
    for (int i = 1; i <= static_cast<int>(sink.MessageCount()); ++i) {
      std::string eml = sink.Eml(i);
      std::smatch m;
      std::string subject;
      if (std::regex_search(eml, m, std::regex("\nSubject: ([^\r\n]*)"))) subject = m[1];
      json meta = json::parse(sink.Meta(i), nullptr, false);
      for (const auto& r : meta["rcpt_tos"]) out[r.get<std::string>()].push_back(subject);
    }
    return out;
  }

  // The path of the List-Unsubscribe link of the first message to `email`.
  std::string UnsubscribePath(const std::string& email) const {
    for (int i = 1; i <= static_cast<int>(sink.MessageCount()); ++i) {
      json meta = json::parse(sink.Meta(i), nullptr, false);
      if (meta["rcpt_tos"].at(0) != email) continue;
      std::smatch m;
      std::string eml = sink.Eml(i);
      if (std::regex_search(eml, m, std::regex("List-Unsubscribe: <https?://[^/]+(/u/[^>]+)>")))
        return m[1];
    }
    ADD_FAILURE() << "no message with a List-Unsubscribe link to " << email;
    return "";
  }

  static std::string Csrf(const std::string& page) {
    std::smatch m;
    if (std::regex_search(page, m, std::regex("name=\"csrf\" value=\"([^\"]+)\""))) return m[1];
    ADD_FAILURE() << "no csrf field in " << page;
    return "";
  }

  std::string State(int64_t contact, int64_t list) {
    auto s = db_->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT state FROM contact_lists WHERE contact_id = ? AND list_id = ?",
                            {contact, list});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string("none");
    });
    return s.value_or("error");
  }
};

TEST_F(Preferences, LeavingOneListOnThePageSkipsItsCampaignsAndKeepsTheOther) {
  auto c = Client(kPrefsScopes);
  int64_t weekly = PublicList(*c, "Weekly", "Our news every Monday");
  int64_t offers = PublicList(*c, "Offers", "Discounts, now and then");
  int64_t staff = PublicList(*c, "Staff notes", "internal", false);
  int64_t ada = AddContact("ada@example.com");
  int64_t bob = AddContact("bob@example.com");
  for (int64_t l : {weekly, offers, staff}) InList(ada, l);
  InList(bob, weekly);
  SendTo(*c, staff, "First staff note");
  ASSERT_TRUE(sink.WaitFor(1));
  std::string path = UnsubscribePath("ada@example.com");
  ASSERT_FALSE(path.empty());

  // The page: the public lists Ada is on, with their descriptions and switches; not the
  // list that is not public.
  auto page = server_.Get(path);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("Weekly"), std::string::npos);
  EXPECT_NE(page.body.find("Our news every Monday"), std::string::npos);
  EXPECT_NE(page.body.find("Offers"), std::string::npos);
  EXPECT_EQ(page.body.find("Staff notes"), std::string::npos);
  EXPECT_NE(page.body.find("Unsubscribe from everything"), std::string::npos);
  EXPECT_NE(
      std::string(page.Header("Content-Security-Policy").value_or("")).find("default-src 'none'"),
      std::string::npos);
  std::string csrf = Csrf(page.body);
  std::string keep_offers = "shown=" + std::to_string(weekly) + "&shown=" + std::to_string(offers) +
                            "&list=" + std::to_string(offers) + "&action=save";

  // Without the CSRF value, or with a wrong one: refused, nothing changes.
  EXPECT_EQ(server_.PostForm(path, keep_offers).status, 403);
  EXPECT_EQ(server_.PostForm(path, keep_offers + "&csrf=" + csrf.substr(1)).status, 403);
  EXPECT_EQ(State(ada, weekly), "subscribed");

  // With it: Weekly is left, and remembered as a row in state 'unsubscribed'.
  auto saved = server_.PostForm(path, keep_offers + "&csrf=" + csrf);
  ASSERT_EQ(saved.status, 200) << saved.body;
  EXPECT_NE(saved.body.find("Your preferences are saved"), std::string::npos);
  EXPECT_EQ(State(ada, weekly), "unsubscribed");
  EXPECT_EQ(State(ada, offers), "subscribed");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'subscribed'", {ada}),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE contact_id = ? AND event_type = "
                  "'contact.list_removed'",
                  {ada}),
            1);

  // A tool adding Ada to Weekly again skips her silently: no change reported, still left.
  json added =
      Call(*c, "add_contact_to_lists", {{"contact_ids", {ada}}, {"lists", {weekly, offers}}});
  EXPECT_EQ(added.value("contacts_changed", -1), 0) << added.dump();
  EXPECT_EQ(State(ada, weekly), "unsubscribed");
  json list = Call(*c, "get_list", {{"id", weekly}});
  EXPECT_EQ(list["list"].value("member_count", -1), 1) << list.dump();  // Bob only

  // A campaign to each list: Weekly's reaches Bob and not Ada; Offers' reaches Ada.
  SendTo(*c, weekly, "Weekly one");
  SendTo(*c, offers, "Offers one");
  auto got = Subjects();
  EXPECT_EQ(got["bob@example.com"], std::vector<std::string>({"Weekly one"}));
  EXPECT_EQ(got["ada@example.com"], std::vector<std::string>({"First staff note", "Offers one"}));
}

TEST_F(Preferences, ACsrfValueFromAnotherContactsPageChangesNothing) {
  auto c = Client(kPrefsScopes);
  int64_t weekly = PublicList(*c, "Weekly", "");
  int64_t ada = AddContact("ada@example.com");
  int64_t eve = AddContact("eve@example.com");
  InList(ada, weekly);
  InList(eve, weekly);
  SendTo(*c, weekly, "Hello");
  ASSERT_TRUE(sink.WaitFor(2));
  std::string ada_path = UnsubscribePath("ada@example.com");
  std::string eve_csrf = Csrf(server_.Get(UnsubscribePath("eve@example.com")).body);
  auto forged = server_.PostForm(
      ada_path, "shown=" + std::to_string(weekly) + "&action=save&csrf=" + eve_csrf);
  EXPECT_EQ(forged.status, 403);
  EXPECT_EQ(State(ada, weekly), "subscribed");
  auto all = server_.PostForm(ada_path, "action=all&csrf=" + eve_csrf);
  EXPECT_EQ(all.status, 403);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'subscribed'", {ada}),
            1);
}

TEST_F(Preferences, UnsubscribeFromEverythingIsTheGlobalUnsubscribe) {
  auto c = Client(kPrefsScopes);
  int64_t weekly = PublicList(*c, "Weekly", "");
  int64_t ada = AddContact("ada@example.com");
  InList(ada, weekly);
  SendTo(*c, weekly, "Hello");
  ASSERT_TRUE(sink.WaitFor(1));
  std::string path = UnsubscribePath("ada@example.com");
  std::string csrf = Csrf(server_.Get(path).body);
  auto done = server_.PostForm(path, "action=all&csrf=" + csrf);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contacts WHERE id = ? AND status = 'unsubscribed'", {ada}),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE contact_id = ? AND event_type = "
                  "'contact.status_updated'",
                  {ada}),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE contact_id = ? AND event_type = "
                  "'contact.list_removed'",
                  {ada}),
            0);
}

}  // namespace
}  // namespace crmd::testing
