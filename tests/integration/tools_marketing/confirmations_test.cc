// The confirmable marketing actions end to end: preview changes nothing, confirm_action
// performs exactly the previewed action once, and the refusals of TOOLS.md "Confirmation".
#include <atomic>
#include <thread>

#include "tests/integration/tools_marketing/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

class MarketingConfirmations : public MarketingTools {
 protected:
  std::string Token(McpClient& c, const std::string& tool, int64_t id) {
    json out = Call(c, tool, {{"id", id}});
    EXPECT_EQ(out.value("status", ""), "confirmation_required") << out.dump();
    return out.value("confirmation_token", "");
  }
  std::string Status(const char* table, int64_t id) {
    auto s = db_->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne(std::string("SELECT status FROM ") + table + " WHERE id = ?", {id});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string("gone");
    });
    return s.value_or("error");
  }
};

TEST_F(MarketingConfirmations, ActivateCampaignPreviewChangesNothingThenConfirmSendsOnce) {
  auto c = Client();
  int64_t id = ReadyCampaign(*c);
  json preview = Call(*c, "activate_campaign", {{"id", id}});
  EXPECT_EQ(preview["preview"]["audience_size"], 2);
  EXPECT_EQ(preview["preview"]["sender"]["email"], "team@example.com");
  EXPECT_EQ(preview["preview"]["new_status"], "sending");
  EXPECT_EQ(Status("campaigns", id), "draft");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients"), 0);

  std::string token = preview["confirmation_token"];
  json done = Call(*c, "confirm_action", {{"confirmation_token", token}});
  EXPECT_EQ(done.value("status", ""), "done") << done.dump();
  EXPECT_EQ(Status("campaigns", id), "sending");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?", {id}), 2);

  ExpectToolError(*c, "confirm_action", {{"confirmation_token", token}}, "confirmation_invalid");
}

TEST_F(MarketingConfirmations, AnotherClientCannotConfirm) {
  auto alice = Client();
  auto mallory = Client(kAllMarketingScopes, "client-b", "alice");
  int64_t id = ReadyCampaign(*alice);
  std::string token = Token(*alice, "activate_campaign", id);
  ExpectToolError(*mallory, "confirm_action", {{"confirmation_token", token}},
                  "confirmation_invalid");
  EXPECT_EQ(Status("campaigns", id), "draft");
}

TEST_F(MarketingConfirmations, UpdateBetweenPreviewAndConfirmIsStalePreview) {
  auto c = Client();
  int64_t id = ReadyCampaign(*c);
  std::string token = Token(*c, "activate_campaign", id);
  Call(*c, "update_campaign", {{"id", id}, {"expected_revision", 1}, {"subject", "Changed"}});
  json err =
      ExpectToolError(*c, "confirm_action", {{"confirmation_token", token}}, "stale_preview");
  EXPECT_TRUE(err["details"].contains("preview")) << err.dump();
  EXPECT_EQ(Status("campaigns", id), "draft");
}

TEST_F(MarketingConfirmations, DeleteCampaignIsBlockedWhileSending) {
  auto c = Client();
  int64_t id = ReadyCampaign(*c);
  Call(*c, "confirm_action", {{"confirmation_token", Token(*c, "activate_campaign", id)}});
  ASSERT_EQ(Status("campaigns", id), "sending");
  json err = ExpectToolError(*c, "delete_campaign", {{"id", id}}, "dependency_blocked");
  EXPECT_FALSE(err.dump().find("confirmation_token") != std::string::npos);
  Call(*c, "pause_campaign", {{"id", id}});
  Call(*c, "confirm_action", {{"confirmation_token", Token(*c, "delete_campaign", id)}});
  EXPECT_EQ(Status("campaigns", id), "gone");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients"), 0);
}

TEST_F(MarketingConfirmations, ConfirmNeedsTheActionScope) {
  auto c = Client();
  auto no_activate = Client("campaigns:read,campaigns:write,campaigns:delete", "client-a", "alice");
  int64_t id = ReadyCampaign(*c);
  std::string token = Token(*c, "activate_campaign", id);
  auto r = no_activate->CallTool("confirm_action", {{"confirmation_token", token}});
  EXPECT_TRUE(r.status == 403 || r.is_tool_error()) << r.raw;
  EXPECT_EQ(Status("campaigns", id), "draft");
}

TEST_F(MarketingConfirmations, TwoConcurrentConfirmsSucceedExactlyOnce) {
  auto c = Client();
  int64_t id2 = ReadyCampaign(*c);
  std::string token2 = Token(*c, "activate_campaign", id2);
  auto c1 = Client();
  auto c2 = Client();
  std::atomic<int> wins{0};
  auto confirm = [&](McpClient* m) {
    auto r = m->CallTool("confirm_action", {{"confirmation_token", token2}});
    if (r.ok() && !r.is_tool_error()) ++wins;
  };
  std::thread a(confirm, c1.get()), b(confirm, c2.get());
  a.join();
  b.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(Status("campaigns", id2), "sending");
}

TEST_F(MarketingConfirmations, ActivateAutomationEnrolsMatchingContactsAndDeleteShowsThem) {
  auto c = Client();
  int64_t tag = AddTag("vip");
  for (int i = 0; i < 3; ++i) Tagged(AddContact("v" + std::to_string(i) + "@example.com"), tag);
  json created = Call(
      *c, "create_automation",
      {{"name", "VIP"},
       {"trigger", {{"type", "tag_added"}, {"tag_id", tag}}},
       {"steps",
        {{{"type", "send_email"}, {"subject", "Hi"}, {"text_body", "b {{unsubscribe_url}}"}}}}});
  int64_t id = created["automation"]["id"];
  json preview = Call(*c, "activate_automation", {{"id", id}});
  EXPECT_EQ(preview["preview"]["enrol_now"]["count"], 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 0);
  Call(*c, "confirm_action", {{"confirmation_token", preview["confirmation_token"]}});
  EXPECT_EQ(Status("automations", id), "active");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE automation_id = ?", {id}), 3);

  ExpectToolError(*c, "delete_automation", {{"id", id}}, "dependency_blocked");
  Call(*c, "deactivate_automation", {{"id", id}});
  json del = Call(*c, "delete_automation", {{"id", id}});
  EXPECT_EQ(del["preview"]["enrolled_contacts"]["total"], 3);
  EXPECT_EQ(Status("automations", id), "inactive");
  Call(*c, "confirm_action", {{"confirmation_token", del["confirmation_token"]}});
  EXPECT_EQ(Status("automations", id), "gone");
}

TEST_F(MarketingConfirmations, DeleteListIsBlockedByAnActiveAutomation) {
  auto c = Client();
  int64_t list = AddList("members");
  json created = Call(*c, "create_automation",
                      {{"name", "Join"},
                       {"trigger", {{"type", "contact_created"}}},
                       {"steps", {{{"type", "add_list"}, {"list_id", list}}}}});
  int64_t id = created["automation"]["id"];
  Call(*c, "confirm_action", {{"confirmation_token", Token(*c, "activate_automation", id)}});
  json err = ExpectToolError(*c, "delete_list", {{"id", list}}, "dependency_blocked");
  EXPECT_NE(err.dump().find("Join"), std::string::npos) << err.dump();
}

}  // namespace
}  // namespace crmd::testing
