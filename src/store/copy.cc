#include "src/store/copy.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "src/core/crypto.h"
#include "src/store/schema_info.h"
#include "src/store/sqlite.h"

namespace crmd::store {
namespace {

constexpr const char* kProgressTable = "copy_progress";

// Tables a copy never touches: each engine's migrations fill schema_migrations, and
// copy_progress is the copy's own bookkeeping.
bool Skipped(std::string_view table) {
  return table == "schema_migrations" || table == kProgressTable;
}

struct TablePlan {
  std::string name;
  std::vector<std::string> columns;  // source columns, declaration order
  std::vector<size_t> key;           // indexes into columns, primary-key order
  std::set<std::string> parents;     // tables its foreign keys refer to (not itself)
};

std::string Join(const std::vector<std::string>& names, std::string_view sep = ", ") {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : std::string(sep)) + QuoteIdentifier(n);
  return out;
}

std::string Placeholders(size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) out += i ? ", ?" : "?";
  return out + ")";
}

// One table's columns, key and parents, from the engine's metadata.
Result<TablePlan> PlanFor(Conn& c, const std::string& table) {
  auto cols = ListColumns(c, table);
  if (!cols) return Fail(cols.error());
  if (cols->empty()) return Fail(Errc::kNotFound, "no table " + table);
  TablePlan p;
  p.name = table;
  std::vector<std::pair<int, size_t>> key;
  for (size_t i = 0; i < cols->size(); ++i) {
    p.columns.push_back((*cols)[i].name);
    if ((*cols)[i].pk_position > 0) key.emplace_back((*cols)[i].pk_position, i);
  }
  std::sort(key.begin(), key.end());
  for (const auto& [pos, i] : key) p.key.push_back(i);
  // Without a primary key every column orders the rows (identical rows would be seen
  // once; the verification's row count would then say so).
  if (p.key.empty())
    for (size_t i = 0; i < p.columns.size(); ++i) p.key.push_back(i);
  auto refs = ListReferencedTables(c, table);
  if (!refs) return Fail(refs.error());
  for (const auto& r : *refs)
    if (r != table && !Skipped(r)) p.parents.insert(r);
  return p;
}

// Every table of the source with its columns and key, parents before children.
Result<std::vector<TablePlan>> LoadPlan(Conn& c) {
  auto tables = ListTables(c);
  if (!tables) return Fail(tables.error());
  std::map<std::string, TablePlan> plans;
  for (const auto& t : *tables) {
    if (Skipped(t)) continue;
    auto p = PlanFor(c, t);
    if (!p) return Fail(p.error());
    plans.emplace(t, std::move(*p));
  }
  // Kahn's algorithm, in name order among the tables that are ready.
  std::vector<TablePlan> ordered;
  std::set<std::string> placed;
  while (ordered.size() < plans.size()) {
    bool progressed = false;
    for (auto& [name, plan] : plans) {
      if (placed.count(name)) continue;
      bool ready = true;
      for (const auto& p : plan.parents)
        if (plans.count(p) && !placed.count(p)) ready = false;
      if (!ready) continue;
      placed.insert(name);
      ordered.push_back(plan);
      progressed = true;
    }
    if (!progressed) return Fail(Errc::kInvalidArgument, "the source's foreign keys form a cycle");
  }
  return ordered;
}

// SELECT <columns> FROM <table> [WHERE <key> > <last key>] ORDER BY <key> LIMIT ?
std::string PageSql(const TablePlan& p, bool after) {
  std::vector<std::string> key;
  for (size_t i : p.key) key.push_back(p.columns[i]);
  std::string sql = "SELECT " + Join(p.columns) + " FROM " + QuoteIdentifier(p.name);
  if (after) {
    sql += key.size() == 1 ? " WHERE " + QuoteIdentifier(key[0]) + " > ?"
                           : " WHERE (" + Join(key) + ") > " + Placeholders(key.size());
  }
  return sql + " ORDER BY " + Join(key) + " LIMIT ?";
}

