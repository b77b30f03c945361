// Backup, restore and the check of a backup (src/store/sqlite.h), with SQLite's online
// backup API.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "src/store/sqlite.h"

namespace crmd::store {

namespace {

struct Handle {
  sqlite3* db = nullptr;
  ~Handle() {
    if (db) sqlite3_close_v2(db);
  }
};

Error SqliteError(sqlite3* db, const std::string& what) {
  return Error{.code = Errc::kInternal,
               .message = what,
               .detail = db ? sqlite3_errmsg(db) : "out of memory"};
}

}  // namespace

Result<int64_t> BackupSqlite(const std::string& from, const std::string& to) {
  Handle src, dst;
  if (sqlite3_open_v2(from.c_str(), &src.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return Fail(SqliteError(src.db, "cannot open " + from));
  sqlite3_busy_timeout(src.db, 5000);
  // The source must be a database already (READONLY does not create it).
  if (sqlite3_exec(src.db, "SELECT COUNT(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK)
    return Fail(SqliteError(src.db, from + " is not a SQLite database"));
  const std::string part = to + ".part";
  std::remove(part.c_str());
  if (sqlite3_open_v2(part.c_str(), &dst.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return Fail(SqliteError(dst.db, "cannot create " + part));
  sqlite3_backup* b = sqlite3_backup_init(dst.db, "main", src.db, "main");
  if (!b) return Fail(SqliteError(dst.db, "cannot start the backup"));
  int rc;
  // 256 pages a step; between steps other connections may write (the copy then restarts
  // from the changed pages, so what is copied is always one committed state).
  while ((rc = sqlite3_backup_step(b, 256)) == SQLITE_OK || rc == SQLITE_BUSY ||
         rc == SQLITE_LOCKED)
    if (rc != SQLITE_OK) sqlite3_sleep(10);
  int64_t pages = sqlite3_backup_pagecount(b);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    std::remove(part.c_str());
    return Fail(SqliteError(dst.db, "the backup failed"));
  }
  // A self-contained file: no WAL beside it.
  if (sqlite3_exec(dst.db, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr) != SQLITE_OK)
    return Fail(SqliteError(dst.db, "cannot finish the backup file"));
  sqlite3_close_v2(dst.db);
  dst.db = nullptr;
  if (std::rename(part.c_str(), to.c_str()) != 0)
    return Fail(Errc::kInternal, "cannot rename the backup into place", to);
  return pages;
}

Result<int64_t> RestoreSqlite(const std::string& from, const std::string& to) {
  Handle src, dst;
  if (sqlite3_open_v2(from.c_str(), &src.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return Fail(SqliteError(src.db, "cannot open " + from));
  if (sqlite3_open_v2(to.c_str(), &dst.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return Fail(SqliteError(dst.db, "cannot open " + to));
  sqlite3_busy_timeout(dst.db, 5000);
  sqlite3_backup* b = sqlite3_backup_init(dst.db, "main", src.db, "main");
  if (!b) return Fail(SqliteError(dst.db, "cannot start the restore"));
  int rc = sqlite3_backup_step(b, -1);  // all pages at once: one transaction on `to`
  int64_t pages = sqlite3_backup_pagecount(b);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE)
    return Fail(SqliteError(dst.db, "the restore failed; " + to + " is unchanged"));
  // The server runs in WAL mode; the copied header says DELETE (the backup file's mode).
  sqlite3_exec(dst.db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  return pages;
}

Result<int64_t> SqliteOpenElsewhere(const std::string& path) {
  // SQLite names the -shm after the file a symbolic link leads to; so does this.
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  const std::string shm = (ec ? path : real.string()) + "-shm";
  int fd = ::open(shm.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return int64_t{0};  // no -shm: nobody has it open in WAL mode
    return Fail(Errc::kUnavailable, "cannot open " + shm + ": " + std::strerror(errno));
  }
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 128;  // the DMS lock of the WAL-index
  probe.l_len = 1;
  const int rc = ::fcntl(fd, F_GETLK, &probe);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Fail(Errc::kUnavailable, "cannot probe " + shm + ": " + std::strerror(err));
  if (probe.l_type == F_UNLCK) return int64_t{0};
  return probe.l_pid > 0 ? int64_t{probe.l_pid} : int64_t{-1};
}

Result<int64_t> CheckSqliteBackup(const std::string& file) {
  Handle h;
  if (sqlite3_open_v2(file.c_str(), &h.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return Fail(SqliteError(h.db, "cannot open " + file));
  std::string verdict;
  auto take = [](void* out, int, char** values, char**) {
    *static_cast<std::string*>(out) += values[0] ? values[0] : "";
    return 0;
  };
  if (sqlite3_exec(h.db, "PRAGMA integrity_check", take, &verdict, nullptr) != SQLITE_OK)
    return Fail(SqliteError(h.db, file + " is not a SQLite database"));
  if (verdict != "ok") return Fail(Errc::kInvalidArgument, file + " is damaged", verdict);
  std::string level;
  if (sqlite3_exec(h.db, "SELECT MAX(version) FROM schema_migrations", take, &level, nullptr) !=
          SQLITE_OK ||
      level.empty())
    return Fail(Errc::kInvalidArgument, file + " is not a crmd database (no schema_migrations)");
  return std::stoll(level);
}

}  // namespace crmd::store
