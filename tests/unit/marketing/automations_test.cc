#include "src/marketing/automations.h"

#include <gtest/gtest.h>

#include "src/marketing/automation_steps.h"
#include "src/marketing/sequences.h"
#include "src/marketing/usage.h"
#include "tests/unit/marketing/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

TEST(StepCatalogue, AcceptsEveryStepTypeWithItsParams) {
  json steps = json::array({
      {{"type", "wait"}, {"days", 2}},
      {{"type", "wait"}, {"seconds", 60}},
      {{"type", "add_tag"}, {"tag_id", 1}},
      {{"type", "remove_tag"}, {"tag_id", 1}},
      {{"type", "add_list"}, {"list_id", 2}},
      {{"type", "remove_list"}, {"list_id", 2}},
      {{"type", "set_status"}, {"status", "unsubscribed"}},
      {{"type", "send_email"}, {"subject", "Hi"}, {"text_body", "Hello"}},
      {{"type", "call_webhook"}, {"url", "https://hooks.example.com/x"}},
  });
  auto ok = marketing::ValidateSteps(steps);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->size(), 9u);
}

TEST(StepCatalogue, ErrorsNameTheStepAndField) {
  struct Case {
    json step;
    std::string field;
  } cases[] = {
      {{{"type", "teleport"}}, "steps[0].type"},
      {{{"type", "wait"}}, "steps[0]"},
      {{{"type", "wait"}, {"days", 1}, {"seconds", 5}}, "steps[0]"},
      {{{"type", "wait"}, {"days", 400}}, "steps[0].days"},
      {{{"type", "add_tag"}}, "steps[0].tag_id"},
      {{{"type", "add_tag"}, {"tag_id", -3}}, "steps[0].tag_id"},
      {{{"type", "add_list"}, {"tag_id", 3}}, "steps[0].tag_id"},
      {{{"type", "set_status"}, {"status", "vip"}}, "steps[0].status"},
      {{{"type", "send_email"}, {"subject", "x"}}, "steps[0]"},
      {{{"type", "call_webhook"}, {"url", "ftp://x"}}, "steps[0].url"},
  };
  for (const auto& c : cases) {
    auto r = marketing::ValidateSteps(json::array({c.step}));
    ASSERT_FALSE(r) << c.step.dump();
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(r.error().message.rfind(c.field + ":", 0), 0u) << r.error().message;
  }
  EXPECT_FALSE(marketing::ValidateSteps(json::array({{{"type", "wait"}, {"days", 1}}, "nope"})));
}

TEST(StepCatalogue, TriggersTakeTheirParams) {
  EXPECT_TRUE(marketing::ValidateTrigger({{"type", "contact_created"}}));
  EXPECT_TRUE(marketing::ValidateTrigger({{"type", "tag_added"}, {"tag_id", 4}}));
  EXPECT_TRUE(marketing::ValidateTrigger({{"type", "form_submitted"}}));
  EXPECT_TRUE(marketing::ValidateTrigger({{"type", "status_changed"}, {"status", "subscribed"}}));
  EXPECT_FALSE(marketing::ValidateTrigger({{"type", "tag_added"}}));
  EXPECT_FALSE(marketing::ValidateTrigger({{"type", "contact_created"}, {"tag_id", 1}}));
  EXPECT_FALSE(marketing::ValidateTrigger({{"type", "birthday"}}));
  auto refs = marketing::CollectRefs(
      {{"type", "list_added"}, {"list_id", 3}},
      json::array({{{"type", "add_tag"}, {"tag_id", 5}}, {{"type", "add_list"}, {"list_id", 3}}}));
  EXPECT_EQ(refs.size(), 3u);
}

