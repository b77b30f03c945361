#include "auth/token_revocations.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::auth {
namespace {

using std::chrono::milliseconds;

std::string Answer(const Result<bool>& r) {
  if (!r)
    return r.error().code == Errc::kUnavailable ? "unavailable" : "error: " + r.error().message;
  return *r ? "revoked" : "valid";
}

// A real SQLite database whose reads can be slowed down or refused, to play a refresh that
// takes a while or a database that is away. Counts the reads that reach it. A slowed read
// takes its time twice: on the real clock, so that other callers arrive meanwhile, and on
// the fake clock the class under test reads, so that the refresh ends that much later.
class GatedDatabase : public store::Database {
 public:
  GatedDatabase(store::Database& inner, FakeClock& clock) : inner_(inner), clock_(clock) {}
  store::Dialect dialect() const override { return inner_.dialect(); }

  std::atomic<int> reads{0};
  std::atomic<int> delay_ms{0};
  std::atomic<bool> down{false};

 protected:
  Status RunRead(const std::function<Status(store::Conn&)>& fn) override {
    reads.fetch_add(1);
    const milliseconds delay(delay_ms.load());
    std::this_thread::sleep_for(delay);
    clock_.Advance(delay);
    if (down.load()) return Fail(Errc::kUnavailable, "database unreachable");
    return inner_.Read([&](store::Conn& c) { return fn(c); });
  }
  Status RunWrite(const std::function<Status(store::Conn&)>& fn) override {
    return inner_.Write([&](store::Conn& c) { return fn(c); });
  }

 private:
  store::Database& inner_;
  FakeClock& clock_;
};

class RevokedTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db");
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
    gated_ = std::make_unique<GatedDatabase>(*db_, clock_);
  }

  void AddToken(const std::string& jti, bool revoked) {
    auto st = db_->Write([&](store::Conn& c) -> Status {
      auto n = c.Exec(
          "INSERT INTO access_tokens (jti, grant_id, client_id, expires_at, revoked_at) "
          "VALUES (?, 'g1', 'c1', ?, ?)",
          {jti, clock_.NowUnix() + 3600,
           revoked ? store::Value(clock_.NowUnix()) : store::Value(nullptr)});
      if (!n) return Fail(n.error());
      return Ok();
    });
    ASSERT_TRUE(st.has_value()) << st.error().detail;
  }

  // Calls IsRevoked from `n` threads released at the same instant.
  std::vector<Result<bool>> Burst(RevokedTokens& revoked, int n, const std::string& jti) {
    std::vector<Result<bool>> out(n, Result<bool>(false));
    std::latch start(n);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        out[i] = revoked.IsRevoked(jti);
      });
    for (auto& t : threads) t.join();
    return out;
  }

  crmd::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<GatedDatabase> gated_;
};

