#pragma once
// One SQLite connection (src/store/sqlite.cc's readers and writer are made of these): its
// prepared statements are cached by SQL text, and opening it sets the pragmas every
// connection needs (WAL, foreign keys, in-memory temporary storage) and a busy wait that
// gives the pool's other handlers the core. Not thread-safe: one user at a time.
#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/store/db.h"
#include "src/store/text_check.h"

namespace crmd::store {

class SqliteConn final : public Conn {
 public:
  explicit SqliteConn(sqlite3* db) : db_(db) {}
  ~SqliteConn() override {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  Dialect dialect() const override { return Dialect::kSqlite; }

  Result<std::vector<Row>> Query(std::string_view sql, const std::vector<Value>& params) override {
    std::vector<Row> rows;
    auto st = Run(sql, params, &rows);
    if (!st) return Fail(st.error());
    return rows;
  }

  Result<int64_t> Exec(std::string_view sql, const std::vector<Value>& params) override {
    auto st = Run(sql, params, nullptr);
    if (!st) return Fail(st.error());
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Status ExecScript(std::string_view sql) override {
    // A script may end the transaction (migrations run their own): what AddTo gathered
    // goes in first.
    if (auto st = FlushDeferred(); !st) return st;
    char* err = nullptr;
    std::string s(sql);
    if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown";
      sqlite3_free(err);
      return Fail(Errc::kInternal, "internal error", msg);
    }
    return Ok();
  }

  // One statement without parameters through the statement cache (BEGIN, COMMIT): no
  // parse per call, unlike ExecScript.
  Status Step(std::string_view sql) {
    static const std::vector<Value> kNone;
    return Run(sql, kNone, nullptr);
  }

  sqlite3* raw() { return db_; }

  // Conn::AddTo: gathered here inside a transaction (one sum per statement and key), run
  // by FlushDeferred(), which a COMMIT (or END, or the RELEASE of a savepoint that began
  // the transaction) runs first. The group commit's batch of twenty-odd creates then
  // writes each counter row once instead of once a create (docs/performance.md).
  Status AddTo(std::string_view sql, std::vector<Value> key, int64_t delta) override;
  Status FlushDeferred() override;
  size_t deferred_count() const { return deferred_.size(); }  // for tests

 private:
  // A statement's SQL is most often a static string, passed from the same address each
  // time: a small table keyed by that address finds its statement without hashing the
  // text (hashing get_contact's 600 bytes cost about 850 instructions a call). A hit is
  // taken only when the text there is still the cached statement's own text, byte for
  // byte (a buffer reused for other SQL misses and goes through the map).
  Result<sqlite3_stmt*> Prepare(std::string_view sql) {
    Recent& recent = recent_[(reinterpret_cast<uintptr_t>(sql.data()) >> 3 ^ sql.size()) % kRecent];
    if (recent.data == sql.data() && recent.key != nullptr && *recent.key == sql)
      return recent.stmt;
    auto remember = [&](const std::string& key, sqlite3_stmt* stmt) {
      recent = {.data = sql.data(), .key = &key, .stmt = stmt};
    };
    auto it = cache_.find(sql);  // no copy of the SQL text to look it up
    if (it != cache_.end()) {
      remember(it->first, it->second);
      return it->second;
    }
    std::string key(sql);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, key.data(), static_cast<int>(key.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt, nullptr) != SQLITE_OK) {
      return Fail(Errc::kInternal, "internal error",
                  std::string("prepare: ") + sqlite3_errmsg(db_) + " in: " + key);
    }
    auto [pos, _] = cache_.emplace(std::move(key), stmt);
    remember(pos->first, stmt);  // the map's key: a node's key keeps its address
    return stmt;
  }

  // The transaction-control statements that move what AddTo gathered: BEGIN, COMMIT or
  // END, SAVEPOINT, RELEASE, ROLLBACK [TO]. Anything else is kNone, after a test of its
  // first letters (every statement passes here).
  enum class TxVerb { kNone, kBegin, kCommit, kSavepoint, kRelease, kRollback, kRollbackTo };
  struct TxControl {
    TxVerb verb = TxVerb::kNone;
    std::string_view name;  // the savepoint's
  };
  static TxControl ClassifyTx(std::string_view sql) {
    if (sql.size() < 3) return {};
    char a = static_cast<char>(sql[0] & ~0x20), b = static_cast<char>(sql[1] & ~0x20);
    bool maybe = (a == 'B' && b == 'E') || (a == 'C' && b == 'O') || (a == 'E' && b == 'N') ||
                 (a == 'S' && b == 'A') || (a == 'R' && (b == 'E' || b == 'O'));
    if (!maybe) return {};
    return ClassifyTxSlow(sql);
  }
  static TxControl ClassifyTxSlow(std::string_view sql);
  // Before a transaction-control statement runs (a COMMIT's gathered adds), and after it
  // succeeded (the savepoints' snapshots).
  Status BeforeTx(const TxControl& tx);
  void AfterTx(const TxControl& tx, bool was_autocommit);
  // Whether `sql` may read or move the rows AddTo gathered adds for, so that they must be
  // written first: an UPDATE, DELETE or REPLACE (any of them may fire a trigger that moves
  // those rows), an upsert's DO UPDATE, or any statement that names a table with gathered
  // adds. Plain INSERTs and SELECTs of other tables pass, so a batch of creates still
  // gathers.
  bool MaySeeGatheredRows(std::string_view sql) const;
  bool ReadMaySeeGatheredRows(std::string_view sql) const;
  // The statement failed: if SQLite rolled the transaction back, what it gathered is gone.
  void AfterFailure() {
    if ((!deferred_.empty() || !savepoints_.empty()) && sqlite3_get_autocommit(db_)) {
      deferred_.clear();
      savepoints_.clear();
    }
  }

