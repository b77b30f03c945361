#include "auth/verified_tokens.h"

#include "src/core/crypto.h"

namespace crmd::auth {

std::shared_ptr<const VerifiedTokens::Entry> VerifiedTokens::Find(std::string_view jwt, int64_t now,
                                                                  int64_t leeway_s) {
  std::string digest = crypto::Sha256(jwt);
  Shard& shard = ShardFor(digest);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(digest);
  if (it == shard.entries.end()) return nullptr;
  if (it->second->claims.expires_at + leeway_s <= now) {
    shard.entries.erase(it);
    return nullptr;
  }
  return it->second;
}

void VerifiedTokens::Insert(std::string_view jwt, std::shared_ptr<const Entry> entry, int64_t now) {
  std::string digest = crypto::Sha256(jwt);
  Shard& shard = ShardFor(digest);
  std::lock_guard lock(shard.mu);
  if (shard.entries.size() >= per_shard_) {
    for (auto it = shard.entries.begin(); it != shard.entries.end();)
      it = it->second->claims.expires_at < now ? shard.entries.erase(it) : std::next(it);
    if (shard.entries.size() >= per_shard_) shard.entries.clear();
  }
  shard.entries.insert_or_assign(std::move(digest), std::move(entry));
}

}  // namespace crmd::auth
