#include "tests/support/test_database.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "src/store/db.h"

namespace crmd::testing {

std::optional<std::string> TestPostgresAdminUrl() {
  if (const char* url = std::getenv("CRMD_TEST_POSTGRES_URL"); url && *url) return std::string(url);
  if (const char* file = std::getenv("CRMD_TEST_POSTGRES_URL_FILE"); file && *file) {
    std::ifstream in(file);
    std::string url;
    if (!(in >> url) || url.empty())
      throw std::runtime_error(std::string("CRMD_TEST_POSTGRES_URL_FILE unreadable: ") + file);
    return url;
  }
  return std::nullopt;
}

namespace {

// A short-lived libpq connection; every call throws on failure.
class PgSession {
 public:
  explicit PgSession(const std::string& url) : c_(PQconnectdb(url.c_str())) {
    if (PQstatus(c_) != CONNECTION_OK) {
      std::string msg = PQerrorMessage(c_);
      PQfinish(c_);
      throw std::runtime_error("test PostgreSQL: " + msg);
    }
  }
  ~PgSession() { PQfinish(c_); }
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Runs `sql`; the number of rows it returned.
  int Run(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    const int rows = ok ? PQntuples(r) : 0;
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    if (!ok) throw std::runtime_error("test PostgreSQL: " + sql + ": " + msg);
    return rows;
  }

 private:
  PGconn* c_;
};

}  // namespace

void PostgresAdmin(const std::string& sql) {
  auto admin = TestPostgresAdminUrl();
  if (!admin) throw std::runtime_error("PostgresAdmin without a test PostgreSQL server");
  PgSession(*admin).Run(sql);
}

namespace {
// The admin URL with its database name replaced.
std::string WithDatabase(const std::string& admin, const std::string& name) {
  auto q = admin.find('?');
  std::string base = admin.substr(0, q);
  std::string query = q == std::string::npos ? "" : admin.substr(q);
  auto slash = base.find('/', base.find("://") + 3);
  if (slash != std::string::npos) base = base.substr(0, slash);
  return base + "/" + name + query;
}

// The PostgreSQL migration files of the source tree, hashed (FNV-1a): a template made from
// other files is never used.
std::string MigrationsKey() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(CRMD_SOURCE_DIR "/schemas/db/postgres"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  uint64_t h = 1469598103934665603ull;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (unsigned char c : f.filename().string() + '\n' + text) h = (h ^ c) * 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The name of a database on the test server with every migration applied, made by the
// first process that asks (the others wait on an advisory lock) under a temporary name
// and renamed when complete; nullopt if that fails (the copy is then an empty database
// and the server migrates it, as without a template).
std::optional<std::string> MigratedTemplate(const std::string& admin) {
  static std::mutex mu;
  static std::optional<std::string> made;
  std::lock_guard lock(mu);
  if (made) return made;
  try {
    const std::string name = "crmd_tpl_" + MigrationsKey();
    PgSession s(admin);
    s.Run("SELECT pg_advisory_lock(7346512)");
    if (s.Run("SELECT 1 FROM pg_database WHERE datname = '" + name + "'") == 0) {
      std::random_device rd;
      const std::string building = name + "_" + std::to_string(rd());
      s.Run("CREATE DATABASE " + building);
      {
        auto db = store::Open(WithDatabase(admin, building), 1);  // applies every migration
        if (!db) throw std::runtime_error("migrating the template: " + db.error().message);
      }
      // Its connection may still be ending; PostgreSQL waits for that before renaming.
      s.Run("ALTER DATABASE " + building + " RENAME TO " + name);
    }
    s.Run("SELECT pg_advisory_unlock(7346512)");
    made = name;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return made;
}

// A SQLite file with every migration applied, made once per test process in a folder of
// its own (removed at exit); nullopt if that fails, and the server then migrates.
std::optional<std::string> MigratedSqliteTemplate() {
  struct Folder {
    std::string path;
    ~Folder() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  };
  static std::mutex mu;
  static Folder folder;
  static std::optional<std::string> made;
  static bool tried = false;
  std::lock_guard lock(mu);
  if (tried) return made;
  tried = true;
  char tmpl[] = "/tmp/crmd-sqlite-tpl.XXXXXX";
  if (!mkdtemp(tmpl)) return std::nullopt;
  folder.path = tmpl;
  const std::string file = folder.path + "/migrated.db";
  {
    auto db = store::Open("sqlite:" + file, 1);  // applies every migration
    if (!db) return std::nullopt;
  }
  // Closed: the last connection checkpointed the WAL into the file and removed it. A WAL
  // left behind would hold part of the schema, so the copy is not used then.
  std::error_code ec;
  if (std::filesystem::exists(file + "-wal", ec) &&
      std::filesystem::file_size(file + "-wal", ec) > 0)
    return std::nullopt;
  made = file;
  return made;
}

}  // namespace

ScratchDatabase::ScratchDatabase(std::string sqlite_path, bool force_sqlite, bool migrated) {
  auto admin = force_sqlite ? std::nullopt : TestPostgresAdminUrl();
  if (!admin) {
    url_ = "sqlite:" + sqlite_path;
    // Copying the migrated file takes a millisecond, against 0.1 s (0.7 s sanitized, with
    // an fsync per migration) of applying every migration file in every test.
    std::error_code ec;
    if (migrated && !std::filesystem::exists(sqlite_path, ec))
      if (auto tpl = MigratedSqliteTemplate();
          tpl && !std::filesystem::copy_file(*tpl, sqlite_path, ec))
        std::filesystem::remove(sqlite_path, ec);  // the server migrates, as without a copy
    return;
  }
  std::random_device rd;
  pg_name_ = "crmd_t_" + std::to_string(rd()) + std::to_string(rd() % 100000);
  // Copying a migrated database takes about as long as making an empty one, and saves
  // the 0.2 to 0.4 s of applying every migration file in every test.
  std::optional<std::string> tpl = migrated ? MigratedTemplate(*admin) : std::nullopt;
  PostgresAdmin("CREATE DATABASE " + pg_name_ + (tpl ? " TEMPLATE " + *tpl : ""));
  url_ = WithDatabase(*admin, pg_name_);
}

ScratchDatabase::~ScratchDatabase() {
  if (pg_name_.empty()) return;
  try {
    PostgresAdmin("DROP DATABASE IF EXISTS " + pg_name_ + " WITH (FORCE)");
  } catch (...) {
    // The server may already be gone (fixture cleanup); nothing to leak then.
  }
}

}  // namespace crmd::testing
