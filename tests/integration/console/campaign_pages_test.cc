// The console's campaign pages (src/console/campaign_pages.h) over real HTTP against a
// real crmd that sends to .eml files: the list with status and progress, a campaign's
// page with its message in a sandboxed frame, activation through the confirmation
// service's preview and confirmation (an administrator's confirmation is their approval;
// an editor's waits for an administrator on the approval page), the report's SVG charts
// and tables over time and per link after a real click, pause and resume, and the
// refusals (viewers, a forged form, an unsendable campaign).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "src/app/services.h"
#include "src/core/clock.h"
#include "src/governance/audit.h"
#include "src/marketing/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"
#include "tests/support/wait.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kCampaignPagesPassword = "correct horse battery staple";

TestServerOptions CampaignFastMail() {
  return TestServerOptions{.configure =
                               [](Config& c) {
                                 c.mail_rate_per_second = 0;
                                 c.mail_poll_interval_ms = 100;
                                 c.mail_from = "news@example.com";
                               },
                           .company_address = "1 Test Street, Testville"};
}

class CampaignPages : public ::testing::Test {
 protected:
  CampaignPages() : server_(CampaignFastMail()) {
    auto& users = *server_.app().services().users;
    EXPECT_TRUE(users.Create("admin@example.com", kCampaignPagesPassword, true));
    EXPECT_TRUE(users.Create("ed@example.com", kCampaignPagesPassword, auth::Role::kEditor, {}));
    EXPECT_TRUE(users.Create("vi@example.com", kCampaignPagesPassword, auth::Role::kViewer, {}));
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    mcp_ = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(mcp_->Initialize().ok());
    list_ = mcp_->CallToolOk("create_list", {{"name", "News"}})["list"].value("id", int64_t{0});
    for (const char* who : {"ada@example.com", "bob@example.com"})
      mcp_->CallToolOk("create_contact", {{"email", who},
                                          {"first_name", who[0] == 'a' ? "Ada" : "Bob"},
                                          {"status", "subscribed"},
                                          {"lists", {list_}}});
    admin_ = SignedIn("admin@example.com");
  }

  std::unique_ptr<Browser> SignedIn(const std::string& email) {
    auto b = std::make_unique<Browser>(server_);
    Page after = SignInToConsole(*b, email, kCampaignPagesPassword);
    EXPECT_EQ(after.status, 200) << after.body;
    return b;
  }

  int64_t NewCampaign(const std::string& name, json extra = json::object()) {
    json fields = {{"name", name},
                   {"subject", "Hello {{first_name}}"},
                   {"from_email", "news@example.com"},
                   {"html_body",
                    "<p>Hello {{first_name}}, read <a href=\"https://example.com/a\">this</a>.</p>"
                    "<p><a href=\"{{unsubscribe_url}}\">Unsubscribe</a></p>"},
                   {"audience", {{"lists", {list_}}}},
                   {"track_clicks", true}};
    fields.update(extra);
    return mcp_->CallToolOk("create_campaign", fields)["campaign"].value("id", int64_t{0});
  }

