#pragma once
// Which database engine a test runs on. By default a SQLite file in the test's temporary
// folder. When CRMD_TEST_POSTGRES_URL (a maintenance URL such as
// postgresql://crmd@127.0.0.1:5433/postgres) or CRMD_TEST_POSTGRES_URL_FILE (a file
// holding one; written by tests/support/pg.sh, the ctest fixture of the `postgres`
// label) is set, each ScratchDatabase is a fresh PostgreSQL database on that server,
// dropped again by the destructor. Tests ask for `url()` and never spell "sqlite:".
#include <optional>
#include <string>

namespace crmd::testing {

// The maintenance URL of the test PostgreSQL server, when the tests run on PostgreSQL.
std::optional<std::string> TestPostgresAdminUrl();
inline bool OnPostgres() { return TestPostgresAdminUrl().has_value(); }

class ScratchDatabase {
 public:
  // `sqlite_path`: the file used when the tests run on SQLite.
  // `force_sqlite`: SQLite even when the tests run on PostgreSQL.
  // `migrated`: a copy of a database with every migration already applied (on
  // PostgreSQL made once per test server and set of migration files; on SQLite once per
  // test process, copied unless `sqlite_path` exists), for a server or fixture that would
  // apply them anyway; otherwise empty.
  explicit ScratchDatabase(std::string sqlite_path, bool force_sqlite = false,
                           bool migrated = false);
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& url() const { return url_; }
  bool postgres() const { return !pg_name_.empty(); }

 private:
  std::string url_;
  std::string pg_name_;  // database to drop; empty on SQLite
};

// Runs one SQL statement on the maintenance database (CREATE/DROP DATABASE); throws on
// failure. REQUIRES: OnPostgres().
void PostgresAdmin(const std::string& sql);

}  // namespace crmd::testing
