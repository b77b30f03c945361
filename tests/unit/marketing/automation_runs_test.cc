// AutomationRuns on a real SQLite database with a fake clock: triggers from the outbox
// enrol once per event (even when the cursor is replayed), a wait is a due time, database
// steps apply once in order, an email step is skipped for a contact who is no longer
// subscribed, and webhook outcomes move the run (retry, then done).
#include "src/marketing/automation_runs.h"

#include <gtest/gtest.h>

#include "src/core/random.h"
#include "src/crm/contacts.h"
#include "src/crm/services.h"
#include "src/marketing/automations.h"
#include "src/marketing/services.h"
#include "tests/support/domain.h"
#include "tests/unit/marketing/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

class AutomationRunsTest : public testing::MarketingDb {
 protected:
  void SetUp() override {
    MarketingDb::SetUp();
    auto domain = crmd::testing::MakeDomain(*db_, clock_, random_);
    ASSERT_TRUE(domain.has_value());
    domain_ = std::move(*domain);
    runs_ = std::make_unique<marketing::AutomationRuns>(
        *db_, clock_, *domain_->crm->contacts,
        marketing::RunPolicy{.lease_s = 60, .retry_base_s = 10});
    vip_ = AddTag("vip");
    done_ = AddTag("done");
  }

  int64_t Activated(const json& steps) {
    auto a = domain_->marketing->automations->Create(
        actor_,
        {{"name", "A"}, {"trigger", {{"type", "tag_added"}, {"tag_id", vip_}}}, {"steps", steps}});
    EXPECT_TRUE(a.has_value()) << a.error().message;
    auto on = db_->Write([&](store::Conn& c) {
      return domain_->marketing->automations->Activate(c, actor_, a->id);
    });
    EXPECT_TRUE(on.has_value());
    return a->id;
  }

  int64_t SignupTagged(const std::string& email) {
    ContactInput in;
    in.email = email;
    in.tags = {Ref(vip_)};
    auto k = domain_->crm->contacts->Create(actor_, in);
    EXPECT_TRUE(k.has_value()) << k.error().message;
    return k ? k->id : 0;
  }

  // RunDue until nothing moves; answers the leased steps of the last call.
  std::vector<marketing::LeasedStep> Drain() {
    std::vector<marketing::LeasedStep> leased;
    for (int i = 0; i < 20; ++i) {
      int handled = 0;
      auto r = runs_->RunDue(10, &handled);
      EXPECT_TRUE(r.has_value());
      if (!r) break;
      leased = std::move(*r);
      if (handled == 0) break;
    }
    return leased;
  }

  SecureRandom random_;
  std::unique_ptr<crmd::testing::Domain> domain_;
  std::unique_ptr<marketing::AutomationRuns> runs_;
  int64_t vip_ = 0, done_ = 0;
};

TEST_F(AutomationRunsTest, EventEnrolsOnceEvenWhenTheCursorIsReplayed) {
  Activated(json::array({{{"type", "add_tag"}, {"tag_id", done_}}}));
  clock_.Advance(1);
  SignupTagged("a@example.com");
  ASSERT_TRUE(runs_->ClaimEvents(100).has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 1);
  Exec("UPDATE outbox_cursors SET last_event_id = 0 WHERE consumer = 'automations'", {});
  ASSERT_TRUE(runs_->ClaimEvents(100).has_value());  // a crash before the cursor moved
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 1);
  EXPECT_EQ(Count("SELECT enrolled FROM automation_stats"), 1);
}

// With no active automation only list_added events are read: a contact added to an
// active sequence's list is enrolled once, and the cursor passes every other event, at
// most `limit` a claim.
TEST_F(AutomationRunsTest, WithNoActiveAutomationAListAddedEventStillEnrolsInItsSequence) {
  const int64_t drip = AddList("drip");
  auto seq = domain_->marketing->sequences->Create(
      actor_,
      {{"name", "Drip"},
       {"list_id", drip},
       {"emails", json::array({{{"subject", "S1"}, {"text_body", "one"}, {"delay_seconds", 0}}})}});
  ASSERT_TRUE(seq.has_value()) << seq.error().message;
  ASSERT_TRUE(domain_->marketing->sequences
                  ->SetStatus(actor_, seq->id, marketing::SequenceStatus::kActive, 0)
                  .has_value());
  clock_.Advance(1);
  for (int i = 0; i < 120; ++i) SignupTagged("t" + std::to_string(i) + "@example.com");
  ContactInput in;
  in.email = "ada@example.com";
  in.lists = {Ref(drip)};
  auto ada = domain_->crm->contacts->Create(actor_, in);
  ASSERT_TRUE(ada.has_value()) << ada.error().message;
  const int64_t total = Count("SELECT COUNT(*) FROM outbox_events");
  ASSERT_GT(total, 200);
  int64_t claimed = 0;
  for (int i = 0; i < 10; ++i) {
    auto n = runs_->ClaimEvents(100);
    ASSERT_TRUE(n.has_value()) << n.error().message;
    EXPECT_LE(*n, 100);
    if (*n == 0) break;
    claimed += *n;
  }
  EXPECT_EQ(claimed, total);
  EXPECT_EQ(Count("SELECT last_event_id FROM outbox_cursors WHERE consumer = 'automations'"),
            Count("SELECT MAX(id) FROM outbox_events"));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sequence_runs"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sequence_runs WHERE contact_id = ?", {ada->id}), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs"), 0);
}

