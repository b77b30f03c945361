#pragma once
// Automations: one trigger and ordered steps (automation_steps.h), status draft | active |
// inactive, and the confirmable activate and delete. On activation, contacts that already
// match a state-based trigger (having the tag, being in the list, having the status) are
// enrolled; while active, trigger events enrol contacts (AutomationRuns, automation_runs.h)
// and the job loop runs their steps.
//
// Moves: draft | inactive -> active (activate_automation, confirmed); active -> inactive
// (deactivate_automation, which cancels the pending steps of every run). Editing is
// allowed in any status: each run keeps the steps copied at its enrolment, so an edit
// applies to new enrolments only. Deleting needs a non-active automation.
//
// AutomationService is thread-safe (all state is in the database).
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/governance/confirmations.h"
#include "src/marketing/aggregate.h"
#include "src/marketing/common.h"
#include "src/store/db.h"

namespace crmd::governance {
class Idempotency;
}  // namespace crmd::governance

namespace crmd::marketing {

enum class AutomationStatus { kDraft, kActive, kInactive };
const char* ToString(AutomationStatus s);
std::optional<AutomationStatus> ParseAutomationStatus(std::string_view s);

struct Automation {
  int64_t id = 0;
  std::string name, description;
  nlohmann::json trigger = nlohmann::json::object();  // {"type": ..., params}
  nlohmann::json steps = nlohmann::json::array();
  AutomationStatus status = AutomationStatus::kDraft;
  std::optional<int64_t> activated_at;
  int64_t revision = 1;
  int64_t created_at = 0, updated_at = 0;
};

nlohmann::json ToJson(const Automation& a, bool full);

struct AutomationPage {
  std::vector<Automation> items;
  std::optional<std::string> next_cursor;
};

// Contacts a trigger would enrol right now (state-based triggers only; event triggers such
// as contact_created enrol nobody until the event happens).
struct EnrolmentCandidates {
  bool state_based = false;
  int64_t count = 0;
  std::vector<nlohmann::json> sample;  // {id, email}
};

// Whether `url` is the URL of an outgoing webhook endpoint an administrator configured,
// through the caller's transaction (the webhooks module answers it; marketing does not
// depend on it).
using WebhookTargetKnown = std::function<Result<bool>(store::Conn& c, const std::string& url)>;

class AutomationService {
 public:
  // `audit` may be empty (unit tests).
  // `idempotency` may be null (unit tests): idempotency keys are then ignored.
  // `webhook_target_known`: a call_webhook step may only post to an outgoing webhook
  // endpoint's URL, as outgoing webhooks are an administrator's to set up
  // (docs/marketing.md); checked when an automation is created or changed. Empty (unit
  // tests, crmctl): not checked here (the runner still refuses other URLs).
  AutomationService(store::Database& db, const Clock& clock, AuditSink audit = {},
                    governance::Idempotency* idempotency = nullptr,
                    WebhookTargetKnown webhook_target_known = {});
  AutomationService(const AutomationService&) = delete;
  AutomationService& operator=(const AutomationService&) = delete;

  Result<AutomationPage> List(std::optional<AutomationStatus> status, std::string_view cursor,
                              int limit) const;
  Result<Automation> Get(int64_t id) const;
  // In its own transaction. With a non-empty idempotency_key, a repeat from the same
  // client within 24 hours returns the automation first created (as it is now).
  Result<Automation> Create(const governance::Actor& actor, const nlohmann::json& fields,
                            const std::string& idempotency_key = "");
  // The same in the caller's transaction, for another service composing one (the seed).
  Result<Automation> CreateIn(store::Conn& c, const governance::Actor& actor,
                              const nlohmann::json& fields);
  Result<Automation> Update(const governance::Actor& actor, int64_t id, int64_t expected_revision,
                            const nlohmann::json& fields);
  // active -> inactive; expected_revision 0 = any.
  Result<Automation> Deactivate(const governance::Actor& actor, int64_t id,
                                int64_t expected_revision);

  // Confirmable actions, run by ConfirmationService inside its transaction. Deleting an
  // active automation is blocked (deactivate first).
  Result<governance::Preview> PreviewActivate(store::Conn& c, int64_t id) const;
  Result<nlohmann::json> Activate(store::Conn& c, const governance::Actor& actor, int64_t id);
  Result<governance::Preview> PreviewDelete(store::Conn& c, int64_t id) const;
  Result<nlohmann::json> Delete(store::Conn& c, const governance::Actor& actor, int64_t id);

  // Contacts the trigger matches now and that are not yet enrolled.
  static Result<EnrolmentCandidates> Candidates(store::Conn& c, int64_t automation_id,
                                                const nlohmann::json& trigger, int sample);

 private:
  // kInvalidArgument naming the first call_webhook step whose URL is no endpoint's.
  Status CheckWebhookTargets(store::Conn& c, const nlohmann::json& steps) const;

  store::Database& db_;
  const Clock& clock_;
  RevisionedRows<Automation> rows_;
  const WebhookTargetKnown webhook_target_known_;
};

}  // namespace crmd::marketing
