// Human approval (TOOLS.md "Confirmation" 5) at the service level: the policy, the
// approval bound to the preview, the person's decision and the audit log.
#include <gtest/gtest.h>

#include "src/governance/approval_policy.h"
#include "src/governance/audit.h"
#include "src/governance/confirmations.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using testing::CrmFixture;

const std::set<std::string> kScopes = {"contacts:delete", "lists:delete", "tags:delete"};
constexpr bool kAdministrator = true;  // the deciding person is an administrator

class Approvals : public CrmFixture {
 protected:
  // alice's subject is the person who may decide.
  governance::Actor person{.kind = "user", .subject = "user-alice", .request_id = "web"};
  governance::Actor other_person{.kind = "user", .subject = "user-bob", .request_id = "web"};

  json Preview(std::vector<int64_t> ids) {
    auto r = s->governance.confirmations->Request(alice, "delete_contacts", {{"ids", ids}});
    EXPECT_TRUE(r.result) << (r.result ? "" : r.result.error().message);
    return r.result ? *r.result : json();
  }
};

TEST(ApprovalPolicy, DefaultReservesEveryConfirmableActionForThePerson) {
  json p = governance::DefaultApprovalPolicy();
  for (const auto& a : governance::ApprovableActions())
    EXPECT_TRUE(governance::NeedsPerson(p, a, json::object())) << a;
  EXPECT_EQ(governance::ApprovableActions().size(), 8u);
}

TEST(ApprovalPolicy, ThresholdComparesWithThePreviewCount) {
  json p = {{"require_person", {"delete_contacts"}},
            {"thresholds", {{"delete_contacts", {{"assistant_may_confirm_up_to", 5}}}}}};
  EXPECT_FALSE(governance::NeedsPerson(p, "delete_contacts", {{"count", 5}}));
  EXPECT_TRUE(governance::NeedsPerson(p, "delete_contacts", {{"count", 6}}));
  EXPECT_TRUE(
      governance::NeedsPerson(p, "delete_contacts", json::object()));       // no count: the person
  EXPECT_FALSE(governance::NeedsPerson(p, "delete_list", json::object()));  // not listed
}

TEST(ApprovalPolicy, ValidationNamesTheField) {
  EXPECT_FALSE(governance::ValidateApprovalPolicy({{"require_person", {"drop_database"}}}));
  EXPECT_FALSE(governance::ValidateApprovalPolicy({{"thresholds", {{"delete_contacts", 5}}}}));
  EXPECT_FALSE(governance::ValidateApprovalPolicy(
      {{"thresholds", {{"delete_contacts", {{"assistant_may_confirm_up_to", 101}}}}}}));
  EXPECT_FALSE(governance::ValidateApprovalPolicy({{"other", 1}}));
  auto st = governance::ValidateApprovalPolicy({{"require_person", {"delete_list", 3}}});
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("approval_policy.require_person.1"), std::string::npos);
  EXPECT_TRUE(governance::ValidateApprovalPolicy(governance::DefaultApprovalPolicy()));
}

TEST_F(Approvals, AssistantCannotChangeThePolicyButTheOperatorCan) {
  auto cur = s->governance.settings->Get();
  auto refused = s->governance.settings->Update(
      alice, cur->revision, {{"approval_policy", {{"require_person", json::array()}}}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("crmctl"), std::string::npos);
  EXPECT_EQ(s->governance.settings->Get()->document["approval_policy"],
            governance::DefaultApprovalPolicy());
  AssistantMayConfirmAlone();
  EXPECT_EQ(s->governance.settings->Get()->document["approval_policy"]["require_person"],
            json::array());
}

TEST_F(Approvals, DefaultPolicyPendsUntilThePersonApprovesThenRunsOnce) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  ASSERT_EQ(preview["approval_required"], true);
  std::string token = preview["confirmation_token"];
  std::string id = preview["approval"]["id"];
  EXPECT_EQ(preview["approval_url"], "/console/approvals/" + id);  // no base set here

  auto pending = s->governance.confirmations->Confirm(alice, kScopes, token);
  ASSERT_FALSE(pending.result);
  EXPECT_EQ(pending.result.error().code, Errc::kApprovalPending);
  EXPECT_EQ(pending.error_details["approval_id"], id);
  EXPECT_TRUE(s->contacts->Get(c.id));

  auto info = s->governance.confirmations->GetApproval(id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, "pending");
  EXPECT_EQ(info->preview["count"], 1);
  ASSERT_EQ(s->governance.confirmations->PendingApprovals("user-alice")->size(), 1u);
  EXPECT_TRUE(s->governance.confirmations->PendingApprovals("user-bob")->empty());

  ASSERT_TRUE(s->governance.confirmations->Decide(id, person, true, kAdministrator));
  auto done = s->governance.confirmations->Confirm(alice, kScopes, token);
  ASSERT_TRUE(done.result) << done.result.error().message;
  EXPECT_FALSE(s->contacts->Get(c.id));
  auto again = s->governance.confirmations->Confirm(alice, kScopes, token);
  ASSERT_FALSE(again.result);
  EXPECT_EQ(again.result.error().code, Errc::kConfirmationInvalid);
  EXPECT_EQ(s->governance.confirmations->GetApproval(id)->status, "used");

  auto rows = db->Read([&](store::Conn& conn) { return s->governance.audit->Recent(conn, 10); });
  ASSERT_TRUE(rows);
  bool approved = false;
  for (const auto& r : *rows)
    if (r.entry.action == "approve_action" && r.actor.subject == "user-alice" &&
        r.actor.kind == "user")
      approved = true;
  EXPECT_TRUE(approved);
}

