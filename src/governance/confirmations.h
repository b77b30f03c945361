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
// Human approval (TOOLS.md "Confirmation" 5, docs/mcp.md "Human approval"): when the
// settings' approval_policy reserves the action for the person (approval_policy.h),
// Request() also creates an approval (approvals_repo) bound to the confirmation, and its
// reply carries the approval URL. Confirm() then answers approval_pending until the
// grant's user decided on the approval page (Decide(), through the console, with the
// person's own login or an administrator's: the OAuth token can never approve),
// approval_denied after Deny,
// and after Approve performs the action once, still re-checking revisions. The preview is
// checked first (TOOLS.md "Confirmation" 5, rule 2 before the person): a stale preview is
// stale_preview with a fresh preview, token and approval whether the approval is pending,
// approved, or was refused by the page because the records had moved.
//
// Thread-safe after all actions are registered. REQUIRES: RegisterAction only during
// start-up, before requests are served.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/metrics.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {

class SettingsService;

struct Blocker {
  std::string kind;  // "campaign" | "automation" | ...
  int64_t id = 0;
  std::string name;
  std::string reason;  // human sentence, e.g. "active automation uses this list as trigger"
};
nlohmann::json ToJson(const Blocker& b);

struct Preview {
  nlohmann::json preview;                    // what the caller is shown (records, counts)
  std::map<std::string, int64_t> revisions;  // e.g. "campaign:3" -> 7; checked at confirm
  std::vector<Blocker> blockers;             // non-empty -> dependency_blocked, no token
  // Problems only a person may override, on the approval page (the pre-send check's
  // errors, kind "check", name = the check's id): the confirmation then always needs the
  // person's approval, and confirming is dependency_blocked unless they approved with
  // every one of these in view (the stored preview's "blocked_by").
  std::vector<Blocker> overridable;
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

// One approval as the approval page shows it.
struct ApprovalInfo {
  std::string id;
  std::string status;  // pending | approved | denied | expired | used | superseded
  std::string action;
  std::string client_id;
  std::string subject;  // the grant's user: the only person who may decide
  nlohmann::json args;
  nlohmann::json preview;
  std::string decided_by;
  int64_t created_at = 0;
  int64_t expires_at = 0;
};

struct ConfirmationOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  Random* random = nullptr;
  SettingsService* settings = nullptr;  // TTL and approval policy; nullptr -> defaults
  // The approval page's URL is approval_url_base + "/console/approvals/" + id.
  std::string approval_url_base;
  metrics::Registry* metrics = nullptr;  // confirmation and approval outcomes; may be null
};

class ConfirmationService {
 public:
  explicit ConfirmationService(ConfirmationOptions options);
  ConfirmationService(const ConfirmationService&) = delete;
  ConfirmationService& operator=(const ConfirmationService&) = delete;

  // kAlreadyExists when the name is taken; kInvalidArgument when a field is missing.
  Status RegisterAction(ActionSpec spec);
  bool HasAction(const std::string& name) const;

  // o_.metrics counts crmd_confirmations_total{step,outcome} and
  // crmd_approvals_total{decision,outcome}.
  std::string ApprovalUrl(const std::string& approval_id) const;

  // Step 1. On success:
  //   {"status":"confirmation_required","action":..,"preview":..,
  //    "confirmation_token":..,"expires_at":"RFC 3339","expires_in":seconds,
  //    "approval_required":bool, and when true "approval":{"id","url","status"} and
  //    "approval_url"}
  // Failure: the preview's own error (not_found, validation_failed), or
  // dependency_blocked with details {"blockers":[...],"preview":...}.
  ConfirmOutcome Request(const Actor& actor, const std::string& action, const nlohmann::json& args);

  // Step 2. `scopes` are the caller's granted scopes. On success:
  //   {"status":"done","action":..,"result":<Execute's json>}
  // Failures, in this order: confirmation_invalid (unknown, used, other client/subject),
  // confirmation_expired, approval_denied, kPermissionDenied, then the preview again
  // (stale_preview, dependency_blocked), and only for a current preview approval_pending
  // (details {"approval_id","approval_url"}). Details: kPermissionDenied
  // {"required_scope":..}, stale_preview {"preview":..,"confirmation_token":..,
  // "expires_at":.., and when the fresh preview needs the person "approval_url"}
  // (none when a previewed record is gone), dependency_blocked {"blockers":..}.
  ConfirmOutcome Confirm(const Actor& actor, const std::set<std::string>& scopes,
                         const std::string& token);

  Result<ConfirmationInfo> Get(int64_t id);

  // The approval channel (the console's approval page). kNotFound for an unknown id.
  Result<ApprovalInfo> GetApproval(const std::string& approval_id);
  // The subject's pending, unexpired approvals, newest first; for an administrator, every
  // person's.
  Result<std::vector<ApprovalInfo>> PendingApprovals(const std::string& subject,
                                                     bool administrator = false);
  // The person's decision (approval_policy.h "Who decides"): an administrator may decide
  // any approval; the approval's own subject (the grant's user) may deny it, and approve it
  // only as an administrator or when the policy's approved_by is "person"; anyone else gets
  // kPermissionDenied. kConfirmationInvalid when it is no longer pending,
  // kConfirmationExpired after expiry, kStalePreview when approving and the records
  // changed since the preview (nothing is approved: the assistant must ask again).
  // Recorded in the audit log (approve_action / deny_action) with the person.
  // Approving a request whose preview has overridable problems ("blocked_by") needs
  // `override_checks` (kInvalidArgument otherwise): the person says they send anyway.
  Status Decide(const std::string& approval_id, const Actor& person, bool approve,
                bool administrator = false, bool override_checks = false);
  // Marks expired rows; answers how many. Safe to call from a periodic job.
  Result<int64_t> ExpireStale();

 private:
  ConfirmOutcome RequestUncounted(const Actor& actor, const std::string& action,
                                  const nlohmann::json& args);
  ConfirmOutcome ConfirmUncounted(const Actor& actor, const std::set<std::string>& scopes,
                                  const std::string& token);
  Status DecideUncounted(const std::string& approval_id, const Actor& person, bool approve,
                         bool administrator, bool override_checks);
  void Count(std::string_view step, std::string_view outcome);

  struct Issued;
  Result<Issued> Issue(store::Conn& conn, const Actor& actor, const ActionSpec& spec,
                       const nlohmann::json& args, const Preview& preview);
  int64_t Ttl();

  const ConfirmationOptions o_;
  std::map<std::string, ActionSpec> actions_;
};

}  // namespace crmd::governance
