#include "src/mcp/session.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "src/core/random.h"
#include "tests/support/fake_clock.h"

namespace crmd::mcp {
namespace {

class SessionStoreTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  SecureRandom random_;
  const std::string alice_ = SessionStore::OwnerKey("client-1", "alice");
  const std::string bob_ = SessionStore::OwnerKey("client-1", "bob");
};

TEST_F(SessionStoreTest, IdsAreVisibleAsciiAndUnique_McpTransports_SessionManagement) {
  SessionStore s(SessionStoreOptions{}, clock_, random_);
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    auto id = s.Create(alice_, "2025-11-25");
    ASSERT_TRUE(id);
    EXPECT_GE(id->size(), 32u);
    for (char c : *id) EXPECT_TRUE(c >= 0x21 && c <= 0x7e);
    ids.insert(*id);
  }
  EXPECT_EQ(ids.size(), 20u);
}

TEST_F(SessionStoreTest, FindReturnsNegotiatedVersionForOwner) {
  SessionStore s(SessionStoreOptions{}, clock_, random_);
  auto id = s.Create(alice_, "2025-06-18");
  SessionInfo info;
  EXPECT_EQ(s.Find(*id, alice_, &info), SessionStore::Lookup::kOk);
  EXPECT_EQ(info.protocol_version, "2025-06-18");
  EXPECT_FALSE(info.initialized);
  s.MarkInitialized(*id);
  s.Find(*id, alice_, &info);
  EXPECT_TRUE(info.initialized);
}

TEST_F(SessionStoreTest, AnotherPrincipalCannotUseOrEndTheSession) {
  SessionStore s(SessionStoreOptions{}, clock_, random_);
  auto id = s.Create(alice_, "2025-11-25");
  EXPECT_EQ(s.Find(*id, bob_), SessionStore::Lookup::kWrongOwner);
  EXPECT_EQ(s.Find(*id, SessionStore::OwnerKey("client-2", "alice")),
            SessionStore::Lookup::kWrongOwner);
  EXPECT_FALSE(s.End(*id, bob_));
  EXPECT_EQ(s.Find(*id, alice_), SessionStore::Lookup::kOk);
}

TEST_F(SessionStoreTest, OwnerKeysDoNotCollide) {
  EXPECT_NE(SessionStore::OwnerKey("a|b", "c"), SessionStore::OwnerKey("a", "b|c"));
}

TEST_F(SessionStoreTest, EndedSessionIsNotFound) {
  SessionStore s(SessionStoreOptions{}, clock_, random_);
  auto id = s.Create(alice_, "2025-11-25");
  EXPECT_TRUE(s.End(*id, alice_));
  EXPECT_EQ(s.Find(*id, alice_), SessionStore::Lookup::kNotFound);
  EXPECT_FALSE(s.End(*id, alice_));
  EXPECT_EQ(s.size(), 0u);
}

TEST_F(SessionStoreTest, IdleSessionExpiresAndUseRefreshesIt) {
  SessionStore s(SessionStoreOptions{.idle_ttl_s = 100}, clock_, random_);
  auto used = s.Create(alice_, "2025-11-25");
  auto idle = s.Create(alice_, "2025-11-25");
  clock_.Advance(60);
  EXPECT_EQ(s.Find(*used, alice_), SessionStore::Lookup::kOk);
  clock_.Advance(60);
  EXPECT_EQ(s.Find(*used, alice_), SessionStore::Lookup::kOk);
  EXPECT_EQ(s.Find(*idle, alice_), SessionStore::Lookup::kNotFound);
  EXPECT_EQ(s.size(), 1u);
}

TEST_F(SessionStoreTest, PerOwnerCapEndsTheOwnersOldestSession) {
  SessionStore s(SessionStoreOptions{.max_sessions_per_owner = 2}, clock_, random_);
  auto bobs = s.Create(bob_, "2025-11-25");
  auto first = s.Create(alice_, "2025-11-25");
  auto second = s.Create(alice_, "2025-11-25");
  auto third = s.Create(alice_, "2025-11-25");
  ASSERT_TRUE(third);
  EXPECT_EQ(s.Find(*first, alice_), SessionStore::Lookup::kNotFound);
  EXPECT_EQ(s.Find(*second, alice_), SessionStore::Lookup::kOk);
  EXPECT_EQ(s.Find(*bobs, bob_), SessionStore::Lookup::kOk);
}

TEST_F(SessionStoreTest, GlobalCapRefusesUntilSessionsExpire) {
  SessionStore s(SessionStoreOptions{.idle_ttl_s = 100, .max_sessions = 2}, clock_, random_);
  ASSERT_TRUE(s.Create(alice_, "v"));
  ASSERT_TRUE(s.Create(bob_, "v"));
  auto full = s.Create(SessionStore::OwnerKey("c", "carol"), "v");
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, Errc::kUnavailable);
  clock_.Advance(101);
  EXPECT_TRUE(s.Create(SessionStore::OwnerKey("c", "carol"), "v"));
  EXPECT_EQ(s.size(), 1u);
}

}  // namespace
}  // namespace crmd::mcp

namespace crmd::mcp {
namespace {

TEST(SessionStoreConcurrency, ParallelCreateFindEndStaysConsistent) {
  FakeClock clock;
  SecureRandom random;
  SessionStore store(SessionStoreOptions{.max_sessions_per_owner = 8}, clock, random);
  auto work = [&](int t, int* live) {
    std::string owner = SessionStore::OwnerKey("c", "user" + std::to_string(t));
    std::vector<std::string> mine;
    for (int i = 0; i < 500; ++i) {
      auto id = store.Create(owner, "2025-11-25");
      ASSERT_TRUE(id);
      mine.push_back(*id);
      EXPECT_EQ(store.Find(*id, owner), SessionStore::Lookup::kOk);
      if (i % 3 == 0) {
        EXPECT_TRUE(store.End(*id, owner));
      }
    }
    *live = 0;
    for (const auto& id : mine) *live += store.Find(id, owner) == SessionStore::Lookup::kOk;
  };
  int live[4] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work, t, &live[t]);
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_LE(live[t], 8) << "per-owner cap";
  EXPECT_EQ(store.size(), static_cast<size_t>(live[0] + live[1] + live[2] + live[3]));
}

}  // namespace
}  // namespace crmd::mcp