TEST_F(Approvals, DenyIsFinal) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  std::string id = preview["approval"]["id"];
  ASSERT_TRUE(s->governance.confirmations->Decide(id, person, false));
  auto r = s->governance.confirmations->Confirm(alice, kScopes, preview["confirmation_token"]);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kApprovalDenied);
  EXPECT_FALSE(s->governance.confirmations->Decide(id, person, true, kAdministrator));
  EXPECT_TRUE(s->contacts->Get(c.id));
}

TEST_F(Approvals, AnotherPersonCannotDecide) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  auto st = s->governance.confirmations->Decide(preview["approval"]["id"], other_person, true);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::kPermissionDenied);
  EXPECT_EQ(s->governance.confirmations->Confirm(alice, kScopes, preview["confirmation_token"])
                .result.error()
                .code,
            Errc::kApprovalPending);
}

// A person who is no administrator cannot approve their own assistant's action under the
// default policy (approved_by "administrator"), may still deny it, and an administrator
// decides it for them.
TEST_F(Approvals, AnEditorsOwnActionNeedsAnAdministrator) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  std::string id = preview["approval"]["id"];
  auto own = s->governance.confirmations->Decide(id, person, true);
  ASSERT_FALSE(own);
  EXPECT_EQ(own.error().code, Errc::kPermissionDenied);
  EXPECT_EQ(s->governance.confirmations->GetApproval(id)->status, "pending");
  // The administrator sees it among the pending approvals and approves it.
  auto all = s->governance.confirmations->PendingApprovals("user-bob", kAdministrator);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].subject, "user-alice");
  ASSERT_TRUE(s->governance.confirmations->Decide(id, other_person, true, kAdministrator));
  auto done = s->governance.confirmations->Confirm(alice, kScopes, preview["confirmation_token"]);
  ASSERT_TRUE(done.result) << done.result.error().message;
  EXPECT_FALSE(s->contacts->Get(c.id));
  // Denying one's own request needs no administrator.
  Contact d = MakeContact("d@example.com");
  json second = Preview({d.id});
  EXPECT_TRUE(s->governance.confirmations->Decide(second["approval"]["id"], person, false));
}

TEST_F(Approvals, PolicyMayLetPeopleApproveTheirOwnActions) {
  SetApprovalPolicy({{"require_person", {"delete_contacts"}}, {"approved_by", "person"}});
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  EXPECT_TRUE(s->governance.confirmations->Decide(preview["approval"]["id"], person, true));
  // Still nobody else's.
  Contact d = MakeContact("d@example.com");
  json second = Preview({d.id});
  auto st = s->governance.confirmations->Decide(second["approval"]["id"], other_person, true);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::kPermissionDenied);
  EXPECT_FALSE(governance::ValidateApprovalPolicy({{"approved_by", "anyone"}}));
}

TEST_F(Approvals, ExpiresWithThePreview) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  clock.Advance(601);
  auto st =
      s->governance.confirmations->Decide(preview["approval"]["id"], person, true, kAdministrator);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::kConfirmationExpired);
  EXPECT_EQ(s->governance.confirmations->GetApproval(preview["approval"]["id"])->status, "expired");
}

