// TOOLS.md "Confirmation" 5, last sentences: rule 2 comes first. A preview that went stale
// while the person's approval was required is answered stale_preview with a fresh preview,
// token and approval page, both before any approval was asked for and after the approval
// page refused one; never approval_pending for a preview that can no longer be approved.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/approvals/approvals_fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

class StaleUnderApproval : public Approvals, public ::testing::WithParamInterface<Era> {
 protected:
  // Someone changes the contact after the preview (here the assistant itself, through the
  // tools, as a colleague's edit would arrive).
  void Edit(McpClient& c, int64_t contact, const std::string& first_name) {
    json current = c.CallToolOk("get_contact", {{"id", contact}})["contact"];
    c.CallToolOk(
        "update_contact",
        {{"id", contact}, {"expected_revision", current["revision"]}, {"first_name", first_name}});
  }
  bool Exists(int64_t contact) {
    return Count("SELECT COUNT(*) FROM contacts WHERE id = ?", {contact}) == 1;
  }
  // The stale answer carries a fresh preview with its own token and approval page; the
  // person approves that one and the action then happens once.
  // `url_elicitation`: the client shows the page itself, so waiting is not a tool error.
  void ExpectFreshPreviewThatCompletes(McpClient& c, const json& stale, const std::string& old_url,
                                       const json& old_token, int64_t contact,
                                       bool url_elicitation = false) {
    ASSERT_EQ(stale.value("code", ""), "stale_preview") << stale.dump();
    const json& d = stale["details"];
    ASSERT_TRUE(d.contains("preview")) << stale.dump();
    ASSERT_TRUE(d["confirmation_token"].is_string()) << stale.dump();
    EXPECT_NE(d["confirmation_token"], old_token["confirmation_token"]);
    EXPECT_EQ(d.value("approval_required", false), true) << stale.dump();
    std::string fresh_url = d.value("approval_url", "");
    ASSERT_FALSE(fresh_url.empty()) << stale.dump();
    EXPECT_NE(fresh_url, old_url);
    EXPECT_TRUE(Exists(contact));
    // The old token and page are done with; the fresh preview waits for the person.
    EXPECT_EQ(c.CallToolError("confirm_action", old_token)["code"], "confirmation_invalid");
    auto alice = Person("alice@example.com");
    EXPECT_NE(alice->Get(old_url).body.find("replaced by a newer request"), std::string::npos);
    json fresh = {{"confirmation_token", d["confirmation_token"]}};
    if (url_elicitation) {
      c.CallTool("confirm_action", fresh);
      EXPECT_TRUE(Exists(contact));
    } else {
      EXPECT_EQ(c.CallToolError("confirm_action", fresh)["code"], "approval_pending");
    }
    Page approved = Decide(*alice, fresh_url, true);
    EXPECT_EQ(approved.status, 200) << approved.body;
    EXPECT_EQ(c.CallToolOk("confirm_action", fresh)["status"], "done");
    EXPECT_FALSE(Exists(contact));
  }
};

TEST_P(StaleUnderApproval, BeforeAnyApprovalTheAssistantIsGivenAFreshPreview) {
  auto c = Assistant(GetParam());
  int64_t contact = AddContact("before@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {contact}}});
  ASSERT_EQ(preview["approval_required"], true) << preview.dump();
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  EXPECT_EQ(c->CallToolError("confirm_action", token)["code"], "approval_pending");

  Edit(*c, contact, "Edited");
  json stale = c->CallToolError("confirm_action", token);
  EXPECT_NE(stale["details"]["preview"].dump().find("Edited"), std::string::npos) << stale.dump();
  ExpectFreshPreviewThatCompletes(*c, stale, preview["approval_url"], token, contact);
}

TEST_P(StaleUnderApproval, AfterThePageRefusedTheAssistantIsGivenAFreshPreview) {
  auto c = Assistant(GetParam());
  int64_t contact = AddContact("refused@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {contact}}});
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  std::string url = preview["approval_url"];
  auto alice = Person("alice@example.com");
  auto form = alice->Get(url).form();
  ASSERT_TRUE(form);

  Edit(*c, contact, "Moved");  // while the page is open
  form->Set("decision", "approve");
  Page refused = alice->Submit(*form);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_NE(refused.body.find("nothing was approved"), std::string::npos) << refused.body;
  EXPECT_EQ(Count("SELECT COUNT(*) FROM audit_log WHERE action = 'approve_action'"), 0);

  json stale = c->CallToolError("confirm_action", token);
  ExpectFreshPreviewThatCompletes(*c, stale, url, token, contact);
}

// Clients that show the approval page themselves (2026-07-28 input_required with URL-mode
// elicitation; 2025-11-25 URLElicitationRequiredError) keep retrying the same call: a
// preview gone stale between retries ends the retries with stale_preview.
TEST_P(StaleUnderApproval, RetriesThroughUrlElicitationEndWithStalePreview) {
  const Era era = GetParam();
  auto c = Assistant(era, kUrlElicitation);
  int64_t contact = AddContact("retry@example.com");
  json preview = c->CallToolOk("delete_contacts", {{"ids", {contact}}});
  json token = {{"confirmation_token", preview["confirmation_token"]}};
  auto first = c->CallTool("confirm_action", token);
  ASSERT_EQ(first.status, 200) << first.raw;
  if (era == Era::kModern) {
    ASSERT_EQ(first.result()["resultType"], "input_required") << first.raw;
  } else {
    ASSERT_EQ(first.error()["code"], -32042) << first.raw;
  }

  Edit(*c, contact, "Retried");
  auto retry = era == Era::kModern ? c->CallToolRetry("confirm_action", token,
                                                      {{"approval", {{"action", "accept"}}}},
                                                      first.result()["requestState"])
                                   : c->CallTool("confirm_action", token);
  ASSERT_TRUE(retry.is_tool_error()) << retry.raw;
  ExpectFreshPreviewThatCompletes(*c, retry.structured()["error"], preview["approval_url"], token,
                                  contact, /*url_elicitation=*/true);
}

INSTANTIATE_TEST_SUITE_P(Generations, StaleUnderApproval,
                         ::testing::Values(Era::kSession, Era::kModern),
                         [](const auto& info) { return EraName(info.param); });

}  // namespace
}  // namespace crmd::testing
