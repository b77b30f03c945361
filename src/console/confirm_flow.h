#pragma once
// What the console's confirmable actions share (campaign activation and resending,
// deleting a list or a tag): they run through governance's confirmation service as an
// assistant's do (the same preview, token, revisions and approval policy), made by the
// signed-in person (actor kind "user", client "console"). Where the policy reserves the
// action for a person, the person's Confirm is their approval when the confirmation
// service's rules let them give it (an administrator, or anyone when approved_by is
// "person"); otherwise the action waits for an administrator on the approval page.
// Stateless; thread-safe.
#include <string>

#include "src/console/shell.h"
#include "src/governance/actor.h"
#include "src/governance/confirmations.h"

namespace crmd::console {

// The OAuth client id that confirmations and approvals made in the console are bound to.
inline constexpr const char* kConsoleClientId = "console";

governance::Actor ConsoleActor(const Person& p, const http::Request& req);

// Approves `approval_id` as `p` when it is the approval of p's own console action and
// still pending (ConfirmationService::Decide and its rules). Ok also when it was decided
// already or the records moved (the confirmation then says what that means).
// kPermissionDenied: the policy needs an administrator; kInvalidArgument: the approval is
// not p's console action's.
Status ApproveOwnAction(governance::ConfirmationService& confirmations, const http::Request& req,
                        const Person& p, const std::string& approval_id);

}  // namespace crmd::console
