#include "src/governance/confirmations.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using testing::CrmFixture;

const std::set<std::string> kDeleteScopes = {"contacts:delete", "lists:delete", "tags:delete"};

class Confirmations : public CrmFixture {
 protected:
  // These tests are about the token rules; human approval has its own suite below.
  void SetUp() override {
    CrmFixture::SetUp();
    AssistantMayConfirmAlone();
  }
  std::string PreviewDelete(const governance::Actor& who, std::vector<int64_t> ids) {
    auto r = s->governance.confirmations->Request(who, "delete_contacts", {{"ids", ids}});
    EXPECT_TRUE(r.result) << (r.result ? "" : r.result.error().message);
    if (!r.result) return "";
    EXPECT_EQ((*r.result)["status"], "confirmation_required");
    return (*r.result)["confirmation_token"];
  }
};

TEST_F(Confirmations, PreviewChangesNothingAndConfirmDeletesOnce) {
  Contact c = MakeContact("a@example.com");
  int64_t last = LastEventId();
  std::string token = PreviewDelete(alice, {c.id});
  EXPECT_TRUE(s->contacts->Get(c.id));
  EXPECT_TRUE(Events(last).empty());
  auto done = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
  ASSERT_TRUE(done.result) << done.result.error().message;
  EXPECT_EQ((*done.result)["result"]["deleted_count"], 1);
  EXPECT_FALSE(s->contacts->Get(c.id));
  auto replay = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
  ASSERT_FALSE(replay.result);
  EXPECT_EQ(replay.result.error().code, Errc::kConfirmationInvalid);
}

TEST_F(Confirmations, UnknownTokenIsInvalid) {
  auto r = s->governance.confirmations->Confirm(alice, kDeleteScopes, "no-such-token");
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kConfirmationInvalid);
}

TEST_F(Confirmations, BoundToClientAndSubject) {
  Contact c = MakeContact("a@example.com");
  std::string token = PreviewDelete(alice, {c.id});
  auto by_other_client = s->governance.confirmations->Confirm(other_client, kDeleteScopes, token);
  ASSERT_FALSE(by_other_client.result);
  EXPECT_EQ(by_other_client.result.error().code, Errc::kConfirmationInvalid);
  auto by_other_user = s->governance.confirmations->Confirm(bob, kDeleteScopes, token);
  ASSERT_FALSE(by_other_user.result);
  EXPECT_EQ(by_other_user.result.error().code, Errc::kConfirmationInvalid);
  EXPECT_TRUE(s->contacts->Get(c.id));
  EXPECT_TRUE(s->governance.confirmations->Confirm(alice, kDeleteScopes, token).result);
}

TEST_F(Confirmations, ExpiresAfterTheSettingsTtl) {
  Contact c = MakeContact("a@example.com");
  std::string token = PreviewDelete(alice, {c.id});
  clock.Advance(601);
  auto r = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kConfirmationExpired);
  EXPECT_TRUE(s->contacts->Get(c.id));
}

TEST_F(Confirmations, TtlComesFromSettings) {
  auto st = s->governance.settings->Get();
  ASSERT_TRUE(
      s->governance.settings->Update(alice, st->revision, {{"confirmation_ttl_seconds", 60}}));
  Contact c = MakeContact("a@example.com");
  auto r = s->governance.confirmations->Request(alice, "delete_contacts", {{"ids", {c.id}}});
  ASSERT_TRUE(r.result);
  EXPECT_EQ((*r.result)["expires_in"], 60);
}

TEST_F(Confirmations, LackingTheActionsScopeIsPermissionDeniedNamingIt) {
  Contact c = MakeContact("a@example.com");
  std::string token = PreviewDelete(alice, {c.id});
  auto r = s->governance.confirmations->Confirm(alice, {"contacts:read", "contacts:write"}, token);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kPermissionDenied);
  EXPECT_EQ(r.error_details["required_scope"], "contacts:delete");
  EXPECT_TRUE(
      s->governance.confirmations->Confirm(alice, kDeleteScopes, token).result);  // still usable
}

TEST_F(Confirmations, ChangedRevisionIsStaleWithFreshPreviewAndToken) {
  Contact c = MakeContact("a@example.com");
  std::string token = PreviewDelete(alice, {c.id});
  ContactInput in;
  in.first_name = "Changed";
  ASSERT_TRUE(s->contacts->Update(bob, c.id, c.revision, in));
  auto r = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kStalePreview);
  ASSERT_TRUE(r.error_details.contains("confirmation_token"));
  EXPECT_EQ(r.error_details["preview"]["contacts"][0]["first_name"], "Changed");
  EXPECT_TRUE(s->contacts->Get(c.id));
  // The old token is spent; the fresh one works.
  EXPECT_FALSE(s->governance.confirmations->Confirm(alice, kDeleteScopes, token).result);
  auto fresh = s->governance.confirmations->Confirm(
      alice, kDeleteScopes, r.error_details["confirmation_token"].get<std::string>());
  EXPECT_TRUE(fresh.result);
  EXPECT_FALSE(s->contacts->Get(c.id));
}

