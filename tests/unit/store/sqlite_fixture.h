// A SQLite database in a temporary folder with one table, for the driver's group commit
// and checkpoint tests (group_commit_test.cc, checkpoint_test.cc).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/store/db.h"
#include "src/store/sqlite.h"
#include "tests/support/test_server.h"

namespace crmd::store {

struct SqliteFixture {
  testing::TempDir dir;
  std::unique_ptr<Database> db;

  SqliteFixture() {
    db = std::move(*Open("sqlite:" + dir.path() + "/a.db"));
    EXPECT_TRUE(db->Write([](Conn& c) -> Result<int64_t> {
      return c.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT NOT NULL)");
    }));
  }

  Result<int64_t> Insert(int64_t id, const std::string& who = "w") {
    return db->Write([&](Conn& c) {
      return c.Exec("INSERT INTO t(id, who) VALUES (?, ?)", {id, who});
    });
  }

  int64_t Count() {
    return *db->Read(
        [](Conn& c) -> Result<int64_t> { return (*c.QueryOne("SELECT COUNT(*) FROM t"))->Int(0); });
  }

  // `threads` threads insert `each` rows each (ids first_id to first_id - 1 + threads *
  // each), all at once; returns how many inserts failed.
  int InsertFromThreads(int threads, int each, const std::string& who = "w", int64_t first_id = 1) {
    std::atomic<int> failed{0};
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t)
      running.emplace_back([&, t] {
        for (int i = 0; i < each; ++i)
          if (!Insert(first_id + t * each + i, who)) ++failed;
      });
    for (auto& th : running) th.join();
    return failed.load();
  }

  uint64_t Commits() { return WriteStats(*db).commits; }

  // Waits (bounded) until `n` Write() calls are queued behind the running batch.
  bool WaitQueued(int64_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (WriteStats(*db).queued < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
};

// Holds the group commit's leader in a batch of its own (it inserts row 1000, 'leader')
// from construction until Release(), so that the writes started meanwhile queue behind it
// as the next batch.
class HeldLeader {
 public:
  explicit HeldLeader(SqliteFixture& f) {
    thread_ = std::thread([this, &f] {
      EXPECT_TRUE(f.db->Write([&](Conn& c) -> Result<int64_t> {
        running_ = true;
        while (!release_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return c.Exec("INSERT INTO t(id, who) VALUES (1000, 'leader')");
      }));
    });
    while (!running_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HeldLeader() { Release(); }
  HeldLeader(const HeldLeader&) = delete;
  HeldLeader& operator=(const HeldLeader&) = delete;
  // Lets the leader commit (and lead the queued batch); returns once its own write is done.
  void Release() {
    release_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> release_{false}, running_{false};
  std::thread thread_;
};

using Callback = std::function<Result<int64_t>(Conn&)>;

// Holds the group commit's leader in a batch of its own while `callbacks` queue, in their
// order, as the next batch; then lets it go and answers each call's result.
inline std::vector<Result<int64_t>> RunAsOneBatch(SqliteFixture& f,
                                                  const std::vector<Callback>& callbacks) {
  HeldLeader leader(f);
  std::vector<Result<int64_t>> results(callbacks.size(), Result<int64_t>(0));
  std::vector<std::thread> writers;
  for (size_t i = 0; i < callbacks.size(); ++i) {
    writers.emplace_back([&, i] { results[i] = f.db->Write(callbacks[i]); });
    EXPECT_TRUE(f.WaitQueued(static_cast<int64_t>(i) + 1));  // queued in this order
  }
  leader.Release();
  for (auto& w : writers) w.join();
  return results;
}

}  // namespace crmd::store
