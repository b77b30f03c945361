// The console's Automations and Sequences pages (src/console/automation_pages.h) and the
// Overview's charts (src/console/overview_charts.h) over real HTTP against a real crmd:
// an automation's steps with their outcomes after a real run, activated through the
// activate_automation preview and confirmation and deactivated; a sequence paused and
// activated; viewers read only; the Overview's SVG charts with their tables.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/core/clock.h"
#include "src/marketing/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"
#include "tests/support/wait.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

constexpr const char* kAutomationPagesPassword = "correct horse battery staple";

class AutomationPages : public ::testing::Test {
 protected:
  AutomationPages()
      : server_(TestServerOptions{.configure =
                                      [](Config& c) {
                                        c.mail_rate_per_second = 0;
                                        c.mail_poll_interval_ms = 100;
                                      },
                                  .company_address = "1 Test Street, Testville"}) {
    auto& users = *server_.app().services().users;
    EXPECT_TRUE(users.Create("admin@example.com", kAutomationPagesPassword, true));
    EXPECT_TRUE(users.Create("vi@example.com", kAutomationPagesPassword, auth::Role::kViewer, {}));
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    mcp_ = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(mcp_->Initialize().ok());
    vip_ = mcp_->CallToolOk("create_tag", {{"name", "vip"}})["tag"].value("id", int64_t{0});
    done_ = mcp_->CallToolOk("create_tag", {{"name", "done"}})["tag"].value("id", int64_t{0});
    admin_ = std::make_unique<Browser>(server_);
    EXPECT_EQ(SignInToConsole(*admin_, "admin@example.com", kAutomationPagesPassword).status, 200);
  }

  TestServer server_;
  std::unique_ptr<McpClient> mcp_;
  std::unique_ptr<Browser> admin_;
  int64_t vip_ = 0, done_ = 0;
};

TEST_F(AutomationPages, ActivateThroughThePreviewSeeEachStepsOutcomesAndDeactivate) {
  json made = mcp_->CallToolOk(
      "create_automation",
      {{"name", "Welcome <vip>"},
       {"trigger", {{"type", "tag_added"}, {"tag_id", vip_}}},
       {"steps", json::array({{{"type", "add_tag"}, {"tag_id", done_}},
                              {{"type", "send_email"},
                               {"subject", "Hi"},
                               {"text_body", "Hello. Unsubscribe: {{unsubscribe_url}}"}}})}});
  const int64_t id = made["automation"].value("id", int64_t{0});
  const std::string path = "/console/automations/view?id=" + std::to_string(id);
  Page list = admin_->Get("/console/automations");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_NE(list.body.find("Welcome &lt;vip&gt;</a>"), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("<td>tag_added</td>"), std::string::npos);

  Page page = admin_->Get(path);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<strong>add_tag</strong>"), std::string::npos) << page.body;
  Page preview = admin_->PostForm(
      "/console/automations/view",
      {{"csrf_token", PageCsrf(page.body)}, {"id", std::to_string(id)}, {"action", "activate"}});
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_EQ(server_.app().services().marketing->automations->Get(id)->status,
            marketing::AutomationStatus::kDraft);
  Page active =
      admin_->PostForm("/console/automations/view",
                       {{"csrf_token", PageCsrf(preview.body)},
                        {"id", std::to_string(id)},
                        {"action", "confirm"},
                        {"confirmation_token", PageHidden(preview.body, "confirmation_token")},
                        {"approval_id", PageHidden(preview.body, "approval_id")}});
  ASSERT_EQ(active.status, 200) << active.body;
  EXPECT_NE(active.body.find("Active: it runs from now on."), std::string::npos) << active.body;

  // A contact tagged vip runs it: each step's outcomes are counted on the page.
  mcp_->CallToolOk("create_contact", {{"email", "ada@example.com"}, {"tags", {vip_}}});
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = server_.app().services().marketing->reports->AutomationReport(id);
        return r && (*r)["enrolments"].value("completed", 0) == 1;
      },
      30));
  Page ran = admin_->Get(path);
  EXPECT_NE(ran.body.find("<th scope=\"row\">1</th><td><strong>add_tag</strong> tag_id: " +
                          std::to_string(done_) +
                          "</td><td class=\"num\">1</td><td "
                          "class=\"num\">1</td>"),
            std::string::npos)
      << ran.body;

  Page off =
      admin_->PostForm("/console/automations/view", {{"csrf_token", PageCsrf(ran.body)},
                                                     {"id", std::to_string(id)},
                                                     {"revision", PageHidden(ran.body, "revision")},
                                                     {"action", "deactivate"}});
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(server_.app().services().marketing->automations->Get(id)->status,
            marketing::AutomationStatus::kInactive);
}

