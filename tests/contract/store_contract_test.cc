// The store driver contract: what every repository relies on, checked on the engine the
// suite runs on (SQLite by default; PostgreSQL under the `pg.` prefix, see
// tests/support/test_database.h). Repositories are written once against this contract.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "src/store/db.h"
#include "tests/support/test_database.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

using crmd::testing::ScratchDatabase;
using crmd::testing::TempDir;

class StoreContract : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<ScratchDatabase>(dir_.path() + "/c.db");
    auto opened = Open(scratch_->url(), 4);
    ASSERT_TRUE(opened) << opened.error().message << " " << opened.error().detail;
    db_ = std::move(*opened);
    auto st = db_->Write([](Conn& c) -> Status {
      return c.ExecScript(
          "CREATE TABLE kv (id BIGINT PRIMARY KEY, name TEXT NOT NULL UNIQUE, n BIGINT, r DOUBLE "
          "PRECISION, "
          "note TEXT)");
    });
    ASSERT_TRUE(st) << st.error().detail;
  }

  Result<int64_t> Count() {
    return db_->Read([](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT COUNT(*) FROM kv");
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
  }

  TempDir dir_;
  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

TEST_F(StoreContract, BindsEveryValueKindAndReadsItBackTyped) {
  auto st = db_->Write([](Conn& c) -> Result<int64_t> {
    return c.Exec("INSERT INTO kv (id, name, n, r, note) VALUES (?, ?, ?, ?, ?)",
                  {int64_t{1}, std::string("it's \"quoted\" ? and $1"), int64_t{-9007199254740993},
                   2.5, Null()});
  });
  ASSERT_TRUE(st) << st.error().detail;
  EXPECT_EQ(*st, 1);
  auto row = db_->Read([](Conn& c) {
    return c.QueryOne("SELECT id, name, n, r, note FROM kv WHERE name = ?",
                      {std::string("it's \"quoted\" ? and $1")});
  });
  ASSERT_TRUE(row && *row);
  const Row& r = **row;
  EXPECT_TRUE(std::holds_alternative<int64_t>(r.at(0)));
  EXPECT_EQ(r.Int(0), 1);
  EXPECT_EQ(r.Str(1), "it's \"quoted\" ? and $1");
  EXPECT_EQ(r.Int(2), -9007199254740993);
  EXPECT_TRUE(std::holds_alternative<double>(r.at(3)));
  EXPECT_DOUBLE_EQ(r.Real(3), 2.5);
  EXPECT_TRUE(r.IsNull(4));
}

TEST_F(StoreContract, LiteralQuestionMarksAreNotPlaceholders) {
  auto row = db_->Read([](Conn& c) { return c.QueryOne("SELECT '?', ? ", {std::string("x")}); });
  ASSERT_TRUE(row && *row) << (row ? "" : row.error().detail);
  EXPECT_EQ((*row)->Str(0), "?");
  EXPECT_EQ((*row)->Str(1), "x");
}

TEST_F(StoreContract, AggregatesOfIntegersAreIntegers) {
  ASSERT_TRUE(db_->Write([](Conn& c) -> Status {
    for (int64_t i = 1; i <= 3; ++i) {
      auto r = c.Exec("INSERT INTO kv (id, name, n) VALUES (?, ?, ?)",
                      {i, "k" + std::to_string(i), i * 10});
      if (!r) return Fail(r.error());
    }
    return Ok();
  }));
  auto row =
      db_->Read([](Conn& c) { return c.QueryOne("SELECT SUM(n), COUNT(*), MAX(n) FROM kv"); });
  ASSERT_TRUE(row && *row);
  EXPECT_TRUE(std::holds_alternative<int64_t>((*row)->at(0)));
  EXPECT_EQ((*row)->Int(0), 60);
  EXPECT_EQ((*row)->Int(1), 3);
  EXPECT_EQ((*row)->Int(2), 30);
}

TEST_F(StoreContract, UniqueViolationIsAlreadyExistsAndRollsBackTheTransaction) {
  ASSERT_TRUE(
      db_->Write([](Conn& c) { return c.Exec("INSERT INTO kv (id, name) VALUES (1, 'a')"); }));
  auto r = db_->Write([](Conn& c) -> Result<int64_t> {
    auto first = c.Exec("INSERT INTO kv (id, name) VALUES (2, 'b')");
    if (!first) return first;
    return c.Exec("INSERT INTO kv (id, name) VALUES (3, 'a')");  // name taken
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kAlreadyExists);
  EXPECT_EQ(r.error().message, "already exists");  // no SQL or engine text for clients
  EXPECT_EQ(*Count(), 1) << "the first insert of the failed transaction must be rolled back";
}

TEST_F(StoreContract, TextWithANulCharacterIsRefusedAlikeOnBothEnginesAndWritesNothing) {
  // PostgreSQL would store "ab" (libpq stops at the NUL) and SQLite all four bytes.
  const std::string nul("ab\0cd", 5);
  auto r = db_->Write([&](Conn& c) -> Result<int64_t> {
    auto first = c.Exec("INSERT INTO kv (id, name) VALUES (1, 'fine')");
    if (!first) return first;
    return c.Exec("INSERT INTO kv (id, name) VALUES (?, ?)", {int64_t{2}, nul});
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("U+0000"), std::string::npos) << r.error().message;
  EXPECT_EQ(*Count(), 0) << "nothing of the transaction is kept";
  // Nor in a query's parameter.
  auto q =
      db_->Read([&](Conn& c) { return c.QueryOne("SELECT id FROM kv WHERE name = ?", {nul}); });
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().code, Errc::kInvalidArgument);
}

TEST_F(StoreContract, AnErrorReturnedByTheCallbackRollsBack) {
  auto r = db_->Write([](Conn& c) -> Result<int64_t> {
    auto ins = c.Exec("INSERT INTO kv (id, name) VALUES (1, 'a')");
    if (!ins) return ins;
    return Fail(Errc::kInvalidArgument, "changed my mind");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(*Count(), 0);
}

TEST_F(StoreContract, AFailedStatementIgnoredByTheCallbackCommitsNothing) {
  // On PostgreSQL a failed statement aborts the transaction; the driver must not report
  // success for a transaction the engine rolled back. On SQLite the statement alone failed
  // and the rest commits. Either way no half-applied write is reported as the other.
  ASSERT_TRUE(
      db_->Write([](Conn& c) { return c.Exec("INSERT INTO kv (id, name) VALUES (1, 'a')"); }));
  auto r = db_->Write([](Conn& c) -> Result<int64_t> {
    (void)c.Exec("INSERT INTO kv (id, name) VALUES (2, 'a')");  // fails, ignored
    return c.Exec("INSERT INTO kv (id, name) VALUES (3, 'c')");
  });
  auto count = *Count();
  if (r) {
    EXPECT_EQ(count, 2);
  } else {
    EXPECT_EQ(count, 1);
  }
}

TEST_F(StoreContract, AFailureRolledBackToASavepointLetsTheRestCommit) {
  // The shape of upsert_contacts_bulk: each item in a savepoint, a failed item undone alone.
  ASSERT_TRUE(
      db_->Write([](Conn& c) { return c.Exec("INSERT INTO kv (id, name) VALUES (1, 'a')"); }));
  auto r = db_->Write([](Conn& c) -> Result<int64_t> {
    if (auto sp = c.Exec("SAVEPOINT item"); !sp) return sp;
    auto dup = c.Exec("INSERT INTO kv (id, name) VALUES (2, 'a')");
    EXPECT_FALSE(dup);
    if (dup) return Fail(Errc::kInternal, "duplicate accepted");
    EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
    if (auto rb = c.Exec("ROLLBACK TO SAVEPOINT item"); !rb) return rb;
    if (auto rel = c.Exec("RELEASE SAVEPOINT item"); !rel) return rel;
    return c.Exec("INSERT INTO kv (id, name) VALUES (3, 'c')");
  });
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(*Count(), 2);
}

TEST_F(StoreContract, InsertReturningIdAndNextIdNeverReuseADeletedId) {
  ASSERT_TRUE(db_->Write([](Conn& c) -> Status {
    return c.ExecScript(
        "CREATE TABLE IF NOT EXISTS id_high_water (tbl TEXT PRIMARY KEY, last_id BIGINT NOT NULL)");
  }));
  auto insert = [&](const std::string& name) {
    return db_->Write([&](Conn& c) {
      return c.InsertReturningId(
          "INSERT INTO kv (id, name) VALUES (" + NextIdSql("kv") + ", ?) RETURNING id", {name});
    });
  };
  auto a = insert("a"), b = insert("b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*b, *a + 1);
  ASSERT_TRUE(db_->Write([&](Conn& c) -> Status {
    auto d = c.Exec("DELETE FROM kv WHERE id = ?", {*b});
    if (!d) return Fail(d.error());
    auto hw = c.Exec("INSERT INTO id_high_water (tbl, last_id) VALUES ('kv', ?)", {*b});
    if (!hw) return Fail(hw.error());
    return Ok();
  }));
  auto c2 = insert("c");
  ASSERT_TRUE(c2);
  EXPECT_EQ(*c2, *b + 1);
}

TEST_F(StoreContract, ConcurrentWritersNeverLoseAnUpdateOrShareAnId) {
  ASSERT_TRUE(db_->Write([](Conn& c) -> Status {
    auto r = c.ExecScript(
        "CREATE TABLE IF NOT EXISTS id_high_water (tbl TEXT PRIMARY KEY, last_id BIGINT NOT NULL); "
        "CREATE TABLE counter (id BIGINT PRIMARY KEY, v BIGINT NOT NULL); "
        "INSERT INTO counter VALUES (1, 0)");
    return r;
  }));
  constexpr int kThreads = 4, kEach = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  std::mutex mu;
  std::set<int64_t> ids;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto id = db_->Write([&](Conn& c) -> Result<int64_t> {
          // Read-modify-write, the shape of every revision check and counter in crmd.
          auto v = c.QueryOne("SELECT v FROM counter WHERE id = 1");
          if (!v) return Fail(v.error());
          auto up = c.Exec("UPDATE counter SET v = ? WHERE id = 1", {(*v)->Int(0) + 1});
          if (!up) return Fail(up.error());
          return c.InsertReturningId(
              "INSERT INTO kv (id, name) VALUES (" + NextIdSql("kv") + ", ?) RETURNING id",
              {"t" + std::to_string(t) + "-" + std::to_string(i)});
        });
        if (!id) {
          ++failures;
          continue;
        }
        std::lock_guard lock(mu);
        ids.insert(*id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kEach));
  auto v = db_->Read([](Conn& c) { return c.QueryOne("SELECT v FROM counter WHERE id = 1"); });
  ASSERT_TRUE(v && *v);
  EXPECT_EQ((*v)->Int(0), kThreads * kEach);
}

TEST_F(StoreContract, AReadSeesOneSnapshotWhileAWriterCommits) {
  ASSERT_TRUE(
      db_->Write([](Conn& c) { return c.Exec("INSERT INTO kv (id, name) VALUES (1, 'a')"); }));
  auto r = db_->Read([&](Conn& c) -> Result<std::pair<int64_t, int64_t>> {
    auto before = c.QueryOne("SELECT COUNT(*) FROM kv");
    if (!before) return Fail(before.error());
    std::thread writer([&] {
      auto w =
          db_->Write([](Conn& w) { return w.Exec("INSERT INTO kv (id, name) VALUES (2, 'b')"); });
      EXPECT_TRUE(w) << (w ? "" : w.error().detail);
    });
    writer.join();
    auto after = c.QueryOne("SELECT COUNT(*) FROM kv");
    if (!after) return Fail(after.error());
    return std::make_pair((*before)->Int(0), (*after)->Int(0));
  });
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(r->first, 1);
  EXPECT_EQ(r->second, 1) << "a read transaction must not see a commit made after it began";
  EXPECT_EQ(*Count(), 2);
}

TEST_F(StoreContract, ConnectionLostMidTransactionIsUnavailableAndTheNextTransactionWorks) {
  if (!scratch_->postgres()) {
    GTEST_SKIP() << "SQLite is in-process: there is no connection to lose; the pg. run checks this";
  }
  auto r = db_->Write([](Conn& c) -> Result<int64_t> {
    auto ins = c.Exec("INSERT INTO kv (id, name) VALUES (1, 'lost')");
    if (!ins) return ins;
    // The server ends this very session, as a crash or failover would.
    auto killed = c.Query("SELECT pg_terminate_backend(pg_backend_pid())");
    if (!killed) return Fail(killed.error());
    return c.Exec("INSERT INTO kv (id, name) VALUES (2, 'after')");
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  EXPECT_EQ(*Count(), 0) << "nothing of the lost transaction may be committed";
  // The pool replaces the dead connection.
  for (int i = 0; i < 6; ++i) {
    auto ok = db_->Write([i](Conn& c) {
      return c.Exec("INSERT INTO kv (id, name) VALUES (?, ?)",
                    {int64_t{10 + i}, "n" + std::to_string(i)});
    });
    ASSERT_TRUE(ok) << ok.error().detail;
  }
  EXPECT_EQ(*Count(), 6);
}

TEST_F(StoreContract, ATransactionThatRunsNoStatementSucceedsAndChangesNothing) {
  int calls = 0;
  EXPECT_TRUE(db_->Write([&](Conn&) -> Status {
    ++calls;
    return Ok();
  }));
  EXPECT_TRUE(db_->Read([&](Conn&) -> Status {
    ++calls;
    return Ok();
  }));
  EXPECT_EQ(calls, 2);
  auto refused = db_->Write([](Conn&) -> Status { return Fail(Errc::kNotFound, "no"); });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Errc::kNotFound);
  EXPECT_EQ(*Count(), 0);
}

TEST_F(StoreContract, ReadsAndWritesTakingTurnsOnOneConnectionSeeEveryEarlierCommit) {
  // One connection: each read's end (on PostgreSQL a COMMIT answered while the next
  // transaction starts) must leave it ready for the next, and each transaction must see
  // everything committed before it.
  auto one = Open(scratch_->url(), 1);
  ASSERT_TRUE(one) << one.error().detail;
  for (int64_t i = 1; i <= 30; ++i) {
    auto w = (*one)->Write([i](Conn& c) {
      return c.Exec("INSERT INTO kv (id, name) VALUES (?, ?)", {i, "k" + std::to_string(i)});
    });
    ASSERT_TRUE(w) << w.error().detail;
    auto seen = (*one)->Read([](Conn& c) -> Result<std::pair<int64_t, int64_t>> {
      auto n = c.QueryOne("SELECT COUNT(*) FROM kv");
      if (!n) return Fail(n.error());
      auto top = c.QueryOne("SELECT MAX(id) FROM kv");
      if (!top) return Fail(top.error());
      return std::make_pair((*n)->Int(0), (*top)->Int(0));
    });
    ASSERT_TRUE(seen) << seen.error().detail;
    EXPECT_EQ(seen->first, i);
    EXPECT_EQ(seen->second, i);
  }
}

TEST_F(StoreContract, AConnectionEndedBetweenTransactionsIsReplacedUnnoticed) {
  if (!scratch_->postgres()) {
    GTEST_SKIP() << "SQLite is in-process: there is no connection to lose; the pg. run checks this";
  }
  auto one = Open(scratch_->url(), 1);
  ASSERT_TRUE(one) << one.error().detail;
  for (bool after_read : {true, false}) {
    // The pool's only connection ends a transaction (a read leaves its COMMIT's answer to
    // be read by the next user), then the server ends that session.
    auto backend = [](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT pg_backend_pid()");
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    };
    auto pid = after_read ? (*one)->Read(backend) : (*one)->Write(backend);
    ASSERT_TRUE(pid) << pid.error().detail;
    auto killed = db_->Write([&](Conn& c) {
      return c.Query("SELECT pg_terminate_backend(CAST(? AS INTEGER))", {*pid});
    });
    ASSERT_TRUE(killed) << killed.error().detail;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Nothing had begun on the dead connection: the next transaction runs on a new one.
    auto w = (*one)->Write([&](Conn& c) {
      return c.Exec("INSERT INTO kv (id, name) VALUES (?, ?)",
                    {int64_t{after_read ? 1 : 2}, after_read ? "after read" : "after write"});
    });
    ASSERT_TRUE(w) << w.error().detail;
  }
  EXPECT_EQ(*Count(), 2);
}

TEST_F(StoreContract, OnlySerializationFailuresAreRetried) {
  int calls = 0;
  auto bad = db_->Write([&](Conn& c) -> Result<int64_t> {
    ++calls;
    return c.Exec("INSERT INTO no_such_table (x) VALUES (1)");
  });
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kInternal);
  EXPECT_EQ(bad.error().message, "internal error");
  EXPECT_EQ(calls, 1) << "an ordinary error must not be retried";
  if (!scratch_->postgres()) return;  // SQLite's single writer never reports a conflict

  calls = 0;
  auto r = db_->Write([&](Conn& c) -> Result<int64_t> {
    ++calls;
    auto ins = c.Exec("INSERT INTO kv (id, name) VALUES (?, ?)",
                      {int64_t{calls}, "try" + std::to_string(calls)});
    if (!ins) return ins;
    if (calls == 1) {
      // What PostgreSQL answers when a concurrent transaction won a conflict.
      auto st = c.ExecScript(
          "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$");
      if (!st) return Fail(st.error());
    }
    return ins;
  });
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(calls, 2);
  auto names = db_->Read([](Conn& c) { return c.Query("SELECT name FROM kv ORDER BY id"); });
  ASSERT_TRUE(names);
  ASSERT_EQ(names->size(), 1u);
  EXPECT_EQ(names->at(0).Str(0), "try2") << "the first attempt's insert must have been rolled back";
}

TEST_F(StoreContract, MigrationsAreRecordedAndIdempotent) {
  auto again = Migrate(*db_);
  ASSERT_TRUE(again) << again.error().detail;
  EXPECT_EQ(*again, 0);
  auto row = db_->Read(
      [](Conn& c) { return c.QueryOne("SELECT COUNT(*), MIN(version) FROM schema_migrations"); });
  ASSERT_TRUE(row && *row);
  EXPECT_GE((*row)->Int(0), 11);
  EXPECT_EQ((*row)->Int(1), 1);
}

}  // namespace
}  // namespace crmd::store
