// Housekeeping against a real, migrated SQLite database: expired rows go, live ones stay.
#include "src/jobs/housekeeping.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "src/app/services.h"
#include "tests/support/browser.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::jobs {
namespace {

using crmd::testing::TestServer;

int64_t Count(store::Database& db, const std::string& sql) {
  auto n = db.Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne(sql);
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  return n ? *n : -1;
}

void Exec(store::Database& db, const std::string& sql, const std::vector<store::Value>& params) {
  auto r = db.Write([&](store::Conn& c) { return c.Exec(sql, params); });
  ASSERT_TRUE(r) << r.error().message;
}

TEST(Housekeeping, DeletesExpiredRowsAndKeepsLiveOnes) {
  TestServer server({.configure = [](Config& c) { c.housekeeping_interval_s = 0; }});
  store::Database& db = *server.app().services().db;
  const int64_t now = 1'800'000'000;
  FakeClock clock(now);
  const int64_t day = 24 * 3600;

  Exec(db,
       "INSERT INTO idempotency_keys (scope, key_hash, response, created_at) VALUES (?, ?, '{}', "
       "?), (?, ?, '{}', ?)",
       {"s", "old", now - 2 * day, "s", "new", now - 3600});
  Exec(db, "INSERT INTO rate_limits (bucket, window_start, count) VALUES (?, ?, 1), (?, ?, 1)",
       {"old", now - 3 * 3600, "new", now - 60});
  const char* conf =
      "INSERT INTO confirmations (token_hash, action, scope, client_id, subject, args, args_hash, "
      "revisions, preview, status, created_at, expires_at) VALUES (?, 'a', 's', 'c', 'u', '{}', "
      "'h', '{}', '{}', ?, ?, ?)";
  Exec(db, conf, {"t-old", "used", now - 40 * day, now - 40 * day + 600});
  Exec(db, conf, {"t-recent", "expired", now - 2 * day, now - 2 * day + 600});
  Exec(db, conf, {"t-live", "pending", now - 60, now + 540});
  const std::string appr =
      "INSERT INTO approvals (id, confirmation_id, action, client_id, subject, args_hash, "
      "revisions, status, created_at, expires_at) VALUES (?, ?, 'a', 'c', 'u', 'h', '{}', ?, ?, ?)";
  Exec(db, appr, {"a-old", int64_t{1}, "approved", now - 40 * day, now - 40 * day + 600});
  Exec(db, appr, {"a-live", int64_t{3}, "pending", now - 60, now + 540});

  Housekeeping hk(db, clock, {.interval_s = 0, .retention_days = 30});
  auto n = hk.RunOnce();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 4);  // idempotency key, rate-limit window, confirmation, approval
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM idempotency_keys WHERE key_hash = 'old'"), 0);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM idempotency_keys WHERE key_hash = 'new'"), 1);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM rate_limits WHERE bucket = 'old'"), 0);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM rate_limits WHERE bucket = 'new'"), 1);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM confirmations WHERE token_hash = 't-old'"), 0);
  EXPECT_EQ(
      Count(db, "SELECT COUNT(*) FROM confirmations WHERE token_hash IN ('t-recent', 't-live')"),
      2);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM approvals WHERE id = 'a-old'"), 0);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM approvals WHERE id = 'a-live'"), 1);

  // A second pass finds nothing more.
  auto again = hk.RunOnce();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, 0);
}

// Anyone may register a client; one that never gets a grant is purged a day later, so
// registrations cannot pile up. Clients in use are kept.
TEST(Housekeeping, PurgesRegisteredClientsNeverUsedForAGrant) {
  TestServer server({.configure = [](Config& c) { c.housekeeping_interval_s = 0; }});
  auto& s = server.app().services();
  auto used = testing::RunOAuthFlow(server);
  ASSERT_TRUE(used.ok()) << used.error;
  auto reg = server.PostJson("/oauth/register", {{"client_name", "Drive-by"},
                                                 {"redirect_uris", {"https://attacker.example/cb"}},
                                                 {"token_endpoint_auth_method", "none"}});
  ASSERT_EQ(reg.status, 201) << reg.body;
  const std::string unused = testing::JsonBody(reg)["client_id"];

  FakeClock clock(s.clock->NowUnix() + 3600);  // an hour later: still kept
  Housekeeping hk(*s.db, clock, {.interval_s = 0, .retention_days = 30});
  ASSERT_TRUE(hk.RunOnce());
  ASSERT_TRUE(*s.clients->Find(unused));
  clock.Advance(24 * 3600);  // over a day after it registered
  ASSERT_TRUE(hk.RunOnce());
  auto gone = s.clients->Find(unused);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
  auto kept = s.clients->Find(used.client_id);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(*kept);
  // The purged client is unknown at the authorization endpoint.
  auto page = server.Get("/oauth/authorize?response_type=code&client_id=" + unused);
  EXPECT_EQ(page.status, 400);
  EXPECT_NE(page.body.find("not registered"), std::string::npos) << page.body;
}

// Failed sign-ins are forgotten a day after the last one, once no wait is left.
TEST(Housekeeping, ForgetsSignInFailuresADayAfterTheLastOne) {
  TestServer server({.configure = [](Config& c) { c.housekeeping_interval_s = 0; }});
  store::Database& db = *server.app().services().db;
  const int64_t now = 1'800'000'000;
  const std::string row =
      "INSERT INTO sign_in_failures (bucket, failures, window_start, blocked_until, updated_at) "
      "VALUES (?, 7, ?, ?, ?)";
  Exec(db, row, {"pair:old", now - 3 * 86400, now - 2 * 86400, now - 2 * 86400});
  Exec(db, row, {"pair:recent", now - 3600, now + 1800, now - 3600});
  FakeClock clock(now);
  Housekeeping hk(db, clock, {.interval_s = 0, .retention_days = 30});
  ASSERT_TRUE(hk.RunOnce());
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM sign_in_failures WHERE bucket = 'pair:old'"), 0);
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM sign_in_failures WHERE bucket = 'pair:recent'"), 1);
}

TEST(Housekeeping, TheBackgroundThreadSweepsOnItsOwn) {
  TestServer server({.configure = [](Config& c) { c.housekeeping_interval_s = 0; }});
  store::Database& db = *server.app().services().db;
  FakeClock clock(1'800'000'000);
  Exec(db, "INSERT INTO rate_limits (bucket, window_start, count) VALUES ('stale', ?, 1)",
       {int64_t{1'800'000'000 - 5 * 3600}});
  Housekeeping hk(db, clock, {.interval_s = 1, .retention_days = 30});
  hk.Start();
  // Poll (a deadline, not a speed requirement): the first sweep runs after one interval.
  for (int i = 0;
       i < 100 && Count(db, "SELECT COUNT(*) FROM rate_limits WHERE bucket = 'stale'") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  hk.Stop();
  EXPECT_EQ(Count(db, "SELECT COUNT(*) FROM rate_limits WHERE bucket = 'stale'"), 0);
}

}  // namespace
}  // namespace crmd::jobs
