// The webhook repositories' contracts (endpoints, deliveries, incoming hooks), on SQLite
// and, under the `pg.` prefix, on PostgreSQL.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>

#include "src/crm/outbox_repo.h"
#include "src/store/db.h"
#include "src/webhooks/deliveries_repo.h"
#include "src/webhooks/endpoints_repo.h"
#include "src/webhooks/incoming_repo.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::webhooks {
namespace {

using crmd::testing::ScratchDatabase;
using crmd::testing::TempDir;
using store::Conn;

class WebhookRepos : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<ScratchDatabase>(dir_.path() + "/w.db");
    auto opened = store::Open(scratch_->url(), 4);
    ASSERT_TRUE(opened) << opened.error().message << " " << opened.error().detail;
    db_ = std::move(*opened);
  }

  int64_t Endpoint(const std::string& url) {
    auto id = db_->Write([&](Conn& c) {
      return endpoints_repo::Insert(c, url, "whsec_x", R"(["contact.created"])", "", true, 10);
    });
    EXPECT_TRUE(id) << id.error().detail;
    return id ? *id : 0;
  }

  int64_t Event(int64_t contact_id) {
    EXPECT_TRUE(db_->Write([&](Conn& c) {
      return crm::outbox_repo::Insert(c, "contact.created", contact_id, "{}", 10);
    }));
    auto all = db_->Read([](Conn& c) { return crm::outbox_repo::After(c, 0, 1000); });
    return all && !all->empty() ? all->back().id : 0;
  }

  TempDir dir_;
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(WebhookRepos, EndpointRoundTripsWithoutSecretAndIdNotReused) {
  int64_t a = Endpoint("https://a.example/hook");
  auto e = db_->Read([&](Conn& c) { return endpoints_repo::Find(c, a); });
  ASSERT_TRUE(e && *e);
  EXPECT_EQ((*e)->url, "https://a.example/hook");
  EXPECT_EQ((*e)->events, (std::vector<std::string>{"contact.created"}));
  EXPECT_TRUE((*e)->enabled);
  ASSERT_TRUE(db_->Write([&](Conn& c) { return endpoints_repo::SetEnabled(c, a, false, 30); }));
  auto off = db_->Read([&](Conn& c) { return endpoints_repo::Find(c, a); });
  ASSERT_TRUE(off && *off);
  EXPECT_FALSE((*off)->enabled);
  EXPECT_EQ((*off)->disabled_reason, "disabled by an operator");
  EXPECT_EQ((*off)->disabled_at, 30);
  auto subs = db_->Read([](Conn& c) { return endpoints_repo::Subscribed(c); });
  ASSERT_TRUE(subs);
  EXPECT_TRUE(subs->empty()) << "an endpoint an operator disabled queues nothing";
  auto del = db_->Write([&](Conn& c) { return endpoints_repo::Delete(c, a); });
  ASSERT_TRUE(del && *del);
  auto del2 = db_->Write([&](Conn& c) { return endpoints_repo::Delete(c, a); });
  ASSERT_TRUE(del2);
  EXPECT_FALSE(*del2);
  auto exists = db_->Read([&](Conn& c) { return endpoints_repo::Exists(c, a); });
  ASSERT_TRUE(exists);
  EXPECT_FALSE(*exists);
  EXPECT_GT(Endpoint("https://b.example/hook"), a);
}

TEST_F(WebhookRepos, EndpointFailureRunCountsFromItsFirstFailureAndDisablesOnce) {
  int64_t a = Endpoint("https://a.example/hook");
  auto one = db_->Write([&](Conn& c) { return endpoints_repo::RecordFailure(c, a, 100); });
  auto two = db_->Write([&](Conn& c) { return endpoints_repo::RecordFailure(c, a, 160); });
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->count, 1);
  EXPECT_EQ(two->count, 2);
  EXPECT_EQ(one->since, 100);
  EXPECT_EQ(two->since, 100) << "the run began at its first failure";
  auto first = db_->Write(
      [&](Conn& c) { return endpoints_repo::DisableForFailures(c, a, "2 failed", 200); });
  auto again = db_->Write(
      [&](Conn& c) { return endpoints_repo::DisableForFailures(c, a, "2 failed", 201); });
  ASSERT_TRUE(first && again);
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*again) << "an endpoint that is already disabled is not disabled twice";
  auto subs = db_->Read([](Conn& c) { return endpoints_repo::Subscribed(c); });
  ASSERT_TRUE(subs);
  ASSERT_EQ(subs->size(), 1u) << "an endpoint the worker disabled keeps queueing";
  auto since = db_->Write([&](Conn& c) { return endpoints_repo::RecordSuccess(c, a); });
  ASSERT_TRUE(since);
  EXPECT_EQ(*since, 100);
  auto e = db_->Read([&](Conn& c) { return endpoints_repo::Find(c, a); });
  ASSERT_TRUE(e && *e);
  EXPECT_EQ((*e)->consecutive_failures, 0);
  EXPECT_FALSE((*e)->failing_since.has_value());
  EXPECT_EQ((*e)->disabled_at, 200);
  EXPECT_FALSE((*e)->enabled);
  auto after = db_->Write([&](Conn& c) { return endpoints_repo::RecordFailure(c, a, 300); });
  ASSERT_TRUE(after);
  EXPECT_EQ(after->count, 1);
  EXPECT_EQ(after->since, 300) << "a success ends the run";
}

