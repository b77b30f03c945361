#pragma once
// Incoming webhooks: a third-party service POSTs JSON to a secret URL
// (<rest base>/hooks/<token>), and crmd adds or updates a contact from it.
//
// Each hook has a name, a mapping of contact fields to dotted paths in the payload and
// what to apply to every accepted contact (incoming_mapping.h), an optional HMAC secret,
// and an enabled flag. The URL token "crmd_hook_<8 chars>_<43 chars>" is shown once, by
// Create(); only its SHA-256 is stored, the first 18 characters find the row and the
// whole token is compared with the hash in constant time (as API keys are).
//
// Receive() runs: token (unknown or disabled: kNotFound, the same answer for both so a
// disabled hook looks gone), HMAC "X-Crmd-Signature: sha256=<hex HMAC-SHA256(secret,
// raw body)>" when the hook has a secret (kUnauthenticated), the mapping (kInvalidArgument
// with one PayloadError per problem, each naming its path), email validation, then ONE
// transaction: ContactService::UpsertIn (status machine, outbox events, audit) and the
// hook's received count.
//
// Thread-safe: no state of its own beyond the injected services.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/crm/tags.h"
#include "src/store/db.h"
#include "src/webhooks/incoming_mapping.h"

namespace crmd::webhooks {

struct IncomingHook {
  int64_t id = 0;
  std::string name;
  std::string token_prefix;  // "crmd_hook_ab12cd34": identifies the URL, is not the secret
  nlohmann::json mapping = nlohmann::json::object();
  nlohmann::json applies = nlohmann::json::object();
  bool has_hmac_secret = false;
  bool enabled = true;
  int64_t received_count = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> last_received_at;
};
// Never includes the token or the HMAC secret.
nlohmann::json IncomingHookJson(const IncomingHook& h);

struct IncomingHookInput {
  std::optional<std::string> name;
  std::optional<nlohmann::json> mapping;
  std::optional<nlohmann::json> applies;
  // Outer: present in the input; inner nullopt: remove the secret.
  std::optional<std::optional<std::string>> hmac_secret;
  std::optional<bool> enabled;
};
// Reads {"name","mapping","applies","hmac_secret","enabled"}; kInvalidArgument "<field>: ...".
Result<IncomingHookInput> IncomingHookInputFromJson(const nlohmann::json& j);

struct CreatedIncomingHook {
  IncomingHook hook;
  std::string token;  // the secret part of the URL, shown once
};

struct IncomingRequest {
  std::string_view token;
  std::string_view raw_body;                  // what the HMAC covers
  const nlohmann::json* body = nullptr;       // the parsed payload (an object)
  std::optional<std::string_view> signature;  // X-Crmd-Signature, if sent
  std::string request_id;
};

struct Received {
  int64_t hook_id = 0;
  int64_t contact_id = 0;
  bool created = false;
  bool changed = false;
};

struct IncomingHooksOptions {
  store::Database* db = nullptr;
  const Clock* clock = nullptr;
  Random* random = nullptr;
  crm::ContactService* contacts = nullptr;
  crm::ListService* lists = nullptr;  // applied lists must exist when configured
};

class IncomingHooks {
 public:
  static constexpr std::string_view kTokenPrefix = "crmd_hook_";
  static constexpr size_t kPrefixLength = 18;  // "crmd_hook_" + 8 chars
  static constexpr const char* kSignatureHeader = "X-Crmd-Signature";
  static constexpr size_t kMinHmacSecret = 16;
  static constexpr size_t kMaxHmacSecret = 256;

  explicit IncomingHooks(IncomingHooksOptions options) : o_(options) {}
  IncomingHooks(const IncomingHooks&) = delete;
  IncomingHooks& operator=(const IncomingHooks&) = delete;

  // name and mapping required. Errors: kInvalidArgument "<field>: ..." (a bad path names
  // "mapping.<target>").
  Result<CreatedIncomingHook> Create(const IncomingHookInput& in);
  Result<std::vector<IncomingHook>> List();
  Result<IncomingHook> Get(int64_t id);
  Result<IncomingHook> Update(int64_t id, const IncomingHookInput& in);
  Status Delete(int64_t id);

  // See the header comment. `errors` receives the payload's problems on kInvalidArgument.
  Result<Received> Receive(const IncomingRequest& req, std::vector<PayloadError>* errors);

 private:
  Status Check(const IncomingHookInput& in, bool creating);

  const IncomingHooksOptions o_;
};

}  // namespace crmd::webhooks