TEST_F(AutomationRunsTest, WaitIsADueTimeAndDatabaseStepsApplyOnceInOrder) {
  int64_t id =
      Activated(json::array({{{"type", "wait"}, {"seconds", 3600}},
                             {{"type", "add_tag"}, {"tag_id", done_}},
                             {{"type", "set_status"}, {"status", "unsubscribed"}},
                             {{"type", "send_email"}, {"subject", "Hi"}, {"text_body", "x"}}}));
  clock_.Advance(1);
  int64_t k = SignupTagged("a@example.com");
  ASSERT_TRUE(runs_->ClaimEvents(100).has_value());
  EXPECT_TRUE(Drain().empty());
  EXPECT_EQ(Count("SELECT current_step FROM automation_runs"), 1);  // waiting
  clock_.Advance(3599);
  EXPECT_TRUE(Drain().empty());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM contact_tags WHERE tag_id = ?", {done_}), 0);
  clock_.Advance(1);
  EXPECT_TRUE(Drain().empty());  // the email is skipped: the contact unsubscribed before it
  EXPECT_EQ(
      Count("SELECT COUNT(*) FROM contact_tags WHERE tag_id = ? AND contact_id = ?", {done_, k}),
      1);
  EXPECT_EQ(domain_->crm->contacts->Get(k)->status, "unsubscribed");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'completed'"), 1);
  EXPECT_EQ(
      Count("SELECT skipped FROM automation_step_stats WHERE automation_id = ? AND step_index = 3",
            {id}),
      1);
  EXPECT_EQ(
      Count("SELECT done FROM automation_step_stats WHERE automation_id = ? AND step_index = 1",
            {id}),
      1);
  EXPECT_EQ(Count("SELECT completed FROM automation_stats WHERE automation_id = ?", {id}), 1);
  // The status change went through the status machine: its event is in the outbox.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM outbox_events WHERE event_type = 'contact.status_updated'"),
            1);
}

TEST_F(AutomationRunsTest, WebhookStepIsLeasedRetriedAndRecordedOnce) {
  Activated(json::array({{{"type", "call_webhook"}, {"url", "https://hooks.example.com/x"}}}));
  clock_.Advance(1);
  SignupTagged("a@example.com");
  ASSERT_TRUE(runs_->ClaimEvents(100).has_value());
  auto leased = Drain();
  ASSERT_EQ(leased.size(), 1u);
  EXPECT_TRUE(Drain().empty());  // leased: nobody else gets it
  ASSERT_TRUE(runs_->RecordStep(
      leased[0], {.kind = marketing::StepOutcome::Kind::kTemporary, .detail = "HTTP 503"}));
  EXPECT_EQ(Count("SELECT attempts FROM automation_runs"), 1);
  EXPECT_TRUE(Drain().empty());
  clock_.Advance(10);
  auto again = Drain();
  ASSERT_EQ(again.size(), 1u);
  ASSERT_TRUE(runs_->RecordStep(again[0], {.kind = marketing::StepOutcome::Kind::kDone}));
  ASSERT_TRUE(runs_->RecordStep(
      again[0], {.kind = marketing::StepOutcome::Kind::kDone}));  // a duplicate record
  EXPECT_EQ(Count("SELECT COUNT(*) FROM automation_runs WHERE status = 'completed'"), 1);
  EXPECT_EQ(Count("SELECT done FROM automation_step_stats"), 1);
  // The stale first lease cannot move the finished run.
  ASSERT_TRUE(runs_->RecordStep(leased[0], {.kind = marketing::StepOutcome::Kind::kFailed}));
  EXPECT_EQ(Count("SELECT failed FROM automation_step_stats"), 0);
}

}  // namespace
}  // namespace crmd::crm
