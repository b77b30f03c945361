// No secret reaches the log (docs/operations.md, "Logs"): a real crmd with its access log
// on, taken through what its users do in a day — an assistant signs in over OAuth, a
// visitor signs up on a public form with double opt-in and confirms from the email, the
// assistant sends a campaign that the person approves on the approval page, the reader
// opens it, clicks its tracked link and unsubscribes, and a shop posts to an incoming
// webhook — while every line the server logs is kept. Every token, code, key, id and
// password the run saw is then looked for in that log: none may be there, while the
// requests that carried them are (redacted).
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/app/services.h"
#include "src/governance/approval_policy.h"
#include "tests/integration/tools_marketing/fixture.h"
#include "tests/support/browser.h"
#include "tests/support/wait.h"
#include "tests/unit/mail/python.h"

namespace crmd::testing {
namespace {

using mail::testing::RunPython;
using mail::testing::SmtpSink;
using nlohmann::json;

constexpr const char* kDayPassword = "correct horse battery staple";

// The decoded text and HTML parts of one message.
constexpr const char* kBodies = R"PY(
import email, json, sys
from email import policy
msg = email.message_from_bytes(open(sys.argv[1], 'rb').read(), policy=policy.default)
out = {'to': str(msg['To'])}
for kind in ('plain', 'html'):
    body = msg.get_body(preferencelist=(kind,))
    out[kind] = body.get_content() if body else ''
print(json.dumps(out))
)PY";

// Every line the server logs, kept from before the server starts (the access log is on
// only when the level is info at start) until after it stops.
struct CapturedLog {
  CapturedLog() : previous(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(lines)));
    spdlog::set_level(spdlog::level::info);
  }
  ~CapturedLog() {
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

struct LogAndSinkFirst {
  CapturedLog log;
  SmtpSink sink;
};

TestServerOptions LoggingAndSendingTo(const LogAndSinkFirst& s) {
  return TestServerOptions{.configure =
                               [&s](Config& c) {
                                 c.log_level = "info";
                                 c.smtp_url = "smtp://127.0.0.1:" + std::to_string(s.sink.port());
                                 c.mail_rate_per_second = 0;
                                 c.mail_poll_interval_ms = 100;
                                 c.mail_from = "news@example.com";
                               },
                           // The person approves the campaign on the approval page.
                           .approval_policy = governance::DefaultApprovalPolicy()};
}

class SecretsInLogs : public LogAndSinkFirst, public MarketingTools {
 protected:
  SecretsInLogs() : MarketingTools(LoggingAndSendingTo(*this)) {}

  // Waits for a message to `to` whose text or HTML holds `marker`; its parts.
  json MessageWith(const std::string& to, const std::string& marker) {
    json found;
    WaitUntil(
        [&] {
          for (const auto& e : std::filesystem::directory_iterator(sink.dir())) {
            if (e.path().extension() != ".eml") continue;
            auto run = RunPython(kBodies, {e.path().string()});
            auto j = json::parse(run.output, nullptr, false);
            if (j.is_discarded() || j.value("to", "").find(to) == std::string::npos) continue;
            if (j.value("plain", "").find(marker) != std::string::npos ||
                j.value("html", "").find(marker) != std::string::npos) {
              found = j;
              return true;
            }
          }
          return false;
        },
        20);
    return found;
  }

  // The path of the first link in `text` that starts with base_url() + `prefix`, up to a
  // quote, a space or a line end ("&amp;" read as "&").
  std::string LinkPath(const std::string& text, const std::string& prefix) {
    const std::string start = server_.base_url() + prefix;
    size_t at = text.find(start);
    EXPECT_NE(at, std::string::npos) << prefix << " not in: " << text;
    if (at == std::string::npos) return "";
    std::string url = text.substr(at, text.find_first_of("\" \r\n<>", at) - at);
    for (size_t amp; (amp = url.find("&amp;")) != std::string::npos;) url.replace(amp, 5, "&");
    return url.substr(server_.base_url().size());
  }

  // The token in a link's path: after the prefix, before any query.
  static std::string TokenOf(const std::string& path, const std::string& prefix) {
    std::string rest = path.substr(prefix.size());
    return rest.substr(0, rest.find('?'));
  }
};

TEST_F(SecretsInLogs, AFullDayOfUseLeavesNoTokenKeyOrIdInTheLog) {
  auto& s = server_.app().services();
  std::map<std::string, std::string> secrets;  // what -> value

  // An assistant signs in the way an MCP client does: discovery, registration, the sign-in
  // and consent pages, the code exchange.
  ASSERT_TRUE(s.users->Create("alice@example.com", kDayPassword, true));
  auto flow = RunOAuthFlow(server_, {.create_user = false,
                                     .scope = "campaigns:read campaigns:write campaigns:activate "
                                              "lists:read"});
  ASSERT_TRUE(flow.ok()) << flow.error;
  secrets["access token"] = flow.access_token;
  secrets["refresh token"] = flow.refresh_token;
  secrets["authorization code"] = flow.code;
  secrets["PKCE verifier"] = flow.code_verifier;
  secrets["password"] = kDayPassword;
  McpClient assistant(server_, McpClientOptions{.token = flow.access_token});
  ASSERT_TRUE(assistant.Initialize().ok());

  // A visitor signs up on a public form; double opt-in sends a confirmation email.
  auto doc = s.governance->settings->Get();
  ASSERT_TRUE(doc.has_value());
  ASSERT_TRUE(s.governance->settings->Update({.kind = "user", .subject = "alice"}, doc->revision,
                                             {{"double_opt_in", true}}));
  auto admin = s.governance->api_keys->Create("ops", governance::ApiKeyRole::kAdmin);
  ASSERT_TRUE(admin.has_value());
  secrets["API key"] = admin->secret;
  const http::Headers key = {{"Authorization", "Bearer " + admin->secret}};
  int64_t list = AddList("Newsletter");
  auto form =
      server_.PostJson("/api/crm/v1/admin/forms",
                       {{"name", "Footer"},
                        {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
                        {"applies", {{"lists", {"Newsletter"}}}},
                        {"honeypot_field", "website"},
                        {"allowed_origins", {"*"}}},
                       key);
  ASSERT_EQ(form.status, 201) << form.body;
  std::string form_path =
      "/api/crm/v1/form/submit/" + JsonBody(form)["public_id"].get<std::string>();
  auto signup = server_.PostJson(form_path, {{"fields", {{"email", "reader@example.com"}}}});
  ASSERT_EQ(signup.status, 201) << signup.body;

  json confirmation = MessageWith("reader@example.com", "/confirm/");
  ASSERT_FALSE(confirmation.is_null()) << "no confirmation email";
  std::string confirm = LinkPath(confirmation["plain"], "/confirm/");
  secrets["opt-in token"] = TokenOf(confirm, "/confirm/");
  EXPECT_EQ(server_.Get(confirm).status, 200);
  EXPECT_EQ(server_.PostForm(confirm, "").status, 200);

  // The assistant prepares a campaign with tracked links; the person approves it.
  json created = assistant.CallToolOk(
      "create_campaign", {{"name", "Weekly"},
                          {"subject", "This week"},
                          {"from_email", "news@example.com"},
                          {"html_body",
                           "<html><body><p><a href=\"https://example.com/menu\">Menu</a></p>"
                           "<p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p></body></html>"},
                          {"track_opens", true},
                          {"track_clicks", true},
                          {"audience", {{"lists", {list}}}}});
  int64_t campaign = created["campaign"].value("id", int64_t{0});
  ASSERT_GT(campaign, 0) << created.dump();
  json preview = assistant.CallToolOk("activate_campaign", {{"id", campaign}});
  ASSERT_EQ(preview["approval_required"], true) << preview.dump();
  std::string confirmation_token = preview["confirmation_token"];
  secrets["confirmation token"] = confirmation_token;
  std::string approval_url = preview["approval_url"];
  secrets["approval id"] = approval_url.substr(approval_url.rfind('/') + 1);

  Browser person(server_);
  ASSERT_EQ(SignInToConsole(person, "alice@example.com", kDayPassword).status, 200);
  secrets["session cookie"] = person.Cookie("crmd_session").value_or("");
  Page page = person.Get(approval_url);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Header("X-Content-Type-Options").value_or(""), "nosniff");
  EXPECT_EQ(page.Header("Referrer-Policy").value_or(""), "same-origin");
  auto decision = page.form();
  ASSERT_TRUE(decision.has_value()) << page.body;
  secrets["CSRF token"] = decision->Value("csrf_token").value_or("");
  decision->Set("decision", "approve");
  ASSERT_EQ(person.Submit(*decision).status, 200);
  json done = assistant.CallToolOk("confirm_action", {{"confirmation_token", confirmation_token}});
  ASSERT_EQ(done["status"], "done") << done.dump();

  // The reader opens the message, clicks its link and unsubscribes.
  json news = MessageWith("reader@example.com", "/t/c/");
  ASSERT_FALSE(news.is_null()) << "no campaign message";
  std::string open = LinkPath(news["html"], "/t/o/");
  std::string click = LinkPath(news["html"], "/t/c/");
  std::string unsubscribe = LinkPath(news["html"], "/u/");
  secrets["open token"] = TokenOf(open, "/t/o/");
  secrets["click token"] = TokenOf(click, "/t/c/");
  secrets["unsubscribe token"] = TokenOf(unsubscribe, "/u/");
  EXPECT_EQ(server_.Get(open).status, 200);
  EXPECT_EQ(server_.Get(click).status, 302);
  auto prefs = server_.Get(unsubscribe);
  EXPECT_EQ(prefs.status, 200);
  // The page's "Unsubscribe from everything", with its CSRF value (itself a link token).
  const std::string csrf_at = "name=\"csrf\" value=\"";
  auto at = prefs.body.find(csrf_at);
  ASSERT_NE(at, std::string::npos) << prefs.body;
  std::string csrf = prefs.body.substr(at + csrf_at.size());
  csrf = csrf.substr(0, csrf.find('"'));
  secrets["preference page csrf value"] = csrf;
  EXPECT_EQ(server_.PostForm(unsubscribe, "action=all&csrf=" + csrf).status, 200);
  EXPECT_EQ(s.crm->contacts->GetByEmail("reader@example.com")->status, "unsubscribed");

  // A shop posts to an incoming webhook.
  auto hook = server_.PostJson("/api/crm/v1/admin/incoming-hooks",
                               {{"name", "shop"}, {"mapping", {{"email", "e"}}}}, key);
  ASSERT_EQ(hook.status, 201) << hook.body;
  std::string hook_url = JsonBody(hook)["url"];
  secrets["incoming webhook token"] = hook_url.substr(hook_url.rfind('/') + 1);
  EXPECT_EQ(
      server_.PostJson(hook_url.substr(server_.base_url().size()), {{"e", "buyer@example.com"}})
          .status,
      200);

  // Lines written after an answer (the access log follows the write) are in by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string text = log.Text();
  // The requests were logged, with their secrets cut out.
  for (const char* redacted :
       {"\"/confirm/[redacted]\"", "\"/t/o/[redacted]\"", "\"/t/c/[redacted]\"",
        "\"/u/[redacted]\"", "\"/console/approvals/[redacted]\"", "/hooks/crmd_hook_"})
    EXPECT_NE(text.find(redacted), std::string::npos) << redacted << " not logged";
  for (const auto& [what, value] : secrets) {
    ASSERT_GE(value.size(), 8u) << what << " was not captured";
    size_t at = text.find(value);
    EXPECT_EQ(at, std::string::npos)
        << "the " << what << " is in the log:\n"
        << (at == std::string::npos ? "" : text.substr(text.rfind('\n', at) + 1, 400));
  }
}

}  // namespace
}  // namespace crmd::testing