TEST_F(RevokedTokensTest, AnswersFromTheDatabaseAndSeesARevocationAfterMarkStale) {
  AddToken("a", /*revoked=*/true);
  AddToken("b", /*revoked=*/false);
  RevokedTokens revoked(*db_, clock_, milliseconds(60'000));
  EXPECT_EQ(Answer(revoked.IsRevoked("a")), "revoked");
  EXPECT_EQ(Answer(revoked.IsRevoked("b")), "valid");

  auto st = db_->Write([&](store::Conn& c) -> Status {
    auto n = c.Exec("UPDATE access_tokens SET revoked_at = 1 WHERE jti = 'b'");
    if (!n) return Fail(n.error());
    return Ok();
  });
  ASSERT_TRUE(st.has_value());
  // Within refresh_every the snapshot stands; MarkStale makes the next call reload it.
  EXPECT_EQ(Answer(revoked.IsRevoked("b")), "valid");
  revoked.MarkStale();
  EXPECT_EQ(Answer(revoked.IsRevoked("b")), "revoked");
}

// A revoked grant refuses the tokens issued under it (claim gid) while one may still be
// alive: revoked within `grant_horizon`.
TEST_F(RevokedTokensTest, ARevokedGrantRefusesItsTokensWithinTheHorizon) {
  const int64_t now = clock_.NowUnix();
  auto st = db_->Write([&](store::Conn& c) -> Status {
    for (auto [id, revoked_at] : {std::pair<const char*, store::Value>{"live", nullptr},
                                  {"recent", now - 100},
                                  {"old", now - 5000}}) {
      auto n = c.Exec(
          "INSERT INTO grants (grant_id, client_id, user_id, scope, resource, created_at, "
          "revoked_at) VALUES (?, 'c1', NULL, 's', 'r', ?, ?)",
          {std::string(id), now - 9000, revoked_at});
      if (!n) return Fail(n.error());
    }
    return Ok();
  });
  ASSERT_TRUE(st.has_value()) << st.error().detail;
  RevokedTokens revoked(*db_, clock_, milliseconds(60'000), milliseconds(10'000),
                        std::chrono::seconds(3600));
  EXPECT_EQ(Answer(revoked.IsRevoked("t1", "live")), "valid");
  EXPECT_EQ(Answer(revoked.IsRevoked("t2", "recent")), "revoked");
  // Revoked longer ago than any token lives: no token of it can still pass exp.
  EXPECT_EQ(Answer(revoked.IsRevoked("t3", "old")), "valid");
  EXPECT_EQ(Answer(revoked.IsRevoked("t4", "")), "valid");
}

// After a quiet spell longer than the staleness bound, a burst of requests arrives at once.
// One of them refreshes; the others used to find the lock taken and answer 503 from the
// old snapshot (seen under a write soak). They must wait for the refresh instead.
TEST_F(RevokedTokensTest, ABurstAfterAQuietSpellWaitsForTheRefreshInsteadOfFailing) {
  AddToken("a", /*revoked=*/true);
  RevokedTokens revoked(*gated_, clock_, milliseconds(20), /*max_staleness=*/milliseconds(100));
  ASSERT_EQ(Answer(revoked.IsRevoked("a")), "revoked");

  clock_.Advance(milliseconds(150));
  gated_->delay_ms = 60;  // the refresh takes a while
  const int reads_before = gated_->reads.load();
  auto results = Burst(revoked, 8, "a");
  for (const auto& r : results) EXPECT_EQ(Answer(r), "revoked");
  // They waited for one refresh; none repeated it.
  EXPECT_EQ(gated_->reads.load() - reads_before, 1);
}

// Young enough, the snapshot answers while the one refreshing caller works.
TEST_F(RevokedTokensTest, WithinTheStalenessBoundOnlyTheRefreshingCallerWaits) {
  AddToken("a", /*revoked=*/true);
  RevokedTokens revoked(*gated_, clock_, milliseconds(20), /*max_staleness=*/milliseconds(5'000));
  ASSERT_EQ(Answer(revoked.IsRevoked("a")), "revoked");
  clock_.Advance(milliseconds(40));
  gated_->delay_ms = 800;

  std::thread refresher([&] { EXPECT_EQ(Answer(revoked.IsRevoked("a")), "revoked"); });
  while (gated_->reads.load() < 2) std::this_thread::yield();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(Answer(revoked.IsRevoked("a")), "revoked");
  EXPECT_EQ(Answer(revoked.IsRevoked("zzz")), "valid");
  const auto waited = std::chrono::steady_clock::now() - started;
  refresher.join();
  // These two calls did not wait for the 800 ms refresh (a bound, not a timing measure:
  // had they waited, they could not have returned before it ended).
  EXPECT_LT(waited, milliseconds(800));
  EXPECT_EQ(gated_->reads.load(), 2);
}

// The database goes away: the last snapshot is used up to the bound, then the answer is
// kUnavailable (fail closed: a revoked token must not pass for long), and a burst does
// not retry the refresh once per caller. When the database returns, so do the answers.
TEST_F(RevokedTokensTest, FailsClosedPastTheBoundWhileTheDatabaseIsAwayAndRecovers) {
  AddToken("a", /*revoked=*/true);
  RevokedTokens revoked(*gated_, clock_, milliseconds(10), /*max_staleness=*/milliseconds(100));
  ASSERT_EQ(Answer(revoked.IsRevoked("a")), "revoked");

  gated_->down = true;
  clock_.Advance(milliseconds(20));
  EXPECT_EQ(Answer(revoked.IsRevoked("a")), "revoked") << "the old snapshot still answers";

  clock_.Advance(milliseconds(120));
  gated_->delay_ms = 60;
  const int reads_before = gated_->reads.load();
  auto results = Burst(revoked, 8, "a");
  for (const auto& r : results) EXPECT_EQ(Answer(r), "unavailable");
  EXPECT_LE(gated_->reads.load() - reads_before, 2) << "callers queued behind a failed "
                                                       "refresh must not each retry it";

  gated_->down = false;
  gated_->delay_ms = 0;
  EXPECT_EQ(Answer(revoked.IsRevoked("a")), "revoked");
  EXPECT_EQ(Answer(revoked.IsRevoked("b")), "valid");
}

}  // namespace
}  // namespace crmd::auth
