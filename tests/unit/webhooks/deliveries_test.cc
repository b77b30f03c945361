#include "src/webhooks/deliveries.h"

#include <gtest/gtest.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "src/governance/audit_repo.h"
#include "src/webhooks/endpoints.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::webhooks {
namespace {

class DeliveriesTest : public ::testing::Test {
 protected:
  static constexpr int64_t kDisableAfter = 2 * 86400;
  // Leases whatever is due and records `outcome` for each; answers how many.
  int FailDue(const Outcome& outcome = {.error = "connect refused"}) {
    auto due = deliveries_->LeaseDue(100);
    EXPECT_TRUE(due.has_value());
    if (!due) return 0;
    for (auto& w : *due) EXPECT_TRUE(deliveries_->RecordAttempt(w, outcome).has_value());
    return static_cast<int>(due->size());
  }
  std::vector<governance::AuditRecord> Audit() {
    auto r = db_->Read([](store::Conn& c) { return governance::audit_repo::Recent(c, 50); });
    EXPECT_TRUE(r.has_value());
    return r ? *r : std::vector<governance::AuditRecord>{};
  }
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db", 1);
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
    endpoints_ = std::make_unique<Endpoints>(*db_, clock_, random_, true);
    deliveries_ = std::make_unique<Deliveries>(*db_, clock_, random_,
                                               DeliveryPolicy{.backoff_base_s = 10,
                                                              .backoff_max_s = 3600,
                                                              .retry_horizon_s = 86400,
                                                              .lease_s = 60,
                                                              .disable_after_s = kDisableAfter,
                                                              .disable_after_failures = 5});
  }
  int64_t AddEndpoint(std::vector<std::string> events = {"contact.created", "contact.updated"}) {
    auto e = endpoints_->Create({.url = "http://127.0.0.1:9/hook", .events = events});
    EXPECT_TRUE(e.has_value());
    return e ? e->first.id : 0;
  }
  void AddEvent(const std::string& type, int64_t contact_id) {
    auto r = db_->Write([&](store::Conn& c) {
      return c.Exec(
          "INSERT INTO outbox_events (event_type, contact_id, data, occurred_at) VALUES (?, ?, ?, "
          "?)",
          {type, contact_id,
           std::string(R"({"contact":{"id":)") + std::to_string(contact_id) + "}}",
           clock_.NowUnix()});
    });
    ASSERT_TRUE(r.has_value());
  }
  crmd::testing::TempDir dir_;
  std::unique_ptr<store::Database> db_;
  FakeClock clock_;
  SecureRandom random_;
  std::unique_ptr<Endpoints> endpoints_;
  std::unique_ptr<Deliveries> deliveries_;
};

TEST_F(DeliveriesTest, ClaimCreatesOneRowPerSubscribedEndpointAndAdvancesCursor) {
  AddEndpoint();
  AddEndpoint({"contact.deleted"});
  AddEvent("contact.created", 1);
  AddEvent("contact.deleted", 1);
  AddEvent("contact.tag_added", 1);
  EXPECT_EQ(deliveries_->ClaimEvents().value_or(-1), 3);
  EXPECT_EQ(deliveries_->ClaimEvents().value_or(-1), 0);
  auto all = deliveries_->List({});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 2u);  // tag_added has no subscriber
}

// With no endpoint the cursor moves past the events without reading them, a window of
// `limit` at a time; an endpoint made later gets only the events after it.
TEST_F(DeliveriesTest, WithNoEndpointTheCursorPassesTheEventsAWindowAtATime) {
  for (int c = 1; c <= 150; ++c) AddEvent("contact.created", c);
  EXPECT_EQ(deliveries_->ClaimEvents(100).value_or(-1), 100);
  EXPECT_EQ(deliveries_->ClaimEvents(100).value_or(-1), 50);
  EXPECT_EQ(deliveries_->ClaimEvents(100).value_or(-1), 0);
  AddEndpoint();
  AddEvent("contact.created", 151);
  EXPECT_EQ(deliveries_->ClaimEvents(100).value_or(-1), 1);
  auto all = deliveries_->List({});
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().contact_id, 151);
}

