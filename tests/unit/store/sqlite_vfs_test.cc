// The read slot that stays locked between reads (src/store/sqlite_vfs.h): reads keep one
// pin instead of a lock and an unlock each, and everything that needs the slot exclusively
// (a checkpoint, a reader moving the slot's mark, another process) still gets it.
#include "src/store/sqlite_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "src/store/db.h"
#include "src/store/sqlite.h"
#include "tests/support/test_server.h"

namespace crmd::store {
namespace {

struct PinFixture {
  testing::TempDir dir;
  std::string file = dir.path() + "/a.db";
  std::unique_ptr<Database> db;

  PinFixture() {
    db = std::move(*Open("sqlite:" + file));
    EXPECT_TRUE(db->Write([](Conn& c) -> Result<int64_t> {
      return c.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT NOT NULL)");
    }));
  }
  Result<int64_t> Insert(int64_t id, const std::string& who = "w") {
    return db->Write([&](Conn& c) {
      return c.Exec("INSERT INTO t(id, who) VALUES (?, ?)", {id, who});
    });
  }
  Result<int64_t> Count() {
    return db->ReadStatement([](Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne("SELECT COUNT(*) FROM t");
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
  }
  SqliteWriteStats Stats() { return WriteStats(*db); }
};

TEST(SqliteReadSlotPin, ReadsOfOneSnapshotPinTheirSlotOnce) {
  PinFixture f;
  ASSERT_TRUE(f.Insert(1));
  ASSERT_EQ(f.Count().value_or(-1), 1);
  // Writes pin too (a write transaction starts as a read); the first read after a write
  // moves to the slot of the new end of the WAL and pins it.
  const uint64_t pins = f.Stats().read_slot_pins;
  ASSERT_GE(pins, 1u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(f.Count().value_or(-1), 1) << i;
  // Without a write in between every read uses the same slot: kept, not pinned again.
  EXPECT_EQ(f.Stats().read_slot_pins, pins);
  // Reads in transactions (BEGIN .. COMMIT) use it too.
  for (int i = 0; i < 20; ++i) {
    auto n = f.db->Read(
        [](Conn& c) -> Result<int64_t> { return (*c.QueryOne("SELECT COUNT(*) FROM t"))->Int(0); });
    ASSERT_EQ(n.value_or(-1), 1);
  }
  EXPECT_EQ(f.Stats().read_slot_pins, pins);
}

// A checkpoint must lock, one after the other, every read slot whose mark is behind the
// WAL's end. The pin holds a slot with an old mark (a read, then writes): without letting
// it go, the checkpoint would stop at that mark.
TEST(SqliteReadSlotPin, ACheckpointGetsThePinnedSlotAndCopiesTheWholeWal) {
  PinFixture f;
  ASSERT_TRUE(f.Insert(1));
  ASSERT_EQ(f.Count().value_or(-1), 1);
  ASSERT_GE(f.Stats().read_slot_pins, 1u);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(f.file.c_str(), &raw, SQLITE_OPEN_READWRITE, PinningVfsName()),
            SQLITE_OK);
  // Its first read finds the database in WAL mode (until then it would not checkpoint);
  // made before the writes, so that the pin is left on the last writer's slot.
  ASSERT_EQ(sqlite3_exec(raw, "SELECT COUNT(*) FROM t", nullptr, nullptr, nullptr), SQLITE_OK);
  for (int64_t id = 2; id <= 50; ++id) ASSERT_TRUE(f.Insert(id));

  int log = -1, copied = -1;
  ASSERT_EQ(sqlite3_wal_checkpoint_v2(raw, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied),
            SQLITE_OK);
  EXPECT_GT(log, 0);
  EXPECT_EQ(copied, log) << "the checkpoint stopped at a pinned slot's mark";
  EXPECT_GE(f.Stats().read_slot_releases, 1u);
  // A RESTART checkpoint locks read slots 1 to 4 at once: after a write and a read the pin
  // is on one of them (the WAL is no longer wholly copied, so the read does not use slot 0).
  ASSERT_TRUE(f.Insert(51));
  ASSERT_EQ(f.Count().value_or(-1), 51);
  const uint64_t released = f.Stats().read_slot_releases;
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(raw, nullptr, SQLITE_CHECKPOINT_RESTART, &log, &copied),
            SQLITE_OK);
  EXPECT_EQ(copied, log);
  EXPECT_GT(f.Stats().read_slot_releases, released);
  sqlite3_close_v2(raw);
  ASSERT_EQ(f.Count().value_or(-1), 51);
}

// Readers and writers at once: a write moves the WAL's end, the next reader moves a
// slot's mark (an exclusive lock on it, the pin letting go), reads and writes go on, and
// every read sees a count that never goes back.
TEST(SqliteReadSlotPin, ConcurrentReadersAndWritersSeeEveryCommitAndNoError) {
  PinFixture f;
  constexpr int kWriters = 2, kEach = 300, kReaders = 4;
  std::atomic<int> failed{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i)
        if (!f.Insert(1 + w * kEach + i)) ++failed;
    });
  for (int r = 0; r < kReaders; ++r)
    threads.emplace_back([&] {
      int64_t last = 0;
      while (!done.load()) {
        auto n = f.Count();
        if (!n || *n < last) ++failed;
        if (n) last = *n;
      }
    });
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done = true;
  for (size_t i = kWriters; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(f.Count().value_or(-1), kWriters * kEach);
  EXPECT_GE(f.Stats().read_slot_pins, 2u);
  EXPECT_GE(f.Stats().read_slot_releases, 1u);
}

// Another process (python3's sqlite3, the unix VFS) reads what crmd wrote after crmd's
// last read (so it must move a slot's mark: the pinned slot is not the only one) and
// writes; crmd then reads its write.
TEST(SqliteReadSlotPin, AnotherProcessReadsAndWritesBesideThePin) {
  PinFixture f;
  ASSERT_TRUE(f.Insert(1));
  ASSERT_EQ(f.Count().value_or(-1), 1);
  ASSERT_GE(f.Stats().read_slot_pins, 1u);
  for (int64_t id = 2; id <= 10; ++id) ASSERT_TRUE(f.Insert(id));
  const std::string out = f.dir.path() + "/other.txt";
  const std::string script =
      "import sqlite3,sys\n"
      "c=sqlite3.connect(sys.argv[1], timeout=5)\n"
      "n=c.execute('SELECT COUNT(*) FROM t').fetchone()[0]\n"
      "c.execute(\"INSERT INTO t(id, who) VALUES (1000, 'other')\")\n"
      "c.commit()\n"
      "open(sys.argv[2],'w').write(str(n))\n";
  const std::string py = f.dir.path() + "/other.py";
  FILE* s = std::fopen(py.c_str(), "w");
  ASSERT_NE(s, nullptr);
  std::fputs(script.c_str(), s);
  std::fclose(s);
  const std::string cmd = "timeout 60 python3 " + py + " " + f.file + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  FILE* r = std::fopen(out.c_str(), "r");
  ASSERT_NE(r, nullptr);
  char buf[32] = {};
  ASSERT_NE(std::fgets(buf, sizeof buf, r), nullptr);
  std::fclose(r);
  EXPECT_EQ(std::string(buf), "10");
  EXPECT_EQ(f.Count().value_or(-1), 11);
  auto who = f.db->ReadStatement([](Conn& c) -> Result<std::string> {
    return (*c.QueryOne("SELECT who FROM t WHERE id = 1000"))->Str(0);
  });
  EXPECT_EQ(who.value_or(""), "other");
  // crmd writes on after the other process's commit.
  EXPECT_TRUE(f.Insert(11));
  EXPECT_EQ(f.Count().value_or(-1), 12);
}

// Seen from outside the group (another process, or a connection of the unix VFS), the pin
// is a reader: a RESTART checkpoint waits for it. Once reads stop, ReleaseIfIdle (every
// second in the server) lets the slot go, so an idle node stands in no one's way.
TEST(SqliteReadSlotPin, AnIdlePinLetsGoSoThatAnOutsideCheckpointRestartsTheWal) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/c.db";
  auto open = [&](const char* vfs) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs),
              SQLITE_OK);
    return db;
  };
  sqlite3* pin_conn = open(PinningVfsName());
  sqlite3* crmd = open(PinningVfsName());
  sqlite3* outside = open("unix");
  auto run = [](sqlite3* db, const char* sql) {
    return sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  };
  ASSERT_EQ(run(crmd, "PRAGMA journal_mode=WAL; CREATE TABLE x (v); INSERT INTO x VALUES (1);"),
            SQLITE_OK);
  auto pin = ShmPin::Attach(pin_conn);
  ASSERT_NE(pin, nullptr);
  ASSERT_TRUE(pin->active());
  ASSERT_EQ(run(crmd, "INSERT INTO x VALUES (2)"), SQLITE_OK);
  ASSERT_EQ(run(crmd, "SELECT * FROM x"), SQLITE_OK);  // pins a slot of 1 to 4
  ASSERT_EQ(run(crmd, "INSERT INTO x VALUES (3)"), SQLITE_OK);
  ASSERT_EQ(run(outside, "SELECT * FROM x"), SQLITE_OK);
  int log = -1, copied = -1;
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(outside, nullptr, SQLITE_CHECKPOINT_RESTART, &log, &copied),
            SQLITE_BUSY)
      << "the pinned slot looks like a reader from outside";
  // Reads went on since the last look: not idle yet. Then a second with none: let go.
  EXPECT_FALSE(pin->ReleaseIfIdle());
  EXPECT_TRUE(pin->ReleaseIfIdle());
  EXPECT_EQ(pin->counts().idle_released, 1u);
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(outside, nullptr, SQLITE_CHECKPOINT_RESTART, &log, &copied),
            SQLITE_OK);
  EXPECT_EQ(copied, log);
  // The next read pins again.
  const uint64_t pinned = pin->counts().pinned;
  ASSERT_EQ(run(crmd, "SELECT * FROM x"), SQLITE_OK);
  EXPECT_GT(pin->counts().pinned, pinned);
  pin.reset();
  for (sqlite3* db : {pin_conn, crmd, outside}) sqlite3_close_v2(db);
}

