// MCP sessions in the database seen by two nodes: two DbSessions, each with its own
// Database on the same database, as two crmd processes have them.
#include <gtest/gtest.h>

#include "src/app/mcp_sessions.h"
#include "src/core/random.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"

namespace crmd {
namespace {

using Lookup = mcp::Sessions::Lookup;

class TwoNodeSessions : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* db : {&db_a_, &db_b_}) {
      auto opened = store::Open(scratch_.url(), 2);
      ASSERT_TRUE(opened.has_value()) << opened.error().detail;
      *db = std::move(*opened);
    }
    ASSERT_TRUE(store::Migrate(*db_a_).has_value());
  }
  // A node as crmd wires it: `recheck_s` 0 on a shared database.
  app::DbSessions Node(store::Database& db, int64_t recheck_s) {
    return app::DbSessions(app::DbSessionsOptions{.recheck_s = recheck_s}, db, clock_, random_);
  }

  std::string dir_ = ::testing::TempDir();
  testing::ScratchDatabase scratch_{
      dir_ + "/db_sessions_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
      ".db"};
  std::unique_ptr<store::Database> db_a_, db_b_;
  FakeClock clock_;
  SecureRandom random_;
};

TEST_F(TwoNodeSessions, SessionEndedOnOneNodeIsNotFoundOnTheOtherAtOnce) {
  auto a = Node(*db_a_, 0);
  auto b = Node(*db_b_, 0);
  auto id = a.Create("client|user", mcp::SessionInfo{.protocol_version = "2025-11-25"});
  ASSERT_TRUE(id.has_value());
  ASSERT_EQ(a.Find(*id, "client|user"), Lookup::kOk);  // cached on A
  ASSERT_EQ(b.Find(*id, "client|user"), Lookup::kOk);
  ASSERT_TRUE(b.End(*id, "client|user"));
  // The clock has not moved: A's cache is as fresh as it can be, and A still reads the row.
  EXPECT_EQ(a.Find(*id, "client|user"), Lookup::kNotFound);
  EXPECT_EQ(b.Find(*id, "client|user"), Lookup::kNotFound);
}

TEST_F(TwoNodeSessions, AWindowOfRecheckSecondsIsWhatTheSharedDatabaseSettingRemoves) {
  // The single-node setting (SQLite): a cached session is trusted for recheck_s. Shown
  // here to make the test above mean something: with it, A keeps serving for 5 s.
  auto a = Node(*db_a_, 5);
  auto b = Node(*db_b_, 5);
  auto id = a.Create("client|user", mcp::SessionInfo{.protocol_version = "2025-11-25"});
  ASSERT_TRUE(id.has_value());
  ASSERT_EQ(a.Find(*id, "client|user"), Lookup::kOk);
  ASSERT_TRUE(b.End(*id, "client|user"));
  EXPECT_EQ(a.Find(*id, "client|user"), Lookup::kOk);
  clock_.Advance(std::chrono::seconds(5));
  EXPECT_EQ(a.Find(*id, "client|user"), Lookup::kNotFound);
}

TEST_F(TwoNodeSessions, InitializedOnOneNodeIsSeenByTheOther) {
  auto a = Node(*db_a_, 0);
  auto b = Node(*db_b_, 0);
  auto id = a.Create("client|user", mcp::SessionInfo{.protocol_version = "2025-11-25"});
  ASSERT_TRUE(id.has_value());
  mcp::SessionInfo info;
  ASSERT_EQ(b.Find(*id, "client|user", &info), Lookup::kOk);
  EXPECT_FALSE(info.initialized);
  a.MarkInitialized(*id);
  ASSERT_EQ(b.Find(*id, "client|user", &info), Lookup::kOk);
  EXPECT_TRUE(info.initialized);
  EXPECT_EQ(info.protocol_version, "2025-11-25");
}

}  // namespace
}  // namespace crmd