// One page of rows after `last` (none: from the start).
Result<std::vector<Row>> Page(Conn& c, const TablePlan& p, const std::vector<Value>& last,
                              int64_t limit) {
  std::vector<Value> params = last;
  params.emplace_back(limit);
  return c.Query(PageSql(p, !last.empty()), params);
}

std::vector<Value> KeyOf(const TablePlan& p, const Row& row) {
  std::vector<Value> key;
  for (size_t i : p.key) key.push_back(row.at(i));
  return key;
}

std::string EncodeKey(const std::vector<Value>& key) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& v : key) {
    if (std::holds_alternative<std::nullptr_t>(v))
      j.push_back(nullptr);
    else if (auto i = std::get_if<int64_t>(&v))
      j.push_back(*i);
    else if (auto d = std::get_if<double>(&v))
      j.push_back(*d);
    else
      j.push_back(std::get<std::string>(v));
  }
  return j.dump();
}

Result<std::vector<Value>> DecodeKey(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Fail(Error::Internal("copy_progress.last_key is not a JSON array"));
  std::vector<Value> key;
  for (const auto& x : j) {
    if (x.is_null())
      key.emplace_back(nullptr);
    else if (x.is_number_integer())
      key.emplace_back(x.get<int64_t>());
    else if (x.is_number())
      key.emplace_back(x.get<double>());
    else if (x.is_string())
      key.emplace_back(x.get<std::string>());
    else
      return Fail(Error::Internal("copy_progress.last_key holds an unexpected value"));
  }
  return key;
}

