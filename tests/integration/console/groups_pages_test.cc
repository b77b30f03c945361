// The console's Lists and Tags pages (src/console/groups_pages.h) over real HTTP: counts,
// create, rename, and delete through the confirmation service's preview (the campaigns
// that use a list listed; one that is scheduled blocks it) and confirmation, as an
// administrator and as a viewer (who reads only); CSRF required.
#include <gtest/gtest.h>

#include <string>

#include "src/app/services.h"
#include "src/core/clock.h"
#include "src/crm/services.h"
#include "src/marketing/services.h"
#include "tests/support/browser.h"
#include "tests/support/mcp_client.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

constexpr const char* kGroupsPassword = "correct horse battery staple";

class GroupsPages : public ::testing::Test {
 protected:
  GroupsPages() {
    auto& users = *server_.app().services().users;
    EXPECT_TRUE(users.Create("admin@example.com", kGroupsPassword, true));
    EXPECT_TRUE(users.Create("vi@example.com", kGroupsPassword, auth::Role::kViewer, {}));
    std::string token = MintTestToken(server_, {.client_id = "assistant-a", .subject = "7"});
    mcp_ = std::make_unique<McpClient>(server_, McpClientOptions{.token = token});
    EXPECT_TRUE(mcp_->Initialize().ok());
    news_ = mcp_->CallToolOk("create_list", {{"name", "News"}})["list"].value("id", int64_t{0});
    for (const char* who : {"ada@example.com", "bob@example.com"})
      mcp_->CallToolOk("create_contact",
                       {{"email", who}, {"status", "subscribed"}, {"lists", {news_}}});
    admin_ = std::make_unique<Browser>(server_);
    EXPECT_EQ(SignInToConsole(*admin_, "admin@example.com", kGroupsPassword).status, 200);
  }

  Page Post(Browser& b, const std::string& path,
            std::vector<std::pair<std::string, std::string>> fields, const std::string& csrf) {
    fields.emplace_back("csrf_token", csrf);
    return b.PostForm(path, fields);
  }

  // The postal address the pre-send check asks for, so the campaign below can be activated.
  TestServer server_{TestServerOptions{.company_address = "1 Test Street, Testville"}};
  std::unique_ptr<McpClient> mcp_;
  std::unique_ptr<Browser> admin_;
  int64_t news_ = 0;
};

TEST_F(GroupsPages, CreateRenameAndDeleteThroughThePreview) {
  Page lists = admin_->Get("/console/lists");
  ASSERT_EQ(lists.status, 200) << lists.body;
  EXPECT_NE(lists.body.find(">Lists &amp; tags</a>"), std::string::npos);
  EXPECT_NE(lists.body.find(">News</a></td><td></td><td class=\"num\">2</td>"), std::string::npos)
      << lists.body;
  const std::string csrf = PageCsrf(lists.body);

  Page made = Post(
      *admin_, "/console/lists",
      {{"action", "create"}, {"name", "Offers <b>"}, {"description", "deals"}, {"public", "yes"}},
      csrf);
  ASSERT_EQ(made.status, 200) << made.body;
  EXPECT_NE(made.body.find("Offers &lt;b&gt;"), std::string::npos);
  EXPECT_EQ(Post(*admin_, "/console/lists", {{"action", "create"}, {"name", "News"}}, csrf).status,
            409);
  auto offers = server_.app().services().crm->lists->Get(crm::Ref{std::string("Offers <b>")});
  ASSERT_TRUE(offers.has_value());
  EXPECT_TRUE(offers->is_public.value_or(false));

  Page renamed = Post(*admin_, "/console/lists",
                      {{"action", "rename"},
                       {"id", std::to_string(offers->id)},
                       {"revision", std::to_string(offers->revision)},
                       {"name", "Offers"}},
                      csrf);
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(server_.app().services().crm->lists->Get(crm::Ref{offers->id})->name, "Offers");
  // The same revision again: stale.
  EXPECT_EQ(Post(*admin_, "/console/lists",
                 {{"action", "rename"},
                  {"id", std::to_string(offers->id)},
                  {"revision", std::to_string(offers->revision)},
                  {"name", "Offers 2"}},
                 csrf)
                .status,
            409);

  // Delete: the preview first (nothing deleted), then the confirmation.
  Page preview = Post(*admin_, "/console/lists",
                      {{"action", "delete"}, {"id", std::to_string(offers->id)}}, csrf);
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("No campaign or automation uses it."), std::string::npos);
  EXPECT_TRUE(server_.app().services().crm->lists->Get(crm::Ref{offers->id}).has_value());
  Page deleted = Post(*admin_, "/console/lists",
                      {{"action", "confirm"},
                       {"confirmation_token", PageHidden(preview.body, "confirmation_token")},
                       {"approval_id", PageHidden(preview.body, "approval_id")}},
                      csrf);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_NE(deleted.body.find("Deleted."), std::string::npos);
  EXPECT_FALSE(server_.app().services().crm->lists->Get(crm::Ref{offers->id}).has_value());

  // Tags the same way.
  Page tag = Post(*admin_, "/console/tags", {{"action", "create"}, {"name", "vip"}}, csrf);
  ASSERT_EQ(tag.status, 200) << tag.body;
  EXPECT_NE(tag.body.find(">vip</a>"), std::string::npos);
  EXPECT_EQ(tag.body.find("Members see it"), std::string::npos);  // lists only
}