class AutomationServiceTest : public testing::MarketingDb {
 protected:
  void SetUp() override {
    MarketingDb::SetUp();
    svc_ = std::make_unique<marketing::AutomationService>(*db_, clock_);
    welcome_ = AddTag("welcome");
    list_ = AddList("onboarding");
    x_ = AddContact("x@example.com");
    y_ = AddContact("y@example.com", "unsubscribed");
    AddContact("z@example.com");
    Tagged(x_, welcome_);
    Tagged(y_, welcome_);
  }
  json Fields() {
    return {{"name", "Welcome"},
            {"trigger", {{"type", "tag_added"}, {"tag_id", welcome_}}},
            {"steps", json::array({{{"type", "wait"}, {"days", 1}},
                                   {{"type", "add_list"}, {"list_id", list_}}})}};
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
  std::unique_ptr<marketing::AutomationService> svc_;
  int64_t welcome_, list_, x_, y_;
};

TEST_F(AutomationServiceTest, CreateRefusesAMissingTagInAStep) {
  json f = Fields();
  f["steps"].push_back({{"type", "remove_tag"}, {"tag_id", 777}});
  auto a = svc_->Create(actor_, f);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("777"), std::string::npos);
}

TEST_F(AutomationServiceTest, ActivationPreviewShowsWhoWouldEnrolAndConfirmEnrolsThem) {
  auto a = svc_->Create(actor_, Fields());
  ASSERT_TRUE(a) << a.error().message;
  auto p = PreviewActivate(a->id);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->preview["enrol_now"]["count"], 2);
  EXPECT_EQ(p->preview["steps"].size(), 2u);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 0);
  auto done = Activate(a->id);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)["enrolled"], 2);
  EXPECT_EQ(svc_->Get(a->id)->status, marketing::AutomationStatus::kActive);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE automation_id = ?", {a->id}), 2);
}

TEST_F(AutomationServiceTest, EventTriggerEnrolsNobodyNow) {
  json f = Fields();
  f["trigger"] = {{"type", "contact_created"}};
  auto a = svc_->Create(actor_, f);
  auto p = PreviewActivate(a->id);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->preview["enrol_now"]["count"], 0);
}

TEST_F(AutomationServiceTest, EditOfAnActiveAutomationAppliesToNewEnrolmentsOnly) {
  auto a = svc_->Create(actor_, Fields());
  ASSERT_TRUE(Activate(a->id));
  const std::string before =
      json::array({{{"type", "wait"}, {"days", 1}}, {{"type", "add_list"}, {"list_id", list_}}})
          .dump();
  auto edit = svc_->Update(actor_, a->id, 2,
                           {{"steps", json::array({{{"type", "wait"}, {"seconds", 5}}})}});
  ASSERT_TRUE(edit) << edit.error().message;
  EXPECT_EQ(edit->status, marketing::AutomationStatus::kActive);
  EXPECT_EQ(edit->steps.size(), 1u);
  // The runs enrolled at activation keep the steps they started with.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE automation_id = ? AND steps = ?",
                  {a->id, before}),
            2);
  auto empty = svc_->Update(actor_, a->id, 3, {{"steps", json::array()}});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, Errc::kInvalidArgument);
}

TEST_F(AutomationServiceTest, ActiveAutomationCannotBeDeletedAndDeactivationCancelsItsRuns) {
  auto a = svc_->Create(actor_, Fields());
  ASSERT_TRUE(Activate(a->id));
  auto del = PreviewDelete(a->id);
  ASSERT_TRUE(del);
  ASSERT_EQ(del->blockers.size(), 1u);
  EXPECT_EQ(Delete(a->id).error().code, Errc::kDependencyBlocked);
  auto off = svc_->Deactivate(actor_, a->id, 0);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->status, marketing::AutomationStatus::kInactive);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'cancelled'"), 2);
  EXPECT_EQ(Count("SELECT cancelled FROM automation_stats WHERE automation_id = ?", {a->id}), 2);
  del = PreviewDelete(a->id);
  ASSERT_TRUE(del) << del.error().message;
  EXPECT_TRUE(del->blockers.empty());
  EXPECT_EQ(del->preview["enrolled_contacts"]["total"], 2);
  EXPECT_EQ(del->preview["enrolled_contacts"]["sample"].size(), 2u);
  ASSERT_TRUE(Delete(a->id));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_refs"), 0);
}

