// Email templates end to end (docs/marketing.md "Templates"): a template made over REST,
// used by a campaign (create_campaign through /mcp) and by a sequence email; the messages
// that reach a real SMTP server (aiosmtpd on loopback) carry the layout with the body in
// its {{content}} slot; deleting the template is refused while they use it and allowed
// after. Also: an automation's send_email step in a template, the built-in Default with
// settings' company_address, and template_id checked when a message is saved.
#include <filesystem>

#include "src/governance/api_keys.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/wait.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;

constexpr const char* kParseTemplated = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {k.lower(): str(msg[k]) for k in ['Subject', 'X-Crmd-Campaign', 'X-Crmd-Sequence',
       'List-Unsubscribe'] if msg[k] is not None}
body = msg.get_body(preferencelist=('plain',))
out['text'] = body.get_content() if body else None
body = msg.get_body(preferencelist=('html',))
out['html'] = body.get_content() if body else None
print(json.dumps(out))
)PY";

constexpr const char* kLayout =
    "<html><body><div id=\"frame\">{{content}}</div>"
    "<footer>{{company_address}} <a href=\"{{unsubscribe_url}}\">Unsubscribe</a></footer>"
    "</body></html>";
constexpr const char* kTextLayout = "{{content}}\n-- Frame footer";

struct TemplateSink {
  SmtpSink sink;
};

TestServerOptions SendingTo(const TemplateSink& s) {
  return TestServerOptions{.configure = [&s](Config& c) {
    c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
    c.mail_rate_per_second = 0;
    c.mail_poll_interval_ms = 100;
    c.mail_from = "news@example.com";
  }};
}

class Templates : public TemplateSink, public MarketingTools {
 protected:
  Templates() : MarketingTools(SendingTo(*this)) {
    auto key = server_.app().services().governance->api_keys->Create(
        "templates", governance::ApiKeyRole::kIntegration);
    EXPECT_TRUE(key.has_value());
    if (key)
      auth_ = {{"Authorization", "Bearer " + key->secret}, {"Content-Type", "application/json"}};
  }

  http::ClientResponse Rest(const std::string& method, const std::string& path,
                            const json& body = nullptr) {
    return server_.Send(method, "/api/crm/v1" + path, body.is_null() ? "" : body.dump(), auth_);
  }