TEST_F(AutomationPages, SequencesPauseAndActivateAndViewersOnlyRead) {
  int64_t drip =
      mcp_->CallToolOk("create_list", {{"name", "drip"}})["list"].value("id", int64_t{0});
  json made = mcp_->CallToolOk(
      "create_sequence",
      {{"name", "Drip"},
       {"list_id", drip},
       {"emails", json::array({{{"subject", "S1"}, {"text_body", "one"}},
                               {{"subject", "S2"}, {"text_body", "two"}, {"delay_days", 2}}})}});
  const int64_t id = made["sequence"].value("id", int64_t{0});
  const std::string path = "/console/sequences/view?id=" + std::to_string(id);
  Page page = admin_->Get(path);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("<strong>S2</strong> after 48 h 0 min"), std::string::npos) << page.body;
  Page on =
      admin_->PostForm("/console/sequences/view", {{"csrf_token", PageCsrf(page.body)},
                                                   {"id", std::to_string(id)},
                                                   {"revision", PageHidden(page.body, "revision")},
                                                   {"action", "activate"}});
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_EQ(server_.app().services().marketing->sequences->Get(id)->status,
            marketing::SequenceStatus::kActive);
  Page paused =
      admin_->PostForm("/console/sequences/view", {{"csrf_token", PageCsrf(on.body)},
                                                   {"id", std::to_string(id)},
                                                   {"revision", PageHidden(on.body, "revision")},
                                                   {"action", "pause"}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  EXPECT_EQ(server_.app().services().marketing->sequences->Get(id)->status,
            marketing::SequenceStatus::kPaused);

  auto vi = std::make_unique<Browser>(server_);
  ASSERT_EQ(SignInToConsole(*vi, "vi@example.com", kAutomationPagesPassword).status, 200);
  Page read = vi->Get(path);
  ASSERT_EQ(read.status, 200);
  EXPECT_EQ(read.body.find("value=\"activate\""), std::string::npos);
  EXPECT_EQ(vi->PostForm("/console/sequences/view", {{"csrf_token", PageCsrf(read.body)},
                                                     {"id", std::to_string(id)},
                                                     {"action", "activate"}})
                .status,
            403);
  EXPECT_EQ(admin_
                ->PostForm("/console/sequences/view",
                           {{"id", std::to_string(id)}, {"action", "activate"}})
                .status,
            403);
}

TEST_F(AutomationPages, TheOverviewDrawsTheDashboardAndTheContactsReport) {
  for (const char* who : {"a@example.com", "b@example.com", "c@example.com"})
    mcp_->CallToolOk("create_contact", {{"email", who}, {"status", "subscribed"}});
  Page overview = admin_->Get("/console");
  ASSERT_EQ(overview.status, 200) << overview.body;
  EXPECT_NE(overview.body.find("<title>Contacts over the last 30 days: new each day and the total"),
            std::string::npos)
      << overview.body;
  EXPECT_NE(overview.body.find("<title>Contacts by status</title>"), std::string::npos);
  EXPECT_NE(overview.body.find("<td>subscribed</td><td>3</td>"), std::string::npos)
      << overview.body;
  const std::string today = FormatRfc3339(server_.app().services().clock->NowUnix()).substr(0, 10);
  EXPECT_NE(overview.body.find("<td>" + today + "</td><td>3</td><td>3</td>"), std::string::npos);
  // No inline style or script slipped in with the SVG.
  EXPECT_EQ(overview.body.find("style="), std::string::npos);
  EXPECT_EQ(overview.body.find("<script>"), std::string::npos);
}

}  // namespace
}  // namespace crmd::testing
