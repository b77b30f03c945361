#pragma once
// API keys for the REST API v1 (and its admin endpoints). A key looks like
// "crmd_live_ab12cd34_<43 base64url chars>": the first 18 characters are the visible,
// unique prefix used to find the row; the whole key is stored only as its SHA-256
// (crypto::HashSecret) and compared in constant time. The key itself is returned once, by
// Create(), and never stored or logged.
//
// ApiKeys is stateless apart from its injected services and thread-safe. There is no
// cache: every Authenticate() reads the row, so disabling or deleting a key takes effect on
// the next request. last_used_at is written at most once a minute per key.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::governance {

enum class ApiKeyRole { kIntegration, kAdmin };
const char* ApiKeyRoleName(ApiKeyRole role);
std::optional<ApiKeyRole> ParseApiKeyRole(std::string_view name);

struct ApiKey {
  int64_t id = 0;
  std::string name;
  std::string prefix;
  ApiKeyRole role = ApiKeyRole::kIntegration;
  bool enabled = true;
  int64_t created_at = 0;
  std::optional<int64_t> last_used_at;
};
// {"id","name","prefix","role","status","created_at","last_used_at"}: never the secret.
nlohmann::json ApiKeyJson(const ApiKey& key);

struct CreatedApiKey {
  ApiKey key;
  std::string secret;  // the full key, shown once
};

// Splits a presented key into its lookup prefix; nullopt if it is not shaped like a key.
std::optional<std::string> ApiKeyPrefix(std::string_view presented);

class ApiKeys {
 public:
  static constexpr std::string_view kKeyPrefix = "crmd_live_";
  static constexpr size_t kPrefixLength = 18;         // "crmd_live_" + 8 chars
  static constexpr int64_t kLastUsedResolution = 60;  // seconds

  ApiKeys(store::Database& db, const Clock& clock, Random& random)
      : db_(db), clock_(clock), random_(random) {}
  ApiKeys(const ApiKeys&) = delete;
  ApiKeys& operator=(const ApiKeys&) = delete;

  // Errors: kInvalidArgument (empty or over-long name).
  Result<CreatedApiKey> Create(std::string name, ApiKeyRole role = ApiKeyRole::kIntegration);
  Result<std::vector<ApiKey>> List();
  Result<ApiKey> Get(int64_t id);
  // Errors: kNotFound.
  Result<ApiKey> SetEnabled(int64_t id, bool enabled);
  Status Delete(int64_t id);

  // The enabled key matching `presented`. kUnauthenticated (message safe for clients:
  // "unknown API key" / "API key disabled") otherwise. Touches last_used_at.
  Result<ApiKey> Authenticate(std::string_view presented);

 private:
  store::Database& db_;
  const Clock& clock_;
  Random& random_;
};

}  // namespace crmd::governance
