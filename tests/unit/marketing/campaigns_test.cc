#include "src/marketing/campaigns.h"

#include <gtest/gtest.h>

#include "src/marketing/campaigns_repo.h"
#include "tests/unit/marketing/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;
using S = marketing::CampaignStatus;

TEST(CampaignStatusMachine, DraftAndPausedActivateToScheduledOrSending) {
  for (S from : {S::kDraft, S::kPaused}) {
    EXPECT_TRUE(marketing::CanTransition(from, S::kScheduled));
    EXPECT_TRUE(marketing::CanTransition(from, S::kSending));
    EXPECT_FALSE(marketing::CanTransition(from, S::kSent));
  }
  EXPECT_FALSE(marketing::CanTransition(S::kDraft, S::kPaused));
  EXPECT_TRUE(marketing::CanTransition(S::kPaused, S::kCancelled));
}

TEST(CampaignStatusMachine, ScheduledAndSendingCanPauseButSentAndCancelledAreFinal) {
  EXPECT_TRUE(marketing::CanTransition(S::kScheduled, S::kPaused));
  EXPECT_TRUE(marketing::CanTransition(S::kSending, S::kPaused));
  EXPECT_TRUE(marketing::CanTransition(S::kSending, S::kSent));
  EXPECT_FALSE(marketing::CanTransition(S::kScheduled, S::kDraft));
  for (S to : {S::kDraft, S::kScheduled, S::kSending, S::kSent, S::kPaused, S::kCancelled}) {
    EXPECT_FALSE(marketing::CanTransition(S::kSent, to));
    EXPECT_FALSE(marketing::CanTransition(S::kCancelled, to));
  }
}

TEST(CampaignStatusMachine, OnlyDraftAndPausedAreEditableAndSendingCannotBeDeleted) {
  EXPECT_TRUE(marketing::IsEditable(S::kDraft));
  EXPECT_TRUE(marketing::IsEditable(S::kPaused));
  EXPECT_FALSE(marketing::IsEditable(S::kScheduled));
  EXPECT_FALSE(marketing::IsEditable(S::kSending));
  EXPECT_FALSE(marketing::CanDelete(S::kSending));
  EXPECT_TRUE(marketing::CanDelete(S::kScheduled));
  EXPECT_EQ(marketing::ParseCampaignStatus("paused"), S::kPaused);
  EXPECT_EQ(marketing::ParseCampaignStatus("bogus"), std::nullopt);
}

TEST(CampaignFields, RejectsBadSendAtAndSenderNamingTheField) {
  marketing::Campaign c;
  auto st = marketing::ApplyCampaignFields({{"name", "x"}, {"send_at", "tomorrow"}}, c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("send_at"), std::string::npos);
  st = marketing::ApplyCampaignFields({{"name", "x"}, {"from_email", "nobody"}}, c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("from_email"), std::string::npos);
  ASSERT_TRUE(
      marketing::ApplyCampaignFields({{"name", "x"}, {"send_at", "2026-12-01T10:00:00+01:00"}}, c));
  EXPECT_EQ(c.send_at, marketing::ParseRfc3339("2026-12-01T09:00:00Z"));
}

class CampaignServiceTest : public testing::MarketingDb {
 protected:
  void SetUp() override {
    MarketingDb::SetUp();
    svc_ = std::make_unique<marketing::CampaignService>(*db_, clock_);
    news_ = AddList("newsletter");
    vip_ = AddList("vip");
    promo_ = AddTag("promo");
    bounced_tag_ = AddTag("do-not-mail");
    // a: newsletter; b: newsletter + do-not-mail; c: promo tag only; d: newsletter + vip;
    // e: newsletter but unsubscribed; f: nothing.
    a_ = AddContact("a@example.com");
    b_ = AddContact("b@example.com");
    c_ = AddContact("c@example.com");
    d_ = AddContact("d@example.com");
    e_ = AddContact("e@example.com", "unsubscribed");
    AddContact("f@example.com");
    InList(a_, news_);
    InList(b_, news_);
    Tagged(b_, bounced_tag_);
    Tagged(c_, promo_);
    InList(d_, news_);
    InList(d_, vip_);
    InList(e_, news_);
  }

