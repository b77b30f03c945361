#include <gtest/gtest.h>

#include <thread>

#include "src/store/db.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

TEST(Sqlite, MigratesOnceAndRecordsVersions) {
  testing::TempDir dir;
  auto db = Open("sqlite:" + dir.path() + "/a.db");
  ASSERT_TRUE(db.has_value()) << db.error().detail;
  auto again = Migrate(**db);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, 0);
  auto n = (*db)->Read([](Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("SELECT COUNT(*) FROM schema_migrations");
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  ASSERT_TRUE(n.has_value());
  EXPECT_GE(*n, 1);
}

TEST(Sqlite, WriteRollsBackWhenTheCallbackFails) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  ASSERT_TRUE(db->Write([](Conn& c) -> Result<int64_t> { return c.Exec("CREATE TABLE t (x INTEGER)"); }));
  auto failed = db->Write([](Conn& c) -> Result<int> {
    auto r = c.Exec("INSERT INTO t(x) VALUES (?)", {int64_t{1}});
    if (!r) return Fail(r.error());
    return Fail(Errc::kInvalidArgument, "boom");
  });
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().message, "boom");
  auto n = db->Read([](Conn& c) -> Result<int64_t> { return (*c.QueryOne("SELECT COUNT(*) FROM t"))->Int(0); });
  EXPECT_EQ(*n, 0);
}

TEST(Sqlite, BoundParametersAreNeverInterpretedAsSql) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  ASSERT_TRUE(db->Write([](Conn& c) -> Result<int64_t> { return c.Exec("CREATE TABLE t (s TEXT)"); }));
  std::string evil = "x'); DROP TABLE t; --";
  ASSERT_TRUE(db->Write([&](Conn& c) { return c.Exec("INSERT INTO t(s) VALUES (?)", {evil}); }));
  auto s = db->Read([](Conn& c) -> Result<std::string> { return (*c.QueryOne("SELECT s FROM t"))->Str(0); });
  EXPECT_EQ(*s, evil);
}

TEST(Sqlite, ConcurrentConditionalUpdateSucceedsExactlyOnce) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  ASSERT_TRUE(db->Write([](Conn& c) -> Result<int64_t> {
    c.Exec("CREATE TABLE once (id INTEGER PRIMARY KEY, used INTEGER NOT NULL DEFAULT 0)");
    return c.Exec("INSERT INTO once(id) VALUES (1)");
  }));
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = db->Write([](Conn& c) { return c.Exec("UPDATE once SET used = 1 WHERE id = 1 AND used = 0"); });
      if (r && *r == 1) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
}

}  // namespace
}  // namespace crmd::store
