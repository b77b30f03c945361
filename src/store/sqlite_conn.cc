#include "src/store/sqlite_conn.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iterator>
#include <mutex>
#include <thread>

#include "src/core/worker_pool.h"
#include "src/store/sqlite_vfs.h"

namespace crmd::store {

namespace {

// Once per process, before SQLite initialises: no memory statistics. With them (Debian's
// build default) every sqlite3_malloc and sqlite3_free takes one process-wide mutex, about
// 40 times per get_contact, shared by every connection of every thread. Nothing here reads
// sqlite3_memory_used(). If SQLite was initialised already, the call is refused (MISUSE)
// and the default stays: slower, not wrong.
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

// SQLite's busy_timeout of 5 s (the same sleeps, 1 ms growing to 100 ms, and the same
// limit), each sleep inside a BlockingRegion: a connection waiting for another's lock (a
// second process, a checkpoint) gives its place to the pool's other handlers, as any wait
// outside the process does; on a handler fiber (a group commit leader) it would otherwise
// hold its thread and its core (src/core/worker_pool.h).
int BusyWait(void*, int count) {
  static constexpr int kDelays[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
  static constexpr int kTotals[] = {0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228};
  static constexpr int kSteps = static_cast<int>(std::size(kDelays));
  static constexpr int kTimeoutMs = 5000;
  int delay = kDelays[kSteps - 1];
  int prior = kTotals[kSteps - 1] + delay * (count - (kSteps - 1));
  if (count < kSteps) {
    delay = kDelays[count];
    prior = kTotals[count];
  }
  if (prior + delay > kTimeoutMs) {
    delay = kTimeoutMs - prior;
    if (delay <= 0) return 0;
  }
  BlockingRegion blocking;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  return 1;
}

}  // namespace

namespace {

// What ends a keyword or a savepoint's name.
bool IsDelimiter(char c) { return c == ' ' || c == ';' || c == '\n' || c == '\t'; }
// Letters equal without case (SQLite's keywords and savepoint names compare so).
bool SameLetters(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] & ~0x20) != (b[i] & ~0x20)) return false;
  return true;
}

// `sql` starts with `word` (any case), followed by the end or a delimiter: `sql` becomes
// the rest after it and its spaces.
bool TakeWord(std::string_view& sql, std::string_view word) {
  if (sql.size() < word.size() || !SameLetters(sql.substr(0, word.size()), word)) return false;
  if (sql.size() > word.size() && !IsDelimiter(sql[word.size()])) return false;
  sql.remove_prefix(word.size());
  while (!sql.empty() && IsDelimiter(sql[0]) && sql[0] != ';') sql.remove_prefix(1);
  return true;
}

std::string_view Name(std::string_view rest) {
  size_t end = 0;
  while (end < rest.size() && !IsDelimiter(rest[end])) ++end;
  return rest.substr(0, end);
}

}  // namespace

SqliteConn::TxControl SqliteConn::ClassifyTxSlow(std::string_view sql) {
  std::string_view rest = sql;
  if (TakeWord(rest, "BEGIN")) return {.verb = TxVerb::kBegin, .name = {}};
  if (TakeWord(rest, "COMMIT") || TakeWord(rest, "END"))
    return {.verb = TxVerb::kCommit, .name = {}};
  if (TakeWord(rest, "SAVEPOINT")) return {.verb = TxVerb::kSavepoint, .name = Name(rest)};
  if (TakeWord(rest, "RELEASE")) {
    TakeWord(rest, "SAVEPOINT");
    return {.verb = TxVerb::kRelease, .name = Name(rest)};
  }
  if (TakeWord(rest, "ROLLBACK")) {
    TakeWord(rest, "TRANSACTION");
    if (!TakeWord(rest, "TO")) return {.verb = TxVerb::kRollback, .name = {}};
    TakeWord(rest, "SAVEPOINT");
    return {.verb = TxVerb::kRollbackTo, .name = Name(rest)};
  }
  return {};
}

namespace {

// The innermost open savepoint named `name`, or npos.
template <typename V>
size_t FindSavepoint(const V& savepoints, std::string_view name) {
  for (size_t i = savepoints.size(); i-- > 0;)
    if (SameLetters(savepoints[i].name, name)) return i;
  return static_cast<size_t>(-1);
}

}  // namespace

Status SqliteConn::BeforeTx(const TxControl& tx) {
  if (tx.verb == TxVerb::kCommit) return FlushDeferred();
  if (tx.verb == TxVerb::kRelease) {
    // Releasing the savepoint that began the transaction commits it.
    size_t i = FindSavepoint(savepoints_, tx.name);
    if (i == 0 && savepoints_[0].began_transaction) return FlushDeferred();
  }
  return Ok();
}

void SqliteConn::AfterTx(const TxControl& tx, bool was_autocommit) {
  switch (tx.verb) {
    case TxVerb::kNone:
      return;
    case TxVerb::kBegin:
    case TxVerb::kCommit:
    case TxVerb::kRollback:
      deferred_.clear();
      savepoints_.clear();
      return;
    case TxVerb::kSavepoint:
      savepoints_.push_back({.name = std::string(tx.name),
                             .deferred = deferred_,
                             .began_transaction = was_autocommit});
      return;
    case TxVerb::kRelease: {
      size_t i = FindSavepoint(savepoints_, tx.name);
      if (i != static_cast<size_t>(-1)) savepoints_.resize(i);  // it and those inside it
      if (sqlite3_get_autocommit(db_)) deferred_.clear();       // it ended the transaction
      return;
    }
    case TxVerb::kRollbackTo: {
      size_t i = FindSavepoint(savepoints_, tx.name);
      if (i == static_cast<size_t>(-1)) return;
      savepoints_.resize(i + 1);  // the savepoints inside it are gone; it stays open
      deferred_ = savepoints_[i].deferred;
      return;
    }
  }
}

