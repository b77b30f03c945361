#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
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
  ASSERT_TRUE(
      db->Write([](Conn& c) -> Result<int64_t> { return c.Exec("CREATE TABLE t (x INTEGER)"); }));
  auto failed = db->Write([](Conn& c) -> Result<int> {
    auto r = c.Exec("INSERT INTO t(x) VALUES (?)", {int64_t{1}});
    if (!r) return Fail(r.error());
    return Fail(Errc::kInvalidArgument, "boom");
  });
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().message, "boom");
  auto n = db->Read(
      [](Conn& c) -> Result<int64_t> { return (*c.QueryOne("SELECT COUNT(*) FROM t"))->Int(0); });
  EXPECT_EQ(*n, 0);
}

// A read whose callback throws gives its pooled connection back: as many throwing reads
// as the pool has connections, and a read after them still gets one (before, each throw
// kept a reader, and the read after them waited forever).
TEST(Sqlite, AReadThatThrowsGivesItsConnectionBack) {
  testing::TempDir dir;
  std::shared_ptr<Database> db = std::move(*Open("sqlite:" + dir.path() + "/a.db", 2));
  int thrown = 0;
  for (int i = 0; i < 2; ++i) {
    try {
      (void)db->Read([](Conn& c) -> Result<int64_t> {
        (void)c.QueryOne("SELECT 1");
        throw std::runtime_error("boom");
      });
    } catch (const std::runtime_error&) {
      ++thrown;
    }
  }
  EXPECT_EQ(thrown, 2);
  // On its own thread, so that a read that never gets a connection fails this test
  // instead of hanging it (the thread is then left waiting).
  auto done = std::make_shared<std::promise<Result<int64_t>>>();
  auto after = done->get_future();
  std::thread([db, done] {
    done->set_value(db->Read([](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT 7");
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    }));
  }).detach();
  ASSERT_EQ(after.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "no reader was free after the throwing reads";
  auto v = after.get();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, 7);
}

TEST(Sqlite, BoundParametersAreNeverInterpretedAsSql) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  ASSERT_TRUE(
      db->Write([](Conn& c) -> Result<int64_t> { return c.Exec("CREATE TABLE t (s TEXT)"); }));
  std::string evil = "x'); DROP TABLE t; --";
  ASSERT_TRUE(db->Write([&](Conn& c) { return c.Exec("INSERT INTO t(s) VALUES (?)", {evil}); }));
  auto s = db->Read(
      [](Conn& c) -> Result<std::string> { return (*c.QueryOne("SELECT s FROM t"))->Str(0); });
  EXPECT_EQ(*s, evil);
}

TEST(Row, TakeStrMovesATextOutAndReadsOtherValuesAsStrDoes) {
  Row row({Value(std::string(40, 'x')), Value(int64_t{42}), Value(nullptr)});
  EXPECT_EQ(row.TakeStr(0), std::string(40, 'x'));
  EXPECT_EQ(row.Str(0), "");  // moved out
  EXPECT_EQ(row.TakeStr(1), "42");
  EXPECT_EQ(row.Int(1), 42);  // not a text: left as it was
  EXPECT_EQ(row.TakeStr(2), "");
  EXPECT_TRUE(row.IsNull(2));
}

// Statements are found by where their SQL text lies first (sqlite_conn.h): a buffer that
// held one statement and now holds another of the same length runs the new one.
TEST(Sqlite, SqlRewrittenInTheSameBufferRunsTheNewStatement) {
  testing::TempDir dir;
  auto db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
  std::string sql = "SELECT 1";
  const char* const where = sql.data();
  for (char digit : std::string("1217")) {
    sql.back() = digit;
    ASSERT_EQ(sql.data(), where);  // the very same buffer each time
    auto got = db->Read([&](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    ASSERT_TRUE(got.has_value()) << got.error().detail;
    EXPECT_EQ(*got, digit - '0') << sql;
  }
  // Other statements at other addresses with the same text still share one statement.
  for (int i = 0; i < 3; ++i) {
    std::string copy = "SELECT 7";
    auto got = db->Read([&](Conn& c) -> Result<int64_t> { return (*c.QueryOne(copy))->Int(0); });
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, 7);
  }
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
      auto r = db->Write(
          [](Conn& c) { return c.Exec("UPDATE once SET used = 1 WHERE id = 1 AND used = 0"); });
      if (r && *r == 1) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
}

}  // namespace
}  // namespace crmd::store