  // The path of the first tracked link (/t/c/) in the messages written to the mail folder.
  std::string TrackedLink() {
    for (const auto& f : std::filesystem::directory_iterator(server_.dir() + "/mail")) {
      std::ifstream in(f.path(), std::ios::binary);
      std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string text;  // quoted-printable undone enough for a URL
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw.compare(i, 3, "=\r\n") == 0) {
          i += 2;
          continue;
        }
        if (raw.compare(i, 3, "=3D") == 0) {
          text += '=';
          i += 2;
          continue;
        }
        text += raw[i];
      }
      size_t at = text.find(server_.base_url() + "/t/c/");
      if (at == std::string::npos) continue;
      at += server_.base_url().size();
      size_t end = text.find_first_of("\"' )>\r\n", at);
      return text.substr(at, end - at);
    }
    return "";
  }

  std::string AdminId() {
    auto u = server_.app().services().users->FindByEmail("admin@example.com");
    return u && *u ? std::to_string((*u)->id) : "";
  }

  std::string View(int64_t id) { return "/console/campaigns/view?id=" + std::to_string(id); }

  std::string Status(int64_t id) {
    auto k = server_.app().services().marketing->campaigns->Get(id);
    return k ? marketing::ToString(k->status) : "";
  }

  // Activate, then Confirm, as `b` does it from the campaign's page.
  Page ActivateAndConfirm(Browser& b, int64_t id) {
    Page page = b.Get(View(id));
    Page preview = b.PostForm(
        "/console/campaigns/view",
        {{"csrf_token", PageCsrf(page.body)}, {"id", std::to_string(id)}, {"action", "activate"}});
    EXPECT_EQ(preview.status, 200) << preview.body;
    return b.PostForm("/console/campaigns/view",
                      {{"csrf_token", PageCsrf(preview.body)},
                       {"id", std::to_string(id)},
                       {"action", "confirm"},
                       {"confirmation_token", PageHidden(preview.body, "confirmation_token")},
                       {"approval_id", PageHidden(preview.body, "approval_id")}});
  }

  TestServer server_;
  std::unique_ptr<McpClient> mcp_;
  std::unique_ptr<Browser> admin_;
  int64_t list_ = 0;
};

TEST_F(CampaignPages, ListAndPageShowTheCampaignAndItsMessageInASandboxedFrame) {
  int64_t id = NewCampaign("Winter <news>");
  Page list = admin_->Get("/console/campaigns");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find(">Campaigns</a>"), std::string::npos);  // in the navigation
  EXPECT_NE(list.body.find("Winter &lt;news&gt;</a>"), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("status-draft"), std::string::npos);
  EXPECT_NE(list.body.find("not sent"), std::string::npos);
  EXPECT_EQ(admin_->Get("/console/campaigns?status=sent").body.find("Winter"), std::string::npos);
  EXPECT_EQ(admin_->Get("/console/campaigns?status=bogus").status, 400);

  Page page = admin_->Get(View(id));
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<h1>Campaign: Winter &lt;news&gt;</h1>"), std::string::npos);
  const std::string csp = page.Header("Content-Security-Policy").value_or("");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(page.body.find("<iframe title=\"The campaign's message\" sandbox src="),
            std::string::npos);
  EXPECT_NE(page.body.find("value=\"activate\">Activate"), std::string::npos);
  EXPECT_NE(page.body.find("id=\"presend-checks\""), std::string::npos);
  EXPECT_NE(page.body.find("id=\"send-test\""), std::string::npos);
  EXPECT_EQ(page.body.find("id=\"report\""), std::string::npos);  // not activated yet

  Page message = admin_->Get("/console/campaigns/preview?id=" + std::to_string(id) +
                             "&contact=bob%40example.com");
  ASSERT_EQ(message.status, 200) << message.body;
  EXPECT_NE(message.body.find("Hello Bob, read"), std::string::npos) << message.body;
  const std::string frame_csp = message.Header("Content-Security-Policy").value_or("");
  EXPECT_NE(frame_csp.find("sandbox"), std::string::npos) << frame_csp;
  EXPECT_EQ(frame_csp.find("script-src"), std::string::npos) << frame_csp;
  EXPECT_EQ(message.Header("X-Frame-Options").value_or(""), "SAMEORIGIN");
  EXPECT_EQ(admin_
                ->Get("/console/campaigns/preview?id=" + std::to_string(id) +
                      "&contact=nobody%40example.com")
                .status,
            404);
  EXPECT_EQ(admin_->Get("/console/campaigns/view?id=999").status, 404);
}

