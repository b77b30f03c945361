#include "src/store/sqlite_conn.h"

#include <chrono>
#include <iterator>
#include <mutex>
#include <thread>

#include "src/core/worker_pool.h"
#include "src/store/sqlite_vfs.h"

namespace crmd::store {

namespace {

// Once per process, before SQLite initialises: no memory statistics. With them (Debian's
// build default) every sqlite3_malloc and sqlite3_free takes one process-wide mutex, about
// 40 times per get_contact, shared by every connection of every thread. Nothing here reads
// sqlite3_memory_used(). If SQLite was initialised already, the call is refused (MISUSE)
// and the default stays: slower, not wrong.
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

// SQLite's busy_timeout of 5 s (the same sleeps, 1 ms growing to 100 ms, and the same
// limit), each sleep inside a BlockingRegion: a connection waiting for another's lock (a
// second process, a checkpoint) gives its place to the pool's other handlers, as any wait
// outside the process does; on a handler fiber (a group commit leader) it would otherwise
// hold its thread and its core (src/core/worker_pool.h).
int BusyWait(void*, int count) {
  static constexpr int kDelays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
  static constexpr int kTotals[] = {0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228};
  static constexpr int kSteps = static_cast<int>(std::size(kDelays));
  static constexpr int kTimeoutMs = 5000;
  int delay = kDelays[kSteps - 1];
  int prior = kTotals[kSteps - 1] + delay * (count - (kSteps - 1));
  if (count < kSteps) {
    delay = kDelays[count];
    prior = kTotals[count];
  }
  if (prior + delay > kTimeoutMs) {
    delay = kTimeoutMs - prior;
    if (delay <= 0) return 0;
  }
  BlockingRegion blocking;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  return 1;
}

}  // namespace

Result<std::unique_ptr<SqliteConn>> OpenConn(const std::string& path, bool readonly) {
  ConfigureSqliteOnce();
  sqlite3* db = nullptr;
  int flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
              SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, PinningVfsName()) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return Fail(Errc::kUnavailable, "cannot open database", msg);
  }
  auto conn = std::make_unique<SqliteConn>(db);
  sqlite3_busy_handler(db, &BusyWait, nullptr);
  // synchronous=FULL in WAL mode: every COMMIT fsyncs the WAL before it returns. The group
  // commit's writer connection then runs at NORMAL, its fsync taken by the sync thread
  // before any write of the batch is answered (SqliteDatabase), so a Write() that returned
  // has survived a power loss too, with one fsync per batch (or fewer) rather than one per
  // transaction.
  // temp_store=MEMORY: a statement that fires triggers (the counters of migration 0053
  // on every contact write) keeps a statement journal; in a temporary file that cost
  // about 18 us per INSERT of a contact, in memory about 4 us.
  const char* pragmas = readonly ? "PRAGMA foreign_keys=ON;"
                                 : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                                   "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
  if (auto st = conn->ExecScript(pragmas); !st) return Fail(st.error());
  return conn;
}

}  // namespace crmd::store
