#include "src/webhooks/deliveries.h"

#include <gtest/gtest.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "src/webhooks/endpoints.h"
#include "tests/support/test_server.h"

namespace crmd::webhooks {
namespace {

class DeliveriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db", 1);
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
    endpoints_ = std::make_unique<Endpoints>(*db_, clock_, random_, true);
    deliveries_ = std::make_unique<Deliveries>(
        *db_, clock_, random_,
        DeliveryPolicy{.backoff_base_s = 10, .backoff_max_s = 3600, .retry_horizon_s = 86400,
                       .lease_s = 60, .disable_after_failures = 5});
  }
  int64_t AddEndpoint(std::vector<std::string> events = {"contact.created", "contact.updated"}) {
    auto e = endpoints_->Create({.url = "http://127.0.0.1:9/hook", .events = events});
    EXPECT_TRUE(e.has_value());
    return e ? e->first.id : 0;
  }
  void AddEvent(const std::string& type, int64_t contact_id) {
    auto r = db_->Write([&](store::Conn& c) {
      return c.Exec("INSERT INTO outbox_events (event_type, contact_id, data, occurred_at) VALUES (?, ?, ?, ?)",
                    {type, contact_id, std::string(R"({"contact":{"id":)") + std::to_string(contact_id) + "}}",
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

TEST_F(DeliveriesTest, ConsecutiveFailuresDisableTheEndpointAnd410DisablesAtOnce) {
  int64_t a = AddEndpoint();
  for (int c = 1; c <= 5; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto due = deliveries_->LeaseDue(10);
  ASSERT_EQ(due->size(), 5u);
  for (auto& w : *due) ASSERT_TRUE(deliveries_->RecordAttempt(w, {.error = "connect refused"}).has_value());
  auto e = endpoints_->Get(a);
  EXPECT_FALSE(e->enabled);
  EXPECT_TRUE(e->disabled_reason.has_value());
  clock_.Advance(86000);
  EXPECT_TRUE(deliveries_->LeaseDue(10)->empty());  // disabled endpoints get nothing
  ASSERT_TRUE(endpoints_->Update(a, {.enabled = true}).has_value());
  EXPECT_EQ(endpoints_->Get(a)->consecutive_failures, 0);
  auto back = deliveries_->LeaseDue(10);
  ASSERT_EQ(back->size(), 5u);
  ASSERT_TRUE(deliveries_->RecordAttempt(back->at(0), {.status_code = 410}).has_value());
  EXPECT_FALSE(endpoints_->Get(a)->enabled);
}

TEST_F(DeliveriesTest, EventsWhileAutoDisabledAreQueuedButNotWhileDisabledByAnOperator) {
  int64_t a = AddEndpoint();
  for (int c = 1; c <= 5; ++c) AddEvent("contact.created", c);
  ASSERT_TRUE(deliveries_->ClaimEvents().has_value());
  auto due = deliveries_->LeaseDue(10);
  ASSERT_TRUE(due.has_value());
  ASSERT_EQ(due->size(), 5u);
  for (auto& w : *due) ASSERT_TRUE(deliveries_->RecordAttempt(w, {.error = "connect refused"}).has_value());
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
  EXPECT_EQ(ValidateTargetUrl("http://169.254.169.254/", false).error().code, Errc::kPermissionDenied);
  EXPECT_TRUE(ValidateTargetUrl("https://hooks.example.com/x", false).has_value());
  EXPECT_TRUE(ValidateTargetUrl("http://127.0.0.1:8080/x", true).has_value());
  EXPECT_EQ(ValidateTargetUrl("ftp://example.com", true).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(ValidateTargetUrl("http://u:p@example.com", true).error().code, Errc::kInvalidArgument);
}

}  // namespace
}  // namespace crmd::webhooks
