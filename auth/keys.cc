#include "auth/keys.h"

#include <spdlog/spdlog.h>

#include "auth/repo/signing_keys_repo.h"

namespace crmd::auth {

namespace {
constexpr auto kMinReloadInterval = std::chrono::seconds(1);
}

KeyStore::KeyStore(KeyStoreOptions options, store::Database& db, const Clock& clock)
    : options_(options), db_(db), clock_(clock) {}

Result<SigningKey> KeyStore::Current() {
  int64_t now = clock_.NowUnix();
  {
    std::shared_lock lock(mu_);
    if (current_ && current_->created_at + options_.rotation_s > now) return *current_;
  }
  std::lock_guard rotate(rotate_mu_);
  {
    std::shared_lock lock(mu_);
    if (current_ && current_->created_at + options_.rotation_s > now) return *current_;
  }
  // Decide inside one write transaction so that concurrent nodes agree on one new key.
  struct Chosen {
    std::string kid, pem;
    int64_t created_at;
    bool created = false;  // logged after the commit: the callback may run twice (store/db.h)
  };
  auto chosen = db_.Write([&](store::Conn& c) -> Result<Chosen> {
    auto row = repo::NewestActiveKey(c);
    if (!row) return Fail(row.error());
    if (*row && (*row)->created_at + options_.rotation_s > now)
      return Chosen{(*row)->kid, (*row)->private_pem, (*row)->created_at};
    auto key = EcKey::Generate();
    if (!key) return Fail(key.error());
    Chosen fresh{key->Thumbprint(), key->PrivatePem(), now, true};
    if (fresh.pem.empty()) return Fail(Error::Internal("cannot serialise signing key"));
    if (auto st = repo::RetireActiveKeys(c, now, now + options_.retire_grace_s); !st)
      return Fail(st.error());
    if (auto st =
            repo::InsertSigningKey(c, fresh.kid, fresh.pem, key->PublicJwk(fresh.kid).dump(), now);
        !st)
      return Fail(st.error());
    return fresh;
  });
  if (!chosen) return Fail(chosen.error());
  if (chosen->created) spdlog::info(R"("event":"signing_key_created","kid":"{}")", chosen->kid);
  auto key = EcKey::FromPrivatePem(chosen->pem);
  if (!key) return Fail(key.error());
  SigningKey sk{chosen->kid, std::make_shared<const EcKey>(std::move(*key)), chosen->created_at};
  std::unique_lock lock(mu_);
  if (current_ && current_->kid != sk.kid) {
    auto old = keys_.find(current_->kid);
    if (old != keys_.end()) old->second.second = now + options_.retire_grace_s;
  }
  current_ = sk;
  keys_[sk.kid] = {sk.key, 0};
  return sk;
}

std::shared_ptr<const EcKey> KeyStore::Find(std::string_view kid) {
  int64_t now = clock_.NowUnix();
  {
    std::shared_lock lock(mu_);
    auto it = keys_.find(kid);
    if (it != keys_.end()) {
      if (it->second.second == 0 || it->second.second > now) return it->second.first;
      return nullptr;  // retired and past its grace period
    }
    if (clock_.Monotonic() - last_reload_ < kMinReloadInterval) return nullptr;
  }
  std::unique_lock lock(mu_);
  if (clock_.Monotonic() - last_reload_ >= kMinReloadInterval) {
    if (auto st = ReloadLocked(now); !st)
      spdlog::warn(R"("event":"signing_key_reload_failed","detail":"{}")", st.error().detail);
  }
  auto it = keys_.find(kid);
  if (it == keys_.end() || (it->second.second != 0 && it->second.second <= now)) return nullptr;
  return it->second.first;
}

Status KeyStore::ReloadLocked(int64_t now) {
  last_reload_ = clock_.Monotonic();
  auto rows = db_.Read([&](store::Conn& c) { return repo::TrustedKeys(c, now); });
  if (!rows) return Fail(rows.error());
  for (const auto& r : *rows) {
    const std::string& kid = r.kid;
    int64_t expires = r.expires_at.value_or(0);
    auto it = keys_.find(kid);
    if (it != keys_.end()) {
      it->second.second = expires;  // a peer may have retired it
      continue;
    }
    auto key = EcKey::FromPrivatePem(r.private_pem);
    if (!key) return Fail(key.error());
    keys_.emplace(kid, std::make_pair(std::make_shared<const EcKey>(std::move(*key)), expires));
  }
  return Ok();
}

Result<nlohmann::json> KeyStore::Jwks() {
  // Make sure a fresh server publishes its first key before any token exists.
  if (auto cur = Current(); !cur) return Fail(cur.error());
  int64_t now = clock_.NowUnix();
  auto rows = db_.Read([&](store::Conn& c) { return repo::PublishedJwks(c, now); });
  if (!rows) return Fail(rows.error());
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& text : *rows) {
    auto jwk = nlohmann::json::parse(text, nullptr, false);
    if (jwk.is_object()) keys.push_back(std::move(jwk));
  }
  return nlohmann::json{{"keys", std::move(keys)}};
}

}  // namespace crmd::auth
