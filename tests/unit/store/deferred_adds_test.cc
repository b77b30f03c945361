// Conn::AddTo on SQLite (src/store/sqlite_conn.h): inside a transaction the connection
// gathers counter adds, one sum per statement and key, and writes each sum once just
// before the COMMIT; a ROLLBACK drops them, a ROLLBACK TO a savepoint puts back what was
// gathered when it began, and the group commit's batches (a call that fails, the calls
// run again in savepoints) leave exactly the adds of the calls that succeeded.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "src/store/sqlite_conn.h"
#include "tests/unit/store/sqlite_fixture.h"

namespace crmd::store {
namespace {

const std::string kAdd =
    "INSERT INTO counts (k, n) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET n = counts.n + "
    "excluded.n";

// "k=n " for every row of counts, in key order.
std::string Counts(Conn& c) {
  auto rows = c.Query("SELECT k, n FROM counts ORDER BY k");
  EXPECT_TRUE(rows) << rows.error().detail;
  std::string out;
  if (rows)
    for (const auto& r : *rows) out += r.Str(0) + "=" + std::to_string(r.Int(1)) + " ";
  return out;
}

class DeferredAdds : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = OpenConn(dir.path() + "/a.db", false);
    ASSERT_TRUE(c) << c.error().detail;
    conn = std::move(*c);
    ASSERT_TRUE(conn->ExecScript("CREATE TABLE counts (k TEXT PRIMARY KEY, n INTEGER NOT NULL)"));
  }
  Status Add(const std::string& k, int64_t n) { return conn->AddTo(kAdd, {k}, n); }
  // A statement through Conn::Exec, as the services run theirs (bulk imports' savepoints).
  Result<int64_t> Sql(std::string_view sql) { return static_cast<Conn&>(*conn).Exec(sql); }
  // What another connection sees: only what was committed.
  std::string Committed() {
    auto other = OpenConn(dir.path() + "/a.db", true);
    EXPECT_TRUE(other);
    return other ? Counts(**other) : "";
  }

  testing::TempDir dir;
  std::unique_ptr<SqliteConn> conn;
};

TEST_F(DeferredAdds, ATransactionWritesEachKeysSumOnceAtItsCommit) {
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(Add("b", 2));
  ASSERT_TRUE(Add("b", 3));
  EXPECT_EQ(conn->deferred_count(), 2u);  // one sum per key, not written yet
  const int changes_before = sqlite3_total_changes(conn->raw());
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(sqlite3_total_changes(conn->raw()) - changes_before, 2);  // one row write per key
  EXPECT_EQ(conn->deferred_count(), 0u);
  EXPECT_EQ(Committed(), "a=5 b=5 ");

  // The next transaction adds to the rows.
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", -2));
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "a=3 b=5 ");
}

TEST_F(DeferredAdds, OutsideATransactionAnAddIsWrittenAtOnce) {
  ASSERT_TRUE(Add("a", 4));
  EXPECT_EQ(conn->deferred_count(), 0u);
  EXPECT_EQ(Committed(), "a=4 ");
}

TEST_F(DeferredAdds, ARollbackDropsWhatWasGathered) {
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(conn->Step("ROLLBACK"));
  EXPECT_EQ(conn->deferred_count(), 0u);
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("b", 1));
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "b=1 ");
}

TEST_F(DeferredAdds, ARollbackToASavepointPutsBackWhatWasGatheredWhenItBegan) {
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(Sql("SAVEPOINT item"));
  ASSERT_TRUE(Add("a", 10));
  ASSERT_TRUE(Add("b", 1));
  ASSERT_TRUE(Sql("SAVEPOINT inner_one"));  // nested, rolled back with the outer one
  ASSERT_TRUE(Add("c", 1));
  ASSERT_TRUE(Sql("ROLLBACK TO SAVEPOINT item"));
  ASSERT_TRUE(Sql("RELEASE SAVEPOINT item"));
  ASSERT_TRUE(Sql("SAVEPOINT item"));  // released: its adds stay
  ASSERT_TRUE(Add("d", 7));
  ASSERT_TRUE(Sql("RELEASE item"));
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "a=1 d=7 ");
}

// An add written early (FlushDeferred, as before a contact's UPDATE) inside a savepoint
// that is then rolled back: the row goes with the savepoint, and what was gathered before
// the savepoint is gathered again.
TEST_F(DeferredAdds, AFlushInsideARolledBackSavepointLosesNothingAndCountsNothingTwice) {
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(Sql("SAVEPOINT item"));
  ASSERT_TRUE(Add("a", 2));
  ASSERT_TRUE(conn->FlushDeferred());
  EXPECT_EQ(Counts(*conn), "a=3 ");  // written in the transaction
  ASSERT_TRUE(Sql("ROLLBACK TO item"));
  EXPECT_EQ(conn->deferred_count(), 1u);
  EXPECT_EQ(Counts(*conn), "a=1 ");  // a read of the table writes what is gathered first
  EXPECT_EQ(conn->deferred_count(), 0u);
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "a=1 ");
}

