#include "src/store/db.h"

#include <algorithm>
#include <string>
#include <utility>

#include "src/core/embedded.h"
#include "src/store/postgres.h"
#include "src/store/sqlite.h"

namespace crmd::store {

int64_t Row::Int(size_t i) const {
  const Value& v = values_.at(i);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  if (auto p = std::get_if<double>(&v)) return static_cast<int64_t>(*p);
  if (auto p = std::get_if<std::string>(&v)) {
    try {
      return std::stoll(*p);
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

double Row::Real(size_t i) const {
  const Value& v = values_.at(i);
  if (auto p = std::get_if<double>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  if (auto p = std::get_if<std::string>(&v)) {
    try {
      return std::stod(*p);
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

std::string Row::Str(size_t i) const {
  const Value& v = values_.at(i);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  if (auto p = std::get_if<double>(&v)) return std::to_string(*p);
  return {};
}

std::string Row::TakeStr(size_t i) {
  Value& v = values_.at(i);
  if (auto p = std::get_if<std::string>(&v)) return std::exchange(*p, std::string());
  return Str(i);
}

std::optional<std::string> Row::OptStr(size_t i) const {
  if (IsNull(i)) return std::nullopt;
  return Str(i);
}

std::optional<int64_t> Row::OptInt(size_t i) const {
  if (IsNull(i)) return std::nullopt;
  return Int(i);
}

Status Conn::AddTo(std::string_view sql, std::vector<Value> key, int64_t delta) {
  key.emplace_back(delta);
  auto n = Exec(sql, key);
  if (!n) return Fail(n.error());
  return Ok();
}

Result<std::optional<Row>> Conn::QueryOne(std::string_view sql, const std::vector<Value>& params) {
  auto rows = Query(sql, params);
  if (!rows) return Fail(rows.error());
  if (rows->empty()) return std::optional<Row>{};
  return std::optional<Row>(std::move(rows->front()));
}

Result<int64_t> Conn::InsertReturningId(std::string_view sql, const std::vector<Value>& params) {
  auto row = QueryOne(sql, params);
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::Internal("INSERT RETURNING returned no row"));
  return (*row)->Int(0);
}

NewIdInsert::NewIdInsert(std::string_view table, std::string_view head, std::string_view tail)
    : returning_(std::string(head) + NextIdSql(table) + std::string(tail) + " RETURNING id"),
      next_id_("SELECT " + NextIdSql(table)),
      insert_(std::string(head) + "?" + std::string(tail)) {}

Result<std::optional<int64_t>> NewIdInsert::Run(Conn& c, std::vector<Value> params) const {
  if (c.dialect() == Dialect::kPostgres) {
    auto row = c.QueryOne(returning_, params);
    if (!row) return Fail(row.error());
    if (!*row) return std::optional<int64_t>();
    return std::optional<int64_t>((*row)->Int(0));
  }
  auto row = c.QueryOne(next_id_);
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::Internal("no next id"));
  const int64_t id = (*row)->Int(0);
  std::vector<Value> with_id;
  with_id.reserve(params.size() + 1);
  with_id.emplace_back(id);
  for (auto& p : params) with_id.push_back(std::move(p));
  auto n = c.Exec(insert_, with_id);
  if (!n) return Fail(n.error());
  if (*n == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(id);
}

std::string_view DialectName(Dialect dialect) {
  return dialect == Dialect::kSqlite ? "sqlite" : "postgresql";
}

Result<std::unique_ptr<Database>> Open(const std::string& url, int pool_size) {
  std::unique_ptr<Database> db;
  if (url.rfind("sqlite:", 0) == 0) {
    auto opened = OpenSqlite(url.substr(7), pool_size);
    if (!opened) return Fail(opened.error());
    db = std::move(*opened);
  } else if (IsPostgresUrl(url)) {
    auto opened = OpenPostgres({.url = url, .pool_size = std::max(2, pool_size + 2)});
    if (!opened) return Fail(opened.error());
    db = std::move(*opened);
  } else {
    return Fail(
        Errc::kInvalidArgument,
        "unsupported database_url (expected sqlite:<path>, postgresql://... or postgres://...)");
  }
  auto migrated = Migrate(*db);
  if (!migrated) return Fail(migrated.error());
  return db;
}

namespace {

// This binary's migrations for the database's dialect, in version order.
std::vector<std::pair<int, embedded::File>> EmbeddedMigrations(Dialect dialect) {
  std::string prefix = dialect == Dialect::kSqlite ? "db/sqlite/" : "db/postgres/";
  std::vector<std::pair<int, embedded::File>> migrations;
  for (const auto& f : embedded::All()) {
    if (f.path.rfind(prefix, 0) != 0) continue;
    std::string name(f.path.substr(prefix.size()));
    if (name.size() < 5 || name.substr(name.size() - 4) != ".sql") continue;
    int version = 0;
    try {
      version = std::stoi(name.substr(0, 4));
    } catch (...) {
      continue;
    }
    migrations.emplace_back(version, f);
  }
  std::sort(migrations.begin(), migrations.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return migrations;
}

}  // namespace

Result<MigrationLevel> CheckMigrations(Database& db) {
  auto migrations = EmbeddedMigrations(db.dialect());
  return db.Read([&](Conn& c) -> Result<MigrationLevel> {
    auto rows = c.Query("SELECT version FROM schema_migrations");
    if (!rows) return Fail(rows.error());
    MigrationLevel level;
    std::vector<int64_t> applied;
    for (const auto& r : *rows) {
      applied.push_back(r.Int(0));
      level.applied = std::max<int>(level.applied, static_cast<int>(r.Int(0)));
    }
    for (const auto& [version, file] : migrations) {
      level.expected = std::max(level.expected, version);
      if (std::find(applied.begin(), applied.end(), version) == applied.end()) ++level.pending;
    }
    return level;
  });
}

Result<int> Migrate(Database& db) {
  auto migrations = EmbeddedMigrations(db.dialect());
  // Two files of one version would leave the second unapplied for good: refuse to start.
  for (size_t i = 1; i < migrations.size(); ++i) {
    if (migrations[i].first == migrations[i - 1].first) {
      return Fail(Errc::kInternal, "two migrations share a version",
                  std::string(migrations[i - 1].second.path) + ", " +
                      std::string(migrations[i].second.path));
    }
  }
  return db.Write([&](Conn& c) -> Result<int> {
    auto st = c.ExecScript(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
        "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    if (!st) return Fail(st.error());
    int applied = 0;
    for (const auto& [version, file] : migrations) {
      auto row = c.QueryOne("SELECT version FROM schema_migrations WHERE version = ?",
                            {static_cast<int64_t>(version)});
      if (!row) return Fail(row.error());
      if (*row) continue;
      if (auto s = c.ExecScript(file.data); !s) {
        return Fail(Errc::kInternal, "migration failed",
                    std::string(file.path) + ": " + s.error().detail);
      }
      auto ins = c.Exec("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                        {static_cast<int64_t>(version), std::string(file.path),
                         static_cast<int64_t>(time(nullptr))});
      if (!ins) return Fail(ins.error());
      ++applied;
    }
    return applied;
  });
}

}  // namespace crmd::store
