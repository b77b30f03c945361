// One person's data (docs/crm.md "Each person's own data"), over real HTTP against a real
// crmd that sends through SMTP to a local sink: a contact imported over REST with double
// opt-in confirms through the link in the confirmation email, is sent a campaign, opens it,
// clicks its link and unsubscribes with the one-click link. The export (REST, admin keys
// only), get_contact's include ["history"] and the preference page's "Download my data"
// then show each of those steps.
#include <regex>
#include <set>

#include "src/app/services.h"
#include "src/crm/services.h"
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

constexpr const char* kParseExportMessage = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {k.lower(): str(msg[k]) for k in ['Subject', 'Message-ID', 'List-Unsubscribe']
       if msg[k] is not None}
body = msg.get_body(preferencelist=('plain',))
out['text'] = body.get_content() if body else ''
body = msg.get_body(preferencelist=('html',))
out['html'] = body.get_content() if body else ''
print(json.dumps(out))
)PY";

constexpr const char* kExportScopes =
    "campaigns:read,campaigns:write,campaigns:activate,lists:read,lists:write,contacts:read";

struct ExportSinkFirst {
  SmtpSink sink;
};

TestServerOptions ExportSendingTo(const ExportSinkFirst& s) {
  return TestServerOptions{.configure = [&s](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
  }};
}

class ContactExport : public ExportSinkFirst, public MarketingTools {
 protected:
  ContactExport() : MarketingTools(ExportSendingTo(*this)) {
    auto& keys = *server_.app().services().governance->api_keys;
    auto admin = keys.Create("exporter", governance::ApiKeyRole::kAdmin);
    auto plain = keys.Create("integration", governance::ApiKeyRole::kIntegration);
    EXPECT_TRUE(admin.has_value() && plain.has_value());
    if (admin) admin_ = {{"Authorization", "Bearer " + admin->secret}};
    if (plain) plain_ = {{"Authorization", "Bearer " + plain->secret}};
  }

  json Message(int n) {
    EXPECT_TRUE(sink.WaitFor(n));
    char name[16];
    std::snprintf(name, sizeof name, "%04d", n);
    auto run = RunPython(kParseExportMessage, {sink.dir() + "/" + name + ".eml"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return json::parse(run.output, nullptr, false);
  }

  // The path of the first link in `text` that starts with the server's base URL + `prefix`.
  std::string LinkPath(const std::string& text, const std::string& prefix) {
    std::string start = server_.base_url() + prefix;
    size_t at = text.find(start);
    if (at == std::string::npos) {
      ADD_FAILURE() << "no " << prefix << " link in " << text;
      return "";
    }
    std::string url = text.substr(at, text.find_first_of("\"'> \r\n", at) - at);
    for (size_t amp; (amp = url.find("&amp;")) != std::string::npos;) url.replace(amp, 5, "&");
    return url.substr(server_.base_url().size());
  }

  std::string Status(int64_t id) {
    auto s = db_->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT status FROM contacts WHERE id = ?", {id});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string("none");
    });
    return s.value_or("error");
  }

  // Imports erin@example.com over REST with double opt-in on, and confirms her through the
  // confirmation email's link. Answers her id and the import's.
  std::pair<int64_t, int64_t> ImportAndConfirm(McpClient& c) {
    auto& settings = *server_.app().services().governance->settings;
    auto doc = settings.Get();
    EXPECT_TRUE(doc.has_value());
    if (doc) {
      EXPECT_TRUE(settings.Update({.kind = "user", .subject = "alice"}, doc->revision,
                                  {{"double_opt_in", true}, {"business", {{"name", "Acme"}}}}));
    }
    json list = Call(c, "create_list", {{"name", "News"}, {"public", true}});
    list_ = list["list"].value("id", int64_t{0});
    auto posted =
        server_.Send("POST", "/api/crm/v1/imports?list=News&tag=fair&consent=signed+at+the+fair",
                     "email,first_name,city\nErin@Example.com,Erin,Lyon\n",
                     {admin_[0], {"Content-Type", "text/csv"}});
    EXPECT_EQ(posted.status, 202) << posted.body;
    int64_t import_id = JsonBody(posted).value("id", int64_t{0});
    int64_t id = 0;
    EXPECT_TRUE(WaitUntil(
        [&] {
          id = Count("SELECT COALESCE(MAX(id), 0) FROM contacts WHERE email = 'erin@example.com'");
          return id > 0;
        },
        20));
    EXPECT_EQ(Status(id), "pending");
    json optin = Message(1);
    EXPECT_EQ(optin.value("subject", ""), "Please confirm your subscription");
    optin_message_id_ = optin.value("message-id", "");
    auto confirmed = server_.PostForm(LinkPath(optin.value("text", ""), "/confirm/"), "",
                                      {{"User-Agent", "MailReader/1.0"}});
    EXPECT_EQ(confirmed.status, 200) << confirmed.body;
    EXPECT_EQ(Status(id), "subscribed");
    return {id, import_id};
  }

