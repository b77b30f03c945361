// The SQLite driver's checkpoints (src/store/sqlite.cc): a thread of their own asked for
// one per 1,000 pages of WAL growth, one after a quiet second, and the leader's at 4,000
// pages, which bounds the WAL.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "src/store/db.h"
#include "src/store/sqlite.h"
#include "tests/unit/store/sqlite_fixture.h"

namespace crmd::store {
namespace {

// A connection outside the driver that holds a read snapshot from its construction until
// Release(): no checkpoint can copy the WAL past it, so the WAL only grows meanwhile.
class HeldReader {
 public:
  explicit HeldReader(SqliteFixture& f) {
    holding_ =
        sqlite3_open((f.dir.path() + "/a.db").c_str(), &db_) == SQLITE_OK &&
        sqlite3_exec(db_, "BEGIN; SELECT COUNT(*) FROM t;", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~HeldReader() { Release(); }
  HeldReader(const HeldReader&) = delete;
  HeldReader& operator=(const HeldReader&) = delete;

  bool holding() const { return holding_; }
  void Release() {
    if (!db_) return;
    sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
    holding_ = false;
  }

 private:
  sqlite3* db_ = nullptr;
  bool holding_ = false;
};

// Row 1, then `rows` more of 3,000 bytes, one a commit (three pages each in the WAL).
bool InsertPages(SqliteFixture& f, int rows) {
  if (!f.Insert(1)) return false;
  const std::string payload(3000, 'p');
  for (int64_t id = 2; id <= rows + 1; ++id)
    if (!f.Insert(id, payload)) return false;
  return true;
}

// Checkpoints run on the driver's own thread while writers go on, and the WAL stays
// bounded (src/store/sqlite.cc: the leader checkpoints too once the WAL is long).
TEST(SqliteCheckpoints, CheckpointsRunBesideTheWritersAndTheWalStaysBounded) {
  SqliteFixture f;
  constexpr int kThreads = 4, kEach = 1500;
  const std::string payload(2000, 'p');
  EXPECT_EQ(f.InsertFromThreads(kThreads, kEach, payload), 0);
  EXPECT_EQ(f.Count(), kThreads * kEach);
  const SqliteWriteStats stats = WriteStats(*f.db);
  EXPECT_GE(stats.background_checkpoints, 1u);
  // About 12 MB of rows went through the WAL; it never grew far past the leader's
  // threshold (4,000 pages of 4 KiB), plus one batch.
  FILE* wal = std::fopen((f.dir.path() + "/a.db-wal").c_str(), "rb");
  ASSERT_NE(wal, nullptr);
  std::fseek(wal, 0, SEEK_END);
  const long wal_bytes = std::ftell(wal);
  std::fclose(wal);
  EXPECT_GT(wal_bytes, 0);
  EXPECT_LT(wal_bytes, 6000L * (4096 + 24));
}

// A background checkpoint is asked for once per 1,000 pages the WAL grows, not after
// every commit past 1,000 (a checkpoint that can copy sorts the frames of the WAL index
// segment it starts in from the segment's first, so asking after every commit re-sorted
// up to 4,000 frames per commit; this test counts the asks only). A reader outside the
// driver keeps its snapshot open, so no checkpoint can copy past it and the WAL only
// grows; 1,000 rows of 3,000 bytes, one a commit (three pages each), take it to about
// 3,000 pages, short of the leader's 4,000.
TEST(SqliteCheckpoints, ABackgroundCheckpointIsAskedForOncePerThousandPagesOfGrowth) {
  SqliteFixture f;
  HeldReader reader(f);
  ASSERT_TRUE(reader.holding());
  const uint64_t before = WriteStats(*f.db).background_checkpoints;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(InsertPages(f, 1000));
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  const SqliteWriteStats stats = WriteStats(*f.db);
  reader.Release();
  EXPECT_EQ(stats.leader_checkpoints, 0u)
      << "the WAL reached 4,000 pages; the test needs fewer rows";
  // Asked for at 1,000, 2,000 and 3,000 pages, plus at most one per quiet second (none is
  // quiet here, but the loop's one-second wait may time out between two asks).
  EXPECT_GE(stats.background_checkpoints - before, 2u);
  EXPECT_LE(stats.background_checkpoints - before, 3u + static_cast<uint64_t>(seconds) + 1u)
      << "over " << seconds << " s";
}

// Writes that stop between two asks still get their checkpoint: after a quiet second, one
// runs for a WAL of 1,000 pages or more with commits since the last checkpoint, or whose
// last checkpoint did not reach its end (a reader held it back), and then they stop.
TEST(SqliteCheckpoints, AWalLeftLongWhenWritesStopIsCheckpointedAfterAQuietSecond) {
  SqliteFixture f;
  HeldReader reader(f);
  ASSERT_TRUE(reader.holding());
  ASSERT_TRUE(InsertPages(f, 499));  // about 1,500 pages
  // The checkpoint asked for at 1,000 pages could not pass the reader.
  reader.Release();
  const uint64_t quiet = WriteStats(*f.db).background_checkpoints;
  // Bounded: until a checkpoint has run since and none has for 1.5 s (the loop's wait is
  // one second, so one that still found the WAL not copied would have run again).
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  uint64_t last = quiet;
  auto changed_at = Clock::now();
  bool settled = false;
  while (!settled && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const uint64_t now = WriteStats(*f.db).background_checkpoints;
    if (now != last) {
      last = now;
      changed_at = Clock::now();
    }
    settled = last > quiet && Clock::now() - changed_at >= std::chrono::milliseconds(1500);
  }
  EXPECT_GT(last, quiet) << "no checkpoint after the writes stopped";
  EXPECT_TRUE(settled) << "a quiet node went on checkpointing: " << last - quiet
                       << " since the writes stopped";
  EXPECT_EQ(f.Count(), 500);
}

// A quiet second's checkpoint that a reader held back is tried again once a second, with
// no commit since: when the reader is gone, the next one copies the WAL.
TEST(SqliteCheckpoints, AQuietCheckpointHeldBackByAReaderIsTriedAgain) {
  SqliteFixture f;
  HeldReader reader(f);
  ASSERT_TRUE(reader.holding());
  ASSERT_TRUE(InsertPages(f, 499));  // about 1,500 pages
  using Clock = std::chrono::steady_clock;
  // Waits (bounded) until the background checkpoints number more than `than`.
  auto more_than = [&](uint64_t than) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      if (WriteStats(*f.db).background_checkpoints > than) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  // The reader still holds its snapshot: quiet seconds' checkpoints run and copy nothing.
  // The first after the writes would run anyway (commits came after the ask at 1,000
  // pages); three are asked for, so that two of them are retries even if the ask's own
  // checkpoint was counted only after `held` was read.
  const uint64_t held = WriteStats(*f.db).background_checkpoints;
  ASSERT_TRUE(more_than(held)) << "no checkpoint after the writes stopped";
  ASSERT_TRUE(more_than(held + 2)) << "a checkpoint held back by a reader was not tried again";
  reader.Release();
  // Without the reader, one copies the whole WAL; after that, a second of quiet runs none.
  const uint64_t freed = WriteStats(*f.db).background_checkpoints;
  ASSERT_TRUE(more_than(freed)) << "no checkpoint after the reader went";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t copied = WriteStats(*f.db).background_checkpoints;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(WriteStats(*f.db).background_checkpoints, copied)
      << "checkpoints went on after one copied the WAL";
}

}  // namespace
}  // namespace crmd::store
