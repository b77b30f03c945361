// The throttle of failed sign-ins (auth/sign_in_throttle.h) and the purge and paging of
// registered clients (auth/repo/clients_repo.h), on the engine the suite runs on: SQLite
// by default, PostgreSQL under the `pg.` prefix. Time is a FakeClock.
#include "auth/sign_in_throttle.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "auth/repo/sign_in_failures_repo.h"
#include "tests/contract/auth_repo_fixture.h"
#include "tests/support/fake_clock.h"

namespace crmd::auth::repo {
namespace {

constexpr const char* kOwner = "owner@example.com";
constexpr const char* kGuesser = "203.0.113.7";
constexpr const char* kHome = "198.51.100.20";

// Counts `n` failures (attempts that were let through and then failed) for the pair.
void FailTimes(SignInThrottle& t, const std::string& account, const std::string& address, int n) {
  for (int i = 0; i < n; ++i) {
    auto p = t.Reserve(account, address);
    ASSERT_TRUE(p) << p.error().detail;
    ASSERT_TRUE(p->allowed) << "attempt " << i;
  }
}

TEST_F(AuthRepo, SignInDelaysGrowForTheGuesserWhileTheOwnerElsewhereSignsIn) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock);  // product defaults: 5 free, then 30 s doubling up to 1 h
  FailTimes(t, kOwner, kGuesser, 5);
  auto waits = t.Reserve(kOwner, kGuesser);
  ASSERT_TRUE(waits);
  EXPECT_FALSE(waits->allowed);
  EXPECT_EQ(waits->retry_after, 30);
  // Ten guesses from anywhere do not keep the owner out.
  auto owner = t.Reserve(kOwner, kHome);
  ASSERT_TRUE(owner);
  EXPECT_TRUE(owner->allowed);
  ASSERT_TRUE(t.Succeeded(*owner));
  // The guesser's waits double: 30, 60, 120 ... and refused attempts do not lengthen them.
  int64_t wait = waits->retry_after;
  for (int64_t expected : {60, 120, 240}) {
    clock.Advance(wait - 1);
    auto early = t.Reserve(kOwner, kGuesser);
    ASSERT_TRUE(early);
    EXPECT_FALSE(early->allowed);
    EXPECT_EQ(early->retry_after, 1);
    clock.Advance(1);
    auto again = t.Reserve(kOwner, kGuesser);
    ASSERT_TRUE(again);
    ASSERT_TRUE(again->allowed);
    auto next = t.Reserve(kOwner, kGuesser);
    ASSERT_TRUE(next);
    EXPECT_FALSE(next->allowed);
    EXPECT_EQ(next->retry_after, expected);
    wait = expected;
  }
  EXPECT_EQ(SignInDelay({}, 100), 3600);  // capped
}

TEST_F(AuthRepo, SignInSuccessForgetsThePairsFailures) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock);
  FailTimes(t, kOwner, kHome, 4);
  auto right = t.Reserve(kOwner, kHome);
  ASSERT_TRUE(right && right->allowed);
  ASSERT_TRUE(t.Succeeded(*right));
  // Four more typos cost nothing: the run started again.
  FailTimes(t, kOwner, kHome, 4);
}

TEST_F(AuthRepo, SignInFailuresAreForgottenAfterADayWithoutOne) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock);
  FailTimes(t, kOwner, kGuesser, 5);
  clock.Advance(24 * 3600);
  FailTimes(t, kOwner, kGuesser, 5);
  // Housekeeping deletes what nobody needs any more (a day after the last failure, once
  // the wait is over).
  clock.Advance(24 * 3600 + 3600);
  auto n =
      W([&](store::Conn& c) { return DeleteFailureBucketsIdleSince(c, clock.NowUnix() - 86400); });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2);  // the pair and the address
}

TEST_F(AuthRepo, SignInOneAddressSprayingManyAccountsIsLimited) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock,
                   SignInThrottleOptions{.per_address = {.limit = 20, .window_s = 900}});
  for (int i = 0; i < 20; ++i)
    FailTimes(t, "person" + std::to_string(i) + "@example.com", kGuesser, 1);
  auto sprayed = t.Reserve("person99@example.com", kGuesser);
  ASSERT_TRUE(sprayed);
  EXPECT_FALSE(sprayed->allowed);
  EXPECT_EQ(sprayed->retry_after, 900);
  // Another address is not affected.
  auto home = t.Reserve("person99@example.com", kHome);
  ASSERT_TRUE(home && home->allowed);
  clock.Advance(900);
  auto later = t.Reserve("person99@example.com", kGuesser);
  ASSERT_TRUE(later && later->allowed);
}

