#pragma once
// The human-approval policy (settings key "approval_policy", TOOLS.md "Confirmation" 5):
// which confirmable actions need the person who granted the assistant its access, and
// optional thresholds under which the assistant may confirm alone.
//
//   "approval_policy": {
//     "require_person": ["delete_contacts", "delete_list", ...],   // default: all eight
//     "thresholds": {"delete_contacts": {"assistant_may_confirm_up_to": 5}},
//     "approved_by": "administrator"                                // or "person"
//   }
//
// Who decides an approval: an administrator always may (any person's); the person whose
// assistant asked may deny it, and may approve it only when they are an administrator
// themselves or "approved_by" is "person" (default "administrator": an editor's own
// action above the threshold needs an administrator).
//
// A threshold compares with the preview's "count" (the number of records the action
// touches); an action whose preview has no count (everything but delete_contacts today)
// always needs the person when it is listed. Pure functions; thread-safe.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/core/result.h"

namespace crmd::governance {

// The confirmable actions a policy may name.
const std::vector<std::string>& ApprovableActions();
// The default policy: every approvable action needs the person, no thresholds.
nlohmann::json DefaultApprovalPolicy();
// kInvalidArgument naming the field ("approval_policy.require_person.2", ...).
Status ValidateApprovalPolicy(const nlohmann::json& policy);
// Whether the person whose assistant asked may approve it themselves, being no
// administrator (the policy's "approved_by" is "person").
bool PersonMayApproveOwn(const nlohmann::json& policy);
// Whether confirming `action` with this `preview` needs the person, under `policy` (the
// settings document's "approval_policy"; a malformed one counts as the default).
bool NeedsPerson(const nlohmann::json& policy, const std::string& action,
                 const nlohmann::json& preview);

}  // namespace crmd::governance
