#include "src/store/postgres.h"

#include <libpq-fe.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/core/worker_pool.h"
#include "src/store/text_check.h"

namespace crmd::store {

bool IsPostgresUrl(std::string_view url) {
  return url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
}

std::string ToDollarPlaceholders(std::string_view sql, int* count) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  size_t i = 0;
  while (i < sql.size()) {
    char ch = sql[i];
    if (ch == '\'' || ch == '"') {  // literal or quoted identifier; doubled quote escapes
      size_t j = i + 1;
      while (j < sql.size()) {
        if (sql[j] == ch) {
          if (j + 1 < sql.size() && sql[j + 1] == ch) {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      out.append(sql.substr(i, j + 1 - i));
      i = j + 1;
    } else if (ch == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t j = sql.find('\n', i);
      if (j == std::string_view::npos) j = sql.size();
      out.append(sql.substr(i, j - i));
      i = j;
    } else if (ch == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t j = sql.find("*/", i + 2);
      j = j == std::string_view::npos ? sql.size() : j + 2;
      out.append(sql.substr(i, j - i));
      i = j;
    } else if (ch == '$' && i + 1 < sql.size() &&
               (sql[i + 1] == '$' || std::isalpha(static_cast<unsigned char>(sql[i + 1])))) {
      // Dollar quoting: $tag$ ... $tag$ (only when the tag closes with '$').
      size_t close = sql.find('$', i + 1);
      std::string_view tag =
          close == std::string_view::npos ? std::string_view{} : sql.substr(i, close + 1 - i);
      bool is_tag = !tag.empty();
      for (size_t k = 1; is_tag && k + 1 < tag.size(); ++k) {
        if (!std::isalnum(static_cast<unsigned char>(tag[k])) && tag[k] != '_') is_tag = false;
      }
      if (!is_tag) {
        out.push_back(ch);
        ++i;
        continue;
      }
      size_t end = sql.find(tag, close + 1);
      end = end == std::string_view::npos ? sql.size() : end + tag.size();
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (ch == '?') {
      out.push_back('$');
      out += std::to_string(++n);
      ++i;
    } else {
      out.push_back(ch);
      ++i;
    }
  }
  if (count) *count = n;
  return out;
}

namespace {

constexpr Oid kInt8 = 20, kInt2 = 21, kInt4 = 23, kOid = 26, kBool = 16, kFloat4 = 700,
              kFloat8 = 701, kNumeric = 1700, kText = 25;

// One key for every crmd node on the database: pg_advisory_xact_lock(kWriteLockKey)
// serialises write transactions cluster-wide (see postgres.h).
constexpr int64_t kWriteLockKey = 0x63726d6457;  // "crmdW"
// The lock's statement, the key written out (a constant: nothing to bind).
constexpr const char* kWriteLockSql = "SELECT pg_advisory_xact_lock(427121534039)";
static_assert(kWriteLockKey == 427121534039);  // as written in kWriteLockSql

bool IsConnectionLoss(const char* sqlstate) {
  // Class 08: connection exception; 57P01..57P03: admin shutdown, crash shutdown,
  // cannot connect now.
  return sqlstate && (std::strncmp(sqlstate, "08", 2) == 0 || std::strcmp(sqlstate, "57P01") == 0 ||
                      std::strcmp(sqlstate, "57P02") == 0 || std::strcmp(sqlstate, "57P03") == 0);
}

class PgConn final : public Conn {
 public:
  explicit PgConn(PGconn* conn) : conn_(conn) {}
  ~PgConn() override { PQfinish(conn_); }
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  Dialect dialect() const override { return Dialect::kPostgres; }

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params) override {
    std::vector<Row> rows;
    int64_t changed = 0;
    auto st = Run(sql, params, &rows, &changed);
    if (!st) return Fail(st.error());
    return rows;
  }

  Result<int64_t> Exec(std::string_view sql, const std::vector<Value>& params) override {
    int64_t changed = 0;
    auto st = Run(sql, params, nullptr, &changed);
    if (!st) return Fail(st.error());
    return changed;
  }

  Status ExecScript(std::string_view sql) override {
    if (auto st = BeginNow(); !st) return st;
    std::string s(sql);
    PGresult* res = PQexec(conn_, s.c_str());
    Status st = Check(res, "script");
    PQclear(res);
    if (st) ForgiveAfterSavepointRollback(sql);
    return st;
  }

  // A failed statement inside a savepoint that was rolled back to no longer dooms the
  // transaction (PostgreSQL resumes it), so the commit may go ahead.
  void ForgiveAfterSavepointRollback(std::string_view sql) {
    constexpr std::string_view kRollbackTo = "ROLLBACK TO";
    if (sql.size() >= kRollbackTo.size()) {
      bool match = true;
      for (size_t i = 0; i < kRollbackTo.size() && match; ++i)
        match = std::toupper(static_cast<unsigned char>(sql[i])) == kRollbackTo[i];
      if (match) failed_in_tx_ = false;
    }
  }

  // Transaction control: true when the connection is usable afterwards.
  bool broken() const { return broken_ || PQstatus(conn_) != CONNECTION_OK; }
  bool failed_in_tx() const { return failed_in_tx_; }
  void ResetTxState() {
    failed_in_tx_ = false;
    last_sqlstate_.clear();
    deferred_begin_ = nullptr;
    began_ = false;
  }
  // The transaction's BEGIN (and for a write the write lock) is not sent yet: it goes to
  // the server in one pipeline with the first statement (ExecFirst), so a transaction of
  // one statement costs one round trip before its COMMIT, not three. `begin` is a literal.
  void DeferBegin(const char* begin, bool lock) {
    ResetTxState();
    deferred_begin_ = begin;
    deferred_lock_ = lock;
  }
  // Whether the server has begun the transaction (a callback that ran no statement never
  // made it begin: there is nothing to commit or roll back).
  bool began() const { return began_; }
  // A read's COMMIT, sent without waiting for its answer: the connection's next user reads
  // that answer first (Settle), by when it has arrived. A read-only transaction has nothing
  // to make durable, and its result is already in the caller's hands.
  void SendCommit() {
    if (PQsendQuery(conn_, "COMMIT") == 1)
      commit_in_flight_ = true;
    else
      broken_ = true;
  }
  // Reads the answer of a COMMIT sent by SendCommit; a connection whose answer is not a
  // plain success is treated as broken (replaced before use).
  void Settle() {
    if (!commit_in_flight_) return;
    commit_in_flight_ = false;
    while (PGresult* res = PQgetResult(conn_)) {
      if (PQresultStatus(res) != PGRES_COMMAND_OK) broken_ = true;
      PQclear(res);
    }
  }
  // A serialization failure or deadlock: the transaction may simply be run again.
  bool retryable() const { return last_sqlstate_ == "40001" || last_sqlstate_ == "40P01"; }
  bool Reset() {
    commit_in_flight_ = false;
    PQreset(conn_);
    cache_.clear();  // prepared statements die with the session
    broken_ = PQstatus(conn_) != CONNECTION_OK;
    return !broken_;
  }
  // COMMIT that reports a transaction PostgreSQL rolled back instead (it answers
  // "ROLLBACK" to COMMIT after a failed statement) as an error.
  Status Commit() {
    PGresult* res = PQexec(conn_, "COMMIT");
    Status st = Check(res, "commit");
    if (st && std::strcmp(PQcmdStatus(res), "COMMIT") != 0) {
      st = Fail(Errc::kInternal, "internal error", "commit: transaction was rolled back");
    }
    PQclear(res);
    return st;
  }
  void Rollback() {
    PGresult* res = PQexec(conn_, "ROLLBACK");
    PQclear(res);
  }

 private:
  struct Prepared {
    std::string name;
    int params = 0;
  };

  Status Check(PGresult* res, const char* what) {
    ExecStatusType s = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY) return Ok();
    const char* sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    std::string msg = res ? PQresultErrorMessage(res) : PQerrorMessage(conn_);
    failed_in_tx_ = true;
    if (!res || IsConnectionLoss(sqlstate) || PQstatus(conn_) != CONNECTION_OK) {
      broken_ = true;
      return Fail(Errc::kUnavailable, "database unavailable", std::string(what) + ": " + msg);
    }
    std::string code = sqlstate ? sqlstate : "";
    last_sqlstate_ = code;
    if (code.rfind("23", 0) == 0)  // integrity constraint violation, as SQLITE_CONSTRAINT
      return Fail(Errc::kAlreadyExists, "already exists", std::string(what) + ": " + msg);
    if (code == "40001" || code == "40P01" || code == "55P03")
      return Fail(Errc::kUnavailable, "database busy, retry", std::string(what) + ": " + msg);
    return Fail(Errc::kInternal, "internal error", std::string(what) + ": " + msg);
  }

  static Oid TypeOf(const Value& v) {
    if (std::holds_alternative<int64_t>(v)) return kInt8;
    if (std::holds_alternative<double>(v)) return kFloat8;
    if (std::holds_alternative<std::string>(v)) return kText;
    return 0;  // NULL: let PostgreSQL infer from the context
  }

  Result<const Prepared*> Prepare(std::string_view sql, const std::vector<Value>& params) {
    std::string key(sql);
    key.push_back('\x1f');
    for (const auto& p : params) key.push_back(static_cast<char>('0' + p.index()));
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    int count = 0;
    std::string text = ToDollarPlaceholders(sql, &count);
    if (count != static_cast<int>(params.size())) {
      return Fail(Errc::kInternal, "internal error",
                  "prepare: " + std::to_string(params.size()) + " parameters for " +
                      std::to_string(count) + " placeholders in: " + std::string(sql));
    }
    std::vector<Oid> types;
    types.reserve(params.size());
    for (const auto& p : params) types.push_back(TypeOf(p));
    Prepared prepared{.name = "s" + std::to_string(++counter_), .params = count};
    PGresult* res = PQprepare(conn_, prepared.name.c_str(), text.c_str(), count,
                              types.empty() ? nullptr : types.data());
    Status st = Check(res, "prepare");
    PQclear(res);
    if (!st) {
      auto e = st.error();
      e.detail += " in: " + std::string(sql);
      return Fail(std::move(e));
    }
    auto [pos, _] = cache_.emplace(std::move(key), std::move(prepared));
    return &pos->second;
  }

  static Value Convert(const char* text, int len, Oid type) {
    switch (type) {
      case kInt8:
      case kInt2:
      case kInt4:
      case kOid:
        return static_cast<int64_t>(std::strtoll(text, nullptr, 10));
      case kBool:
        return static_cast<int64_t>(text[0] == 't' ? 1 : 0);
      case kFloat4:
      case kFloat8:
        return std::strtod(text, nullptr);
      case kNumeric:
        // SUM(bigint) is numeric: whole numbers come back as integers, as on SQLite.
        if (!std::memchr(text, '.', len) && !std::memchr(text, 'e', len) &&
            !std::memchr(text, 'N', len))
          return static_cast<int64_t>(std::strtoll(text, nullptr, 10));
        return std::strtod(text, nullptr);
      default:
        return std::string(text, static_cast<size_t>(len));
    }
  }

  Status Run(std::string_view sql, const std::vector<Value>& params, std::vector<Row>* rows,
             int64_t* changed) {
    if (auto st = RefuseNulInText(params); !st) return st;
    auto prepared = Prepare(sql, params);
    if (!prepared) return Fail(prepared.error());
    std::vector<std::string> storage(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      if (auto p = std::get_if<int64_t>(&v))
        storage[i] = std::to_string(*p);
      else if (auto p = std::get_if<double>(&v)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *p);
        storage[i] = buf;
      } else if (auto p = std::get_if<std::string>(&v))
        storage[i] = *p;
      else
        continue;  // NULL
      values[i] = storage[i].c_str();
    }
    Status st = Ok();
    PGresult* res =
        deferred_begin_
            ? ExecFirst(**prepared, values, &st)
            : PQexecPrepared(conn_, (*prepared)->name.c_str(), static_cast<int>(params.size()),
                             values.empty() ? nullptr : values.data(), nullptr, nullptr, 0);
    if (st) st = Check(res, "exec");
    if (!st) {
      PQclear(res);
      auto e = st.error();
      e.detail += " in: " + std::string(sql);
      return Fail(std::move(e));
    }
    ForgiveAfterSavepointRollback(sql);
    const char* tuples = PQcmdTuples(res);
    *changed = tuples && *tuples ? std::strtoll(tuples, nullptr, 10) : 0;
    if (rows) {
      int nrows = PQntuples(res), ncols = PQnfields(res);
      rows->reserve(static_cast<size_t>(nrows));
      std::vector<Oid> types(static_cast<size_t>(ncols));
      for (int c = 0; c < ncols; ++c) types[static_cast<size_t>(c)] = PQftype(res, c);
      for (int r = 0; r < nrows; ++r) {
        std::vector<Value> out;
        out.reserve(static_cast<size_t>(ncols));
        for (int c = 0; c < ncols; ++c) {
          if (PQgetisnull(res, r, c))
            out.emplace_back(nullptr);
          else
            out.push_back(Convert(PQgetvalue(res, r, c), PQgetlength(res, r, c),
                                  types[static_cast<size_t>(c)]));
        }
        rows->emplace_back(std::move(out));
      }
    }
    PQclear(res);
    return Ok();
  }

  // The deferred BEGIN, then the write lock when asked for, then the statement, in one
  // pipeline (one round trip). Answers the statement's result; nullptr with `st` set when
  // the BEGIN or the lock failed or the connection was lost on the way.
  PGresult* ExecFirst(const Prepared& p, const std::vector<const char*>& values, Status* st) {
    const char* begin = std::exchange(deferred_begin_, nullptr);
    const int commands = deferred_lock_ ? 3 : 2;
    bool ok =
        PQenterPipelineMode(conn_) == 1 &&
        PQsendQueryParams(conn_, begin, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1 &&
        (!deferred_lock_ ||
         PQsendQueryParams(conn_, kWriteLockSql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1) &&
        PQsendQueryPrepared(conn_, p.name.c_str(), static_cast<int>(values.size()),
                            values.empty() ? nullptr : values.data(), nullptr, nullptr, 0) == 1 &&
        PQpipelineSync(conn_) == 1;
    PGresult* results[3] = {};
    for (int i = 0; ok && i < commands; ++i) {
      results[i] = PQgetResult(conn_);
      PGresult* end = results[i] ? PQgetResult(conn_) : nullptr;  // each command ends in NULL
      ok = results[i] && !end;
      PQclear(end);
    }
    PGresult* sync = ok ? PQgetResult(conn_) : nullptr;
    ok =
        ok && sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC && PQexitPipelineMode(conn_) == 1;
    PQclear(sync);
    if (!ok) {
      for (PGresult* r : results) PQclear(r);
      broken_ = true;  // replaced before its next use
      *st = Fail(Errc::kUnavailable, "database unavailable",
                 std::string("begin: ") + PQerrorMessage(conn_));
      return nullptr;
    }
    *st = Check(results[0], "begin");
    began_ = static_cast<bool>(*st);
    if (*st && deferred_lock_) *st = Check(results[1], "write lock");
    for (int i = 0; i < commands - 1; ++i) PQclear(results[i]);
    if (!*st) {
      PQclear(results[commands - 1]);
      return nullptr;
    }
    return results[commands - 1];
  }

  // The deferred BEGIN (and lock) on their own, before a statement that cannot go in a
  // pipeline (ExecScript: savepoints, migrations).
  Status BeginNow() {
    const char* begin = std::exchange(deferred_begin_, nullptr);
    if (!begin) return Ok();
    PGresult* res = PQexec(conn_, begin);
    Status st = Check(res, "begin");
    PQclear(res);
    began_ = static_cast<bool>(st);
    if (st && deferred_lock_) {
      res = PQexec(conn_, kWriteLockSql);
      st = Check(res, "write lock");
      PQclear(res);
    }
    return st;
  }

  PGconn* const conn_;
  std::unordered_map<std::string, Prepared> cache_;
  int64_t counter_ = 0;
  bool broken_ = false;
  bool failed_in_tx_ = false;
  std::string last_sqlstate_;
  const char* deferred_begin_ = nullptr;  // DeferBegin's statement, until sent
  bool deferred_lock_ = false;
  bool began_ = false;
  bool commit_in_flight_ = false;
};

Result<std::unique_ptr<PgConn>> Connect(const std::string& url) {
  PGconn* raw = PQconnectdb(url.c_str());
  if (!raw || PQstatus(raw) != CONNECTION_OK) {
    std::string msg = raw ? PQerrorMessage(raw) : "out of memory";
    PQfinish(raw);
    // The URL may carry a password: the detail names the failure, never the URL.
    return Fail(Errc::kUnavailable, "cannot connect to PostgreSQL", msg);
  }
  auto conn = std::make_unique<PgConn>(raw);
  if (auto st = conn->ExecScript("SET client_min_messages = warning; SET TIME ZONE 'UTC'"); !st)
    return Fail(st.error());
  return conn;
}

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(PostgresOptions options) : options_(std::move(options)) {}
  Dialect dialect() const override { return Dialect::kPostgres; }

  Status Prime() {
    auto conn = Connect(options_.url);
    if (!conn) return Fail(conn.error());
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(*conn));
    ++open_;
    return Ok();
  }

 protected:
  Status RunRead(const std::function<Status(Conn&)>& fn) override {
    return RunTx("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", false, fn);
  }
  Status RunWrite(const std::function<Status(Conn&)>& fn) override {
    return RunTx("BEGIN ISOLATION LEVEL READ COMMITTED", true, fn);
  }
  // One statement in autocommit: its own snapshot, one round trip instead of three (BEGIN,
  // the statement, COMMIT). A connection lost on the way is replaced and the statement run
  // once more (it only reads).
  Status RunReadStatement(const std::function<Status(Conn&)>& fn) override {
    BlockingRegion blocking;
    for (int attempt = 0;; ++attempt) {
      auto conn = Acquire();
      if (!conn) return Fail(conn.error());
      PgConn& c = **conn;
      c.ResetTxState();
      Status st = fn(c);
      const bool lost = !st && c.broken();
      Release(std::move(*conn));
      if (lost && attempt == 0) continue;
      return st;
    }
  }

 private:
  static constexpr int kMaxAttempts = 4;

  // REQUIRES: `fn` may run more than once (serialization failure, deadlock): it touches
  // only the database and the result it returns.
  Status RunTx(const char* begin, bool write, const std::function<Status(Conn&)>& fn) {
    // Every statement is a round trip to the server: on a handler thread, another handler
    // runs meanwhile (src/core/worker_pool.h).
    BlockingRegion blocking;
    for (int attempt = 0;; ++attempt) {
      auto conn = Acquire();
      if (!conn) return Fail(conn.error());
      PgConn& c = **conn;
      // BEGIN and the write lock go with the callback's first statement.
      c.DeferBegin(begin, write);
      Status st = fn(c);
      if (!st) {
        // Lost before the transaction began (with its first statement): nothing ran, so
        // the connection is replaced and the transaction retried once. A serialization
        // failure or deadlock is retried on a fresh snapshot.
        const bool lost_at_start = c.broken() && !c.began() && attempt == 0;
        const bool retry = lost_at_start || (c.retryable() && attempt < kMaxAttempts - 1);
        if (!c.broken() && c.began()) c.Rollback();
        Release(std::move(*conn));
        if (!retry) return st;
        if (!lost_at_start) std::this_thread::sleep_for(std::chrono::milliseconds(2 << attempt));
        continue;
      }
      st = Finish(c, write);
      Release(std::move(*conn));
      return st;
    }
  }

  // Ends a transaction whose callback succeeded: nothing to do when it ran no statement; a
  // read's COMMIT is sent without waiting (PgConn::SendCommit), a write's is waited for.
  static Status Finish(PgConn& c, bool write) {
    if (!c.began()) return Ok();
    if (c.failed_in_tx()) {
      // A statement failed and the callback went on: PostgreSQL has aborted the
      // transaction (SQLite would not have), so nothing is committed.
      c.Rollback();
      return Fail(Errc::kInternal, "internal error", "a statement failed inside the transaction");
    }
    if (!write) {
      c.SendCommit();
      return Ok();
    }
    Status st = c.Commit();
    if (!st && !c.broken()) c.Rollback();
    return st;
  }

  Result<std::unique_ptr<PgConn>> Acquire() {
    {
      std::unique_lock lock(mu_);
      while (true) {
        if (!idle_.empty()) {
          auto c = std::move(idle_.back());
          idle_.pop_back();
          lock.unlock();
          c->Settle();  // a read's COMMIT sent by the last user
          if (c->broken() && !c->Reset()) {
            lock.lock();
            --open_;
            cv_.notify_one();
            return Fail(Errc::kUnavailable, "database unavailable", "reconnect failed");
          }
          return c;
        }
        if (open_ < options_.pool_size) {
          ++open_;
          break;
        }
        cv_.wait(lock);
      }
    }
    auto c = Connect(options_.url);
    if (!c) {
      std::lock_guard lock(mu_);
      --open_;
      cv_.notify_one();
      return Fail(c.error());
    }
    return c;
  }

  void Release(std::unique_ptr<PgConn> c) {
    // Try once to repair a broken connection (outside the lock); one that stays broken
    // is dropped and its slot freed.
    bool usable = !c->broken() || c->Reset();
    std::lock_guard lock(mu_);
    if (!usable) {
      --open_;
      cv_.notify_one();
      return;
    }
    idle_.push_back(std::move(c));
    cv_.notify_one();
  }

  const PostgresOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<PgConn>> idle_;
  int open_ = 0;
};

}  // namespace

Result<std::unique_ptr<Database>> OpenPostgres(PostgresOptions options) {
  if (options.pool_size < 1) options.pool_size = 1;
  auto db = std::make_unique<PostgresDatabase>(std::move(options));
  if (auto st = db->Prime(); !st) return Fail(st.error());
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace crmd::store