  // The n-th message the SMTP server received (1-based), parsed.
  json Message(int n) {
    if (!sink.WaitFor(n)) return json();
    char name[16];
    std::snprintf(name, sizeof name, "%04d", n);
    auto run = RunPython(kParseTemplated, {sink.dir() + "/" + name + ".eml"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    json m = json::parse(run.output, nullptr, false);
    // The wire's CRLF line ends, as the template's LF ones.
    for (const char* part : {"html", "text"}) {
      if (!m.is_object() || !m[part].is_string()) continue;
      std::string v = m[part];
      std::erase(v, '\r');
      m[part] = v;
    }
    return m;
  }

  void Confirm(McpClient& c, const std::string& tool, const json& args) {
    json preview = Call(c, tool, args);
    ASSERT_EQ(preview.value("status", ""), "confirmation_required") << preview.dump();
    json done = Call(c, "confirm_action",
                     {{"confirmation_token", preview.value("confirmation_token", "")}});
    ASSERT_EQ(done.value("status", ""), "done") << done.dump();
  }

  http::Headers auth_;
};

// The body sits inside the layout's frame, and the layout's footer follows it.
void ExpectFramed(const json& m, const std::string& body) {
  const std::string html = m.value("html", "");
  auto frame = html.find("<div id=\"frame\">");
  auto at = html.find(body);
  auto footer = html.find("<footer>");
  ASSERT_NE(frame, std::string::npos) << html;
  ASSERT_NE(at, std::string::npos) << html;
  ASSERT_NE(footer, std::string::npos) << html;
  EXPECT_LT(frame, at);
  EXPECT_LT(at, footer);
  EXPECT_NE(html.find("Unsubscribe</a>"), std::string::npos);
}

TEST_F(Templates, UsedByACampaignAndASequenceAndDeletedOnlyWhenNobodyUsesIt) {
  auto made =
      Rest("POST", "/templates", {{"name", "Frame"}, {"html", kLayout}, {"text", kTextLayout}});
  ASSERT_EQ(made.status, 201) << made.body;
  const int64_t tpl = JsonBody(made)["id"];

  auto c = Client();
  int64_t list = AddList("news");
  int64_t ada = AddContact("ada@example.com");
  Exec("UPDATE contacts SET first_name = 'Ada' WHERE id = ?", {ada});
  InList(ada, list);

  // A sequence email in the template, sent for real.
  json seq = Call(*c, "create_sequence",
                  {{"name", "Welcome"},
                   {"emails", json::array({{{"subject", "Welcome {{first_name}}"},
                                            {"html_body", "<p>Welcome aboard, {{first_name}}</p>"},
                                            {"text_body", "Welcome aboard, {{first_name}}"},
                                            {"template_id", tpl}}})}});
  ASSERT_TRUE(seq.contains("sequence")) << seq.dump();
  const int64_t seq_id = seq["sequence"]["id"];
  EXPECT_EQ(seq["sequence"]["emails"][0]["template_id"], tpl);
  json on = Call(*c, "set_sequence_status", {{"id", seq_id}, {"status", "active"}});
  json enrol = Call(*c, "update_sequence",
                    {{"id", seq_id},
                     {"expected_revision", on["sequence"]["revision"]},
                     {"enroll_contact_ids", {ada}}});
  ASSERT_TRUE(enrol.contains("sequence")) << enrol.dump();
  json s1 = Message(1);
  ASSERT_TRUE(s1.is_object()) << "the sequence email never came";
  EXPECT_EQ(s1["subject"], "Welcome Ada");
  EXPECT_EQ(s1["x-crmd-sequence"], std::to_string(seq_id));
  ExpectFramed(s1, "<p>Welcome aboard, Ada</p>");
  EXPECT_NE(s1.value("text", "").find("Welcome aboard, Ada\n-- Frame footer"), std::string::npos)
      << s1.dump();

  // A campaign in the template, through the tools as an assistant makes it.
  json k = Call(*c, "create_campaign",
                {{"name", "Launch"},
                 {"subject", "Launch day"},
                 {"from_email", "team@example.com"},
                 {"html_body", "<h1>Hello {{first_name | \"friend\"}}</h1>"},
                 {"template_id", tpl},
                 {"audience", {{"lists", {list}}}}});
  ASSERT_TRUE(k.contains("campaign")) << k.dump();
  const int64_t campaign = k["campaign"]["id"];
  EXPECT_EQ(k["campaign"]["template_id"], tpl);
  json preview = Call(*c, "activate_campaign", {{"id", campaign}});
  ExpectFramed(preview["preview"]["sample_message"], "<h1>Hello Ada</h1>");
  Confirm(*c, "activate_campaign", {{"id", campaign}});
  json m2 = Message(2);
  ASSERT_TRUE(m2.is_object()) << "the campaign message never came";
  EXPECT_EQ(m2["subject"], "Launch day");
  EXPECT_EQ(m2["x-crmd-campaign"], std::to_string(campaign));
  ExpectFramed(m2, "<h1>Hello Ada</h1>");

  // In use: refused, naming both users; nothing deleted.
  auto refused = Rest("DELETE", "/templates/" + std::to_string(tpl));
  ASSERT_EQ(refused.status, 409) << refused.body;
  json problem = JsonBody(refused);
  EXPECT_EQ(problem["code"], "dependency_blocked");
  ASSERT_EQ(problem["users"].size(), 2u) << refused.body;
  EXPECT_EQ(problem["users"][0]["kind"], "campaign");
  EXPECT_EQ(problem["users"][0]["id"], campaign);
  EXPECT_EQ(problem["users"][1]["kind"], "sequence");
  EXPECT_EQ(problem["users"][1]["id"], seq_id);
  EXPECT_EQ(problem["users"][1]["emails"], json::array({0}));
  EXPECT_EQ(Rest("GET", "/templates/" + std::to_string(tpl)).status, 200);

  // The users let go of it: then it goes.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Call(*c, "get_campaign", {{"id", campaign}})["campaign"]["status"] == "sent";
      },
      10));
  Confirm(*c, "delete_campaign", {{"id", campaign}});
  Call(*c, "set_sequence_status", {{"id", seq_id}, {"status", "paused"}});
  json cur = Call(*c, "get_sequence", {{"id", seq_id}});
  json emails = cur["sequence"]["emails"];
  emails[0]["template_id"] = nullptr;
  json edited = Call(
      *c, "update_sequence",
      {{"id", seq_id}, {"expected_revision", cur["sequence"]["revision"]}, {"emails", emails}});
  ASSERT_TRUE(edited.contains("sequence")) << edited.dump();
  EXPECT_FALSE(edited["sequence"]["emails"][0].contains("template_id"));
  auto deleted = Rest("DELETE", "/templates/" + std::to_string(tpl));
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Rest("GET", "/templates/" + std::to_string(tpl)).status, 404);
}