  json Ready(json audience) {
    return {{"name", "Launch"},    {"subject", "Hello"},       {"from_email", "team@example.com"},
            {"from_name", "Team"}, {"html_body", "<p>Hi</p>"}, {"audience", std::move(audience)}};
  }

  Result<governance::Preview> PreviewActivate(int64_t id) {
    return db_->Read([&](store::Conn& c) { return svc_->PreviewActivate(c, id); });
  }
  Result<governance::Preview> PreviewDelete(int64_t id) {
    return db_->Read([&](store::Conn& c) { return svc_->PreviewDelete(c, id); });
  }
  Result<json> Activate(int64_t id) {
    return db_->Write([&](store::Conn& c) { return svc_->Activate(c, actor_, id); });
  }
  Result<json> Delete(int64_t id) {
    return db_->Write([&](store::Conn& c) { return svc_->Delete(c, actor_, id); });
  }

  std::unique_ptr<marketing::CampaignService> svc_;
  int64_t news_, vip_, promo_, bounced_tag_, a_, b_, c_, d_, e_;
};

TEST_F(CampaignServiceTest, AudienceIsSubscribedMembersOfAnyListOrTagMinusExclusions) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}},
                                       {"tags", {promo_}},
                                       {"exclude_lists", {vip_}},
                                       {"exclude_tags", {bounced_tag_}}}));
  ASSERT_TRUE(k) << k.error().message;
  auto ids = db_->Read(
      [&](store::Conn& c) { return marketing::campaigns_repo::SampleAudience(c, k->id, 100); });
  ASSERT_TRUE(ids);
  // a (list), c (tag); not b (excluded tag), d (excluded list), e (unsubscribed), f (no match).
  EXPECT_EQ(*ids, (std::vector<int64_t>{a_, c_}));
  auto n =
      db_->Read([&](store::Conn& c) { return marketing::campaigns_repo::CountAudience(c, k->id); });
  EXPECT_EQ(*n, 2);
}

TEST_F(CampaignServiceTest, ContactInTwoAudienceListsIsCountedOnce) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_, vip_}}}));
  ASSERT_TRUE(k);
  auto n =
      db_->Read([&](store::Conn& c) { return marketing::campaigns_repo::CountAudience(c, k->id); });
  EXPECT_EQ(*n, 3);  // a, b, d (e unsubscribed)
}

TEST_F(CampaignServiceTest, CreateRefusesUnknownListNamingIt) {
  auto k = svc_->Create(actor_, Ready({{"lists", {9999}}}));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, Errc::kInvalidArgument);
  EXPECT_NE(k.error().message.find("9999"), std::string::npos);
}

TEST_F(CampaignServiceTest, PreviewChangesNothingAndActivateRecordsRecipients) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}}}));
  ASSERT_TRUE(k);
  auto p = PreviewActivate(k->id);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->preview["audience_size"], 3);
  EXPECT_EQ(p->preview["new_status"], "sending");
  EXPECT_EQ(p->preview["sender"]["email"], "team@example.com");
  EXPECT_EQ(p->revisions.at("campaign:" + std::to_string(k->id)), 1);
  EXPECT_EQ(svc_->Get(k->id)->status, S::kDraft);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients"), 0);

  auto done = Activate(k->id);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)["recipients_recorded"], 3);
  auto after = svc_->Get(k->id);
  EXPECT_EQ(after->status, S::kSending);
  EXPECT_EQ(after->audience_size, 3);
  EXPECT_EQ(after->revision, 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?", {k->id}), 3);
}

TEST_F(CampaignServiceTest, FutureSendAtSchedulesInsteadOfSending) {
  json f = Ready({{"lists", {news_}}});
  f["send_at"] = FormatRfc3339(clock_.NowUnix() + 3600);
  auto k = svc_->Create(actor_, f);
  ASSERT_TRUE(k);
  auto p = PreviewActivate(k->id);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->preview["new_status"], "scheduled");
  ASSERT_TRUE(Activate(k->id));
  EXPECT_EQ(svc_->Get(k->id)->status, S::kScheduled);
}