TEST_F(WebhookRepos, DeliveryIsQueuedOncePerEventAndEndpoint) {
  int64_t ep = Endpoint("https://a.example/hook");
  int64_t ev = Event(7);
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE(db_->Write([&](Conn& c) {
      return deliveries_repo::InsertPending(c, ev, ep, "contact.created", 7, "{}", 100, 1000);
    }));
  auto list = db_->Read([&](Conn& c) {
    return deliveries_repo::List(c, {.endpoint_id = ep, .status = std::nullopt, .limit = 50});
  });
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].status, "pending");
  EXPECT_EQ((*list)[0].contact_id, 7);
}

TEST_F(WebhookRepos, DeliveryLeaseIsExclusive) {
  int64_t ep = Endpoint("https://a.example/hook");
  int64_t ev = Event(7);
  ASSERT_TRUE(db_->Write([&](Conn& c) {
    return deliveries_repo::InsertPending(c, ev, ep, "contact.created", 7, "{}", 100, 1000);
  }));
  auto due = db_->Write([](Conn& c) { return deliveries_repo::LeaseCandidates(c, 100, 10); });
  ASSERT_TRUE(due) << due.error().detail;
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].attempt, 1);
  EXPECT_EQ((*due)[0].url, "https://a.example/hook");
  const int64_t id = (*due)[0].delivery_id;
  auto first = db_->Write([&](Conn& c) { return deliveries_repo::Lease(c, id, 100, 130); });
  auto second = db_->Write([&](Conn& c) { return deliveries_repo::Lease(c, id, 100, 130); });
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*second) << "a leased row is not due again until its lease runs out";
  auto none = db_->Write([](Conn& c) { return deliveries_repo::LeaseCandidates(c, 110, 10); });
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(WebhookRepos, ReleasingWaitingDeliveriesLeavesInFlightOnesAlone) {
  int64_t ep = Endpoint("https://a.example/hook");
  int64_t other = Endpoint("https://b.example/hook");
  int64_t e1 = Event(1), e2 = Event(2), e3 = Event(3);
  ASSERT_TRUE(db_->Write([&](Conn& c) -> Status {
    using Row = std::tuple<int64_t, int64_t, int64_t>;  // event, contact, endpoint
    for (auto [ev, contact, endpoint] : {Row{e1, 1, ep}, Row{e2, 2, ep}, Row{e3, 3, other}})
      if (auto s = deliveries_repo::InsertPending(c, ev, endpoint, "contact.created", contact, "{}",
                                                  100, 1000);
          !s)
        return s;
    return Ok();
  }));
  auto due = db_->Write([](Conn& c) { return deliveries_repo::LeaseCandidates(c, 100, 10); });
  ASSERT_TRUE(due && due->size() == 3u);
  // e1: in flight (leased until 145). e2 and e3: failed, waiting for a retry at 500.
  int64_t in_flight = 0, waiting = 0, elsewhere = 0;
  for (const auto& w : *due)
    (w.event_id == e1 ? in_flight : w.event_id == e2 ? waiting : elsewhere) = w.delivery_id;
  ASSERT_TRUE(db_->Write([&](Conn& c) -> Status {
    if (auto r = deliveries_repo::Lease(c, in_flight, 100, 145); !r) return Fail(r.error());
    if (auto s = deliveries_repo::ScheduleRetry(c, waiting, 1, 503, "HTTP 503", 500, 100); !s)
      return s;
    return deliveries_repo::ScheduleRetry(c, elsewhere, 1, 503, "HTTP 503", 500, 100);
  }));
  auto released = db_->Write([&](Conn& c) { return deliveries_repo::ReleaseWaiting(c, ep, 120); });
  ASSERT_TRUE(released);
  EXPECT_EQ(*released, 1) << "only the waiting delivery of this endpoint";
  auto now_due = db_->Write([](Conn& c) { return deliveries_repo::LeaseCandidates(c, 120, 10); });
  ASSERT_TRUE(now_due);
  ASSERT_EQ(now_due->size(), 1u);
  EXPECT_EQ((*now_due)[0].delivery_id, waiting);
  // Enabling again: the backlog (not in flight) is due now with a renewed retry window.
  auto resumed =
      db_->Write([&](Conn& c) { return deliveries_repo::ResumeBacklog(c, other, 130, 5000); });
  ASSERT_TRUE(resumed);
  EXPECT_EQ(*resumed, 1);
  auto until = db_->Read([&](Conn& c) { return deliveries_repo::FindRetryUntil(c, elsewhere); });
  ASSERT_TRUE(until && *until);
  EXPECT_EQ(**until, 5000);
}