// The canonical encoding of one value: a type tag, then a fixed-width big-endian integer,
// the IEEE-754 bits of a real, or a length-prefixed text. Prefix-free, so a row's values
// concatenate unambiguously.
void AppendBigEndian(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

void EncodeValue(std::string& out, const Value& v) {
  if (std::holds_alternative<std::nullptr_t>(v)) {
    out += 'N';
  } else if (auto i = std::get_if<int64_t>(&v)) {
    out += 'I';
    AppendBigEndian(out, static_cast<uint64_t>(*i));
  } else if (auto d = std::get_if<double>(&v)) {
    uint64_t bits = 0;
    std::memcpy(&bits, d, sizeof bits);
    out += 'R';
    AppendBigEndian(out, bits);
  } else {
    const auto& s = std::get<std::string>(v);
    out += 'T';
    AppendBigEndian(out, s.size());
    out += s;
  }
}

// A table's checksum: the SHA-256 of each row's canonical encoding, added up modulo
// 2^256 (a multiset hash), then hashed with the row count. The sum does not depend on the
// order rows arrive in: both sides read in primary-key order, but PostgreSQL may order
// text keys by a collation where SQLite compares bytes.
class TableHasher {
 public:
  void AddRow(const Row& row, size_t columns) {
    std::string enc;
    for (size_t i = 0; i < columns; ++i) EncodeValue(enc, row.at(i));
    const std::string digest = crypto::Sha256(enc);
    unsigned carry = 0;
    for (int i = 31; i >= 0; --i) {
      unsigned s = sum_[i] + static_cast<unsigned char>(digest[i]) + carry;
      sum_[i] = static_cast<unsigned char>(s & 0xff);
      carry = s >> 8;
    }
    ++rows_;
  }
  TableSum Finish() const {
    std::string total(reinterpret_cast<const char*>(sum_.data()), sum_.size());
    AppendBigEndian(total, static_cast<uint64_t>(rows_));
    return {.rows = rows_, .sum = crypto::Sha256Hex(total)};
  }

 private:
  std::array<unsigned char, 32> sum_{};
  int64_t rows_ = 0;
};

Result<TableSum> Checksum(Conn& c, const TablePlan& p, int64_t batch) {
  TableHasher hasher;
  std::vector<Value> last;
  while (true) {
    auto rows = Page(c, p, last, batch);
    if (!rows) return Fail(rows.error());
    for (const auto& r : *rows) hasher.AddRow(r, p.columns.size());
    if (static_cast<int64_t>(rows->size()) < batch) break;
    last = KeyOf(p, rows->back());
  }
  return hasher.Finish();
}

struct Progress {
  std::optional<std::string> last_key;  // JSON; nullopt before the first batch
  int64_t rows_copied = 0;
};

// Each table's progress row, when it has one.
Result<std::map<std::string, Progress>> LoadProgress(Database& to) {
  return to.Read([](Conn& c) -> Result<std::map<std::string, Progress>> {
    std::map<std::string, Progress> out;
    auto cols = ListColumns(c, kProgressTable);
    if (!cols) return Fail(cols.error());
    if (cols->empty()) return out;  // the first run
    auto rows = c.Query("SELECT tbl, last_key, rows_copied FROM copy_progress");
    if (!rows) return Fail(rows.error());
    for (const auto& r : *rows) out[r.Str(0)] = {.last_key = r.OptStr(1), .rows_copied = r.Int(2)};
    return out;
  });
}

// The destination has every table and column of the source, and no rows the copy did not
// write.
Status CheckDestination(Database& to, const std::vector<TablePlan>& plan,
                        const std::map<std::string, Progress>& progress,
                        const CopyOptions& options) {
  return to.Read([&](Conn& c) -> Status {
    for (const auto& p : plan) {
      auto cols = ListColumns(c, p.name);
      if (!cols) return Fail(cols.error());
      std::set<std::string> have;
      for (const auto& col : *cols) have.insert(col.name);
      if (have.empty())
        return Fail(Errc::kInvalidArgument, "the destination has no table " + p.name +
                                                " (is it migrated to the source's version?)");
      for (const auto& col : p.columns)
        if (!have.count(col))
          return Fail(Errc::kInvalidArgument,
                      "the destination's table " + p.name + " has no column " + col);
      if (options.verify_only || progress.count(p.name)) continue;
      if (std::find(options.seeded_tables.begin(), options.seeded_tables.end(), p.name) !=
          options.seeded_tables.end())
        continue;
      auto n = c.QueryOne("SELECT COUNT(*) FROM " + QuoteIdentifier(p.name));
      if (!n) return Fail(n.error());
      if (*n && (*n)->Int(0) > 0)
        return Fail(Errc::kAlreadyExists,
                    "the destination already holds data that crmctl copy did not write (table " +
                        p.name + ": " + std::to_string((*n)->Int(0)) + " rows)");
    }
    return Ok();
  });
}

// INSERT INTO <table> (<columns>) VALUES (?, ...), (?, ...): `rows` rows at once.
std::string InsertSql(const TablePlan& p, size_t rows) {
  std::string sql = "INSERT INTO " + QuoteIdentifier(p.name) + " (" + Join(p.columns) + ") VALUES ";
  const std::string one = Placeholders(p.columns.size());
  for (size_t i = 0; i < rows; ++i) sql += (i ? ", " : "") + one;
  return sql;
}

// Copies `p` from after its recorded key to its end, or until the run's row budget is
// spent (then report->stopped_early).
Status CopyTable(Conn& src, Database& to, const TablePlan& p, std::optional<Progress> progress,
                 const CopyOptions& options, CopyReport* report) {
  if (!progress) {
    const bool seeded = std::find(options.seeded_tables.begin(), options.seeded_tables.end(),
                                  p.name) != options.seeded_tables.end();
    auto st = to.Write([&](Conn& c) -> Status {
      if (seeded)
        if (auto del = c.Exec("DELETE FROM " + QuoteIdentifier(p.name)); !del)
          return Fail(del.error());
      auto ins = c.Exec(
          "INSERT INTO copy_progress (tbl, last_key, rows_copied, done) "
          "VALUES (?, NULL, 0, 0)",
          {p.name});
      if (!ins) return Fail(ins.error());
      return Ok();
    });
    if (!st) return st;
    progress = Progress{};
  }
  std::vector<Value> last;
  if (progress->last_key) {
    auto key = DecodeKey(*progress->last_key);
    if (!key) return Fail(key.error());
    last = std::move(*key);
  }
  // Parameters per INSERT stay well under both engines' limits.
  const size_t per_insert = std::max<size_t>(1, std::min<size_t>(100, 900 / p.columns.size()));
  int64_t copied = 0;
  while (true) {
    int64_t limit = options.batch;
    if (options.max_rows >= 0) limit = std::min(limit, options.max_rows - report->rows_copied);
    if (limit <= 0) {
      report->stopped_early = true;
      break;
    }
    auto rows = Page(src, p, last, limit);
    if (!rows) return Fail(rows.error());
    if (rows->empty()) {
      auto done = to.Write([&](Conn& c) {
        return c.Exec("UPDATE copy_progress SET done = 1 WHERE tbl = ?", {p.name});
      });
      if (!done) return Fail(done.error());
      break;
    }
    std::vector<Value> next = KeyOf(p, rows->back());
    auto st = to.Write([&](Conn& c) -> Status {
      for (size_t start = 0; start < rows->size(); start += per_insert) {
        const size_t n = std::min(per_insert, rows->size() - start);
        std::vector<Value> params;
        params.reserve(n * p.columns.size());
        for (size_t r = start; r < start + n; ++r)
          for (size_t i = 0; i < p.columns.size(); ++i) params.push_back((*rows)[r].at(i));
        if (auto ins = c.Exec(InsertSql(p, n), params); !ins) return Fail(ins.error());
      }
      auto upd = c.Exec(
          "UPDATE copy_progress SET last_key = ?, rows_copied = rows_copied + ?, done = 0 "
          "WHERE tbl = ?",
          {EncodeKey(next), static_cast<int64_t>(rows->size()), p.name});
      if (!upd) return Fail(upd.error());
      return Ok();
    });
    if (!st) {
      Error e = st.error();
      e.detail = "table " + p.name + ": " + e.detail;
      return Fail(std::move(e));
    }
    last = std::move(next);
    copied += static_cast<int64_t>(rows->size());
    report->rows_copied += static_cast<int64_t>(rows->size());
  }
  if (options.on_progress)
    options.on_progress(p.name + ": " + std::to_string(copied) + " rows copied, " +
                        std::to_string(progress->rows_copied + copied) + " in all");
  return Ok();
}

Status Verify(Conn& src, Database& to, const std::vector<TablePlan>& plan, CopyReport* report) {
  report->tables.clear();
  for (const auto& p : plan) {
    auto s = Checksum(src, p, 1000);
    if (!s) return Fail(s.error());
    auto d = to.Read([&](Conn& c) { return Checksum(c, p, 1000); });
    if (!d) return Fail(d.error());
    report->tables.push_back({.table = p.name,
                              .source_rows = s->rows,
                              .destination_rows = d->rows,
                              .source_sum = s->sum,
                              .destination_sum = d->sum});
  }
  return Ok();
}

// Empties the tables that failed the verification, and every table referring to them
// (children first), forgets their progress, and copies them again.
Status Resync(Conn& src, Database& to, const std::vector<TablePlan>& plan,
              const CopyOptions& options, CopyReport* report) {
  std::set<std::string> again;
  for (const auto& t : report->tables)
    if (!t.ok()) again.insert(t.table);
  for (const auto& p : plan)  // parents come first, so one pass closes the set
    for (const auto& parent : p.parents)
      if (again.count(parent)) again.insert(p.name);
  // Twice: the destination's delete triggers may write rows into tables already emptied
  // (id_high_water); tables outside the set that they touch fail the next verification.
  auto st = to.Write([&](Conn& c) -> Status {
    for (int pass = 0; pass < 2; ++pass) {
      for (auto it = plan.rbegin(); it != plan.rend(); ++it) {
        if (!again.count(it->name)) continue;
        if (auto del = c.Exec("DELETE FROM " + QuoteIdentifier(it->name)); !del)
          return Fail(del.error());
        if (auto del = c.Exec("DELETE FROM copy_progress WHERE tbl = ?", {it->name}); !del)
          return Fail(del.error());
      }
    }
    return Ok();
  });
  if (!st) return st;
  for (const auto& p : plan) {
    if (!again.count(p.name)) continue;
    report->resynced.push_back(p.name);
    if (auto c = CopyTable(src, to, p, std::nullopt, options, report); !c) return c;
    if (report->stopped_early) return Ok();
  }
  return Ok();
}

}  // namespace