TEST_F(CampaignServiceTest, PreviewRevisionChangesWhenTheCampaignIsEdited) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}}}));
  auto before = PreviewActivate(k->id);
  ASSERT_TRUE(svc_->Update(actor_, k->id, 1, {{"subject", "Changed"}}));
  auto after = PreviewActivate(k->id);
  ASSERT_TRUE(before && after);
  EXPECT_NE(before->revisions, after->revisions);  // what makes a confirm stale_preview
}

TEST_F(CampaignServiceTest, ActivationNeedsContentAndANonEmptyAudience) {
  auto bare = svc_->Create(actor_, {{"name", "bare"}});
  ASSERT_TRUE(bare);
  auto p = PreviewActivate(bare->id);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, Errc::kInvalidArgument);
  auto nobody = svc_->Create(actor_, Ready({{"lists", {vip_}}, {"exclude_lists", {news_}}}));
  p = PreviewActivate(nobody->id);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("0 subscribed"), std::string::npos);
}

TEST_F(CampaignServiceTest, UpdateNeedsCurrentRevisionAndAnEditableStatus) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}}}));
  auto stale = svc_->Update(actor_, k->id, 7, {{"name", "x"}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, Errc::kRevisionConflict);
  ASSERT_TRUE(Activate(k->id));
  auto locked = svc_->Update(actor_, k->id, 2, {{"name", "x"}});
  ASSERT_FALSE(locked);
  EXPECT_EQ(locked.error().code, Errc::kInvalidTransition);
  auto paused = svc_->Pause(actor_, k->id, 0);
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->status, S::kPaused);
  auto edited = svc_->Update(actor_, k->id, paused->revision, {{"name", "Relaunch"}});
  ASSERT_TRUE(edited) << edited.error().message;
  EXPECT_EQ(edited->name, "Relaunch");
}

TEST_F(CampaignServiceTest, PauseOnlyFromScheduledOrSending) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}}}));
  auto p = svc_->Pause(actor_, k->id, 0);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, Errc::kInvalidTransition);
}

TEST_F(CampaignServiceTest, DeleteIsBlockedWhileSendingAndRemovesRecipientsOtherwise) {
  auto k = svc_->Create(actor_, Ready({{"lists", {news_}}}));
  ASSERT_TRUE(Activate(k->id));
  auto blocked = PreviewDelete(k->id);
  ASSERT_TRUE(blocked);
  ASSERT_EQ(blocked->blockers.size(), 1u);
  EXPECT_EQ(blocked->blockers[0].kind, "campaign");
  auto refused = Delete(k->id);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kDependencyBlocked);
  ASSERT_TRUE(svc_->Pause(actor_, k->id, 0));
  auto preview = PreviewDelete(k->id);
  ASSERT_TRUE(preview);
  EXPECT_TRUE(preview->blockers.empty());
  EXPECT_EQ(preview->preview["recipients_deleted"], 3);
  ASSERT_TRUE(Delete(k->id));
  EXPECT_EQ(svc_->Get(k->id).error().code, Errc::kNotFound);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_recipients"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM campaign_audience"), 0);
}

TEST_F(CampaignServiceTest, ListPaginatesWithAnOpaqueCursor) {
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(svc_->Create(actor_, {{"name", "c" + std::to_string(i)}}));
  auto p1 = svc_->List(std::nullopt, "", 2);
  ASSERT_TRUE(p1);
  ASSERT_EQ(p1->items.size(), 2u);
  ASSERT_TRUE(p1->next_cursor);
  auto p2 = svc_->List(std::nullopt, *p1->next_cursor, 2);
  auto p3 = svc_->List(std::nullopt, *p2->next_cursor, 2);
  EXPECT_EQ(p2->items.front().name, "c2");
  EXPECT_EQ(p3->items.size(), 1u);
  EXPECT_FALSE(p3->next_cursor);
  EXPECT_FALSE(svc_->List(std::nullopt, "garbage!", 2));
}

}  // namespace
}  // namespace crmd::crm
