#pragma once
// SQL for API keys (table api_keys). Secrets are stored only as crypto::HashSecret(key);
// callers pass the hash. Promises: Insert answers kAlreadyExists when the prefix is
// taken; ids come from store::NextIdSql, so an id is never reused, even after Delete.
// Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/governance/api_keys.h"
#include "src/store/db.h"

namespace crmd::governance::api_keys_repo {

struct KeyWithHash {
  ApiKey key;
  std::string secret_hash;
};

// An enabled key; answers its id. kAlreadyExists on a prefix collision.
// REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const std::string& name, const std::string& prefix,
                       const std::string& secret_hash, ApiKeyRole role, int64_t created_at);
// Every key, by id. REQUIRES: inside Database::Read or Write.
Result<std::vector<ApiKey>> List(store::Conn& c);
// REQUIRES: inside Database::Read or Write.
Result<std::optional<ApiKey>> Find(store::Conn& c, int64_t id);
// The key and its stored hash by lookup prefix. REQUIRES: inside Database::Read or Write.
Result<std::optional<KeyWithHash>> FindByPrefix(store::Conn& c, const std::string& prefix);
// False when there is no such key. REQUIRES: inside Database::Write.
Result<bool> SetEnabled(store::Conn& c, int64_t id, bool enabled);
// False when there is no such key. REQUIRES: inside Database::Write.
Result<bool> Delete(store::Conn& c, int64_t id);
// Sets last_used_at = now unless it is already later than now - resolution.
// REQUIRES: inside Database::Write.
Status TouchLastUsed(store::Conn& c, int64_t id, int64_t now, int64_t resolution);

}  // namespace crmd::governance::api_keys_repo