TEST_F(CampaignPages, AnAdministratorActivatesThroughThePreviewAndSeesTheReport) {
  int64_t id = NewCampaign("Spring");
  Page page = admin_->Get(View(id));
  Page preview = admin_->PostForm(
      "/console/campaigns/view",
      {{"csrf_token", PageCsrf(page.body)}, {"id", std::to_string(id)}, {"action", "activate"}});
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("<th scope=\"row\">Recipients</th><td>2</td>"), std::string::npos)
      << preview.body;
  EXPECT_NE(preview.body.find("Hello Ada"), std::string::npos);  // the first message's subject
  EXPECT_FALSE(PageHidden(preview.body, "confirmation_token").empty());
  EXPECT_FALSE(PageHidden(preview.body, "approval_id").empty());  // the default policy
  EXPECT_EQ(Status(id), "draft");                                 // a preview changes nothing

  Page done =
      admin_->PostForm("/console/campaigns/view",
                       {{"csrf_token", PageCsrf(preview.body)},
                        {"id", std::to_string(id)},
                        {"action", "confirm"},
                        {"confirmation_token", PageHidden(preview.body, "confirmation_token")},
                        {"approval_id", PageHidden(preview.body, "approval_id")}});
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_NE(done.body.find("Activated: the campaign is on its way."), std::string::npos)
      << done.body;
  ASSERT_TRUE(WaitUntil([&] { return Status(id) == "sent"; }, 30)) << Status(id);

  // The person is the actor of the approval and of the activation.
  auto rows = server_.app().services().governance->audit->Find(
      governance::AuditFilter{.client_id = "console"});
  ASSERT_TRUE(rows.has_value());
  std::string actions;
  for (const auto& r : *rows) {
    actions += r.entry.action + " ";
    EXPECT_EQ(r.actor.kind, "user");
    EXPECT_EQ(r.actor.subject, AdminId());
  }
  EXPECT_NE(actions.find("approve_action"), std::string::npos) << actions;
  EXPECT_NE(actions.find("confirm_action"), std::string::npos) << actions;

  // The same token again: used.
  Page again =
      admin_->PostForm("/console/campaigns/view",
                       {{"csrf_token", PageCsrf(preview.body)},
                        {"id", std::to_string(id)},
                        {"action", "confirm"},
                        {"confirmation_token", PageHidden(preview.body, "confirmation_token")}});
  EXPECT_EQ(again.status, 409) << again.body;

  Page report = admin_->Get(View(id));
  EXPECT_NE(report.body.find("id=\"report\""), std::string::npos) << report.body;
  EXPECT_NE(report.body.find("<svg class=\"chart\" role=\"img\""), std::string::npos);
  EXPECT_NE(report.body.find("<title>Sent, delivered, bounced, opened and clicked"),
            std::string::npos);
  EXPECT_NE(report.body.find("id=\"report-timeline\""), std::string::npos);
  EXPECT_NE(report.body.find("<td class=\"num\">2</td>"), std::string::npos);
  EXPECT_NE(report.body.find("No link was clicked yet"), std::string::npos);
  EXPECT_EQ(report.body.find("value=\"activate\""), std::string::npos);  // sent: no Activate

  // A click through a message's tracked link counts for that link.
  const std::string link = TrackedLink();
  ASSERT_FALSE(link.empty());
  EXPECT_EQ(server_.Get(link).status, 302);
  Page clicked = admin_->Get(View(id));
  EXPECT_NE(clicked.body.find("<title>Clicks per link</title>"), std::string::npos) << clicked.body;
  EXPECT_NE(clicked.body.find(
                "<td><span class=\"mono\">https:&#x2F;&#x2F;example.com&#x2F;a</span></td><td "
                "class=\"num\">1</td>"),
            std::string::npos)
      << clicked.body;
}