TEST_F(DeliveriesTest, PerContactOrderHoldsLaterEventsUntilEarlierSucceeds) {
  AddEndpoint();
  AddEvent("contact.created", 7);
  AddEvent("contact.updated", 7);
  AddEvent("contact.created", 8);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto due = deliveries_->LeaseDue(10);
  ASSERT_TRUE(due.has_value());
  ASSERT_EQ(due->size(), 2u);  // contact 7's first event and contact 8's
  EXPECT_EQ(due->at(0).event_id, 1);
  EXPECT_EQ(due->at(1).event_id, 3);
  // Leased: not handed out twice.
  EXPECT_TRUE(deliveries_->LeaseDue(10)->empty());
  // Event 1 fails: event 2 must still wait (same contact).
  ASSERT_TRUE(deliveries_->RecordAttempt(due->at(0), {.status_code = 500}).has_value());
  ASSERT_TRUE(deliveries_->RecordAttempt(due->at(1), {.status_code = 200}).has_value());
  clock_.Advance(3600);
  auto again = deliveries_->LeaseDue(10);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->at(0).event_id, 1);
  EXPECT_EQ(again->at(0).attempt, 2);
  ASSERT_TRUE(deliveries_->RecordAttempt(again->at(0), {.status_code = 204}).has_value());
  auto next = deliveries_->LeaseDue(10);
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ(next->at(0).event_id, 2);
}

TEST_F(DeliveriesTest, ExpiredLeaseIsPickedAgainAfterACrash) {
  AddEndpoint();
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  ASSERT_EQ(deliveries_->LeaseDue(10)->size(), 1u);
  // The worker "died" without recording anything.
  clock_.Advance(61);
  auto again = deliveries_->LeaseDue(10);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->at(0).msg_id, "evt_1");
}

TEST_F(DeliveriesTest, BackoffDoublesUpToTheCapAndGivesUpAfterTheHorizon) {
  DeliveryPolicy p{.backoff_base_s = 30, .backoff_max_s = 600};
  EXPECT_EQ(Deliveries::BackoffSeconds(p, 1), 30);
  EXPECT_EQ(Deliveries::BackoffSeconds(p, 2), 60);
  EXPECT_EQ(Deliveries::BackoffSeconds(p, 3), 120);
  EXPECT_EQ(Deliveries::BackoffSeconds(p, 10), 600);
  int64_t id = AddEndpoint();
  ASSERT_TRUE(endpoints_->Update(id, {}).has_value());
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  int attempts = 0;
  for (int i = 0; i < 200; ++i) {
    auto due = deliveries_->LeaseDue(10);
    ASSERT_TRUE(due.has_value());
    for (auto& w : *due) {
      ASSERT_TRUE(deliveries_->RecordAttempt(w, {.status_code = 500}).has_value());
      ++attempts;
      // Keep the endpoint enabled for this test.
      ASSERT_TRUE(endpoints_->Update(id, {.enabled = true}).has_value());
    }
    clock_.Advance(3600);
  }
  auto d = deliveries_->Get(1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->status, "failed");
  EXPECT_GE(attempts, 24);  // hourly retries (capped) across the 24 h window
  EXPECT_EQ(deliveries_->Attempts(1)->size(), static_cast<size_t>(attempts));
}

TEST_F(DeliveriesTest, ABurstOfFailuresDoesNotDisableTheEndpoint) {
  int64_t a = AddEndpoint();
  for (int c = 1; c <= 60; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  // 60 failures within a minute (the old rule disabled after 50 in a row).
  EXPECT_EQ(FailDue(), 60);
  clock_.Advance(30);
  EXPECT_EQ(FailDue(), 60);
  auto e = endpoints_->Get(a);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->enabled);
  EXPECT_EQ(e->consecutive_failures, 120);
  EXPECT_EQ(e->failing_since, clock_.NowUnix() - 30);
}

