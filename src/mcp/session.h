#pragma once
// MCP sessions (Streamable HTTP "Session Management"). A session is created by
// initialize, bound to the principal that created it (OAuth client + subject), carries
// the negotiated protocol version, expires after an idle TTL and is ended by DELETE.
//
// Sessions is the interface the endpoint uses. SessionStore keeps them in memory on this
// node (tests, and a server without a composition root); crmd itself wires the database
// implementation (src/app/mcp_sessions.h) so that any node behind a load balancer
// answers any session.
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"

namespace crmd::mcp {

struct SessionStoreOptions {
  int64_t idle_ttl_s = 3600;           // a session unused this long is gone
  size_t max_sessions = 10000;         // across all principals on this node
  size_t max_sessions_per_owner = 50;  // creating one more ends the owner's oldest
};

struct SessionInfo {
  std::string protocol_version;
  bool initialized = false;  // notifications/initialized received
  // The client declared URL-mode elicitation at initialize (capabilities.elicitation.url):
  // a request that needs the person may answer URLElicitationRequiredError (-32042).
  bool url_elicitation = false;
  // The client declared MCP Apps (capabilities.extensions["io.modelcontextprotocol/ui"]) and
  // crmd offers it: the session sees the views (src/mcp/apps.h).
  bool ui_extension = false;
};

// Thread-safe in every implementation.
class Sessions {
 public:
  virtual ~Sessions() = default;

  // Owner key of a principal: the session may only be used with tokens of the same
  // OAuth client and subject.
  static std::string OwnerKey(const std::string& client_id, const std::string& subject);

  // A new session id (43 visible ASCII characters). kUnavailable when full of live
  // sessions (or the store cannot be reached).
  virtual Result<std::string> Create(const std::string& owner, SessionInfo info) = 0;
  Result<std::string> Create(const std::string& owner, std::string protocol_version) {
    return Create(owner, SessionInfo{.protocol_version = std::move(protocol_version)});
  }

  enum class Lookup { kOk, kNotFound, kWrongOwner, kUnavailable };
  // Finds a live session and refreshes its idle timer. An expired session is removed and
  // reported kNotFound; another owner's session is kWrongOwner and is not refreshed.
  virtual Lookup Find(const std::string& id, const std::string& owner,
                      SessionInfo* info = nullptr) = 0;
  virtual void MarkInitialized(const std::string& id) = 0;
  // Ends the session; false when unknown or owned by someone else.
  virtual bool End(const std::string& id, const std::string& owner) = 0;
};

// In memory on this node. Lookups take one shard's mutex only; creation and removal also
// take the per-owner index mutex. No lock is held while a tool runs.
class SessionStore final : public Sessions {
 public:
  // `clock` and `random` must outlive the store.
  SessionStore(SessionStoreOptions options, const Clock& clock, Random& random);
  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  using Sessions::Create;
  Result<std::string> Create(const std::string& owner, SessionInfo info) override;
  Lookup Find(const std::string& id, const std::string& owner,
              SessionInfo* info = nullptr) override;
  void MarkInitialized(const std::string& id) override;
  bool End(const std::string& id, const std::string& owner) override;

  size_t size() const;

 private:
  struct Session {
    std::string owner;
    SessionInfo info;
    int64_t last_used = 0;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Session> sessions;
  };
  static constexpr size_t kShards = 16;

  Shard& ShardFor(const std::string& id);
  void Remove(const std::string& id);
  void SweepExpired(int64_t now);

  const SessionStoreOptions options_;
  const Clock& clock_;
  Random& random_;
  std::array<Shard, kShards> shards_;

  // Per-owner creation order, for the per-owner cap; also counts sessions.
  std::mutex owners_mu_;
  std::unordered_map<std::string, std::deque<std::string>> owners_;
  size_t total_ = 0;        // guarded by owners_mu_
  int64_t last_sweep_ = 0;  // guarded by owners_mu_
};

}  // namespace crmd::mcp
