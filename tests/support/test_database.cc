#include "tests/support/test_database.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>

#include <libpq-fe.h>

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

void PostgresAdmin(const std::string& sql) {
  auto admin = TestPostgresAdminUrl();
  if (!admin) throw std::runtime_error("PostgresAdmin without a test PostgreSQL server");
  PGconn* c = PQconnectdb(admin->c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    PQfinish(c);
    throw std::runtime_error("test PostgreSQL: " + msg);
  }
  PGresult* r = PQexec(c, sql.c_str());
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  std::string msg = PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  if (!ok) throw std::runtime_error("test PostgreSQL: " + sql + ": " + msg);
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
}  // namespace

ScratchDatabase::ScratchDatabase(std::string sqlite_path, bool force_sqlite) {
  auto admin = force_sqlite ? std::nullopt : TestPostgresAdminUrl();
  if (!admin) {
    url_ = "sqlite:" + sqlite_path;
    return;
  }
  std::random_device rd;
  pg_name_ = "crmd_t_" + std::to_string(rd()) + std::to_string(rd() % 100000);
  PostgresAdmin("CREATE DATABASE " + pg_name_);
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
