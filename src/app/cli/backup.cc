// crmctl backup / restore: an online, consistent copy of a SQLite database while crmd
// serves, and putting one back (crmd stopped: restore refuses a database another process
// has open). PostgreSQL has its own tools: pg_dump and
// point-in-time recovery (docs/operations.md).
#include <cstdio>
#include <filesystem>

#include "src/app/cli/commands.h"
#include "src/store/sqlite.h"

namespace crmd::app::cli {

namespace {

// The file of a sqlite: URL; empty for anything else.
std::string SqlitePath(const std::string& url) {
  return url.rfind("sqlite:", 0) == 0 ? url.substr(7) : std::string();
}

int NotSqlite(const char* verb) {
  std::fprintf(stderr,
               "crmctl %s: the database is not SQLite; for PostgreSQL use pg_dump / pg_restore "
               "or point-in-time recovery (docs/operations.md)\n",
               verb);
  return 2;
}

}  // namespace

int BackupCommand(Context& ctx, const Args& args) {
  if (args.size() != 1 || args[0].rfind("--", 0) == 0) return Usage("backup <file>");
  std::string db = SqlitePath(ctx.config().database_url);
  if (db.empty()) return NotSqlite("backup");
  if (std::filesystem::weakly_canonical(args[0]) == std::filesystem::weakly_canonical(db)) {
    std::fprintf(stderr, "crmctl backup: the backup must be another file than the database\n");
    return 2;
  }
  auto pages = store::BackupSqlite(db, args[0]);
  if (!pages) return PrintError(pages.error(), "crmctl backup");
  auto level = store::CheckSqliteBackup(args[0]);
  if (!level) return PrintError(level.error(), "crmctl backup");
  std::printf("backup of %s written to %s: %lld pages, migration %lld, integrity ok\n", db.c_str(),
              args[0].c_str(), static_cast<long long>(*pages), static_cast<long long>(*level));
  return 0;
}

int RestoreCommand(Context& ctx, const Args& args) {
  bool yes = false;
  std::string file;
  for (const auto& a : args) {
    if (a == "--yes")
      yes = true;
    else if (file.empty() && a.rfind("--", 0) != 0)
      file = a;
    else
      return Usage("restore <file> --yes   (stop crmd first)");
  }
  if (file.empty()) return Usage("restore <file> --yes   (stop crmd first)");
  std::string db = SqlitePath(ctx.config().database_url);
  if (db.empty()) return NotSqlite("restore");
  auto level = store::CheckSqliteBackup(file);
  if (!level) return PrintError(level.error(), "crmctl restore");
  auto holder = store::SqliteOpenElsewhere(db);
  if (!holder) return PrintError(holder.error(), "crmctl restore");
  if (*holder != 0) {
    std::string who = *holder > 0 ? "process " + std::to_string(*holder)
                                  : std::string("a process of another PID namespace");
    std::fprintf(stderr,
                 "crmctl restore: %s is open in %s (a crmd serving it, or another crmctl); stop "
                 "it, then run again. Nothing was changed.\n",
                 db.c_str(), who.c_str());
    return 1;
  }
  if (!yes) {
    std::fprintf(stderr,
                 "crmctl restore: %s (migration %lld, integrity ok) would replace everything in "
                 "%s; stop crmd on it, then run again with --yes\n",
                 file.c_str(), static_cast<long long>(*level), db.c_str());
    return 1;
  }
  auto pages = store::RestoreSqlite(file, db);
  if (!pages) return PrintError(pages.error(), "crmctl restore");
  std::printf(
      "restored %s into %s: %lld pages, migration %lld (crmd applies newer migrations "
      "when it starts)\n",
      file.c_str(), db.c_str(), static_cast<long long>(*pages), static_cast<long long>(*level));
  return 0;
}

}  // namespace crmd::app::cli
