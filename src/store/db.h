#pragma once
// The database seam. Repositories (one per aggregate) take a Conn& and run portable SQL
// with `?` placeholders and bound parameters only; never build SQL from input.
//
// Database is thread-safe. Read() runs on a pooled read connection (a consistent snapshot
// for its duration); Write() runs one transaction (BEGIN IMMEDIATE on SQLite) and commits
// when the callback returns a value, rolls back when it returns an error.
// REQUIRES: callbacks never call Read/Write on the same Database (no nesting) and never
// run on an I/O thread (they block). A Write() callback may run more than once, each run
// after the last one's work was rolled back (SQLite: another call of its group commit
// batch failed, src/store/sqlite_batch.h; PostgreSQL: a serialization failure or deadlock), so
// it touches only the database and the result it returns: nothing outside it that a
// second run would change again (no moving out of captured state, no appending to a
// captured container, no in-memory cache, counter or notification).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "src/core/clock.h"
#include "src/core/metrics.h"
#include "src/core/result.h"

namespace crmd::store {

using Value = std::variant<std::nullptr_t, int64_t, double, std::string>;

inline Value Null() { return nullptr; }
template <typename T>
Value Opt(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_integral_v<T>)
    return static_cast<int64_t>(*v);
  else
    return Value(*v);
}

class Row {
 public:
  explicit Row(std::vector<Value> values) : values_(std::move(values)) {}
  size_t size() const { return values_.size(); }
  bool IsNull(size_t i) const { return std::holds_alternative<std::nullptr_t>(values_.at(i)); }
  int64_t Int(size_t i) const;      // NULL -> 0
  double Real(size_t i) const;      // NULL -> 0
  std::string Str(size_t i) const;  // NULL -> ""
  // Str(i), moving a text value out of the row (which then holds "" there): for readers
  // that build their record from a row they discard.
  std::string TakeStr(size_t i);
  std::optional<std::string> OptStr(size_t i) const;
  std::optional<int64_t> OptInt(size_t i) const;
  const Value& at(size_t i) const { return values_.at(i); }

 private:
  std::vector<Value> values_;
};

enum class Dialect { kSqlite, kPostgres };