TEST_F(AutomationServiceTest, UsageBlocksOnlyForActiveAutomationsAndLiveCampaigns) {
  auto a = svc_->Create(actor_, Fields());
  auto uses =
      db_->Read([&](store::Conn& c) { return marketing::FindMarketingUses(c, "tag", welcome_); });
  ASSERT_TRUE(uses);
  ASSERT_EQ(uses->size(), 1u);
  EXPECT_EQ((*uses)[0].role, "trigger");
  EXPECT_FALSE((*uses)[0].blocking);
  ASSERT_TRUE(Activate(a->id));
  uses = db_->Read([&](store::Conn& c) { return marketing::FindMarketingUses(c, "list", list_); });
  ASSERT_EQ(uses->size(), 1u);
  EXPECT_EQ((*uses)[0].role, "step");
  EXPECT_TRUE((*uses)[0].blocking);
  // A campaign that excludes the list blocks only once scheduled or sending.
  Exec("INSERT INTO campaigns (name, status, created_at, updated_at) VALUES ('c', 'draft', 0, 0)",
       {});
  int64_t cid = Count("SELECT MAX(id) FROM campaigns");
  Exec(
      "INSERT INTO campaign_audience (campaign_id, kind, ref_id, mode) VALUES (?, 'list', ?, "
      "'exclude')",
      {cid, list_});
  ASSERT_TRUE(svc_->Deactivate(actor_, a->id, 0));
  uses = db_->Read([&](store::Conn& c) { return marketing::FindMarketingUses(c, "list", list_); });
  ASSERT_EQ(uses->size(), 2u);
  EXPECT_EQ((*uses)[0].kind, "campaign");
  EXPECT_EQ((*uses)[0].role, "exclusion");
  EXPECT_FALSE((*uses)[0].blocking);
  EXPECT_FALSE((*uses)[1].blocking);
  Exec("UPDATE campaigns SET status = 'scheduled' WHERE id = ?", {cid});
  uses = db_->Read([&](store::Conn& c) { return marketing::FindMarketingUses(c, "list", list_); });
  EXPECT_TRUE((*uses)[0].blocking);
}

TEST(SequenceRules, StatusMovesAndEmailValidation) {
  using Q = marketing::SequenceStatus;
  EXPECT_TRUE(marketing::CanTransition(Q::kDraft, Q::kActive));
  EXPECT_TRUE(marketing::CanTransition(Q::kActive, Q::kPaused));
  EXPECT_TRUE(marketing::CanTransition(Q::kPaused, Q::kActive));
  EXPECT_FALSE(marketing::CanTransition(Q::kActive, Q::kDraft));
  EXPECT_FALSE(marketing::CanTransition(Q::kDraft, Q::kPaused));
  auto ok = marketing::ValidateSequenceEmails(
      json::array({{{"subject", "1"}, {"text_body", "a"}, {"delay_days", 2}}}));
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)[0]["delay_seconds"], 2 * 86400);
  auto bad = marketing::ValidateSequenceEmails(
      json::array({{{"subject", "1"}, {"text_body", "a"}}, {{"subject", ""}}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("emails[1].subject", 0), 0u);
}

class SequenceServiceTest : public testing::MarketingDb {};

TEST_F(SequenceServiceTest, ActivateNeedsAnEmailAndEditingNeedsPause) {
  marketing::SequenceService svc(*db_, clock_);
  auto s = svc.Create(actor_, {{"name", "Drip"}});
  ASSERT_TRUE(s);
  auto act = svc.SetStatus(actor_, s->id, marketing::SequenceStatus::kActive, 0);
  ASSERT_FALSE(act);
  auto upd =
      svc.Update(actor_, s->id, 1,
                 {{"emails", json::array({{{"subject", "Day 1"}, {"html_body", "<p>1</p>"}}})}});
  ASSERT_TRUE(upd) << upd.error().message;
  act = svc.SetStatus(actor_, s->id, marketing::SequenceStatus::kActive, upd->revision);
  ASSERT_TRUE(act) << act.error().message;
  auto locked = svc.Update(actor_, s->id, act->revision, {{"name", "x"}});
  ASSERT_FALSE(locked);
  EXPECT_EQ(locked.error().code, Errc::kInvalidTransition);
  auto stale = svc.SetStatus(actor_, s->id, marketing::SequenceStatus::kPaused, 1);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, Errc::kRevisionConflict);
}

}  // namespace
}  // namespace crmd::crm