TEST_F(Approvals, StalePreviewAfterApprovalIsStillRefused) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  ASSERT_TRUE(
      s->governance.confirmations->Decide(preview["approval"]["id"], person, true, kAdministrator));
  ContactInput patch;
  patch.first_name = "Changed";
  ASSERT_TRUE(s->contacts->Update(alice, c.id, c.revision, patch));
  auto r = s->governance.confirmations->Confirm(alice, kScopes, preview["confirmation_token"]);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kStalePreview);
  EXPECT_TRUE(s->contacts->Get(c.id));
  // The fresh preview needs the person again.
  ASSERT_TRUE(r.error_details.contains("approval"));
  auto fresh =
      s->governance.confirmations->Confirm(alice, kScopes, r.error_details["confirmation_token"]);
  EXPECT_EQ(fresh.result.error().code, Errc::kApprovalPending);
}

TEST_F(Approvals, ApprovingAfterTheRecordsChangedApprovesNothing) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  ContactInput patch;
  patch.first_name = "Changed";
  ASSERT_TRUE(s->contacts->Update(alice, c.id, c.revision, patch));
  auto st =
      s->governance.confirmations->Decide(preview["approval"]["id"], person, true, kAdministrator);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::kStalePreview);
  EXPECT_EQ(s->governance.confirmations->GetApproval(preview["approval"]["id"])->status, "pending");
  // The assistant is told at its next confirm (rule 2 first): stale_preview with a fresh
  // preview, token and approval; the refused approval is replaced.
  auto r = s->governance.confirmations->Confirm(alice, kScopes, preview["confirmation_token"]);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kStalePreview);
  ASSERT_TRUE(r.error_details.contains("approval")) << r.error_details.dump();
  EXPECT_NE(r.error_details["approval"]["id"], preview["approval"]["id"]);
  EXPECT_EQ(s->governance.confirmations->GetApproval(preview["approval"]["id"])->status,
            "superseded");
  EXPECT_EQ(r.error_details["preview"]["contacts"][0]["first_name"], "Changed");
}

// Before anyone approved, a stale preview is stale_preview, not approval_pending: the
// person is never asked to approve what can no longer happen as shown.
TEST_F(Approvals, AStalePreviewWhileApprovalIsPendingIsStalePreview) {
  Contact c = MakeContact("a@example.com");
  json preview = Preview({c.id});
  std::string token = preview["confirmation_token"];
  EXPECT_EQ(s->governance.confirmations->Confirm(alice, kScopes, token).result.error().code,
            Errc::kApprovalPending);
  ContactInput patch;
  patch.first_name = "Changed";
  ASSERT_TRUE(s->contacts->Update(alice, c.id, c.revision, patch));
  auto r = s->governance.confirmations->Confirm(alice, kScopes, token);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kStalePreview);
  ASSERT_TRUE(r.error_details["confirmation_token"].is_string()) << r.error_details.dump();
  std::string fresh_id = r.error_details["approval"]["id"];
  EXPECT_EQ(s->governance.confirmations->Confirm(alice, kScopes, token).result.error().code,
            Errc::kConfirmationInvalid);
  auto fresh_token = r.error_details["confirmation_token"].get<std::string>();
  EXPECT_EQ(s->governance.confirmations->Confirm(alice, kScopes, fresh_token).result.error().code,
            Errc::kApprovalPending);
  ASSERT_TRUE(s->governance.confirmations->Decide(fresh_id, person, true, kAdministrator));
  EXPECT_TRUE(s->governance.confirmations->Confirm(alice, kScopes, fresh_token).result);
  EXPECT_FALSE(s->contacts->Get(c.id));
}

TEST_F(Approvals, ThresholdLetsTheAssistantConfirmASmallDeletion) {
  SetApprovalPolicy({{"thresholds", {{"delete_contacts", {{"assistant_may_confirm_up_to", 2}}}}}});
  Contact a = MakeContact("a@example.com");
  Contact b = MakeContact("b@example.com");
  Contact c = MakeContact("c@example.com");
  json small = Preview({a.id, b.id});
  EXPECT_EQ(small["approval_required"], false);
  EXPECT_TRUE(
      s->governance.confirmations->Confirm(alice, kScopes, small["confirmation_token"]).result);
  json large = Preview({c.id, MakeContact("d@example.com").id, MakeContact("e@example.com").id});
  EXPECT_EQ(large["approval_required"], true);
}

}  // namespace
}  // namespace crmd::crm
