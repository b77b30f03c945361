// The SQLite driver's group commit (src/store/sqlite.cc): concurrent Write() calls share
// one transaction and one fsync, each keeps its own atomicity, and none is answered before
// the commit that holds it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "src/core/log.h"
#include "src/core/worker_pool.h"
#include "src/store/db.h"
#include "src/store/sqlite.h"
#include "tests/unit/store/sqlite_fixture.h"

namespace crmd::store {
namespace {

// Sets the group commit's longest gathering wait for one test, and puts back the one
// before however the test ends.
struct GatherMax {
  int old;
  explicit GatherMax(int microseconds) : old(SetGatherMaxForTesting(microseconds)) {}
  ~GatherMax() { SetGatherMaxForTesting(old); }
  GatherMax(const GatherMax&) = delete;
  GatherMax& operator=(const GatherMax&) = delete;
};

TEST(SqliteGroupCommit, ConcurrentWritersAreAllCommitted) {
  SqliteFixture f;
  const uint64_t before = f.Commits();
  constexpr int kThreads = 8, kEach = 150;
  EXPECT_EQ(f.InsertFromThreads(kThreads, kEach), 0);
  EXPECT_EQ(f.Count(), kThreads * kEach);
  const uint64_t commits = f.Commits() - before;
  EXPECT_GE(commits, 1u);
  EXPECT_LE(commits, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(WriteStats(*f.db).queued, 0);
}

// Every writer is answered whichever way its batch ends: the leader wakes one writer of a
// batch, which wakes the others, and a head told to lead (a leader hands over after four
// batches in a row) wakes its batch itself. Sixteen threads writing without a pause keep
// writers queued behind every batch, so every way is taken.
TEST(SqliteGroupCommit, EveryWriterOfEveryBatchIsAnsweredThroughHandovers) {
  SqliteFixture f;
  const uint64_t before = f.Commits();
  constexpr int kThreads = 16, kEach = 300;
  // A leader hands over when it has led four batches in a row and more are queued, which
  // depends on the scheduler: with two busy cores beside the test, one round in 40 had
  // none. So rounds of writes go on until one has (at most 10).
  int rounds = 0;
  do {
    EXPECT_EQ(f.InsertFromThreads(kThreads, kEach, "w", int64_t{rounds} * kThreads * kEach + 1), 0);
    ++rounds;
  } while (WriteStats(*f.db).handovers == 0 && rounds < 10);
  EXPECT_EQ(f.Count(), int64_t{rounds} * kThreads * kEach);
  const SqliteWriteStats stats = WriteStats(*f.db);
  EXPECT_GE(stats.handovers, 1u);
  // Batches of more than one writer: fewer commits than writes. (Not fewer than half: how
  // many writers a batch gathers depends on the scheduler, and with two busy cores beside
  // the test it took 2,545 to 3,267 commits for 4,800 writes in 3 of 40 runs.)
  EXPECT_LT(stats.commits - before, static_cast<uint64_t>(rounds) * kThreads * kEach);
  EXPECT_EQ(stats.queued, 0);
}

// While one batch runs, the writers that arrive queue up and are committed together: one
// commit for all of them.
TEST(SqliteGroupCommit, WritersQueuedBehindABatchShareOneCommit) {
  SqliteFixture f;
  const uint64_t before = f.Commits();
  constexpr int kQueued = 7;
  std::atomic<bool> running{false};
  std::thread leader([&] {
    auto r = f.db->Write([&](Conn& c) -> Result<int64_t> {
      running = true;
      EXPECT_TRUE(f.WaitQueued(kQueued));
      return c.Exec("INSERT INTO t(id, who) VALUES (1000, 'leader')");
    });
    EXPECT_TRUE(r.has_value());
  });
  // The leader's batch (itself alone) is running; the others queue behind it.
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < kQueued; ++i)
    threads.emplace_back([&, i] {
      if (f.Insert(i + 1)) ++ok;
    });
  for (auto& th : threads) th.join();
  leader.join();
  EXPECT_EQ(ok.load(), kQueued);
  EXPECT_EQ(f.Count(), kQueued + 1);
  // The leader's batch, then one batch of the seven.
  EXPECT_EQ(f.Commits() - before, 2u);
}

// A writer that fails is rolled back to its own savepoint; the others in its batch commit.
TEST(SqliteGroupCommit, AFailingWriterIsRolledBackAloneInItsBatch) {
  SqliteFixture f;
  const uint64_t before = f.Commits();
  std::atomic<bool> release{false}, running{false};
  std::thread leader([&] {
    EXPECT_TRUE(f.db->Write([&](Conn& c) -> Result<int64_t> {
      running = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return c.Exec("INSERT INTO t(id, who) VALUES (1, 'leader')");
    }));
  });
  // The leader runs its batch (just itself) before the others queue.
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  Result<int64_t> a = 0, b = 0, dup = 0, d = 0;
  std::vector<std::thread> threads;
  threads.emplace_back([&] { a = f.Insert(2, "a"); });
  threads.emplace_back([&] {
    b = f.db->Write([](Conn& c) -> Result<int64_t> {
      auto r = c.Exec("INSERT INTO t(id, who) VALUES (3, 'b')");
      if (!r) return Fail(r.error());
      r = c.Exec("INSERT INTO t(id, who) VALUES (4, 'b')");
      if (!r) return Fail(r.error());
      return Fail(Errc::kInvalidArgument, "b changed its mind");
    });
  });
  threads.emplace_back([&] { dup = f.Insert(1, "duplicate of the leader's row"); });
  threads.emplace_back([&] { d = f.Insert(5, "d"); });
  ASSERT_TRUE(f.WaitQueued(4));
  release = true;
  for (auto& th : threads) th.join();
  leader.join();

  EXPECT_TRUE(a.has_value());
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().message, "b changed its mind");
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  EXPECT_TRUE(d.has_value());
  auto ids = *f.db->Read([](Conn& c) -> Result<std::string> {
    std::string out;
    auto rows = c.Query("SELECT id, who FROM t ORDER BY id");
    if (!rows) return Fail(rows.error());
    for (const auto& row : *rows) out += std::to_string(row.Int(0)) + ":" + row.Str(1) + " ";
    return out;
  });
  EXPECT_EQ(ids, "1:leader 2:a 5:d ");
  // The four queued writers were one batch: the leader's commit and one more.
  EXPECT_EQ(f.Commits() - before, 2u);
}

TEST(SqliteGroupCommit, AnExceptionReachesItsOwnCallerOnlyAndRollsBackItsWork) {
  SqliteFixture f;
  std::atomic<bool> release{false}, running{false};
  std::thread leader([&] {
    EXPECT_TRUE(f.db->Write([&](Conn& c) -> Result<int64_t> {
      running = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return c.Exec("INSERT INTO t(id, who) VALUES (1, 'leader')");
    }));
  });
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool thrown = false;
  Result<int64_t> other = 0;
  std::thread thrower([&] {
    try {
      (void)f.db->Write([](Conn& c) -> Result<int64_t> {
        (void)c.Exec("INSERT INTO t(id, who) VALUES (2, 'thrower')");
        throw std::runtime_error("boom");
      });
    } catch (const std::runtime_error& e) {
      thrown = std::string(e.what()) == "boom";
    }
  });
  std::thread normal([&] { other = f.Insert(3, "other"); });
  ASSERT_TRUE(f.WaitQueued(2));
  release = true;
  thrower.join();
  normal.join();
  leader.join();
  EXPECT_TRUE(thrown);
  EXPECT_TRUE(other.has_value());
  EXPECT_EQ(f.Count(), 2);  // the leader's and the other's, not the thrower's
  // The writer connection is usable afterwards (no transaction left open).
  EXPECT_TRUE(f.Insert(4));
  EXPECT_EQ(f.Count(), 3);
}

// A callback may run on another caller's thread (the batch's leader); it still sees its own
// caller's log context, which the outbox records with each event.
TEST(SqliteGroupCommit, ACallbackRunsUnderItsCallersLogContext) {
  SqliteFixture f;
  std::atomic<bool> release{false}, running{false};
  std::thread leader([&] {
    LogScope scope(LogContext{.request_id = "leader", .trace = {}});
    EXPECT_TRUE(f.db->Write([&](Conn& c) -> Result<int64_t> {
      running = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return c.Exec("INSERT INTO t(id, who) VALUES (1, 'leader')");
    }));
  });
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Two callers queue behind the leader and form the next batch: whichever of them leads
  // it runs the other's callback on its own thread.
  const uint64_t before = f.Commits();
  std::string seen[2];
  std::vector<std::thread> followers;
  for (int i = 0; i < 2; ++i)
    followers.emplace_back([&, i] {
      LogScope scope(LogContext{.request_id = "follower-" + std::to_string(i), .trace = {}});
      EXPECT_TRUE(f.db->Write([&](Conn& c) -> Result<int64_t> {
        seen[i] = CurrentLogContext() ? CurrentLogContext()->request_id : "(none)";
        return c.Exec("INSERT INTO t(id, who) VALUES (?, 'follower')", {int64_t{i + 2}});
      }));
    });
  ASSERT_TRUE(f.WaitQueued(2));
  release = true;
  for (auto& th : followers) th.join();
  leader.join();
  EXPECT_EQ(seen[0], "follower-0");
  EXPECT_EQ(seen[1], "follower-1");
  EXPECT_EQ(f.Commits() - before, 2u);  // the leader's batch and the followers' one
}

// Acknowledged means committed and fsynced: the writer runs with synchronous=FULL (WAL:
// the COMMIT fsyncs the log) and a separate connection sees the row once Write returned.
// The writer connection commits without an fsync (synchronous=NORMAL) and the sync thread
// fdatasyncs the WAL before the batch is answered: each of twenty writes one after the
// other is answered after a sync of its own, and is seen by another connection then.
TEST(SqliteGroupCommit, AnAcknowledgedWriteIsAnsweredAfterTheWalIsSynced) {
  SqliteFixture f;
  auto sync = f.db->Write([](Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne("PRAGMA synchronous");
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  ASSERT_TRUE(sync.has_value());
  EXPECT_EQ(*sync, 1);  // NORMAL: the COMMIT writes the WAL, the sync thread syncs it
  auto other = std::move(*Open("sqlite:" + f.dir.path() + "/a.db"));
  for (int i = 1; i <= 20; ++i) {
    const uint64_t syncs = WriteStats(*f.db).syncs;
    ASSERT_TRUE(f.Insert(i));
    EXPECT_GT(WriteStats(*f.db).syncs, syncs) << "write " << i << " answered before a sync";
    auto seen = other->Read([&](Conn& c) -> Result<int64_t> {
      return (*c.QueryOne("SELECT COUNT(*) FROM t WHERE id = ?", {int64_t{i}}))->Int(0);
    });
    EXPECT_EQ(*seen, 1) << "row " << i;
  }
}

// A write transaction that changes nothing (an idle job loop's lease query that finds
// nothing due) writes no frames to the WAL, and its round is answered without an
// fdatasync: an idle node's job loops no longer sync the disk several times a second. The
// next write that changes a row is synced before it is answered, as every write is.
TEST(SqliteGroupCommit, AWriteThatChangedNothingIsAnsweredWithoutASync) {
  SqliteFixture f;
  ASSERT_TRUE(f.Insert(1));
  const SqliteWriteStats before = WriteStats(*f.db);
  for (int i = 0; i < 10; ++i) {
    auto nothing =
        f.db->Write([](Conn& c) { return c.Exec("UPDATE t SET who = 'x' WHERE id = 999"); });
    ASSERT_TRUE(nothing.has_value()) << i;
    EXPECT_EQ(*nothing, 0) << i;
  }
  const SqliteWriteStats idle = WriteStats(*f.db);
  EXPECT_EQ(idle.syncs, before.syncs);
  EXPECT_EQ(idle.sync_skips - before.sync_skips, 10u);
  EXPECT_EQ(idle.commits - before.commits, 10u);  // each was a transaction of its own
  ASSERT_TRUE(f.Insert(2));
  EXPECT_EQ(WriteStats(*f.db).syncs, idle.syncs + 1);
  EXPECT_EQ(f.Count(), 2);
}

// The first round of a database just opened syncs even when its writes changed nothing
// (Open's own: the migrations, none of them pending here): the WAL may hold frames of a
// process killed between a COMMIT and its sync, which no sync covered and whose rows a
// write that changes nothing may read and answer from.
TEST(SqliteGroupCommit, TheFirstRoundAfterAnOpenSyncsEvenIfItWroteNothing) {
  SqliteFixture f;
  ASSERT_TRUE(f.Insert(1));
  f.db.reset();
  f.db = std::move(*Open("sqlite:" + f.dir.path() + "/a.db"));
  const SqliteWriteStats opened = WriteStats(*f.db);
  EXPECT_EQ(opened.syncs, 1u);
  EXPECT_EQ(opened.sync_skips, 0u);
  // From then on a write that changes nothing has nothing to sync.
  auto seen = f.db->Write([](Conn& c) -> Result<int64_t> {
    return (*c.QueryOne("SELECT COUNT(*) FROM t WHERE id = 1"))->Int(0);
  });
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(*seen, 1);
  EXPECT_EQ(WriteStats(*f.db).syncs, 1u);
  EXPECT_EQ(WriteStats(*f.db).sync_skips, 1u);
}

// A failed sync of the WAL is final (Linux reports a writeback error once, and the pages it
// could not write may be gone): the writes of that round fail, every later write fails
// without being committed, even once syncs would succeed again, and Writable() says so.
// A restart (a new Open) writes again.
TEST(SqliteGroupCommit, AFailedSyncOfTheWalFailsThatRoundAndEveryLaterWrite) {
  SqliteFixture f;
  ASSERT_TRUE(f.Insert(1));
  ASSERT_TRUE(f.db->Writable());
  FailWalSyncsForTesting(true);
  auto lost = f.Insert(2);
  FailWalSyncsForTesting(false);
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, Errc::kUnavailable);
  EXPECT_EQ(lost.error().message, "the database cannot make writes durable");
  for (int64_t id = 3; id <= 5; ++id) {
    auto later = f.Insert(id);
    ASSERT_FALSE(later.has_value()) << id;
    EXPECT_EQ(later.error().code, Errc::kUnavailable);
  }
  EXPECT_EQ(f.InsertFromThreads(4, 5, "w", 100), 20);
  ASSERT_FALSE(f.db->Writable());
  EXPECT_EQ(f.db->Writable().error().code, Errc::kUnavailable);
  // Nothing after the failed round was committed; reads go on.
  auto later_rows = f.db->Read([](Conn& c) -> Result<int64_t> {
    return (*c.QueryOne("SELECT COUNT(*) FROM t WHERE id >= 3"))->Int(0);
  });
  ASSERT_TRUE(later_rows.has_value());
  EXPECT_EQ(*later_rows, 0);
  // Closed, no connection checkpointed the WAL into the database file (nor removed it):
  // the next start recovers from it. Restarted, it writes again.
  f.db.reset();
  struct stat wal {};
  ASSERT_EQ(stat((f.dir.path() + "/a.db-wal").c_str(), &wal), 0)
      << "the WAL was checkpointed at close";
  EXPECT_GT(wal.st_size, 0);
  f.db = std::move(*Open("sqlite:" + f.dir.path() + "/a.db"));
  EXPECT_TRUE(f.db->Writable());
  EXPECT_TRUE(f.Insert(6));
  EXPECT_EQ(*f.db->Read([](Conn& c) -> Result<int64_t> {
    return (*c.QueryOne("SELECT COUNT(*) FROM t WHERE id IN (1, 6)"))->Int(0);
  }),
            2);
}

// The WAL file removed under a running database (by hand, say): SQLite goes on writing to
// the removed file, which nothing keeps past a crash, so no write is acknowledged from the
// next sync on.
TEST(SqliteGroupCommit, WritesFailOnceTheWalFileHasBeenRemoved) {
  SqliteFixture f;
  ASSERT_TRUE(f.Insert(1));
  ASSERT_EQ(unlink((f.dir.path() + "/a.db-wal").c_str()), 0);
  EXPECT_FALSE(f.db->Writable());  // seen before any write
  auto first = f.Insert(2);
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, Errc::kUnavailable);
  auto second = f.Insert(3);
  ASSERT_FALSE(second.has_value());
  EXPECT_FALSE(f.db->Writable());
}

// A write that finds the database locked by another connection (a second process) waits
// for it as SQLite's busy timeout would, and meanwhile counts as a blocked handler: the
// pool's other handlers get its core, on a fiber too. Released, the write goes through.
TEST(SqliteGroupCommit, AWriteWaitingForAnotherConnectionsLockIsABlockedHandler) {
  SqliteFixture f;
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((f.dir.path() + "/a.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  WorkerPool pool(1, 2);
  std::atomic<int> result{0};  // 1 written, 2 failed
  pool.Post([&] { result = f.Insert(1) ? 1 : 2; });
  const bool blocked = [&] {
    for (int i = 0; i < 2000; ++i) {
      if (pool.stats().blocked == 1 && pool.stats().running == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }();
  EXPECT_EQ(result.load(), 0);
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  pool.Join();
  EXPECT_TRUE(blocked) << "the waiting write kept its core";
  EXPECT_EQ(result.load(), 1);
  EXPECT_EQ(f.Count(), 1);
}

// On handler fibers, writers waiting for a batch leave their threads to the next writers:
// on a pool of two threads, the other writes queue behind a running batch (98 at least: a
// second writer may have joined the first batch before it began) and share a commit or
// two. (A build with a sanitizer runs no fibers: there each waits on a thread of its own.)
TEST(SqliteGroupCommit, WritersOnHandlerFibersQueueWithoutAThreadEach) {
  SqliteFixture f;
  // No gathering: the first batch must begin with the first writer or two alone, for the
  // others to queue behind it (gathering has tests of its own below).
  GatherMax no_gathering(0);
  const uint64_t before = f.Commits();
  constexpr int kWriters = 100;
  const bool fibers = WorkerPool::FibersSupported();
  std::atomic<bool> first{true};
  std::atomic<int> ok{0};
  std::atomic<int> answered{0};
  int most_threads = 0;
  {
    WorkerPool pool(2, fibers ? 2 : kWriters + 2);
    for (int i = 1; i <= kWriters; ++i)
      pool.Post([&, i] {
        auto r = f.db->Write([&](Conn& c) -> Result<int64_t> {
          // The first batch holds on until every other writer is queued behind it.
          if (first.exchange(false)) {
            EXPECT_TRUE(f.WaitQueued(kWriters - 2));
          }
          return c.Exec("INSERT INTO t(id, who) VALUES (?, 'w')", {int64_t{i}});
        });
        if (r) ok.fetch_add(1);
        answered.fetch_add(1);
      });
    // Joining starts no more threads: wait for the answers first (bounded).
    for (int ms = 0; answered.load() < kWriters && ms < 30000; ++ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pool.Join();
    most_threads = pool.stats().threads;
  }
  EXPECT_EQ(ok.load(), kWriters);
  EXPECT_EQ(f.Count(), kWriters);
  EXPECT_LE(f.Commits() - before, 3u);  // the first batch, then the others'
  if (fibers) {
    EXPECT_LE(most_threads, 2);
  }
}

// Gathering (sqlite.cc): a leader whose pool still has writers queued steps aside so that
// they join its batch, instead of committing alone and leaving each of them a commit of
// its own. One runner: the first writer holds it until three more are queued, then leads.
// Without gathering that is four commits (each writer leads alone as the runner frees up);
// with it one, or two when the last writer was taken from the queue but had not yet joined
// as the leader looked. (Without fibers, a sanitizer build, the three get threads of their
// own as the leader's region frees the runner, and may queue behind its batch anyway:
// there gather_waits alone tells gathering happened.)
TEST(SqliteGroupCommit, ALeaderWaitsForWritersStillQueuedOnItsPool) {
  SqliteFixture f;
  GatherMax long_enough(5'000'000);  // bounded by the queue emptying, not by time
  const uint64_t before = f.Commits();
  const uint64_t waits_before = WriteStats(*f.db).gather_waits;
  std::atomic<bool> posted{false};
  std::atomic<int> ok{0};
  {
    WorkerPool pool(1, 8);
    pool.Post([&] {
      while (!posted.load()) std::this_thread::yield();
      if (f.Insert(1)) ok.fetch_add(1);
    });
    for (int i = 2; i <= 4; ++i)
      pool.Post([&, i] {
        if (f.Insert(i)) ok.fetch_add(1);
      });
    posted = true;
    for (int ms = 0; ok.load() < 4 && ms < 30000; ++ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pool.Join();
  }
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(f.Count(), 4);
  EXPECT_LE(f.Commits() - before, 2u);
  EXPECT_GE(WriteStats(*f.db).gather_waits - waits_before, 1u);
}

// A write with nothing queued behind it on its pool (one client) is not held back, and a
// writer off any pool (a job loop) never waits.
TEST(SqliteGroupCommit, AWriteWithNothingQueuedOnItsPoolDoesNotWait) {
  SqliteFixture f;
  GatherMax long_enough(5'000'000);
  const uint64_t waits_before = WriteStats(*f.db).gather_waits;
  std::atomic<int> ok{0};
  {
    WorkerPool pool(1, 2);
    for (int i = 1; i <= 3; ++i) {
      pool.Post([&, i] {
        if (f.Insert(i)) ok.fetch_add(1);
      });
      for (int ms = 0; ok.load() < i && ms < 30000; ++ms)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pool.Join();
  }
  EXPECT_EQ(f.InsertFromThreads(4, 5, "off a pool", 100), 0);
  EXPECT_EQ(ok.load(), 3);
  EXPECT_EQ(f.Count(), 23);
  EXPECT_EQ(WriteStats(*f.db).gather_waits - waits_before, 0u);
}

// A process killed (SIGKILL) in the middle of a write load: every write it acknowledged is
// in the database afterwards. (The kill loses the process, not the page cache; power loss
// is what the sync thread's fdatasync is for.)
TEST(SqliteGroupCommit, EveryAcknowledgedWriteSurvivesSigkill) {
  testing::TempDir dir;
  const std::string url = "sqlite:" + dir.path() + "/crash.db";
  {
    auto db = std::move(*Open(url));
    ASSERT_TRUE(db->Write([](Conn& c) -> Result<int64_t> {
      return c.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT NOT NULL)");
    }));
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto db = std::move(*Open(url));
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        for (int64_t i = 0;; ++i) {
          int64_t id = i * 8 + t + 1;
          auto r = db->Write(
              [&](Conn& c) { return c.Exec("INSERT INTO t(id, who) VALUES (?, 'x')", {id}); });
          if (r && write(fds[1], &id, sizeof id) != sizeof id) _exit(3);
        }
      });
    for (auto& th : threads) th.join();
    _exit(0);
  }
  close(fds[1]);
  std::set<int64_t> acked;
  int64_t id;
  while (acked.size() < 2000 && read(fds[0], &id, sizeof id) == sizeof id) acked.insert(id);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  while (read(fds[0], &id, sizeof id) == sizeof id) acked.insert(id);  // written before the kill
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_GE(acked.size(), 2000u);

  auto db = std::move(*Open(url));
  auto present = *db->Read([](Conn& c) -> Result<std::set<int64_t>> {
    std::set<int64_t> ids;
    auto rows = c.Query("SELECT id FROM t");
    if (!rows) return Fail(rows.error());
    for (const auto& row : *rows) ids.insert(row.Int(0));
    return ids;
  });
  size_t missing = 0;
  for (int64_t a : acked) missing += present.count(a) ? 0 : 1;
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged writes";
}

}  // namespace
}  // namespace crmd::store
