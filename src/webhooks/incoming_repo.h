#pragma once
// SQL for incoming webhooks (table incoming_webhooks). Tokens are stored only as
// crypto::HashSecret(token); callers pass the hash. Promises: Insert answers
// kAlreadyExists when the token prefix is taken; ids come from store::NextIdSql, so an id
// is never reused after Delete; Find and List never return the token hash or the HMAC
// secret (only FindByPrefix does, for Receive). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"
#include "src/webhooks/incoming.h"

namespace crmd::webhooks::incoming_repo {

struct NewHook {
  std::string name;
  std::string token_prefix;
  std::string token_hash;
  std::string mapping;  // JSON text
  std::string applies;  // JSON text
  std::optional<std::string> hmac_secret;
  bool enabled = true;
  int64_t now = 0;
};

struct HookWithSecrets {
  IncomingHook hook;
  std::string token_hash;
  std::optional<std::string> hmac_secret;
};

// Answers the new id. REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const NewHook& h);
// REQUIRES (lookups): inside Database::Read or Write.
Result<std::vector<IncomingHook>> List(store::Conn& c);
Result<std::optional<IncomingHook>> Find(store::Conn& c, int64_t id);
Result<bool> Exists(store::Conn& c, int64_t id);
Result<std::optional<HookWithSecrets>> FindByPrefix(store::Conn& c, const std::string& prefix);

// Column names come from a fixed list in the caller (name, mapping, applies, hmac_secret,
// enabled, updated_at), never from input; one UPDATE per column.
// REQUIRES: inside Database::Write.
Status SetColumns(store::Conn& c, int64_t id,
                  const std::vector<std::pair<const char*, store::Value>>& sets);
// False when there was no such hook. REQUIRES: inside Database::Write.
Result<bool> Delete(store::Conn& c, int64_t id);
// received_count + 1, last_received_at = now. REQUIRES: inside Database::Write.
Status CountReceived(store::Conn& c, int64_t id, int64_t now);

}  // namespace crmd::webhooks::incoming_repo