TEST(SqliteReadSlotPin, OnlyTheFirstPinOfADatabaseFileHoldsAndADetachedOneLetsGo) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/b.db";
  auto open = [&] {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                              PinningVfsName()),
              SQLITE_OK);
    return db;
  };
  sqlite3* a = open();
  sqlite3* b = open();
  sqlite3* reader = open();
  ASSERT_EQ(
      sqlite3_exec(a, "PRAGMA journal_mode=WAL; CREATE TABLE x (v);", nullptr, nullptr, nullptr),
      SQLITE_OK);
  auto first = ShmPin::Attach(a);
  auto second = ShmPin::Attach(b);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(first->active());
  EXPECT_FALSE(second->active());
  // Attaching the second ran a read through the group already: the slot is pinned.
  ASSERT_EQ(sqlite3_exec(reader, "SELECT * FROM x", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_GE(first->counts().pinned, 1u);
  EXPECT_EQ(second->counts().pinned, first->counts().pinned) << "one group per database file";
  first.reset();  // lets its slot go: the next pin of the file may hold
  auto third = ShmPin::Attach(b);
  ASSERT_NE(third, nullptr);
  EXPECT_TRUE(third->active());
  // A connection outside the VFS cannot be a pin.
  sqlite3* plain = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &plain, SQLITE_OPEN_READWRITE, "unix"), SQLITE_OK);
  EXPECT_EQ(ShmPin::Attach(plain), nullptr);
  third.reset();
  second.reset();
  for (sqlite3* db : {a, b, reader, plain}) sqlite3_close_v2(db);
}

}  // namespace
}  // namespace crmd::store
