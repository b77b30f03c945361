#pragma once
// The settings document (one row, with a revision): business details, sender defaults,
// double opt-in, email validation mode, confirmation TTL, the human-approval policy
// (src/governance/approval_policy.h). Unknown keys are refused.
// Thread-safe.
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {

class AuditLog;

struct SettingsDoc {
  nlohmann::json document;  // every key present (defaults filled in)
  int64_t revision = 0;
  int64_t updated_at = 0;
};
nlohmann::json ToJson(const SettingsDoc& s);

// The defaults, e.g. {"business":{...},"sender":{...},"double_opt_in":false,
// "email_validation_mode":"syntax","confirmation_ttl_seconds":600}.
const nlohmann::json& DefaultSettings();

struct SettingsOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  AuditLog* audit = nullptr;
};

class SettingsService {
 public:
  explicit SettingsService(SettingsOptions options);
  Result<SettingsDoc> Get();
  // For use inside another service's transaction (Read or Write).
  Result<SettingsDoc> GetIn(store::Conn& conn);
  // The same without a copy: the document Recent() holds when its revision is the row's.
  Result<std::shared_ptr<const SettingsDoc>> SharedIn(store::Conn& conn);
  // Merges `patch` (objects merge one level deep, like RFC 7386 without deletion) after
  // validating it. kRevisionConflict when expected_revision is stale.
  Result<SettingsDoc> Update(const Actor& actor, int64_t expected_revision,
                             const nlohmann::json& patch);

  // Convenience accessors, outside any transaction: they read the document through
  // Recent(), so a change made on another node reaches them within kRecentMillis (one made
  // through this service's Update() at once). They fall back to the defaults when the
  // database is unreachable. Inside a transaction, use GetIn().
  std::string EmailValidationMode();
  int64_t ConfirmationTtlSeconds();
  bool DoubleOptIn();

  static constexpr int64_t kRecentMillis = 1000;

 private:
  // The document as Get() read it at most kRecentMillis ago, or as Update() wrote it.
  // Every contact creation asks for the validation mode before its transaction; a read
  // transaction each time cost about 6 % of a durable create_contact
  // (docs/performance.md).
  // Null when the database could not be read.
  std::shared_ptr<const SettingsDoc> Recent();
  void Remember(std::shared_ptr<const SettingsDoc> doc);  // unless a newer one is

  const SettingsOptions o_;
  std::mutex recent_mu_;
  std::shared_ptr<const SettingsDoc> recent_;
  MonotonicTime recent_at_;
};

// Who may change "approval_policy": the operator (crmctl, kind "cli") or a signed-in
// person (kind "user"), never an assistant or an API key: the policy bounds what an
// assistant may do alone (TOOLS.md "Confirmation" 5). Update() refuses others with
// kPermissionDenied.
bool MayChangeApprovalPolicy(const Actor& actor);

// Validates a patch; kInvalidArgument naming the field.
Status ValidateSettingsPatch(const nlohmann::json& patch);

}  // namespace crmd::governance
