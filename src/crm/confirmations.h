#pragma once
// The confirmation service: destructive and activating actions (tools marked C in
// TOOLS.md) run in two steps. Request() previews the action and issues a token; nothing
// changes. Confirm() performs exactly the previewed action once.
//
// Actions are registered by name with their scope, a Preview function and an Execute
// function, so every module (crm: delete_contacts/delete_list/delete_tag; marketing:
// delete_campaign, activate_campaign, ...) uses one token store with one set of rules:
//  - tokens are random (32 bytes), stored only as SHA-256;
//  - a token is bound to the OAuth client_id + subject + action + SHA-256 of the
//    canonical args + the revisions the preview saw;
//  - expiry from settings.confirmation_ttl_seconds (default 600);
//  - single use is guaranteed by the database: Confirm marks the row used with a
//    conditional UPDATE ... WHERE status IN ('pending','approved') in the SAME
//    transaction as Execute, so of two concurrent confirms exactly one succeeds;
//  - at confirm time Preview runs again: changed revisions -> stale_preview with a fresh
//    preview and token (the old one is superseded); new blockers -> dependency_blocked.
//
// Human approval ("Coming later" in TOOLS.md): a row may require approval; Approve()
// is the other channel (web page, MCP elicitation) that moves pending -> approved, and
// Get() shows the state to both channels.
//
// Thread-safe after all actions are registered. REQUIRES: RegisterAction only during
// start-up, before requests are served.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/actor.h"
#include "src/store/db.h"

namespace crmd::crm {

class SettingsService;

struct Blocker {
  std::string kind;    // "campaign" | "automation" | ...
  int64_t id = 0;
  std::string name;
  std::string reason;  // human sentence, e.g. "active automation uses this list as trigger"
};
nlohmann::json ToJson(const Blocker& b);

struct Preview {
  nlohmann::json preview;                    // what the caller is shown (records, counts)
  std::map<std::string, int64_t> revisions;  // e.g. "campaign:3" -> 7; checked at confirm
  std::vector<Blocker> blockers;             // non-empty -> dependency_blocked, no token
};

struct ActionSpec {
  std::string name;   // e.g. "delete_campaign"
  std::string scope;  // e.g. "campaigns:delete"; the confirming caller must hold it
  // Read-only: must not write. Runs inside a transaction.
  std::function<Result<Preview>(store::Conn&, const nlohmann::json& args)> preview;
  // Performs the action; runs in the same transaction that marks the token used.
  std::function<Result<nlohmann::json>(store::Conn&, const nlohmann::json& args, const Actor&)>
      execute;
};

// A result whose failure may carry details (blockers, a fresh preview) for the caller.
struct ConfirmOutcome {
  Result<nlohmann::json> result;
  nlohmann::json error_details;  // null when none
};

// State of one pending action, for other approval channels.
struct ConfirmationInfo {
  int64_t id = 0;
  std::string action;
  std::string status;  // pending | approved | used | expired | superseded | rejected
  std::string client_id;
  std::string subject;
  nlohmann::json args;
  nlohmann::json preview;
  bool requires_approval = false;
  int64_t created_at = 0;
  int64_t expires_at = 0;
};

struct ConfirmationOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  Random* random = nullptr;
  SettingsService* settings = nullptr;  // TTL; nullptr -> 600 s
};

class ConfirmationService {
 public:
  explicit ConfirmationService(ConfirmationOptions options);
  ConfirmationService(const ConfirmationService&) = delete;
  ConfirmationService& operator=(const ConfirmationService&) = delete;

  // kAlreadyExists when the name is taken; kInvalidArgument when a field is missing.
  Status RegisterAction(ActionSpec spec);
  bool HasAction(const std::string& name) const;

  // Step 1. On success:
  //   {"status":"confirmation_required","action":..,"preview":..,
  //    "confirmation_token":..,"expires_at":"RFC 3339","expires_in":seconds}
  // Failure: the preview's own error (not_found, validation_failed), or
  // dependency_blocked with details {"blockers":[...],"preview":...}.
  ConfirmOutcome Request(const Actor& actor, const std::string& action,
                         const nlohmann::json& args);

  // Step 2. `scopes` are the caller's granted scopes. On success:
  //   {"status":"done","action":..,"result":<Execute's json>}
  // Failures: confirmation_invalid (unknown, used, other client/subject, awaiting
  // approval), confirmation_expired, kPermissionDenied with details
  // {"required_scope":..}, stale_preview with details {"preview":..,
  // "confirmation_token":..,"expires_at":..}, dependency_blocked with {"blockers":..}.
  ConfirmOutcome Confirm(const Actor& actor, const std::set<std::string>& scopes,
                         const std::string& token);

  // Other approval channels.
  Result<ConfirmationInfo> Get(int64_t id);
  Status Approve(int64_t id, const Actor& approver);
  // Marks expired rows; answers how many. Safe to call from a periodic job.
  Result<int64_t> ExpireStale();

 private:
  struct Issued;
  Result<Issued> Issue(store::Conn& conn, const Actor& actor, const ActionSpec& spec,
                       const nlohmann::json& args, const Preview& preview);
  int64_t Ttl();

  const ConfirmationOptions o_;
  std::map<std::string, ActionSpec> actions_;
};

}  // namespace crmd::crm