bool CopyReport::ok() const {
  if (stopped_early) return false;
  return std::all_of(tables.begin(), tables.end(), [](const TableCheck& t) { return t.ok(); });
}

Result<TableSum> ChecksumTable(Conn& c, std::string_view table, int64_t batch) {
  auto p = PlanFor(c, std::string(table));
  if (!p) return Fail(p.error());
  return Checksum(c, *p, batch);
}

// PostgreSQL: the sequences behind identity columns start past the copied ids, so rows the
// site inserts later without an id (users, outbox events, audit rows, ...) never collide
// with copied ones. SQLite needs nothing: it takes MAX(rowid) + 1.
static Status AdvanceIdentities(Database& to) {
  return to.Write([](Conn& c) -> Status {
    if (c.dialect() != Dialect::kPostgres) return Ok();
    auto cols = c.Query(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name");
    if (!cols) return Fail(cols.error());
    for (const auto& r : *cols) {
      const std::string table = r.Str(0), column = r.Str(1);
      auto set = c.Query(
          "SELECT setval(pg_get_serial_sequence(?, ?), GREATEST(m, 1), m > 0) FROM "
          "(SELECT COALESCE(MAX(" +
              QuoteIdentifier(column) + "), 0) AS m FROM " + QuoteIdentifier(table) + ") AS t",
          {QuoteIdentifier(table), column});
      if (!set) return Fail(set.error());
    }
    return Ok();
  });
}

Result<CopyReport> CopyDatabase(Database& from, Database& to, const CopyOptions& options) {
  if (options.batch <= 0) return Fail(Errc::kInvalidArgument, "the batch size must be positive");
  // One read transaction over the source for the whole run: every table comes from the
  // same snapshot, so the copy is consistent even while the site keeps writing.
  return from.Read([&](Conn& src) -> Result<CopyReport> {
    auto plan = LoadPlan(src);
    if (!plan) return Fail(plan.error());
    std::erase_if(*plan, [&](const TablePlan& p) {
      return std::find(options.derived_tables.begin(), options.derived_tables.end(), p.name) !=
             options.derived_tables.end();
    });
    auto progress = LoadProgress(to);
    if (!progress) return Fail(progress.error());
    if (auto st = CheckDestination(to, *plan, *progress, options); !st) return Fail(st.error());
    // Only now, so that a refused destination is left as it was.
    auto created = to.Write([](Conn& c) -> Status {
      return c.ExecScript(
          "CREATE TABLE IF NOT EXISTS copy_progress (tbl TEXT PRIMARY KEY, last_key TEXT, "
          "rows_copied BIGINT NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0)");
    });
    if (!created) return Fail(created.error());
    CopyReport report;
    if (!options.verify_only) {
      for (const auto& p : *plan) {
        std::optional<Progress> prog;
        if (auto it = progress->find(p.name); it != progress->end()) prog = it->second;
        if (auto st = CopyTable(src, to, p, prog, options, &report); !st) return Fail(st.error());
        if (report.stopped_early) return report;
      }
    }
    if (!options.verify_only) {
      if (auto st = AdvanceIdentities(to); !st) return Fail(st.error());
    }
    if (auto st = Verify(src, to, *plan, &report); !st) return Fail(st.error());
    // Emptying a table fires the destination's delete triggers (id_high_water), which the
    // next round copies again in its turn; three rounds are plenty.
    for (int round = 0; options.resync && !options.verify_only && !report.ok() && round < 3;
         ++round) {
      if (auto st = Resync(src, to, *plan, options, &report); !st) return Fail(st.error());
      if (report.stopped_early) return report;
      if (auto st = AdvanceIdentities(to); !st) return Fail(st.error());
      if (auto st = Verify(src, to, *plan, &report); !st) return Fail(st.error());
    }
    return report;
  });
}

Result<std::unique_ptr<Database>> OpenCopySource(const std::string& url) {
  if (url.rfind("sqlite:", 0) != 0)
    return Fail(Errc::kInvalidArgument, "copy reads from sqlite:PATH");
  const std::string path = url.substr(7);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Fail(Errc::kInvalidArgument, "no SQLite database at " + path);
  return OpenSqlite(path, 1);
}

}  // namespace crmd::store