TEST_F(Templates, AnAutomationEmailComesInItsTemplate) {
  auto made = Rest("POST", "/templates", {{"name", "Frame"}, {"html", kLayout}});
  ASSERT_EQ(made.status, 201) << made.body;
  const int64_t tpl = JsonBody(made)["id"];
  auto c = Client();
  json a = Call(*c, "create_automation",
                {{"name", "Welcome"},
                 {"trigger", {{"type", "contact_created"}}},
                 {"steps", json::array({{{"type", "send_email"},
                                         {"subject", "Hi {{first_name}}"},
                                         {"html_body", "<p>Glad you came, {{first_name}}</p>"},
                                         {"template_id", tpl}}})}});
  ASSERT_TRUE(a.contains("automation")) << a.dump();
  EXPECT_EQ(a["automation"]["steps"][0]["template_id"], tpl);
  Confirm(*c, "activate_automation", {{"id", a["automation"]["id"]}});
  // A signup over REST: its contact.created event enrols the contact.
  auto signup =
      Rest("POST", "/contact",
           {{"email", "cleo@example.com"}, {"first_name", "Cleo"}, {"status", "subscribed"}});
  ASSERT_TRUE(signup.status == 200 || signup.status == 201) << signup.body;
  json m = Message(1);
  ASSERT_TRUE(m.is_object()) << "the automation email never came";
  EXPECT_EQ(m["subject"], "Hi Cleo");
  ExpectFramed(m, "<p>Glad you came, Cleo</p>");
}

