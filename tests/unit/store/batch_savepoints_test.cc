// The group commit's savepoints (src/store/sqlite_batch.h): a batch runs its calls
// without them; a call that fails has its work undone with the transaction's, and the
// calls that ran before it run again, each in a savepoint, as does the rest of the batch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/store/sqlite_fixture.h"

namespace crmd::store {
namespace {

std::string Rows(SqliteFixture& f) {
  return *f.db->Read([](Conn& c) -> Result<std::string> {
    std::string out;
    auto rows = c.Query("SELECT id, who FROM t WHERE id < 1000 ORDER BY id");
    if (!rows) return Fail(rows.error());
    for (const auto& row : *rows) out += std::to_string(row.Int(0)) + ":" + row.Str(1) + " ";
    return out;
  });
}

Callback InsertCounting(int64_t id, const std::string& who, std::atomic<int>& runs) {
  return [id, who, &runs](Conn& c) -> Result<int64_t> {
    ++runs;
    return c.Exec("INSERT INTO t(id, who) VALUES (?, ?)", {id, who});
  };
}

// Writes two rows, then fails.
Callback WriteThenFail(std::atomic<int>& runs) {
  return [&runs](Conn& c) -> Result<int64_t> {
    ++runs;
    if (auto r = c.Exec("INSERT INTO t(id, who) VALUES (3, 'b')"); !r) return Fail(r.error());
    if (auto r = c.Exec("INSERT INTO t(id, who) VALUES (4, 'b')"); !r) return Fail(r.error());
    return Fail(Errc::kInvalidArgument, "b changed its mind");
  };
}

TEST(SqliteBatchSavepoints, ABatchWhereNothingFailsTakesNoSavepoint) {
  SqliteFixture f;
  const SqliteWriteStats before = WriteStats(*f.db);
  std::atomic<int> runs{0};
  std::vector<Callback> calls;
  for (int i = 1; i <= 7; ++i) calls.push_back(InsertCounting(i, "w", runs));
  auto results = RunAsOneBatch(f, calls);
  for (const auto& r : results) EXPECT_TRUE(r.has_value());
  EXPECT_EQ(runs.load(), 7);
  EXPECT_EQ(Rows(f), "1:w 2:w 3:w 4:w 5:w 6:w 7:w ");
  const SqliteWriteStats after = WriteStats(*f.db);
  EXPECT_EQ(after.savepoint_calls - before.savepoint_calls, 0u);
  EXPECT_EQ(after.batch_reruns - before.batch_reruns, 0u);
  EXPECT_EQ(after.commits - before.commits, 2u);  // the leader's batch and the seven
}

TEST(SqliteBatchSavepoints, AFailedCallIsUndoneAndTheCallsBeforeItRunAgain) {
  SqliteFixture f;
  const SqliteWriteStats before = WriteStats(*f.db);
  std::atomic<int> a_runs{0}, b_runs{0}, c_runs{0}, d_runs{0};
  int64_t b_rows_seen_by_c = -1;
  Callback c_call = [&](Conn& c) -> Result<int64_t> {
    ++c_runs;
    auto n = c.QueryOne("SELECT COUNT(*) FROM t WHERE who = 'b'");
    if (!n) return Fail(n.error());
    b_rows_seen_by_c = (**n).Int(0);
    return c.Exec("INSERT INTO t(id, who) VALUES (5, 'c')");
  };
  auto results = RunAsOneBatch(f, {InsertCounting(2, "a", a_runs), WriteThenFail(b_runs), c_call,
                                   InsertCounting(6, "d", d_runs)});
  EXPECT_TRUE(results[0].has_value());
  ASSERT_FALSE(results[1].has_value());
  EXPECT_EQ(results[1].error().message, "b changed its mind");
  EXPECT_TRUE(results[2].has_value());
  EXPECT_TRUE(results[3].has_value());
  // a ran before b in the rolled back transaction, so it ran again; b is not run again;
  // c and d ran once, after the rollback.
  EXPECT_EQ(a_runs.load(), 2);
  EXPECT_EQ(b_runs.load(), 1);
  EXPECT_EQ(c_runs.load(), 1);
  EXPECT_EQ(d_runs.load(), 1);
  EXPECT_EQ(b_rows_seen_by_c, 0);
  EXPECT_EQ(Rows(f), "2:a 5:c 6:d ");
  const SqliteWriteStats after = WriteStats(*f.db);
  EXPECT_EQ(after.batch_reruns - before.batch_reruns, 1u);
  EXPECT_EQ(after.savepoint_calls - before.savepoint_calls, 3u);  // a again, c and d
  EXPECT_EQ(after.commits - before.commits, 2u);
}

TEST(SqliteBatchSavepoints, ACallFailingFirstInItsTransactionRunsNothingAgain) {
  SqliteFixture f;
  const SqliteWriteStats before = WriteStats(*f.db);
  std::atomic<int> a_runs{0}, b_runs{0}, c_runs{0};
  auto results = RunAsOneBatch(
      f, {WriteThenFail(b_runs), InsertCounting(2, "a", a_runs), InsertCounting(5, "c", c_runs)});
  EXPECT_FALSE(results[0].has_value());
  EXPECT_TRUE(results[1].has_value());
  EXPECT_TRUE(results[2].has_value());
  EXPECT_EQ(a_runs.load() + b_runs.load() + c_runs.load(), 3);
  EXPECT_EQ(Rows(f), "2:a 5:c ");
  const SqliteWriteStats after = WriteStats(*f.db);
  EXPECT_EQ(after.batch_reruns - before.batch_reruns, 0u);
  EXPECT_EQ(after.savepoint_calls - before.savepoint_calls, 0u);
}

TEST(SqliteBatchSavepoints, ACallThatThrowsAfterAnotherIsUndoneAndRethrownToItsCaller) {
  SqliteFixture f;
  std::atomic<int> a_runs{0};
  Callback thrower = [](Conn& c) -> Result<int64_t> {
    (void)c.Exec("INSERT INTO t(id, who) VALUES (3, 'thrower')");
    throw std::runtime_error("boom");
  };
  // Not through RunAsOneBatch: the exception reaches the thrower's own thread.
  bool thrown = false;
  HeldLeader leader(f);
  Result<int64_t> a = 0;
  std::thread first([&] { a = f.db->Write(InsertCounting(2, "a", a_runs)); });
  ASSERT_TRUE(f.WaitQueued(1));
  std::thread second([&] {
    try {
      (void)f.db->Write(thrower);
    } catch (const std::runtime_error& e) {
      thrown = std::string(e.what()) == "boom";
    }
  });
  ASSERT_TRUE(f.WaitQueued(2));
  leader.Release();
  first.join();
  second.join();
  EXPECT_TRUE(thrown);
  EXPECT_TRUE(a.has_value());
  EXPECT_EQ(a_runs.load(), 2);
  EXPECT_EQ(Rows(f), "2:a ");
  EXPECT_EQ(WriteStats(*f.db).batch_reruns, 1u);
}

// After a batch ran again, the next batches take savepoints from the start (a load where
// calls often fail runs each callback about once), and then none again.
TEST(SqliteBatchSavepoints, AfterARerunSixteenBatchesTakeSavepointsThenNoneAgain) {
  SqliteFixture f;
  std::atomic<int> a_runs{0}, b_runs{0};
  (void)RunAsOneBatch(f, {InsertCounting(2, "a", a_runs), WriteThenFail(b_runs)});
  ASSERT_EQ(WriteStats(*f.db).batch_reruns, 1u);
  const uint64_t at = WriteStats(*f.db).savepoint_calls;
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(f.Insert(100 + i));  // one batch each
  EXPECT_EQ(WriteStats(*f.db).savepoint_calls - at, 16u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.Insert(200 + i));
  EXPECT_EQ(WriteStats(*f.db).savepoint_calls - at, 16u);
  // A call failing alone in a batch now is undone without a savepoint or a second run.
  EXPECT_FALSE(f.Insert(200, "taken"));
  EXPECT_EQ(WriteStats(*f.db).savepoint_calls - at, 16u);
  EXPECT_EQ(WriteStats(*f.db).batch_reruns, 1u);
  EXPECT_TRUE(f.Insert(300));
  EXPECT_EQ(f.Count(), 1 + 1 + 16 + 5 + 1);  // leader, a, the sixteen, the five, 300
}

}  // namespace
}  // namespace crmd::store