// No caller has to remember the gathered adds: before any statement that may read or
// move their rows (an UPDATE or DELETE whose trigger changes them, an upsert, a read of
// the table) the connection writes them, and plain inserts and reads of other tables
// leave them gathered.
TEST_F(DeferredAdds, AStatementThatMayReadOrMoveTheRowsFindsTheAddsWritten) {
  ASSERT_TRUE(
      conn->ExecScript("CREATE TABLE items (k TEXT PRIMARY KEY, x INTEGER NOT NULL);"
                       "CREATE TRIGGER items_moved AFTER UPDATE OF x ON items BEGIN "
                       "  UPDATE counts SET n = n - 1 WHERE k = old.k; END;"
                       "CREATE TRIGGER items_gone AFTER DELETE ON items BEGIN "
                       "  UPDATE counts SET n = n - 10 WHERE k = old.k; END;"));
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", 5));
  ASSERT_TRUE(Sql("INSERT INTO items (k, x) VALUES ('a', 0)"));  // a plain insert: gathered still
  ASSERT_TRUE(static_cast<Conn&>(*conn).Query("SELECT * FROM items"));
  EXPECT_EQ(conn->deferred_count(), 1u);
  ASSERT_TRUE(Sql("UPDATE items SET x = 1 WHERE k = 'a'"));  // its trigger finds a=5
  EXPECT_EQ(conn->deferred_count(), 0u);
  ASSERT_TRUE(Add("a", 20));
  ASSERT_TRUE(Sql("DELETE FROM items WHERE k = 'a'"));  // and a=24 here
  ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "a=15 ");
}

TEST_F(DeferredAdds, ReleasingASavepointThatBeganTheTransactionWritesTheAdds) {
  ASSERT_TRUE(Sql("SAVEPOINT outer_one"));  // no BEGIN: this savepoint is the transaction
  ASSERT_TRUE(Add("a", 4));
  ASSERT_TRUE(Sql("RELEASE SAVEPOINT outer_one"));
  EXPECT_EQ(conn->deferred_count(), 0u);
  EXPECT_EQ(Committed(), "a=4 ");
}

TEST_F(DeferredAdds, OnlyTransactionStatementsAreTakenForThem) {
  // Statements whose first letters look like BEGIN, COMMIT, SAVEPOINT, RELEASE or ROLLBACK
  // change nothing of what was gathered.
  ASSERT_TRUE(
      conn->ExecScript("CREATE TABLE rollbacks (x INTEGER); CREATE TABLE savepoints (x INTEGER)"));
  ASSERT_TRUE(conn->Step("BEGIN IMMEDIATE"));
  ASSERT_TRUE(Add("a", 1));
  ASSERT_TRUE(Sql("INSERT INTO rollbacks (x) VALUES (1)"));
  ASSERT_TRUE(static_cast<Conn&>(*conn).Query("SELECT * FROM savepoints"));
  ASSERT_TRUE(Sql("REINDEX rollbacks"));
  EXPECT_EQ(conn->deferred_count(), 1u);
  ASSERT_TRUE(conn->Step("COMMIT"));
  EXPECT_EQ(Committed(), "a=1 ");
}

// Through the group commit: a batch of five calls whose second and fourth fail after
// their adds. The batch runs without savepoints, rolls back at the first failure, and runs
// the first call again in a savepoint, then the rest each in its own (src/store/sqlite_batch.h):
// the counts hold the adds of the calls that succeeded, once each. The second round's
// batch takes savepoints from the start.
Callback Adding(const std::string& k, int64_t n, bool fail) {
  return [k, n, fail](Conn& c) -> Result<int64_t> {
    if (auto st = c.AddTo(kAdd, {k}, n); !st) return Fail(st.error());
    if (fail) return Fail(Errc::kInvalidArgument, "refused");
    return n;
  };
}

TEST(DeferredAddsInBatches, OnlyTheCallsThatSucceededCountAndEachOnce) {
  SqliteFixture f;
  ASSERT_TRUE(f.db->Write([](Conn& c) -> Result<int64_t> {
    return c.Exec("CREATE TABLE counts (k TEXT PRIMARY KEY, n INTEGER NOT NULL)");
  }));
  auto counts = [&] {
    return *f.db->Read([](Conn& c) -> Result<std::string> { return Counts(c); });
  };
  // The first batch runs without savepoints; the failure makes the next batches take them.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // The held leader writes row 1000 of the fixture's table each time.
    ASSERT_TRUE(f.db->Write([](Conn& c) { return c.Exec("DELETE FROM t WHERE id = 1000"); }));
    auto results =
        RunAsOneBatch(f, {Adding("a", 1, false), Adding("a", 100, true), Adding("b", 2, false),
                          Adding("a", 1000, true), Adding("a", 10, false)});
    EXPECT_TRUE(results[0]);
    EXPECT_FALSE(results[1]);
    EXPECT_TRUE(results[2]);
    EXPECT_FALSE(results[3]);
    EXPECT_TRUE(results[4]);
    EXPECT_EQ(counts(), round == 0 ? "a=11 b=2 " : "a=22 b=4 ");
  }
}

}  // namespace
}  // namespace crmd::store
