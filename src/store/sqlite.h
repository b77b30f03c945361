#pragma once
// SQLite driver: WAL, one writer connection (writes are serialised by SQLite anyway) and
// a pool of reader connections; each connection caches its prepared statements.
// Writes are durable when Write() returns (the WAL is synced after the COMMIT, before the
// answer) and concurrent writes share one commit and one sync (group commit, see
// sqlite.cc). After a failed sync every write fails until restart (Database::Writable).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "src/store/db.h"

namespace crmd::store {

Result<std::unique_ptr<Database>> OpenSqlite(const std::string& path, int readers);

// The group commit's counters: `commits` of write batches so far (one fsync each), and
// Write() calls `queued` now behind the running batch. Zeros for a non-SQLite database.
struct SqliteWriteStats {
  uint64_t commits = 0;
  int64_t queued = 0;
  uint64_t background_checkpoints = 0;  // by the checkpoint thread
  uint64_t leader_checkpoints = 0;      // by a leader, the WAL being long (sqlite.cc)
  uint64_t handovers = 0;  // a leader told the head of the next batch to lead it (sqlite.cc)
  // Batches rolled back because a call failed without a savepoint, whose earlier calls
  // then ran again (src/store/sqlite_batch.h); and the calls run in a savepoint.
  uint64_t batch_reruns = 0;
  uint64_t savepoint_calls = 0;
  uint64_t syncs = 0;       // fdatasyncs of the WAL by the sync thread (sqlite.cc)
  uint64_t sync_skips = 0;  // its rounds with nothing written since its last sync (no fdatasync)
  uint64_t gather_waits =
      0;  // steps a leader stepped aside for writers on their way (sqlite.cc, Gather)
  uint64_t read_slot_pins = 0;           // WAL index read slots pinned (sqlite_vfs.h)
  uint64_t read_slot_releases = 0;       // ... and let go for an exclusive lock
  uint64_t read_slot_idle_releases = 0;  // ... and let go after a second without reads
};
SqliteWriteStats WriteStats(const Database& db);
// The same, or nullopt when `db` is not SQLite (its metrics are SQLite's own).
std::optional<SqliteWriteStats> SqliteStatsOf(const Database& db);

// Tests: while set, the group commit's syncs of the WAL fail (as fdatasync does on a
// writeback error).
void FailWalSyncsForTesting(bool fail);

// Tests: the longest a group commit leader waits for writers on their way before it takes
// a batch (sqlite.cc, Gather); 300 us unless set. Returns the value it replaces.
int SetGatherMaxForTesting(int microseconds);

// A consistent copy of the SQLite database at `from` into the file `to` with SQLite's
// online backup API, while other processes keep reading and writing `from`: pages are
// copied in steps, and a write by another connection restarts the copy, so the result is
// one committed state. `to` is written next to itself and renamed into place, never left
// half-written. Returns the number of pages copied. Fails when `from` is not a SQLite
// database or `to` cannot be written.
Result<int64_t> BackupSqlite(const std::string& from, const std::string& to);

// Replaces the content of the SQLite database at `to` (created when missing; WAL kept
// consistent) with the backup `from`, in one transaction of the backup API.
// REQUIRES: no crmd is running on `to` (SqliteOpenElsewhere). Returns the number of pages
// copied.
Result<int64_t> RestoreSqlite(const std::string& from, const std::string& to);

// Whether another process has the WAL database at `path` open (a crmd serving it, a crmctl
// at work): its process id, -1 when open by a process whose id this one cannot see
// (another PID namespace), 0 when no one has it open. Every connection to a WAL database
// holds a shared lock on the DMS byte of its -shm file (offset 128,
// sqlite.org/walformat.html) for as long as it is open, released by the kernel when the
// process dies; this asks for the lock without taking it. Fails when it cannot tell (the
// -shm exists but cannot be opened or probed). A symbolic link is followed, as SQLite does.
// Connections of the calling process are not seen: call it before this process opens
// `path` itself.
Result<int64_t> SqliteOpenElsewhere(const std::string& path);

// Checks `file` with PRAGMA integrity_check and that it holds crmd's tables
// (schema_migrations); returns the highest migration applied.
Result<int64_t> CheckSqliteBackup(const std::string& file);

}  // namespace crmd::store