TEST_F(Confirmations, BlockingUsageRefusesPreviewAndConfirm) {
  auto list = s->lists->Create(alice, "Customers", "");
  ASSERT_TRUE(list);
  auto ok = s->governance.confirmations->Request(alice, "delete_list", {{"id", list->id}});
  ASSERT_TRUE(ok.result);
  std::string token = (*ok.result)["confirmation_token"];
  // Meanwhile an automation starts using it.
  usage.lists[list->id] = {{.kind = "automation",
                            .id = 9,
                            .name = "Welcome",
                            .status = "active",
                            .role = "trigger",
                            .blocking = true}};
  auto confirm = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
  ASSERT_FALSE(confirm.result);
  EXPECT_EQ(confirm.result.error().code, Errc::kDependencyBlocked);
  EXPECT_EQ(confirm.error_details["blockers"][0]["name"], "Welcome");
  auto preview = s->governance.confirmations->Request(alice, "delete_list", {{"id", list->id}});
  ASSERT_FALSE(preview.result);
  EXPECT_EQ(preview.result.error().code, Errc::kDependencyBlocked);
  EXPECT_TRUE(s->lists->Get(Ref{list->id}));
}

TEST_F(Confirmations, NonBlockingUsageIsShownButAllowsDeletion) {
  auto tag = s->tags->Create(alice, "vip", "");
  ASSERT_TRUE(tag);
  usage.tags[tag->id] = {{.kind = "campaign",
                          .id = 3,
                          .name = "Draft",
                          .status = "draft",
                          .role = "audience",
                          .blocking = false}};
  auto g = s->tags->Get(Ref{tag->id});
  ASSERT_TRUE(g);
  ASSERT_EQ(g->usage->size(), 1u);
  auto r = s->governance.confirmations->Request(alice, "delete_tag", {{"id", tag->id}});
  ASSERT_TRUE(r.result);
  EXPECT_TRUE(
      s->governance.confirmations->Confirm(alice, kDeleteScopes, (*r.result)["confirmation_token"])
          .result);
  EXPECT_FALSE(s->tags->Get(Ref{tag->id}));
}

TEST_F(Confirmations, ConcurrentConfirmsSucceedExactlyOnce) {
  Contact c = MakeContact("a@example.com");
  std::string token = PreviewDelete(alice, {c.id});
  std::atomic<int> successes{0}, invalid{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = s->governance.confirmations->Confirm(alice, kDeleteScopes, token);
      if (r.result)
        ++successes;
      else if (r.result.error().code == Errc::kConfirmationInvalid)
        ++invalid;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(successes.load(), 1);
  EXPECT_EQ(invalid.load(), 7);
}

TEST_F(Confirmations, PreviewOfMissingContactIsNotFound) {
  auto r = s->governance.confirmations->Request(alice, "delete_contacts", {{"ids", {12345}}});
  ASSERT_FALSE(r.result);
  EXPECT_EQ(r.result.error().code, Errc::kNotFound);
}

TEST_F(Confirmations, MarketingCanRegisterItsOwnActions) {
  int executed = 0;
  ASSERT_TRUE(s->governance.confirmations->RegisterAction(
      {.name = "delete_campaign",
       .scope = "campaigns:delete",
       .preview = [](store::Conn&, const json& args) -> Result<governance::Preview> {
         return governance::Preview{.preview = {{"campaign", args["id"]}},
                                    .revisions = {{"campaign:1", 1}}};
       },
       .execute = [&](store::Conn&, const json&, const governance::Actor&) -> Result<json> {
         ++executed;
         return json{{"deleted", true}};
       }}));
  EXPECT_FALSE(s->governance.confirmations->RegisterAction(
      {.name = "delete_campaign", .scope = "x", .preview = nullptr, .execute = nullptr}));
  auto r = s->governance.confirmations->Request(alice, "delete_campaign", {{"id", 1}});
  ASSERT_TRUE(r.result);
  auto done = s->governance.confirmations->Confirm(alice, {"campaigns:delete"},
                                                   (*r.result)["confirmation_token"]);
  ASSERT_TRUE(done.result);
  EXPECT_EQ(executed, 1);
}

}  // namespace
}  // namespace crmd::crm
