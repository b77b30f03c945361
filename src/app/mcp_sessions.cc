#include "src/app/mcp_sessions.h"

#include <spdlog/spdlog.h>

#include "src/core/crypto.h"

namespace crmd::app {

DbSessions::DbSessions(DbSessionsOptions options, store::Database& db, const Clock& clock,
                       Random& random)
    : options_(std::move(options)), db_(db), clock_(clock), random_(random) {}

Result<std::string> DbSessions::Create(const std::string& owner, mcp::SessionInfo info) {
  const int64_t now = clock_.NowUnix();
  std::string id = random_.Token(32);
  const int64_t per_owner =
      static_cast<int64_t>(std::max<size_t>(1, options_.limits.max_sessions_per_owner));
  const int64_t idle_before = now - options_.limits.idle_ttl_s;
  auto st = db_.Write([&](store::Conn& c) -> Status {
    // The owner's oldest sessions make room for the new one.
    auto mine = c.Query(
        "SELECT id_hash FROM mcp_sessions WHERE owner = ? ORDER BY created_at DESC, id_hash",
        {owner});
    if (!mine) return Fail(mine.error());
    for (size_t i = static_cast<size_t>(per_owner) - 1; i < mine->size(); ++i) {
      auto del = c.Exec("DELETE FROM mcp_sessions WHERE id_hash = ?", {(*mine)[i].Str(0)});
      if (!del) return Fail(del.error());
    }
    auto live =
        c.QueryOne("SELECT COUNT(*) FROM mcp_sessions WHERE last_used_at > ?", {idle_before});
    if (!live) return Fail(live.error());
    if ((*live)->Int(0) >= static_cast<int64_t>(options_.limits.max_sessions))
      return Fail(Errc::kUnavailable, "too many sessions");
    auto ins = c.Exec(
        "INSERT INTO mcp_sessions (id_hash, owner, protocol_version, initialized, url_elicitation, "
        "ui_extension, created_at, last_used_at) VALUES (?, ?, ?, 0, ?, ?, ?, ?)",
        {crypto::HashSecret(id), owner, info.protocol_version,
         int64_t{info.url_elicitation ? 1 : 0}, int64_t{info.ui_extension ? 1 : 0}, now, now});
    if (!ins) return Fail(ins.error());
    return Ok();
  });
  if (!st) {
    if (st.error().code != Errc::kUnavailable || st.error().message != "too many sessions")
      spdlog::warn(R"("event":"mcp_session_create_failed","detail":"{}")", st.error().detail);
    return Fail(Errc::kUnavailable, "too many sessions");
  }
  std::lock_guard lock(mu_);
  if (cache_.size() >= options_.max_cached) cache_.clear();
  cache_[id] = Cached{.owner = owner,
                      .info = {.protocol_version = std::move(info.protocol_version),
                               .initialized = false,
                               .url_elicitation = info.url_elicitation,
                               .ui_extension = info.ui_extension},
                      .checked_at = now,
                      .touched_at = now,
                      .used_at = now};
  return id;
}

mcp::Sessions::Lookup DbSessions::Find(const std::string& id, const std::string& owner,
                                       mcp::SessionInfo* info) {
  const int64_t now = clock_.NowUnix();
  std::optional<Cached> hit;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end() && now - it->second.checked_at < options_.recheck_s) hit = it->second;
  }
  if (!hit) {
    auto row = db_.ReadStatement([&](store::Conn& c) {
      return c.QueryOne(
          "SELECT owner, protocol_version, initialized, last_used_at, url_elicitation, "
          "ui_extension FROM "
          "mcp_sessions "
          "WHERE id_hash = ?",
          {crypto::HashSecret(id)});
    });
    if (!row) {
      spdlog::warn(R"("event":"mcp_session_lookup_failed","detail":"{}")", row.error().detail);
      return Lookup::kUnavailable;
    }
    if (!*row) {
      Forget(id);
      return Lookup::kNotFound;
    }
    hit = Cached{.owner = (*row)->Str(0),
                 .info = {.protocol_version = (*row)->Str(1),
                          .initialized = (*row)->Int(2) != 0,
                          .url_elicitation = (*row)->Int(4) != 0,
                          .ui_extension = (*row)->Int(5) != 0},
                 .checked_at = now,
                 .touched_at = (*row)->Int(3),
                 .used_at = (*row)->Int(3)};
  }
  // Another principal's session answers like an unknown one and is not refreshed.
  if (hit->owner != owner) return Lookup::kWrongOwner;
  if (now - std::max(hit->used_at, hit->touched_at) > options_.limits.idle_ttl_s) {
    (void)End(id, owner);
    return Lookup::kNotFound;
  }
  hit->used_at = now;
  bool touch = now - hit->touched_at >= options_.touch_every_s;
  if (touch) {
    // One request per interval writes the touch: the others that saw the stale time meanwhile
    // (64 connections on one session) would each wait for a durable commit of the same value.
    std::lock_guard lock(mu_);
    auto it = cache_.find(id);
    if (it != cache_.end() && now - it->second.touched_at < options_.touch_every_s) {
      hit->touched_at = it->second.touched_at;
      touch = false;
    } else if (it != cache_.end()) {
      it->second.touched_at = now;
    }
  }
  if (touch) {
    auto touched = db_.Write([&](store::Conn& c) {
      return c.Exec("UPDATE mcp_sessions SET last_used_at = ? WHERE id_hash = ?",
                    {now, crypto::HashSecret(id)});
    });
    if (touched && *touched == 0) {  // ended elsewhere meanwhile
      Forget(id);
      return Lookup::kNotFound;
    }
    if (touched) hit->touched_at = now;
  }
  if (info) *info = hit->info;
  std::lock_guard lock(mu_);
  if (cache_.size() >= options_.max_cached) cache_.clear();
  cache_[id] = *hit;
  return Lookup::kOk;
}

void DbSessions::MarkInitialized(const std::string& id) {
  auto st = db_.Write([&](store::Conn& c) {
    return c.Exec("UPDATE mcp_sessions SET initialized = 1 WHERE id_hash = ?",
                  {crypto::HashSecret(id)});
  });
  if (!st) spdlog::warn(R"("event":"mcp_session_update_failed","detail":"{}")", st.error().detail);
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(id); it != cache_.end()) it->second.info.initialized = true;
}

bool DbSessions::End(const std::string& id, const std::string& owner) {
  auto n = db_.Write([&](store::Conn& c) {
    return c.Exec("DELETE FROM mcp_sessions WHERE id_hash = ? AND owner = ?",
                  {crypto::HashSecret(id), owner});
  });
  if (!n) {
    spdlog::warn(R"("event":"mcp_session_end_failed","detail":"{}")", n.error().detail);
    return false;
  }
  if (*n > 0) Forget(id);
  return *n > 0;
}

Result<int64_t> DeleteMcpSessionsIdleSince(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM mcp_sessions WHERE last_used_at <= ?", {cutoff});
}

Result<int64_t> DbSessions::PurgeExpired() {
  const int64_t before = clock_.NowUnix() - options_.limits.idle_ttl_s - 1;
  return db_.Write([&](store::Conn& c) { return DeleteMcpSessionsIdleSince(c, before); });
}

void DbSessions::Forget(const std::string& id) {
  std::lock_guard lock(mu_);
  cache_.erase(id);
}

}  // namespace crmd::app
