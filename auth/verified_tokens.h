#pragma once
// A cache of access tokens whose ES256 signature and claims were already verified, keyed
// by the SHA-256 of the compact JWT. A hit skips the signature check (about 80 us of CPU)
// but not the rest: the caller still checks expiry (with leeway), that the signing key is
// still trusted, and the revoked-jti set. Bounded: sharded maps that drop expired entries,
// then everything, when a shard fills. An entry is shared, never copied: a hit costs a
// reference count, not the claims' nine strings (a tenth of a tool call's allocations).
//
// Thread-safe: one short critical section per lookup.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/jwt.h"
#include "src/core/principal.h"

namespace crmd::auth {

class VerifiedTokens {
 public:
  explicit VerifiedTokens(size_t capacity = 65536) : per_shard_(capacity / kShards + 1) {}
  VerifiedTokens(const VerifiedTokens&) = delete;
  VerifiedTokens& operator=(const VerifiedTokens&) = delete;

  struct Entry {
    AccessTokenClaims claims;
    std::string kid;
    Principal principal;  // what the claims grant, as the bearer guard answers it
  };
  // The entry for `jwt` if present and not past exp + leeway at `now`, else null.
  std::shared_ptr<const Entry> Find(std::string_view jwt, int64_t now, int64_t leeway_s);
  void Insert(std::string_view jwt, std::shared_ptr<const Entry> entry, int64_t now);
  void Insert(std::string_view jwt, Entry entry, int64_t now) {
    Insert(jwt, std::make_shared<const Entry>(std::move(entry)), now);
  }

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, std::shared_ptr<const Entry>>
        entries;  // key: raw SHA-256 of the JWT
  };
  Shard& ShardFor(const std::string& digest) {
    return shards_[static_cast<unsigned char>(digest[0]) % kShards];
  }

  const size_t per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace crmd::auth