  Status Run(std::string_view sql, const std::vector<Value>& params, std::vector<Row>* rows) {
    if (auto st = RefuseNulInText(params); !st) return st;
    const TxControl tx = ClassifyTx(sql);
    bool was_autocommit = false;
    if (tx.verb != TxVerb::kNone) {
      was_autocommit = sqlite3_get_autocommit(db_) != 0;
      if (auto st = BeforeTx(tx); !st) return st;
    } else if (!deferred_.empty() && MaySeeGatheredRows(sql)) {
      if (auto st = FlushDeferred(); !st) return st;
    }
    auto st = RunStatement(sql, params, rows);
    if (!st)
      AfterFailure();
    else if (tx.verb != TxVerb::kNone)
      AfterTx(tx, was_autocommit);
    return st;
  }

  Status RunStatement(std::string_view sql, const std::vector<Value>& params,
                      std::vector<Row>* rows) {
    auto prepared = Prepare(sql);
    if (!prepared) return Fail(prepared.error());
    sqlite3_stmt* stmt = *prepared;
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    for (size_t i = 0; i < params.size(); ++i) {
      int idx = static_cast<int>(i + 1);
      const Value& v = params[i];
      if (std::holds_alternative<std::nullptr_t>(v))
        sqlite3_bind_null(stmt, idx);
      else if (auto p = std::get_if<int64_t>(&v))
        sqlite3_bind_int64(stmt, idx, *p);
      else if (auto p = std::get_if<double>(&v))
        sqlite3_bind_double(stmt, idx, *p);
      else {
        const auto& s = std::get<std::string>(v);
        // Not copied: `params` outlives every step, and the bindings are cleared before
        // Run() returns (below; after an exception, before the next step), so no cached
        // statement keeps a pointer into them.
        sqlite3_bind_text(stmt, idx, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
      }
    }
    while (true) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        Errc code = (rc & 0xff) == SQLITE_CONSTRAINT ? Errc::kAlreadyExists
                    : (rc & 0xff) == SQLITE_BUSY     ? Errc::kUnavailable
                                                     : Errc::kInternal;
        std::string detail = std::string("step: ") + sqlite3_errmsg(db_);
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
        return Fail(code, code == Errc::kAlreadyExists ? "already exists" : "internal error",
                    detail);
      }
      if (!rows) continue;
      int n = sqlite3_column_count(stmt);
      std::vector<Value> values;
      values.reserve(n);
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_NULL:
            values.emplace_back(nullptr);
            break;
          case SQLITE_INTEGER:
            values.emplace_back(static_cast<int64_t>(sqlite3_column_int64(stmt, c)));
            break;
          case SQLITE_FLOAT:
            values.emplace_back(sqlite3_column_double(stmt, c));
            break;
          default: {
            const char* t = reinterpret_cast<const char*>(sqlite3_column_blob(stmt, c));
            int len = sqlite3_column_bytes(stmt, c);
            values.emplace_back(std::string(t ? t : "", static_cast<size_t>(len)));
          }
        }
      }
      rows->emplace_back(std::move(values));
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return Ok();
  }

  sqlite3* db_;
  struct SqlHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, sqlite3_stmt*, SqlHash, std::equal_to<>> cache_;
  // Entries are never erased from cache_, so `key` stays valid.
  struct Recent {
    const char* data = nullptr;        // where the caller's SQL text was
    const std::string* key = nullptr;  // cache_'s copy of that text
    sqlite3_stmt* stmt = nullptr;
  };
  static constexpr size_t kRecent = 64;
  Recent recent_[kRecent];

  // AddTo's sums in the open transaction, in the order their keys first came.
  struct Deferred {
    std::string sql;
    std::vector<Value> key;
    int64_t delta = 0;
  };
  std::vector<Deferred> deferred_;
  // The tables deferred_'s statements write (INSERT INTO <table>), for MaySeeGatheredRows.
  std::vector<std::string> deferred_tables_;
  // MaySeeGatheredRows's answers by statement text while deferred_tables_ holds
  // `may_see_tables_` tables (it only grows): a statement's words are read once, not at
  // every run (a batch of creates runs the same few statements thousands of times).
  mutable std::unordered_map<std::string, bool, SqlHash, std::equal_to<>> may_see_;
  mutable size_t may_see_tables_ = 0;
  // The open savepoints, innermost last, each with deferred_ as it was when it began (a
  // ROLLBACK TO it puts that back).
  struct Savepoint {
    std::string name;
    std::vector<Deferred> deferred;
    bool began_transaction = false;
  };
  std::vector<Savepoint> savepoints_;
};

// Opens the database at `path` (created unless `readonly`) with the pragmas above.
Result<std::unique_ptr<SqliteConn>> OpenConn(const std::string& path, bool readonly);

}  // namespace crmd::store
