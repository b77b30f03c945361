#pragma once
// The signing-key repository (table signing_keys): ES256 keys shared by every node. A key
// is active until retired; a retired key stays published and trusted until its
// expires_at. The only place where signing_keys' SQL lives.
//
// Promises: kid is unique (InsertSigningKey answers kAlreadyExists for a duplicate);
// NewestActiveKey answers the unretired key created last (ties broken by kid), so every
// node signs with the same key; RetireActiveKeys followed by InsertSigningKey in one
// transaction leaves exactly one active key; TrustedKeys and PublishedJwks include a
// retired key until its expires_at and never after; PublishedJwks lists newest first.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows (and for NewestActiveKey when the caller may rotate on its answer), and inside
// Database::Read or Write for the lookups.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct ActiveKeyRow {
  std::string kid;
  std::string private_pem;
  int64_t created_at = 0;
};

struct TrustedKeyRow {
  std::string kid;
  std::string private_pem;
  std::optional<int64_t> expires_at;  // nullopt while active
};

Result<std::optional<ActiveKeyRow>> NewestActiveKey(store::Conn& c);
// Retires every active key, trusted until `expires_at`.
Status RetireActiveKeys(store::Conn& c, int64_t now, int64_t expires_at);
Status InsertSigningKey(store::Conn& c, const std::string& kid, const std::string& private_pem,
                        const std::string& public_jwk, int64_t now);
// Every key still trusted at `now` (active, or retired and not yet expired).
Result<std::vector<TrustedKeyRow>> TrustedKeys(store::Conn& c, int64_t now);
// The public JWK (JSON text) of every key still trusted at `now`, newest first.
Result<std::vector<std::string>> PublishedJwks(store::Conn& c, int64_t now);

}  // namespace crmd::auth::repo