TEST_F(WebhookRepos, DeliveryAttemptsOutcomesAndRedeliver) {
  int64_t ep = Endpoint("https://a.example/hook");
  int64_t ev = Event(7);
  ASSERT_TRUE(db_->Write([&](Conn& c) {
    return deliveries_repo::InsertPending(c, ev, ep, "contact.created", std::nullopt, "{}", 100,
                                          1000);
  }));
  auto due = db_->Write([](Conn& c) { return deliveries_repo::LeaseCandidates(c, 100, 10); });
  ASSERT_TRUE(due && due->size() == 1u);
  const int64_t id = (*due)[0].delivery_id;
  ASSERT_TRUE(db_->Write([&](Conn& c) -> Status {
    if (auto s = deliveries_repo::InsertAttempt(c, id, 1, 100, 500, "HTTP 500", 12); !s) return s;
    return deliveries_repo::ScheduleRetry(c, id, 1, 500, "HTTP 500", 160, 100);
  }));
  ASSERT_TRUE(db_->Write([&](Conn& c) -> Status {
    if (auto s = deliveries_repo::InsertAttempt(c, id, 2, 160, 204, std::nullopt, 8); !s) return s;
    return deliveries_repo::MarkSucceeded(c, id, 2, 204, 160);
  }));
  auto d = db_->Read([&](Conn& c) { return deliveries_repo::Find(c, id); });
  ASSERT_TRUE(d && *d);
  EXPECT_EQ((*d)->status, "succeeded");
  EXPECT_EQ((*d)->attempts, 2);
  EXPECT_EQ((*d)->last_status_code, 204);
  EXPECT_FALSE((*d)->contact_id);
  auto attempts = db_->Read([&](Conn& c) { return deliveries_repo::Attempts(c, id); });
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->size(), 2u);
  EXPECT_EQ((*attempts)[0].error, "HTTP 500");
  EXPECT_FALSE((*attempts)[1].error);
  auto retry_until = db_->Read([&](Conn& c) { return deliveries_repo::FindRetryUntil(c, id); });
  ASSERT_TRUE(retry_until && *retry_until);
  EXPECT_EQ(**retry_until, 1000);
  auto again = db_->Write([&](Conn& c) { return deliveries_repo::Redeliver(c, id, 200, 2000); });
  ASSERT_TRUE(again && *again);
  auto missing =
      db_->Write([](Conn& c) { return deliveries_repo::Redeliver(c, 999999, 200, 2000); });
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  auto gone = db_->Read([](Conn& c) { return deliveries_repo::FindRetryUntil(c, 999999); });
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
}

incoming_repo::NewHook Hook(const std::string& prefix) {
  return {.name = "h",
          .token_prefix = prefix,
          .token_hash = "th",
          .mapping = "{}",
          .applies = "{}",
          .hmac_secret = std::nullopt,
          .enabled = true,
          .now = 5};
}

TEST_F(WebhookRepos, IncomingPrefixIsUniqueAndSecretsOnlyByPrefix) {
  auto a = db_->Write([](Conn& c) { return incoming_repo::Insert(c, Hook("crmd_hook_aaaaaaaa")); });
  ASSERT_TRUE(a) << a.error().detail;
  auto dup =
      db_->Write([](Conn& c) { return incoming_repo::Insert(c, Hook("crmd_hook_aaaaaaaa")); });
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  auto by_prefix =
      db_->Read([](Conn& c) { return incoming_repo::FindByPrefix(c, "crmd_hook_aaaaaaaa"); });
  ASSERT_TRUE(by_prefix && *by_prefix);
  EXPECT_EQ((*by_prefix)->token_hash, "th");
  EXPECT_FALSE((*by_prefix)->hmac_secret);
  EXPECT_FALSE((*by_prefix)->hook.has_hmac_secret);
  ASSERT_TRUE(db_->Write([&](Conn& c) {
    return incoming_repo::SetColumns(c, *a, {{"hmac_secret", std::string("0123456789abcdef")}});
  }));
  ASSERT_TRUE(db_->Write([&](Conn& c) { return incoming_repo::CountReceived(c, *a, 50); }));
  auto h = db_->Read([&](Conn& c) { return incoming_repo::Find(c, *a); });
  ASSERT_TRUE(h && *h);
  EXPECT_TRUE((*h)->has_hmac_secret);
  EXPECT_EQ((*h)->received_count, 1);
  EXPECT_EQ((*h)->last_received_at, 50);
  auto del = db_->Write([&](Conn& c) { return incoming_repo::Delete(c, *a); });
  ASSERT_TRUE(del && *del);
  auto del2 = db_->Write([&](Conn& c) { return incoming_repo::Delete(c, *a); });
  ASSERT_TRUE(del2);
  EXPECT_FALSE(*del2);
  auto b = db_->Write([](Conn& c) { return incoming_repo::Insert(c, Hook("crmd_hook_bbbbbbbb")); });
  ASSERT_TRUE(b);
  EXPECT_GT(*b, *a);
}

}  // namespace
}  // namespace crmd::webhooks
