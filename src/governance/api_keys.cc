#include "src/governance/api_keys.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/crypto.h"
#include "src/governance/api_keys_repo.h"

namespace crmd::governance {
namespace {

// Lower-case base32 so prefixes are easy to read out and never contain '_'.
std::string PrefixChars(Random& random, size_t n) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string bytes = random.Bytes(n);
  std::string out;
  for (unsigned char b : bytes) out += kAlphabet[b & 31];
  return out;
}

}  // namespace

const char* ApiKeyRoleName(ApiKeyRole role) {
  return role == ApiKeyRole::kAdmin ? "admin" : "integration";
}

std::optional<ApiKeyRole> ParseApiKeyRole(std::string_view name) {
  if (name == "admin") return ApiKeyRole::kAdmin;
  if (name == "integration") return ApiKeyRole::kIntegration;
  return std::nullopt;
}

nlohmann::json ApiKeyJson(const ApiKey& k) {
  return {{"id", k.id},
          {"name", k.name},
          {"prefix", k.prefix},
          {"role", ApiKeyRoleName(k.role)},
          {"status", k.enabled ? "enabled" : "disabled"},
          {"created_at", FormatRfc3339(k.created_at)},
          {"last_used_at", k.last_used_at ? nlohmann::json(FormatRfc3339(*k.last_used_at))
                                          : nlohmann::json(nullptr)}};
}

std::optional<std::string> ApiKeyPrefix(std::string_view presented) {
  if (presented.size() < ApiKeys::kPrefixLength + 2 || presented.size() > 256) return std::nullopt;
  if (presented.substr(0, ApiKeys::kKeyPrefix.size()) != ApiKeys::kKeyPrefix) return std::nullopt;
  if (presented[ApiKeys::kPrefixLength] != '_') return std::nullopt;
  return std::string(presented.substr(0, ApiKeys::kPrefixLength));
}

Result<CreatedApiKey> ApiKeys::Create(std::string name, ApiKeyRole role) {
  // Characters, as a browser's maxlength counts them: UTF-8 lead bytes, not bytes.
  const auto characters = std::count_if(name.begin(), name.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  });
  if (name.empty() || characters > 200)
    return Fail(Errc::kInvalidArgument, "name must be 1 to 200 characters");
  const int64_t now = clock_.NowUnix();
  // A prefix collision (40 random bits) is retried rather than failing the caller.
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string prefix = std::string(kKeyPrefix) + PrefixChars(random_, 8);
    std::string secret = prefix + "_" + random_.Token(32);
    auto id = db_.Write([&](store::Conn& c) {
      return api_keys_repo::Insert(c, name, prefix, crypto::HashSecret(secret), role, now);
    });
    if (!id && id.error().code == Errc::kAlreadyExists) continue;
    if (!id) return Fail(id.error());
    ApiKey key{.id = *id,
               .name = name,
               .prefix = prefix,
               .role = role,
               .enabled = true,
               .created_at = now,
               .last_used_at = std::nullopt};
    return CreatedApiKey{std::move(key), std::move(secret)};
  }
  return Fail(Error::Internal("api key prefix collisions"));
}

Result<std::vector<ApiKey>> ApiKeys::List() {
  return db_.Read([](store::Conn& c) { return api_keys_repo::List(c); });
}

Result<ApiKey> ApiKeys::Get(int64_t id) {
  return db_.Read([&](store::Conn& c) -> Result<ApiKey> {
    auto row = api_keys_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no API key " + std::to_string(id));
    return std::move(**row);
  });
}

Result<ApiKey> ApiKeys::SetEnabled(int64_t id, bool enabled) {
  auto changed =
      db_.Write([&](store::Conn& c) { return api_keys_repo::SetEnabled(c, id, enabled); });
  if (!changed) return Fail(changed.error());
  if (!*changed) return Fail(Errc::kNotFound, "no API key " + std::to_string(id));
  return Get(id);
}

Status ApiKeys::Delete(int64_t id) {
  auto changed = db_.Write([&](store::Conn& c) { return api_keys_repo::Delete(c, id); });
  if (!changed) return Fail(changed.error());
  if (!*changed) return Fail(Errc::kNotFound, "no API key " + std::to_string(id));
  return Ok();
}

Result<ApiKey> ApiKeys::Authenticate(std::string_view presented) {
  auto prefix = ApiKeyPrefix(presented);
  if (!prefix) return Fail(Errc::kUnauthenticated, "unknown API key");
  auto found = db_.Read([&](store::Conn& c) { return api_keys_repo::FindByPrefix(c, *prefix); });
  if (!found) return Fail(found.error());
  // Hash the presented key even when no row matched so both paths cost about the same.
  const bool match =
      crypto::VerifySecret(presented, *found ? (*found)->secret_hash : std::string(64, '0'));
  if (!*found || !match) return Fail(Errc::kUnauthenticated, "unknown API key");
  ApiKey key = std::move((*found)->key);
  if (!key.enabled) return Fail(Errc::kUnauthenticated, "API key disabled");
  const int64_t now = clock_.NowUnix();
  if (!key.last_used_at || *key.last_used_at + kLastUsedResolution <= now) {
    // Best effort: a failed bookkeeping write must not fail the request.
    (void)db_.Write([&](store::Conn& c) {
      return api_keys_repo::TouchLastUsed(c, key.id, now, kLastUsedResolution);
    });
    key.last_used_at = now;
  }
  return key;
}

}  // namespace crmd::governance