TEST_F(Templates, TheDefaultCarriesTheCompanyAddressAndTheUnsubscribeLink) {
  auto s = Client("settings:read,settings:write");
  int64_t rev = Call(*s, "get_settings", json::object()).value("revision", int64_t{0});
  json set = Call(*s, "update_settings",
                  {{"expected_revision", rev},
                   {"settings", {{"company_address", "Acme Ltd\n1 Harbour Street\nLisbon"}}}});
  ASSERT_EQ(set["settings"]["company_address"], "Acme Ltd\n1 Harbour Street\nLisbon") << set.dump();
  ExpectToolError(*s, "update_settings",
                  {{"expected_revision", set["revision"]},
                   {"settings", {{"company_address", std::string(1001, 'x')}}}},
                  "validation_failed");

  auto c = Client();
  int64_t list = AddList("news");
  InList(AddContact("bea@example.com"), list);
  json k = Call(*c, "create_campaign",
                {{"name", "Plain"},
                 {"subject", "News"},
                 {"from_email", "team@example.com"},
                 {"text_body", "Short news."},
                 {"template_id", 1},
                 {"audience", {{"lists", {list}}}}});
  ASSERT_TRUE(k.contains("campaign")) << k.dump();
  Confirm(*c, "activate_campaign", {{"id", k["campaign"]["id"]}});
  json m = Message(1);
  ASSERT_TRUE(m.is_object()) << "the message never came";
  const std::string html = m.value("html", "");
  EXPECT_NE(html.find("Short news."), std::string::npos) << html;
  EXPECT_NE(html.find("Acme Ltd\n1 Harbour Street\nLisbon"), std::string::npos) << html;
  EXPECT_NE(html.find("prefers-color-scheme:dark"), std::string::npos);
  std::string unsubscribe = m.value("list-unsubscribe", "");
  ASSERT_GT(unsubscribe.size(), 2u);
  unsubscribe = unsubscribe.substr(1, unsubscribe.find('>') - 1);
  EXPECT_NE(html.find("href=\"" + unsubscribe + "\""), std::string::npos) << html;
  const std::string text = m.value("text", "");
  EXPECT_NE(text.find("Short news."), std::string::npos) << text;
  EXPECT_NE(text.find("1 Harbour Street"), std::string::npos) << text;
  EXPECT_NE(text.find(unsubscribe), std::string::npos) << text;
}

TEST_F(Templates, TemplateIdIsCheckedWhenAMessageIsSaved) {
  auto c = Client();
  int64_t list = AddList("news");
  json err = ExpectToolError(*c, "create_campaign",
                             {{"name", "X"},
                              {"html_body", "<p>x</p>"},
                              {"template_id", 999},
                              {"audience", {{"lists", {list}}}}},
                             "validation_failed");
  EXPECT_NE(err.dump().find("template 999 does not exist"), std::string::npos) << err.dump();
  ExpectToolError(*c, "create_campaign",
                  {{"name", "X"}, {"html_body", "<p>{{frist_name}}</p>"}, {"template_id", 1}},
                  "validation_failed");
  err = ExpectToolError(
      *c, "create_sequence",
      {{"name", "S"},
       {"emails", json::array({{{"subject", "s"}, {"text_body", "t"}, {"template_id", 999}}})}},
      "validation_failed");
  EXPECT_NE(err.dump().find("emails[0].template_id"), std::string::npos) << err.dump();
  err = ExpectToolError(*c, "create_automation",
                        {{"name", "A"},
                         {"trigger", {{"type", "contact_created"}}},
                         {"steps", json::array({{{"type", "send_email"},
                                                 {"subject", "s"},
                                                 {"text_body", "t"},
                                                 {"template_id", 999}}})}},
                        "validation_failed");
  EXPECT_NE(err.dump().find("steps[0].template_id"), std::string::npos) << err.dump();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaigns"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sequences"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automations"), 0);

  // An automation step in the default template is saved, and counted as its user.
  json a = Call(*c, "create_automation",
                {{"name", "A"},
                 {"trigger", {{"type", "contact_created"}}},
                 {"steps", json::array({{{"type", "send_email"},
                                         {"subject", "s"},
                                         {"text_body", "t"},
                                         {"template_id", 1}}})}});
  ASSERT_TRUE(a.contains("automation")) << a.dump();
  auto key = server_.app().services().governance->api_keys->Create(
      "t2", governance::ApiKeyRole::kIntegration);
  ASSERT_TRUE(key.has_value());
  auto refused = server_.Send("DELETE", "/api/crm/v1/templates/1", "",
                              {{"Authorization", "Bearer " + key->secret}});
  ASSERT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(JsonBody(refused)["users"][0]["kind"], "automation");
  EXPECT_EQ(JsonBody(refused)["users"][0]["steps"], json::array({0}));
}

}  // namespace
}  // namespace crmd::testing