TEST_F(DeliveriesTest, NoSuccessForTheWindowWithEnoughFailuresDisablesAndIsAudited) {
  // A retry window longer than the disable window, so the delivery is still retried then.
  deliveries_ = std::make_unique<Deliveries>(*db_, clock_, random_,
                                             DeliveryPolicy{.backoff_base_s = 10,
                                                            .backoff_max_s = 3600,
                                                            .retry_horizon_s = 7 * 86400,
                                                            .lease_s = 60,
                                                            .disable_after_s = kDisableAfter,
                                                            .disable_after_failures = 5});
  int64_t a = AddEndpoint();
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  const int64_t first_failure = clock_.NowUnix();
  int attempts = 0;
  // Retry for as long as the window lasts: still enabled one second before it ends.
  while (clock_.NowUnix() < first_failure + kDisableAfter - 3600) {
    attempts += FailDue();
    clock_.Advance(3600);
  }
  ASSERT_GE(attempts, 5);
  EXPECT_TRUE(endpoints_->Get(a)->enabled);
  clock_.Set(first_failure + kDisableAfter - 1);
  ASSERT_EQ(FailDue(), 1);
  EXPECT_TRUE(endpoints_->Get(a)->enabled) << "the window is not over yet";
  clock_.Set(first_failure + kDisableAfter + 3600);
  ASSERT_EQ(FailDue(), 1);
  auto e = endpoints_->Get(a);
  EXPECT_FALSE(e->enabled);
  ASSERT_TRUE(e->disabled_reason.has_value());
  EXPECT_NE(e->disabled_reason->find(FormatRfc3339(first_failure)), std::string::npos)
      << *e->disabled_reason;
  EXPECT_EQ(e->disabled_at, clock_.NowUnix());
  auto audit = Audit();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0].entry.action, "disable_webhook_endpoint");
  EXPECT_EQ(audit[0].entry.target_ids, std::vector<int64_t>{a});
  EXPECT_EQ(audit[0].actor.kind, "system");
  EXPECT_EQ(audit[0].entry.details["failing_since"], FormatRfc3339(first_failure));
  EXPECT_EQ(audit[0].entry.details["last_error"], "connect refused");
  EXPECT_EQ(audit[0].occurred_at, clock_.NowUnix());
  // Disabled: the delivery is kept, not attempted, not given up.
  clock_.Advance(5 * 86400);
  EXPECT_TRUE(deliveries_->LeaseDue(10)->empty());
  EXPECT_EQ(deliveries_->Get(1)->status, "pending");
}

TEST_F(DeliveriesTest, FewerFailuresThanTheMinimumOverTheWindowDoNotDisable) {
  int64_t a = AddEndpoint();
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  ASSERT_EQ(FailDue(), 1);
  clock_.Advance(kDisableAfter + 10);
  ASSERT_EQ(FailDue(), 1);  // 2 failures over more than the window: fewer than 5
  EXPECT_TRUE(endpoints_->Get(a)->enabled);
}

TEST_F(DeliveriesTest, A410DisablesAtOnce) {
  int64_t a = AddEndpoint();
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  ASSERT_EQ(FailDue({.status_code = 410}), 1);
  EXPECT_FALSE(endpoints_->Get(a)->enabled);
  EXPECT_EQ(Audit().at(0).entry.details["reason"], "the receiver answered 410 Gone");
}

TEST_F(DeliveriesTest, EnablingAgainDeliversTheKeptBacklogAtOnceInOrderAndIsAudited) {
  int64_t a = AddEndpoint();
  AddEvent("contact.created", 1);
  AddEvent("contact.updated", 1);
  AddEvent("contact.created", 2);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  ASSERT_EQ(FailDue({.status_code = 410}), 2);  // contact 1's first event and contact 2's
  ASSERT_FALSE(endpoints_->Get(a)->enabled);
  clock_.Advance(4 * 86400);  // longer than the retry horizon (1 day here)
  ASSERT_TRUE(
      endpoints_->Update(a, {.enabled = true}, governance::Actor{.kind = "api_key", .subject = "7"})
          .has_value());
  auto e = endpoints_->Get(a);
  EXPECT_TRUE(e->enabled);
  EXPECT_EQ(e->consecutive_failures, 0);
  EXPECT_FALSE(e->failing_since.has_value());
  EXPECT_FALSE(e->disabled_reason.has_value());
  auto audit = Audit();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0].entry.action, "enable_webhook_endpoint");
  EXPECT_EQ(audit[0].actor.kind, "api_key");
  EXPECT_EQ(audit[0].entry.details["previous_reason"], "the receiver answered 410 Gone");
  EXPECT_EQ(audit[0].entry.details["resumed_deliveries"], 3);
  // Due now, without waiting out a backoff; per-contact order still holds.
  auto due = deliveries_->LeaseDue(10);
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ(due->at(0).event_id, 1);
  EXPECT_EQ(due->at(1).event_id, 3);
  for (auto& w : *due) ASSERT_TRUE(deliveries_->RecordAttempt(w, {.status_code = 500}).has_value());
  EXPECT_EQ(deliveries_->Get(1)->status, "pending") << "a fresh retry window, not given up";
  clock_.Advance(3600);
  auto retried = deliveries_->LeaseDue(10);
  ASSERT_EQ(retried->size(), 2u);
  for (auto& w : *retried)
    ASSERT_TRUE(deliveries_->RecordAttempt(w, {.status_code = 204}).has_value());
  auto last = deliveries_->LeaseDue(10);
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(last->at(0).event_id, 2);
}