TEST_F(CampaignPages, AnEditorsActivationWaitsForAnAdministratorOnTheApprovalPage) {
  int64_t id = NewCampaign("Summer");
  auto ed = SignedIn("ed@example.com");
  Page page = ed->Get(View(id));
  Page preview = ed->PostForm(
      "/console/campaigns/view",
      {{"csrf_token", PageCsrf(page.body)}, {"id", std::to_string(id)}, {"action", "activate"}});
  ASSERT_EQ(preview.status, 200) << preview.body;
  const std::string approval = PageHidden(preview.body, "approval_id");
  ASSERT_FALSE(approval.empty());
  std::vector<std::pair<std::string, std::string>> confirm = {
      {"csrf_token", PageCsrf(preview.body)},
      {"id", std::to_string(id)},
      {"action", "confirm"},
      {"confirmation_token", PageHidden(preview.body, "confirmation_token")},
      {"approval_id", approval}};
  Page waiting = ed->PostForm("/console/campaigns/view", confirm);
  EXPECT_EQ(waiting.status, 202) << waiting.body;
  EXPECT_NE(waiting.body.find("approvals&#x2F;" + approval + "\">The approval page</a>"),
            std::string::npos)
      << waiting.body;
  EXPECT_EQ(Status(id), "draft");

  // The administrator approves it on the approval page; the editor's confirm then sends.
  Page approval_page = admin_->Get("/console/approvals/" + approval);
  ASSERT_EQ(approval_page.status, 200) << approval_page.body;
  EXPECT_NE(approval_page.body.find("A person in the console (their own action"), std::string::npos)
      << approval_page.body;
  Page approved =
      admin_->PostForm("/console/approvals/" + approval,
                       {{"csrf_token", PageCsrf(approval_page.body)}, {"decision", "approve"}});
  EXPECT_EQ(approved.status, 200) << approved.body;
  Page done = ed->PostForm("/console/campaigns/view", confirm);
  EXPECT_EQ(done.status, 200) << done.body;
  EXPECT_NE(done.body.find("Activated"), std::string::npos) << done.body;
  EXPECT_NE(Status(id), "draft");
}

TEST_F(CampaignPages, PauseAndResumeAScheduledCampaign) {
  const std::string later = FormatRfc3339(server_.app().services().clock->NowUnix() + 7200);
  int64_t id = NewCampaign("Autumn", {{"send_at", later}});
  Page done = ActivateAndConfirm(*admin_, id);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Status(id), "scheduled");
  EXPECT_NE(done.body.find("value=\"pause\">Pause</button>"), std::string::npos) << done.body;
  Page paused =
      admin_->PostForm("/console/campaigns/view", {{"csrf_token", PageCsrf(done.body)},
                                                   {"id", std::to_string(id)},
                                                   {"revision", PageHidden(done.body, "revision")},
                                                   {"action", "pause"}});
  EXPECT_EQ(paused.status, 200) << paused.body;
  EXPECT_EQ(Status(id), "paused");
  EXPECT_NE(paused.body.find("value=\"activate\">Resume"), std::string::npos) << paused.body;
  // Pausing again is refused: a paused campaign is not sending.
  Page twice = admin_->PostForm(
      "/console/campaigns/view",
      {{"csrf_token", PageCsrf(done.body)}, {"id", std::to_string(id)}, {"action", "pause"}});
  EXPECT_EQ(twice.status, 409) << twice.body;
  Page resumed = ActivateAndConfirm(*admin_, id);
  EXPECT_EQ(resumed.status, 200) << resumed.body;
  EXPECT_EQ(Status(id), "scheduled");
  // Nothing failed, so there is nothing to resend.
  Page resend = admin_->PostForm(
      "/console/campaigns/view",
      {{"csrf_token", PageCsrf(done.body)}, {"id", std::to_string(id)}, {"action", "resend"}});
  EXPECT_EQ(resend.status, 409) << resend.body;
}