  // Sends a campaign with open and click tracking to the list, opens it, clicks its link and
  // unsubscribes with its one-click link. Answers the campaign's id.
  int64_t MailOpenClickUnsubscribe(McpClient& c, int64_t id) {
    json made = Call(c, "create_campaign",
                     {{"name", "Spring"},
                      {"subject", "Spring news"},
                      {"from_email", "news@example.com"},
                      {"track_opens", true},
                      {"track_clicks", true},
                      {"html_body",
                       "<html><body><p>Hello</p><p><a href=\"https://example.org/spring\">Read"
                       "</a></p><p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"
                       "</body></html>"},
                      {"audience", {{"lists", {list_}}}}});
    int64_t campaign = made["campaign"].value("id", int64_t{0});
    json preview = Call(c, "activate_campaign", {{"id", campaign}});
    Call(c, "confirm_action", {{"confirmation_token", preview.value("confirmation_token", "")}});
    json m = Message(2);
    campaign_message_id_ = m.value("message-id", "");
    std::string html = m.value("html", "");
    EXPECT_EQ(server_.Get(LinkPath(html, "/t/o/")).status, 200);
    EXPECT_EQ(server_.Get(LinkPath(html, "/t/c/")).status, 302);
    std::smatch u;
    std::string header = m.value("list-unsubscribe", "");
    EXPECT_TRUE(std::regex_search(header, u, std::regex("<https?://[^/]+(/u/[^>]+)>"))) << header;
    unsubscribe_path_ = u.size() > 1 ? u[1].str() : "";
    auto done = server_.PostForm(unsubscribe_path_, "List-Unsubscribe=One-Click");
    EXPECT_EQ(done.status, 200) << done.body;
    EXPECT_EQ(Status(id), "unsubscribed");
    return campaign;
  }

  http::Headers admin_, plain_;
  int64_t list_ = 0;
  std::string optin_message_id_, campaign_message_id_, unsubscribe_path_;
};

// The `to` of every status change, oldest first.
std::vector<std::string> StatusPath(const json& doc) {
  std::vector<std::string> out;
  for (const auto& s : doc["status_changes"]) out.push_back(s.value("to", ""));
  return out;
}