namespace {

// The first word of `sql`, upper-cased ASCII, at most 8 letters.
std::string FirstWord(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\n' || sql[i] == '\t' || sql[i] == '\r'))
    ++i;
  std::string word;
  for (; i < sql.size() && word.size() < 8 && std::isalpha(static_cast<unsigned char>(sql[i])); ++i)
    word += static_cast<char>(sql[i] & ~0x20);
  return word;
}

// Whether `text` contains `word` with no letter, digit or '_' on either side, ignoring
// ASCII case.
bool ContainsWord(std::string_view text, std::string_view word) {
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = 0; at + word.size() <= text.size(); ++at) {
    if (!SameLetters(text.substr(at, word.size()), word)) continue;
    bool left = at == 0 || !is_name(text[at - 1]);
    bool right = at + word.size() == text.size() || !is_name(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// The table of "INSERT INTO <table> ...", or empty.
std::string InsertTarget(std::string_view sql) {
  if (FirstWord(sql) != "INSERT") return {};
  size_t into = sql.find("INTO ");
  if (into == std::string_view::npos) return {};
  size_t b = into + 5, e = b;
  while (e < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[e])) || sql[e] == '_')) ++e;
  return std::string(sql.substr(b, e - b));
}

}  // namespace

bool SqliteConn::MaySeeGatheredRows(std::string_view sql) const {
  if (may_see_tables_ != deferred_tables_.size()) {
    may_see_.clear();
    may_see_tables_ = deferred_tables_.size();
  }
  if (auto it = may_see_.find(sql); it != may_see_.end()) return it->second;
  const bool may = ReadMaySeeGatheredRows(sql);
  constexpr size_t kMaxRemembered = 4096;  // statement texts are few; a bound all the same
  if (may_see_.size() < kMaxRemembered) may_see_.emplace(std::string(sql), may);
  return may;
}

bool SqliteConn::ReadMaySeeGatheredRows(std::string_view sql) const {
  const std::string word = FirstWord(sql);
  if (word == "UPDATE" || word == "DELETE" || word == "REPLACE") return true;
  if (word == "INSERT" && (ContainsWord(sql, "REPLACE") || ContainsWord(sql, "UPDATE")))
    return true;
  for (const auto& table : deferred_tables_)
    if (ContainsWord(sql, table)) return true;
  return false;
}

Status SqliteConn::AddTo(std::string_view sql, std::vector<Value> key, int64_t delta) {
  if (sqlite3_get_autocommit(db_)) {  // no transaction to gather in
    key.emplace_back(delta);
    return Run(sql, key, nullptr);
  }
  for (auto& d : deferred_) {
    if (d.sql == sql && d.key == key) {
      d.delta += delta;
      return Ok();
    }
  }
  deferred_.push_back({.sql = std::string(sql), .key = std::move(key), .delta = delta});
  if (std::string table = InsertTarget(sql);
      !table.empty() &&
      std::find(deferred_tables_.begin(), deferred_tables_.end(), table) == deferred_tables_.end())
    deferred_tables_.push_back(std::move(table));
  return Ok();
}

Status SqliteConn::FlushDeferred() {
  if (deferred_.empty()) return Ok();
  std::vector<Deferred> todo;
  todo.swap(deferred_);
  for (auto& d : todo) {
    if (d.delta == 0) continue;
    d.key.emplace_back(d.delta);
    // On a failure the transaction must not commit: the caller's Write fails and rolls
    // back, and with it whatever of these ran.
    if (auto st = Run(d.sql, d.key, nullptr); !st) return st;
  }
  return Ok();
}

Result<std::unique_ptr<SqliteConn>> OpenConn(const std::string& path, bool readonly) {
  ConfigureSqliteOnce();
  sqlite3* db = nullptr;
  int flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
              SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, PinningVfsName()) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return Fail(Errc::kUnavailable, "cannot open database", msg);
  }
  auto conn = std::make_unique<SqliteConn>(db);
  sqlite3_busy_handler(db, &BusyWait, nullptr);
  // synchronous=FULL in WAL mode: every COMMIT fsyncs the WAL before it returns. The group
  // commit's writer connection then runs at NORMAL, its fsync taken by the sync thread
  // before any write of the batch is answered (SqliteDatabase), so a Write() that returned
  // has survived a power loss too, with one fsync per batch (or fewer) rather than one per
  // transaction.
  // temp_store=MEMORY: a statement that fires triggers (the counters of migration 0053
  // on every contact write) keeps a statement journal; in a temporary file that cost
  // about 18 us per INSERT of a contact, in memory about 4 us.
  const char* pragmas = readonly ? "PRAGMA foreign_keys=ON;"
                                 : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                                   "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
  if (auto st = conn->ExecScript(pragmas); !st) return Fail(st.error());
  return conn;
}

}  // namespace crmd::store