class Conn {
 public:
  virtual ~Conn() = default;
  virtual Dialect dialect() const = 0;
  // Runs a statement and returns every row. Statements are prepared once per connection
  // and cached by their SQL text.
  virtual Result<std::vector<Row>> Query(std::string_view sql,
                                         const std::vector<Value>& params = {}) = 0;
  // Runs a statement that returns no rows; answers the number of rows changed.
  virtual Result<int64_t> Exec(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // Several statements without parameters (migrations only).
  virtual Status ExecScript(std::string_view sql) = 0;

  // Adds `delta` to a counter row: `sql` is an upsert that takes the parameters of `key`,
  // then the amount as its last one (INSERT ... VALUES (?, ?, ?) ON CONFLICT (...) DO
  // UPDATE SET n = t.n + excluded.n). Inside a transaction SQLite's connection gathers
  // them, one sum per statement and key, and runs each sum once just before its COMMIT;
  // a ROLLBACK, or a ROLLBACK TO a savepoint, drops what was gathered after it, as it
  // would the rows. Outside a transaction, and on PostgreSQL, the upsert runs at once.
  // Within a transaction the connection writes what it gathered before any statement that
  // may read or move those rows (an UPDATE, DELETE or REPLACE, whose triggers may move
  // them; an upsert's DO UPDATE; any statement naming a table with gathered adds), so no
  // caller has to remember to.
  virtual Status AddTo(std::string_view sql, std::vector<Value> key, int64_t delta);
  // Runs what AddTo has gathered in the open transaction (nothing elsewhere); the
  // connection calls it itself where needed (above).
  virtual Status FlushDeferred() { return Ok(); }

  // The first row, or nullopt.
  Result<std::optional<Row>> QueryOne(std::string_view sql, const std::vector<Value>& params = {});
  // INSERT ... RETURNING id, for both dialects: returns the first column of the first row.
  Result<int64_t> InsertReturningId(std::string_view sql, const std::vector<Value>& params = {});
};

// The SQL expression for a new row's id in `table` that never reuses a deleted one (see
// migration 0041): one above both the table's maximum and its recorded high-water mark.
// `table` must be a fixed name ("contacts", "api_keys"), never input.
inline std::string NextIdSql(std::string_view table) {
  std::string t(table);
  return "(SELECT MAX(x) + 1 FROM (SELECT COALESCE(MAX(id), 0) AS x FROM " + t +
         " UNION ALL SELECT last_id FROM id_high_water WHERE tbl = '" + t + "') AS hw)";
}

// Appended to a claim's SELECT: " FOR UPDATE OF <alias> SKIP LOCKED" on PostgreSQL, so
// that nodes claiming work pass over rows another transaction holds and never wait on
// each other; "" on SQLite, whose single writer claims exclusively anyway. `alias` is a
// fixed table alias, never input.
inline std::string SkipLocked(Dialect dialect, std::string_view alias) {
  if (dialect != Dialect::kPostgres) return {};
  return " FOR UPDATE OF " + std::string(alias) + " SKIP LOCKED";
}

// Appended to a SELECT of a row the transaction then changes: " FOR UPDATE OF <alias>" on
// PostgreSQL (another node's claim waits for this transaction); "" on SQLite, whose single
// writer holds the database anyway. `alias` is a fixed table alias, never input.
inline std::string ForUpdateOf(Dialect dialect, std::string_view alias) {
  if (dialect != Dialect::kPostgres) return {};
  return " FOR UPDATE OF " + std::string(alias);
}

// An INSERT of a row with a new id (NextIdSql) that may insert nothing (ON CONFLICT DO
// NOTHING), built once per statement: `head` ends where the id goes ("INSERT INTO t (id,
// ...) VALUES ("), `tail` follows it (", ?, ...) ON CONFLICT (...) DO NOTHING"). Run
// answers the new id, or nullopt when nothing was inserted. PostgreSQL: one statement with
// RETURNING, one round trip. SQLite: the id first, then a plain INSERT; RETURNING makes
// SQLite fill a temporary table per row, and a statement there is a call, not a round trip.
class NewIdInsert {
 public:
  NewIdInsert(std::string_view table, std::string_view head, std::string_view tail);
  // `params` are the values after the id.
  Result<std::optional<int64_t>> Run(Conn& c, std::vector<Value> params) const;

 private:
  std::string returning_;  // PostgreSQL
  std::string next_id_;    // SQLite: the id ...
  std::string insert_;     // ... then the row
};

// "sqlite" or "postgresql", as /health names the engine.
std::string_view DialectName(Dialect dialect);

// Where Database records its transactions (GET /metrics); every member may be null.
struct DbMetrics {
  metrics::Histogram* read_seconds = nullptr;   // Read(): from asking for a connection to the end
  metrics::Histogram* write_seconds = nullptr;  // Write(): the same, commit included
  metrics::Gauge* in_flight = nullptr;  // Read/Write calls running or waiting for a connection
  metrics::Counter* failed = nullptr;   // calls that returned an error (rolled back)
  // SQLite: one batch of the group commit as its leader ran it, from BEGIN to the end of
  // the COMMIT's fsync. Its count is the number of commits (writes ÷ count = writes per
  // commit), its sum the time the single writer connection was busy.
  metrics::Histogram* group_commit_seconds = nullptr;
};

// The state of one job queue (rows leased by workers), for GET /metrics and GET /readyz:
// how many rows wait, how many of them are due now, and when the oldest due one fell due.
struct QueueStats {
  int64_t pending = 0;
  int64_t due = 0;
  std::optional<int64_t> oldest_due_at;  // unix seconds; nullopt when nothing is due
  // Seconds the oldest due row has waited at `now` (0 when nothing is due).
  int64_t LagSeconds(int64_t now) const {
    return oldest_due_at && now > *oldest_due_at ? now - *oldest_due_at : 0;
  }
};

class Database {
 public:
  virtual ~Database() = default;
  virtual Dialect dialect() const = 0;