TEST_F(DeliveriesTest, ASuccessAfterAnOutageReleasesTheWaitingDeliveries) {
  AddEndpoint();
  for (int c = 1; c <= 3; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  ASSERT_EQ(FailDue(), 3);
  clock_.Advance(11);
  ASSERT_EQ(FailDue(), 3);  // second attempts: the next ones wait 10-20 s
  clock_.Advance(4);
  AddEvent("contact.created", 4);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto fresh = deliveries_->LeaseDue(10);
  ASSERT_EQ(fresh->size(), 1u);
  EXPECT_EQ(fresh->at(0).event_id, 4);
  ASSERT_TRUE(deliveries_->RecordAttempt(fresh->at(0), {.status_code = 200}).has_value());
  // The receiver is back: the three waiting deliveries are due now, not in 10-20 s.
  EXPECT_EQ(deliveries_->LeaseDue(10)->size(), 3u);
}

TEST_F(DeliveriesTest, ASuccessRightAfterAFailureReleasesNothing) {
  AddEndpoint();
  for (int c = 1; c <= 2; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto due = deliveries_->LeaseDue(10);
  ASSERT_EQ(due->size(), 2u);
  ASSERT_TRUE(deliveries_->RecordAttempt(due->at(0), {.status_code = 500}).has_value());
  clock_.Advance(1);
  ASSERT_TRUE(deliveries_->RecordAttempt(due->at(1), {.status_code = 200}).has_value());
  // A blip, not an outage: the failed one keeps its backoff.
  EXPECT_TRUE(deliveries_->LeaseDue(10)->empty());
}

TEST_F(DeliveriesTest, EventsWhileAutoDisabledAreQueuedButNotWhileDisabledByAnOperator) {
  int64_t a = AddEndpoint();
  for (int c = 1; c <= 5; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto due = deliveries_->LeaseDue(10);
  ASSERT_TRUE(due.has_value());
  ASSERT_EQ(due->size(), 5u);
  for (auto& w : *due) ASSERT_TRUE(deliveries_->RecordAttempt(w, {.status_code = 410}).has_value());
  ASSERT_FALSE(endpoints_->Get(a)->enabled);  // auto-disabled
  AddEvent("contact.created", 6);             // happens during the outage
  EXPECT_EQ(deliveries_->ClaimEvents().value_or(-1), 1);
  ASSERT_TRUE(endpoints_->Update(a, {.enabled = true}).has_value());
  clock_.Advance(3600);
  EXPECT_EQ(deliveries_->LeaseDue(10)->size(), 6u);  // the five retries and the new one

  ASSERT_TRUE(endpoints_->Update(a, {.enabled = false}).has_value());  // an operator's choice
  AddEvent("contact.created", 7);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto all = deliveries_->List({});
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 6u);  // nothing queued for event 7
}

TEST_F(DeliveriesTest, RedeliverMakesACompletedDeliveryPendingWithTheSameWebhookId) {
  AddEndpoint();
  AddEvent("contact.created", 1);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto w = deliveries_->LeaseDue(10)->at(0);
  ASSERT_TRUE(deliveries_->RecordAttempt(w, {.status_code = 200}).has_value());
  EXPECT_EQ(deliveries_->Get(w.delivery_id)->status, "succeeded");
  auto r = deliveries_->Redeliver(w.delivery_id);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, "pending");
  auto again = deliveries_->LeaseDue(10);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->at(0).msg_id, w.msg_id);
  EXPECT_EQ(again->at(0).payload, w.payload);
  EXPECT_EQ(deliveries_->Redeliver(999).error().code, Errc::kNotFound);
}

TEST(TargetUrl, PrivateAndLoopbackTargetsAreRefusedUnlessAllowed) {
  EXPECT_EQ(ValidateTargetUrl("http://127.0.0.1/x", false).error().code, Errc::kPermissionDenied);
  EXPECT_EQ(ValidateTargetUrl("http://10.1.2.3/x", false).error().code, Errc::kPermissionDenied);
  EXPECT_EQ(ValidateTargetUrl("http://[::1]:80/x", false).error().code, Errc::kPermissionDenied);
  EXPECT_EQ(ValidateTargetUrl("http://localhost/x", false).error().code, Errc::kPermissionDenied);
  EXPECT_EQ(ValidateTargetUrl("http://169.254.169.254/", false).error().code,
            Errc::kPermissionDenied);
  EXPECT_TRUE(ValidateTargetUrl("https://hooks.example.com/x", false).has_value());
  EXPECT_TRUE(ValidateTargetUrl("http://127.0.0.1:8080/x", true).has_value());
  EXPECT_EQ(ValidateTargetUrl("ftp://example.com", true).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(ValidateTargetUrl("http://u:p@example.com", true).error().code, Errc::kInvalidArgument);
}

}  // namespace
}  // namespace crmd::webhooks
