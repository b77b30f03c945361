#pragma once
// ES256 signing keys, stored in signing_keys (the database is the trust root and is shared
// by every node). The newest unretired key signs; after `rotation_s` a new key is created
// and the old one is retired but stays published (JWKS) and trusted for `retire_grace_s`,
// long enough for every token it signed to expire.
//
// KeyStore is thread-safe. Verification keys are cached in memory (parsed EVP_PKEYs); an
// unknown kid triggers a reload from the database at most once per second, so a forged
// kid cannot turn every request into a query.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "auth/jwt.h"
#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct SigningKey {
  std::string kid;
  std::shared_ptr<const EcKey> key;
  int64_t created_at = 0;
};

struct KeyStoreOptions {
  int64_t rotation_s = 30 * 24 * 3600;
  // How long a retired key stays published and trusted: at least the longest token TTL.
  int64_t retire_grace_s = 3600 + 300;
};

class KeyStore {
 public:
  KeyStore(KeyStoreOptions options, store::Database& db, const Clock& clock);
  KeyStore(const KeyStore&) = delete;
  KeyStore& operator=(const KeyStore&) = delete;

  // The key to sign with now. Creates the first key, or rotates when the current one is
  // older than rotation_s (in its own write transaction).
  // REQUIRES: not called inside Database::Read/Write.
  Result<SigningKey> Current();

  // The verification key for `kid`, or nullptr when unknown or no longer trusted.
  // REQUIRES: not called inside Database::Read/Write (a miss may read the database).
  std::shared_ptr<const EcKey> Find(std::string_view kid);

  // RFC 7517 JWK Set of every published key ({"keys":[...]}).
  Result<nlohmann::json> Jwks();

 private:
  Status ReloadLocked(int64_t now);

  const KeyStoreOptions options_;
  store::Database& db_;
  const Clock& clock_;

  std::mutex rotate_mu_;  // serialises Current()'s slow path
  std::shared_mutex mu_;  // guards the members below
  std::optional<SigningKey> current_;
  std::map<std::string, std::pair<std::shared_ptr<const EcKey>, int64_t>, std::less<>>
      keys_;  // kid -> key, expires_at (0 = none)
  MonotonicTime last_reload_{};
};

}  // namespace crmd::auth
