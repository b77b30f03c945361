#include "src/mcp/session.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace crmd::mcp {

namespace {
// Expired sessions are swept at creation time, at most this often (and whenever full).
constexpr int64_t kSessionSweepEvery_s = 30;
}  // namespace

SessionStore::SessionStore(SessionStoreOptions options, const Clock& clock, Random& random)
    : options_(options), clock_(clock), random_(random) {}

std::string Sessions::OwnerKey(const std::string& client_id, const std::string& subject) {
  // Length-prefixed so that no two (client, subject) pairs share a key. Built in place:
  // once per request (a chain of + made three strings).
  std::string key;
  key.reserve(24 + client_id.size() + subject.size());
  key += std::to_string(client_id.size());
  key += ':';
  key += client_id;
  key += '|';
  key += subject;
  return key;
}

SessionStore::Shard& SessionStore::ShardFor(const std::string& id) {
  return shards_[std::hash<std::string>{}(id) % kShards];
}

Result<std::string> SessionStore::Create(const std::string& owner, SessionInfo info) {
  int64_t now = clock_.NowUnix();
  std::string id = random_.Token(32);
  std::lock_guard owners_lock(owners_mu_);
  if (now - last_sweep_ >= kSessionSweepEvery_s || total_ >= options_.max_sessions) {
    SweepExpired(now);
    last_sweep_ = now;
  }
  auto& mine = owners_[owner];
  while (!mine.empty() && mine.size() >= std::max<size_t>(1, options_.max_sessions_per_owner)) {
    std::string oldest = std::move(mine.front());
    mine.pop_front();
    --total_;
    Shard& s = ShardFor(oldest);
    std::lock_guard lock(s.mu);
    s.sessions.erase(oldest);
  }
  if (total_ >= options_.max_sessions) {
    if (mine.empty()) owners_.erase(owner);
    return Fail(Errc::kUnavailable, "too many sessions");
  }
  {
    Shard& s = ShardFor(id);
    std::lock_guard lock(s.mu);
    info.initialized = false;
    s.sessions[id] = Session{owner, std::move(info), now};
  }
  mine.push_back(id);
  ++total_;
  return id;
}

SessionStore::Lookup SessionStore::Find(const std::string& id, const std::string& owner,
                                        SessionInfo* info) {
  int64_t now = clock_.NowUnix();
  Shard& s = ShardFor(id);
  {
    std::lock_guard lock(s.mu);
    auto it = s.sessions.find(id);
    if (it == s.sessions.end()) return Lookup::kNotFound;
    if (now - it->second.last_used < options_.idle_ttl_s) {
      if (it->second.owner != owner) return Lookup::kWrongOwner;
      it->second.last_used = now;
      if (info) *info = it->second.info;
      return Lookup::kOk;
    }
  }
  Remove(id);  // expired
  return Lookup::kNotFound;
}

void SessionStore::MarkInitialized(const std::string& id) {
  Shard& s = ShardFor(id);
  std::lock_guard lock(s.mu);
  auto it = s.sessions.find(id);
  if (it != s.sessions.end()) it->second.info.initialized = true;
}

bool SessionStore::End(const std::string& id, const std::string& owner) {
  {
    Shard& s = ShardFor(id);
    std::lock_guard lock(s.mu);
    auto it = s.sessions.find(id);
    if (it == s.sessions.end() || it->second.owner != owner) return false;
  }
  Remove(id);
  return true;
}

void SessionStore::Remove(const std::string& id) {
  std::lock_guard owners_lock(owners_mu_);
  std::string owner;
  {
    Shard& s = ShardFor(id);
    std::lock_guard lock(s.mu);
    auto it = s.sessions.find(id);
    if (it == s.sessions.end()) return;  // someone else removed it first
    owner = std::move(it->second.owner);
    s.sessions.erase(it);
  }
  auto o = owners_.find(owner);
  if (o == owners_.end()) return;
  auto pos = std::find(o->second.begin(), o->second.end(), id);
  if (pos != o->second.end()) {
    o->second.erase(pos);
    --total_;
  }
  if (o->second.empty()) owners_.erase(o);
}

// REQUIRES: owners_mu_ held.
void SessionStore::SweepExpired(int64_t now) {
  std::vector<std::pair<std::string, std::string>> expired;  // (owner, id)
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    for (auto it = s.sessions.begin(); it != s.sessions.end();) {
      if (now - it->second.last_used >= options_.idle_ttl_s) {
        expired.emplace_back(it->second.owner, it->first);
        it = s.sessions.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [owner, id] : expired) {
    auto o = owners_.find(owner);
    if (o == owners_.end()) continue;
    auto pos = std::find(o->second.begin(), o->second.end(), id);
    if (pos != o->second.end()) {
      o->second.erase(pos);
      --total_;
    }
    if (o->second.empty()) owners_.erase(o);
  }
}

size_t SessionStore::size() const {
  size_t n = 0;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    n += s.sessions.size();
  }
  return n;
}

}  // namespace crmd::mcp