TEST_F(CampaignPages, ViewersForgedFormsAndUnsendableCampaignsAreRefused) {
  int64_t id = NewCampaign("Draft", {{"subject", ""}});
  auto vi = SignedIn("vi@example.com");
  Page read = vi->Get(View(id));
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.body.find("value=\"activate\""), std::string::npos);
  EXPECT_EQ(vi->PostForm("/console/campaigns/view", {{"csrf_token", PageCsrf(read.body)},
                                                     {"id", std::to_string(id)},
                                                     {"action", "activate"}})
                .status,
            403);
  // Without the session's token.
  EXPECT_EQ(admin_
                ->PostForm("/console/campaigns/view",
                           {{"id", std::to_string(id)}, {"action", "activate"}})
                .status,
            403);
  // No subject: the preview says why, and no token is issued.
  Page page = admin_->Get(View(id));
  Page refused = admin_->PostForm(
      "/console/campaigns/view",
      {{"csrf_token", PageCsrf(page.body)}, {"id", std::to_string(id)}, {"action", "activate"}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("subject"), std::string::npos) << refused.body;
  EXPECT_EQ(Status(id), "draft");
  // A visitor is sent to sign in.
  Browser visitor(server_);
  visitor.set_follow_redirects(false);
  EXPECT_EQ(visitor.Get("/console/campaigns").status, 303);
}

}  // namespace
}  // namespace crmd::testing

namespace crmd::testing {
namespace {

size_t MailFiles(const std::string& dir) {
  size_t n = 0;
  if (!std::filesystem::exists(dir)) return 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) n += f.is_regular_file() ? 1 : 0;
  return n;
}

std::string MailWith(const std::string& dir, const std::string& needle) {
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(f.path(), std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.find(needle) != std::string::npos) return raw;
  }
  return "";
}

TEST_F(CampaignPages, SendTestMailsConsoleUsersOnlyAndChangesNothing) {
  const int64_t id = NewCampaign("Tested");
  Page page = admin_->Get(View(id));
  ASSERT_EQ(page.status, 200);
  ASSERT_NE(page.body.find("value=\"test\">Send test</button>"), std::string::npos) << page.body;
  const std::string mail_dir = server_.dir() + "/mail";
  const size_t before = MailFiles(mail_dir);

  Page refused = admin_->PostForm("/console/campaigns/view",
                                  {{"csrf_token", PageCsrf(page.body)},
                                   {"id", std::to_string(id)},
                                   {"action", "test"},
                                   {"test_recipients", "stranger@elsewhere.example"}});
  EXPECT_GE(refused.status, 400);
  EXPECT_LT(refused.status, 500);
  EXPECT_NE(refused.body.find("test_recipients_allowed"), std::string::npos) << refused.body;
  EXPECT_EQ(MailFiles(mail_dir), before) << "a refused test sends nothing";

  Page sent = admin_->PostForm("/console/campaigns/view",
                               {{"csrf_token", PageCsrf(page.body)},
                                {"id", std::to_string(id)},
                                {"action", "test"},
                                {"test_recipients", "ed@example.com, admin@example.com"}});
  ASSERT_EQ(sent.status, 200) << sent.body;
  EXPECT_NE(sent.body.find("Test sent"), std::string::npos);
  EXPECT_NE(sent.body.find("ed@example.com"), std::string::npos);
  EXPECT_EQ(MailFiles(mail_dir), before + 2);
  const std::string to_ed = MailWith(mail_dir, "To: ed@example.com");
  ASSERT_FALSE(to_ed.empty());
  EXPECT_NE(to_ed.find("Subject: [Test] Hello Ada"), std::string::npos) << to_ed.substr(0, 800);
  EXPECT_EQ(Status(id), "draft") << "a test send leaves the campaign as it was";

  auto viewer = SignedIn("vi@example.com");
  Page read_only = viewer->Get(View(id));
  ASSERT_EQ(read_only.status, 200);
  EXPECT_EQ(read_only.body.find("value=\"test\">Send test</button>"), std::string::npos);
}

}  // namespace
}  // namespace crmd::testing