TEST_F(ContactExport, RestExportShowsImportConsentConfirmationMessagesOpensClicksAndUnsubscribe) {
  auto c = Client(kExportScopes);
  auto [id, import_id] = ImportAndConfirm(*c);
  int64_t campaign = MailOpenClickUnsubscribe(*c, id);
  auto r = server_.Get("/api/crm/v1/contact/ERIN%40example.com/export", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.Header("Content-Disposition").value_or("").find("attachment"), std::string::npos);
  json doc = JsonBody(r);
  EXPECT_EQ(doc["format"], "crmd.contact_export.v1");
  EXPECT_EQ(doc["contact"]["email"], "erin@example.com");
  EXPECT_EQ(doc["contact"]["status"], "unsubscribed");
  EXPECT_EQ(doc["contact"]["custom_fields"]["city"], "Lyon");
  ASSERT_EQ(doc["lists"].size(), 1u) << doc["lists"].dump();
  EXPECT_EQ(doc["lists"][0]["name"], "News");
  EXPECT_EQ(doc["lists"][0]["state"], "subscribed");  // a global unsubscribe leaves lists
  ASSERT_EQ(doc["tags"].size(), 1u);
  EXPECT_EQ(doc["tags"][0]["name"], "fair");
  EXPECT_EQ(doc["suppression"].value("reason", ""), "unsubscribed");
  const json& consent = doc["consent"];
  EXPECT_EQ(consent["source"], "import:" + std::to_string(import_id));
  EXPECT_EQ(consent["import_id"], import_id);
  EXPECT_EQ(consent["import_consent"], "signed at the fair");
  EXPECT_TRUE(consent["ip_address"].is_null());  // imported: no form submission
  // The confirmation click, with the client that made it.
  EXPECT_EQ(consent["double_opt_in"]["confirmed_ip_address"], "127.0.0.1") << consent.dump();
  EXPECT_EQ(consent["double_opt_in"]["confirmed_user_agent"], "MailReader/1.0") << consent.dump();
  ASSERT_EQ(consent["records"].size(), 1u) << consent.dump();
  EXPECT_EQ(consent["records"][0]["kind"], "optin_confirmation");
  EXPECT_EQ(consent["double_opt_in"]["email_status"], "sent");
  EXPECT_EQ(consent["double_opt_in"]["message_id"], optin_message_id_);
  EXPECT_TRUE(consent["double_opt_in"]["confirmed_at"].is_string()) << consent.dump();
  EXPECT_EQ(StatusPath(doc), (std::vector<std::string>{"pending", "subscribed", "unsubscribed"}))
      << doc["status_changes"].dump();
  const json& changes = doc["status_changes"];
  EXPECT_EQ(changes[0]["by"].value("face", ""), "rest") << changes.dump();
  EXPECT_EQ(changes[1]["from"], "pending");
  EXPECT_EQ(changes[1]["by"].value("subject", ""), "double_opt_in") << changes.dump();
  EXPECT_EQ(changes[2]["from"], "subscribed");
  EXPECT_EQ(changes[2]["by"].value("face", ""), "system") << changes.dump();
  json campaign_message, optin_message;
  for (const auto& m : doc["messages"])
    (m["source"] == "campaign" ? campaign_message : optin_message) = m;
  EXPECT_EQ(campaign_message["campaign_id"], campaign);
  EXPECT_EQ(campaign_message["message_id"], campaign_message_id_);
  EXPECT_EQ(campaign_message["status"], "sent");
  for (const char* t : {"sent_at", "opened_at", "clicked_at", "unsubscribed_at"})
    EXPECT_TRUE(campaign_message[t].is_string()) << t << " " << campaign_message.dump();
  EXPECT_TRUE(campaign_message["bounced_at"].is_null());
  EXPECT_EQ(optin_message["message_id"], optin_message_id_);
  EXPECT_EQ(doc["engagement"]["opens"].size(), 1u);
  EXPECT_EQ(doc["engagement"]["clicks"].size(), 1u);
  ASSERT_FALSE(doc["audit"].empty());
  for (const auto& a : doc["audit"]) {
    EXPECT_EQ(a["target_type"], "contact");
    EXPECT_NE(std::find(a["target_ids"].begin(), a["target_ids"].end(), json(id)),
              a["target_ids"].end())
        << a.dump();
  }
  // Admin keys only; an address nobody has is 404.
  EXPECT_EQ(server_.Get("/api/crm/v1/contact/erin%40example.com/export", plain_).status, 403);
  auto missing = server_.Get("/api/crm/v1/contact/nobody%40example.com/export", admin_);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Header("Content-Type").value_or(""), "application/problem+json");
}

