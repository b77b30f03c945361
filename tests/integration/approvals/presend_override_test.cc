// Overriding the pre-send check (docs/marketing.md "The pre-send check"): a campaign whose
// preview has an error (no unsubscribe link) is blocked for the assistant, who can neither
// confirm it nor approve it; the person sees the checks on the approval page and overrides
// them there with their own login ("Send anyway"), after which the assistant's confirm
// goes through once, and the audit log records what was overridden.
#include "tests/integration/approvals/approvals_fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

class PresendOverride : public Approvals {
 protected:
  int64_t NoUnsubscribeLink(McpClient& c) {
    int64_t list = AddList("override");
    for (int i = 0; i < 2; ++i) InList(AddContact("o" + std::to_string(i) + "@example.com"), list);
    json out = c.CallToolOk("create_campaign", {{"name", "No link"},
                                                {"subject", "Hello"},
                                                {"from_email", "team@example.com"},
                                                {"html_body", "<p>{{company_address}}</p>"},
                                                {"audience", {{"lists", {list}}}}});
    return out["campaign"].value("id", int64_t{0});
  }
};

TEST_F(PresendOverride, OnlyThePersonOverridesAnErrorOnTheApprovalPage) {
  auto c = Assistant(Era::kModern);
  int64_t id = NoUnsubscribeLink(*c);
  json preview = c->CallToolOk("activate_campaign", {{"id", id}});
  ASSERT_EQ(preview["status"], "confirmation_required") << preview.dump();
  ASSERT_EQ(preview["blocked_by"].size(), 1u) << preview.dump();
  EXPECT_EQ(preview["blocked_by"][0]["name"], "unsubscribe");
  std::string url = preview["approval_url"];
  json token = {{"confirmation_token", preview["confirmation_token"]}};

  // The assistant alone: blocked, naming the check, with the page to ask the person on.
  json blocked = c->CallToolError("confirm_action", token);
  EXPECT_EQ(blocked["code"], "dependency_blocked") << blocked.dump();
  EXPECT_NE(blocked.dump().find("unsubscribe"), std::string::npos) << blocked.dump();
  // The approval page needs the person's login, not the assistant's token.
  Browser assistant(server_);
  Page forged = assistant.PostForm(url, {{"decision", "approve"}, {"override", "1"}});
  EXPECT_NE(forged.status, 200) << forged.body;

  auto alice = Person("alice@example.com");
  Page page = alice->Get(url);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_NE(page.body.find("Pre-send check"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("Send anyway"), std::string::npos) << page.body;
  // Approving without ticking "Send anyway" approves nothing.
  Page plain = Decide(*alice, url, true);
  EXPECT_EQ(plain.status, 409) << plain.body;
  EXPECT_EQ(c->CallToolError("confirm_action", token)["code"], "dependency_blocked");

  page = alice->Get(url);
  auto form = page.form();
  ASSERT_TRUE(form.has_value()) << page.body;
  form->Set("decision", "approve");
  ASSERT_TRUE(form->SetChecked("override", "1", true)) << page.body;
  Page approved = alice->Submit(*form);
  EXPECT_EQ(approved.status, 200) << approved.body;

  json done = c->CallToolOk("confirm_action", token);
  EXPECT_EQ(done["status"], "done") << done.dump();
  EXPECT_NE(Count("SELECT COUNT(*) FROM campaigns WHERE id = ? AND status <> 'draft'", {id}), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'approve_action' AND details "
                  "LIKE '%unsubscribe%'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'confirm_action' AND details "
                  "LIKE '%overridden%'"),
            1);
}

TEST_F(PresendOverride, ApprovalBySizeLetsTheAssistantConfirmSmallCampaignsAlone) {
  auto& settings = *server_.app().services().governance->settings;
  auto cur = settings.Get();
  ASSERT_TRUE(cur.has_value());
  json policy = governance::DefaultApprovalPolicy();
  policy["thresholds"] = {{"activate_campaign", {{"assistant_may_confirm_up_to", 2}}}};
  ASSERT_TRUE(settings.Update({.kind = "cli", .subject = "test"}, cur->revision,
                              {{"approval_policy", policy}}));
  auto c = Assistant(Era::kModern);
  json small = c->CallToolOk("activate_campaign", {{"id", ReadyCampaign(*c)}});  // 2 recipients
  EXPECT_EQ(small["approval_required"], false) << small.dump();
  EXPECT_EQ(small["preview"]["count"], 2);
  EXPECT_EQ(c->CallToolOk("confirm_action",
                          {{"confirmation_token", small["confirmation_token"]}})["status"],
            "done");
  int64_t list = AddList("big");
  for (int i = 0; i < 3; ++i) InList(AddContact("big" + std::to_string(i) + "@example.com"), list);
  json big_campaign = c->CallToolOk("create_campaign", {{"name", "Big"},
                                                        {"subject", "Hello"},
                                                        {"from_email", "team@example.com"},
                                                        {"text_body", "Hi {{unsubscribe_url}}"},
                                                        {"audience", {{"lists", {list}}}}});
  json big = c->CallToolOk("activate_campaign", {{"id", big_campaign["campaign"]["id"]}});
  EXPECT_EQ(big["approval_required"], true) << big.dump();
}

}  // namespace
}  // namespace crmd::testing