TEST_F(AuthRepo, SignInAccountsAreCountedNormalisedAndUnknownOnesLikeKnownOnes) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock);
  FailTimes(t, " Owner@Example.com", kGuesser, 3);
  FailTimes(t, "OWNER@example.COM", kGuesser, 2);
  auto waits = t.Reserve(kOwner, kGuesser);
  ASSERT_TRUE(waits);
  EXPECT_FALSE(waits->allowed);
  FailTimes(t, "nobody-registered@example.com", kGuesser, 5);
  auto unknown = t.Reserve("nobody-registered@example.com", kGuesser);
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->allowed);
}

// Counted before the password is checked, under a lock: however many attempts run at once
// (on one node or several sharing the database), no more than the free failures get
// through to a password check.
TEST_F(AuthRepo, SignInParallelAttemptsNeverGetMorePasswordChecksThanTheLimit) {
  FakeClock clock(kNow);
  SignInThrottle t(*db_, clock);
  std::atomic<int> allowed{0}, refused{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 3; ++k) {
        auto p = t.Reserve(kOwner, kGuesser);
        if (!p)
          ++failed;
        else if (p->allowed)
          ++allowed;
        else
          ++refused;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(allowed.load(), 5);
  EXPECT_EQ(refused.load(), 43);
}

// ---------------------------------------------------------------------------------------
// clients_repo.h: purge of unused clients, paging

TEST_F(AuthRepo, ClientsNeverUsedForAGrantArePurgedAfterTheirLifetime) {
  auto add = [&](const std::string& id, const std::string& source, int64_t created,
                 bool revoked = false) {
    Client c = MakeClient(id);
    c.source = source;
    c.created_at = c.updated_at = created;
    c.revoked = revoked;
    ASSERT_TRUE(
        W([&](store::Conn& conn) { return InsertClient(conn, c, std::nullopt, std::nullopt); }));
  };
  add("old-unused", "dcr", kNow - 1000);
  add("https://app.example/cimd.json", "cimd", kNow - 1000);
  add("old-used", "dcr", kNow - 1000);
  add("old-consented", "dcr", kNow - 1000);
  add("old-admin", "admin", kNow - 1000);
  add("old-revoked", "dcr", kNow - 1000, true);
  add("young-unused", "dcr", kNow);
  ASSERT_TRUE(W([&](store::Conn& c) {
    return InsertGrant(c, {.grant_id = "g1", .client_id = "old-used", .scope = "contacts:read"},
                       kNow);
  }));
  int64_t user = AddUser("ada@example.com");
  ASSERT_TRUE(W([&](store::Conn& c) {
    return UpsertConsent(c, "old-consented", user, "contacts:read", kNow);
  }));
  auto n = W([&](store::Conn& c) { return DeleteUnusedClientsCreatedBy(c, kNow - 500); });
  ASSERT_TRUE(n) << n.error().detail;
  EXPECT_EQ(*n, 2);
  auto left = R([&](store::Conn& c) { return ListClients(c); });
  ASSERT_TRUE(left);
  std::vector<std::string> ids;
  for (const auto& c : *left) ids.push_back(c.client_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"old-admin", "old-consented", "old-revoked", "old-used",
                                           "young-unused"}));
}

TEST_F(AuthRepo, ClientsArePagedOldestFirstWithoutGapsOrRepeats) {
  for (int i = 0; i < 7; ++i) {
    Client c = MakeClient("c" + std::to_string(i));
    c.created_at = c.updated_at = kNow + i / 3;  // ties on created_at are broken by client_id
    ASSERT_TRUE(
        W([&](store::Conn& conn) { return InsertClient(conn, c, std::nullopt, std::nullopt); }));
  }
  FakeClock clock(kNow);
  ClientStore store(*db_, clock);
  std::vector<std::string> seen;
  std::string after;
  int pages = 0;
  while (true) {
    auto page = store.ListPage(after, 3);
    ASSERT_TRUE(page);
    ++pages;
    for (const auto& c : page->clients) seen.push_back(c.client_id);
    if (!page->next) break;
    after = *page->next;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4", "c5", "c6"}));
}

}  // namespace
}  // namespace crmd::auth::repo
