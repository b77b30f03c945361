#pragma once
// The bridge between people (auth::Users, which knows nothing of governance) and the audit
// log, shared by crmd and crmctl: each change to a person is one audit row, written in the
// change's transaction, with target_type "user" and the person's id.
#include <string>

#include "auth/users.h"
#include "src/governance/audit.h"

namespace crmd::app {

// REQUIRES: `audit` outlives the returned hook.
auth::PersonAudit AuditPeopleChanges(governance::AuditLog& audit);

// How an audit row's actor names a person: "deleted user #N" for a deleted person, their
// email otherwise; "" when the actor is not a person (an API key, a form, crmctl, ...) or
// is unknown. Actors of kind "oauth" and "user" carry the person's id as subject.
std::string PersonLabel(auth::Users& users, const std::string& actor_kind,
                        const std::string& subject);

}  // namespace crmd::app