TEST_F(GroupsPages, ADeletionListsTheDependantsAndAScheduledCampaignBlocksIt) {
  const std::string later = FormatRfc3339(server_.app().services().clock->NowUnix() + 7200);
  nlohmann::json campaign =
      mcp_->CallToolOk("create_campaign",
                       {{"name", "Weekly"},
                        {"subject", "Hi"},
                        {"from_email", "news@example.com"},
                        {"html_body", "<p>Hi <a href=\"{{unsubscribe_url}}\">unsubscribe</a></p>"},
                        {"audience", {{"lists", {news_}}}},
                        {"send_at", later}});
  const int64_t id = campaign["campaign"].value("id", int64_t{0});
  Page lists = admin_->Get("/console/lists");
  const std::string csrf = PageCsrf(lists.body);
  // A draft campaign uses it: listed, not blocking.
  Page preview =
      Post(*admin_, "/console/lists", {{"action", "delete"}, {"id", std::to_string(news_)}}, csrf);
  ASSERT_EQ(preview.status, 200) << preview.body;
  EXPECT_NE(preview.body.find("campaign <strong>Weekly</strong> (draft), as audience"),
            std::string::npos)
      << preview.body;
  // Scheduled (activated in the console), the campaign blocks the deletion: no token.
  const std::string view = "/console/campaigns/view?id=" + std::to_string(id);
  Page asked = Post(*admin_, view, {{"action", "activate"}, {"id", std::to_string(id)}}, csrf);
  ASSERT_EQ(asked.status, 200) << asked.body;
  Page activated = Post(*admin_, view,
                        {{"action", "confirm"},
                         {"id", std::to_string(id)},
                         {"confirmation_token", PageHidden(asked.body, "confirmation_token")},
                         {"approval_id", PageHidden(asked.body, "approval_id")}},
                        csrf);
  ASSERT_EQ(activated.status, 200) << activated.body;
  Page blocked =
      Post(*admin_, "/console/lists", {{"action", "delete"}, {"id", std::to_string(news_)}}, csrf);
  EXPECT_EQ(blocked.status, 409) << blocked.body;
  EXPECT_NE(blocked.body.find("(scheduled), as audience: <span class=\"error\">deleting would "
                              "break it</span>"),
            std::string::npos)
      << blocked.body;
  EXPECT_EQ(PageHidden(blocked.body, "confirmation_token"), "");
  EXPECT_TRUE(server_.app().services().crm->lists->Get(crm::Ref{news_}).has_value());
}

TEST_F(GroupsPages, ViewersReadAndForgedFormsAreRefused) {
  auto vi = std::make_unique<Browser>(server_);
  ASSERT_EQ(SignInToConsole(*vi, "vi@example.com", kGroupsPassword).status, 200);
  Page read = vi->Get("/console/lists");
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_NE(read.body.find(">News</a>"), std::string::npos);
  EXPECT_EQ(read.body.find("value=\"delete\""), std::string::npos);
  EXPECT_EQ(Post(*vi, "/console/lists", {{"action", "create"}, {"name", "X"}}, PageCsrf(read.body))
                .status,
            403);
  EXPECT_EQ(admin_->PostForm("/console/lists", {{"action", "create"}, {"name", "X"}}).status, 403);
  EXPECT_FALSE(server_.app().services().crm->lists->Get(crm::Ref{std::string("X")}).has_value());
}

}  // namespace
}  // namespace crmd::testing
