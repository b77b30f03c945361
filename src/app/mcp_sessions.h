#pragma once
// MCP sessions in the database (table mcp_sessions, migration 0044), so that any crmd node
// behind a load balancer answers any session. The repository of the session aggregate:
// the only place its SQL lives.
//
// Each node keeps a bounded cache of the sessions it has seen. A cached session is
// trusted for `recheck_s` and then read again. With several nodes on one database
// (PostgreSQL) `recheck_s` is 0: every request reads its session's row, one statement in
// one round trip, so a session ended on one node is answered 404 by every node at once
// (the MCP transport's MUST). On SQLite, one node, the cache is trusted for 5 s, since
// only this node ends sessions and it forgets them as it does. The idle timer is written back
// at most every `touch_every_s` (default 60 s): a session may outlive its idle TTL by that
// much. Creation enforces the per-owner cap (the owner's oldest sessions are ended) and
// the global cap in the same transaction.
//
// Thread-safe. Blocking: call from worker threads, never from an I/O thread.
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/mcp/session.h"
#include "src/store/db.h"

namespace crmd::app {

struct DbSessionsOptions {
  mcp::SessionStoreOptions limits;
  int64_t recheck_s = 5;  // 0: read the row on every request
  int64_t touch_every_s = 60;
  size_t max_cached = 100000;
};

class DbSessions final : public mcp::Sessions {
 public:
  // `db`, `clock` and `random` must outlive this.
  DbSessions(DbSessionsOptions options, store::Database& db, const Clock& clock, Random& random);
  DbSessions(const DbSessions&) = delete;
  DbSessions& operator=(const DbSessions&) = delete;

  using mcp::Sessions::Create;
  Result<std::string> Create(const std::string& owner, mcp::SessionInfo info) override;
  Lookup Find(const std::string& id, const std::string& owner,
              mcp::SessionInfo* info = nullptr) override;
  void MarkInitialized(const std::string& id) override;
  bool End(const std::string& id, const std::string& owner) override;

  // Deletes sessions idle past the TTL; the number removed.
  Result<int64_t> PurgeExpired();

 private:
  struct Cached {
    std::string owner;
    mcp::SessionInfo info;
    int64_t checked_at = 0;  // when this node last read the row
    int64_t touched_at = 0;  // last_used_at as written to the row
    int64_t used_at = 0;     // last use seen on this node
  };

  void Forget(const std::string& id);

  const DbSessionsOptions options_;
  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;  // by session id; guarded by mu_
};

// Deletes sessions last used at or before `cutoff` (housekeeping).
// REQUIRES: inside a Database::Write transaction.
Result<int64_t> DeleteMcpSessionsIdleSince(store::Conn& c, int64_t cutoff);

}  // namespace crmd::app