TEST_F(ContactExport, AFormSubmissionIsKeptWithTheClientsAddressAndUserAgent) {
  auto form = server_.app().services().crm->forms->Create(
      {{"name", "Footer"},
       {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
       {"allowed_origins", {"*"}}});
  ASSERT_TRUE(form) << form.error().message;
  const std::string long_agent = "Browser/2.0 " + std::string(600, 'x');
  auto submitted =
      server_.PostJson("/api/crm/v1/form/submit/" + form->public_id,
                       {{"fields", {{"email", "finn@example.com"}}}}, {{"User-Agent", long_agent}});
  ASSERT_EQ(submitted.status, 201) << submitted.body;
  auto r = server_.Get("/api/crm/v1/contact/finn%40example.com/export", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  const json consent = JsonBody(r)["consent"];
  EXPECT_EQ(consent["form_id"], form->id) << consent.dump();
  EXPECT_EQ(consent["ip_address"], "127.0.0.1") << consent.dump();
  EXPECT_EQ(consent["user_agent"], long_agent.substr(0, 512)) << consent.dump();
  ASSERT_EQ(consent["records"].size(), 1u) << consent.dump();
  EXPECT_EQ(consent["records"][0]["kind"], "form_submission");
  EXPECT_EQ(consent["records"][0]["form_id"], form->id);
}

TEST_F(ContactExport, GetContactHistoryPagesTheTimelineMostRecentFirst) {
  auto c = Client(kExportScopes);
  auto [id, import_id] = ImportAndConfirm(*c);
  MailOpenClickUnsubscribe(*c, id);
  json plain = Call(*c, "get_contact", {{"id", id}});
  EXPECT_FALSE(plain.contains("history"));
  std::vector<json> items;
  std::set<std::string> kinds;
  std::string cursor;
  int pages = 0;
  do {
    json args = {{"id", id}, {"include", {"history"}}, {"history_limit", 3}};
    if (!cursor.empty()) args["history_cursor"] = cursor;
    json page = Call(*c, "get_contact", args);
    ASSERT_TRUE(page.contains("history")) << page.dump();
    EXPECT_LE(page["history"]["items"].size(), 3u);
    for (const auto& it : page["history"]["items"]) {
      items.push_back(it);
      kinds.insert(it.value("kind", ""));
    }
    cursor = page["history"]["next_cursor"].is_string()
                 ? page["history"]["next_cursor"].get<std::string>()
                 : "";
  } while (!cursor.empty() && ++pages < 50);
  ASSERT_GT(items.size(), 6u);
  for (size_t i = 1; i < items.size(); ++i)
    EXPECT_GE(items[i - 1].value("at", ""), items[i].value("at", "")) << i;
  for (const char* k : {"event", "audit", "message", "open", "click"})
    EXPECT_TRUE(kinds.count(k)) << k;
  // The newest entry is the unsubscribe; the oldest is the import's creation.
  json all =
      Call(*c, "get_contact", {{"id", id}, {"include", {"history"}}, {"history_limit", 100}});
  EXPECT_EQ(all["history"]["items"].size(), items.size());
  EXPECT_TRUE(all["history"]["next_cursor"].is_null());
  EXPECT_EQ(items.back().value("event", ""), "contact.created") << items.back().dump();
  ExpectToolError(*c, "get_contact",
                  {{"id", id}, {"include", {"history"}}, {"history_cursor", "not-a-cursor"}},
                  "validation_failed");
  ExpectToolError(*c, "get_contact", {{"id", id}, {"include", {"everything"}}},
                  "validation_failed");
}

TEST_F(ContactExport, PreferencePageDownloadsTheContactsOwnDataWithItsCsrfValueAndALimit) {
  auto c = Client(kExportScopes);
  auto [id, import_id] = ImportAndConfirm(*c);
  MailOpenClickUnsubscribe(*c, id);
  auto page = server_.Get(unsubscribe_path_);
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("Download my data"), std::string::npos) << page.body;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page.body, m, std::regex("name=\"csrf\" value=\"([^\"]+)\"")));
  std::string csrf = m[1];
  // Without the page's CSRF value: refused, nothing answered.
  auto forged = server_.PostForm(unsubscribe_path_, "action=download");
  EXPECT_EQ(forged.status, 403);
  EXPECT_EQ(forged.body.find("erin@example.com"), std::string::npos);
  auto got = server_.PostForm(unsubscribe_path_, "csrf=" + csrf + "&action=download");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Header("Content-Type").value_or(""), "application/json");
  EXPECT_NE(got.Header("Content-Disposition").value_or("").find("attachment"), std::string::npos);
  json doc = JsonBody(got);
  EXPECT_EQ(doc["contact"]["id"], id);
  EXPECT_EQ(doc["messages"].size(), 2u);
  // A few a minute per contact: the fourth is refused with Retry-After.
  EXPECT_EQ(server_.PostForm(unsubscribe_path_, "csrf=" + csrf + "&action=download").status, 200);
  EXPECT_EQ(server_.PostForm(unsubscribe_path_, "csrf=" + csrf + "&action=download").status, 200);
  auto limited = server_.PostForm(unsubscribe_path_, "csrf=" + csrf + "&action=download");
  EXPECT_EQ(limited.status, 429);
  EXPECT_FALSE(limited.Header("Retry-After").value_or("").empty());
}

}  // namespace
}  // namespace crmd::testing