  // REQUIRES: called once by the composition root before the Database is shared.
  void set_metrics(DbMetrics m) { metrics_ = m; }

  // Whether writes can be made durable. An engine answers an error once they cannot (a
  // failed sync of SQLite's WAL: every Write() fails from then on, until restart).
  virtual Status Writable() const { return Ok(); }

  template <typename F>
  auto Read(F&& f) -> decltype(f(std::declval<Conn&>())) {
    return Run(false, std::forward<F>(f));
  }
  template <typename F>
  auto Write(F&& f) -> decltype(f(std::declval<Conn&>())) {
    return Run(true, std::forward<F>(f));
  }
  // Read() for a callback that runs one statement: the statement is its own snapshot, so
  // no transaction is opened around it (no BEGIN and COMMIT: on SQLite a third of a
  // get_contact's database work, on PostgreSQL two round trips of three). REQUIRES: `f`
  // runs exactly one statement, and only reads (it may run again after a lost connection).
  template <typename F>
  auto ReadStatement(F&& f) -> decltype(f(std::declval<Conn&>())) {
    return Run(false, std::forward<F>(f), true);
  }

 protected:
  const DbMetrics& metrics() const { return metrics_; }
  virtual Status RunRead(const std::function<Status(Conn&)>& fn) = 0;
  virtual Status RunWrite(const std::function<Status(Conn&)>& fn) = 0;
  // An engine without its own runs the statement inside RunRead's transaction.
  virtual Status RunReadStatement(const std::function<Status(Conn&)>& fn) { return RunRead(fn); }

 private:
  DbMetrics metrics_;

  template <typename F>
  auto Run(bool write, F&& f, bool one_statement = false) -> decltype(f(std::declval<Conn&>())) {
    using R = decltype(f(std::declval<Conn&>()));
    std::optional<R> out;
    auto body = [&](Conn& c) -> Status {
      out.emplace(f(c));
      if (!out->has_value()) return Fail(out->error());
      return Ok();
    };
    const Stopwatch started;
    if (metrics_.in_flight) metrics_.in_flight->Add(1);
    Status st = write ? RunWrite(body) : one_statement ? RunReadStatement(body) : RunRead(body);
    if (metrics_.in_flight) metrics_.in_flight->Add(-1);
    if (auto* h = write ? metrics_.write_seconds : metrics_.read_seconds)
      h->ObserveMicros(started.ElapsedMicros());
    if (!st && metrics_.failed) metrics_.failed->Inc();
    if (!st) {
      if (out && !out->has_value()) return std::move(*out);
      return tl::unexpected<Error>(st.error());
    }
    return std::move(*out);
  }
};

// Opens "sqlite:<path>" (WAL, foreign keys, busy timeout) or "postgresql://..." /
// "postgres://..." (src/store/postgres.h) and applies
// pending migrations from schemas/db/<dialect>/.
Result<std::unique_ptr<Database>> Open(const std::string& url, int pool_size = 4);

// Applies every embedded migration not yet recorded in schema_migrations; returns how many.
Result<int> Migrate(Database& db);

// The schema's level against this binary's migrations (GET /readyz): `expected` is the
// highest embedded version, `applied` the highest recorded one, `pending` how many
// embedded versions are not recorded (another node of an older binary may have started
// first; a newer node may have applied versions this binary does not know, which is fine).
struct MigrationLevel {
  int expected = 0;
  int applied = 0;
  int pending = 0;
};
Result<MigrationLevel> CheckMigrations(Database& db);

}  // namespace crmd::store
