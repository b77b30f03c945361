#pragma once
// SQL for automations, their list/tag references (automation_refs) and enrolments
// (automation_runs, automation_runs_repo.h). Promises: ids come from store::NextIdSql, so an id is
// never reused after Delete; Update writes only at the expected revision; EnrolMatching enrols a
// contact at most once per automation however often it runs. The trigger's contact set (tag_added,
// list_added, status_changed) is computed here; other triggers are events and match no one now.
// Stateless; any thread, with its own Conn.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/crm/trace_link.h"
#include "src/marketing/automation_steps.h"
#include "src/marketing/automations.h"
#include "src/store/db.h"

namespace crmd::marketing::automations_repo {

// REQUIRES (lookups): inside Database::Read or Write.
Result<std::optional<Automation>> Find(store::Conn& c, int64_t id);
// Ids > after_id ascending, at most `limit`, optionally only those in `status`.
Result<std::vector<Automation>> ListAfter(store::Conn& c, int64_t after_id,
                                          std::optional<AutomationStatus> status, int64_t limit);
// (status, count) of the automation's runs, from its counters: active, completed,
// exited, cancelled.
Result<std::vector<std::pair<std::string, int64_t>>> EnrolmentCounts(store::Conn& c, int64_t id);
struct EnrolledContact {
  int64_t id = 0;
  std::string email;
  std::string status;
};
// The first `limit` enrolled contacts by contact id.
Result<std::vector<EnrolledContact>> EnrolmentSample(store::Conn& c, int64_t id, int64_t limit);
// Whether the trigger describes a state contacts are in now (rather than an event).
bool StateBasedTrigger(const nlohmann::json& trigger);
// Contacts matching a state-based trigger and not yet enrolled: how many, and the first
// `limit` of them as {id, email}. Zero/empty for event triggers.
Result<int64_t> CountCandidates(store::Conn& c, int64_t id, const nlohmann::json& trigger);
Result<std::vector<nlohmann::json>> SampleCandidates(store::Conn& c, int64_t id,
                                                     const nlohmann::json& trigger, int64_t limit);
// Whether form `form_id` exists; true when this database has no forms table.
Result<bool> FormExistsOrNoForms(store::Conn& c, int64_t form_id);

// REQUIRES (writes): inside Database::Write.
// A draft at revision 1 with a's fields; answers its id.
Result<int64_t> Insert(store::Conn& c, const Automation& a);
// Writes a's fields and bumps the revision when the row is at `expected_revision`; false
// when it is not.
Result<bool> Update(store::Conn& c, const Automation& a, int64_t expected_revision);
// Replaces the automation's references with `refs`.
Status ReplaceRefs(store::Conn& c, int64_t id, const std::vector<AutomationRef>& refs);
// Enrols (a run at step 0 with `steps`, due now) every contact matching a state-based
// trigger that has no run of the automation yet; answers how many were new. 0 for event
// triggers. `trace`: the trace the runs continue (the activating request's).
Result<int64_t> EnrolMatching(store::Conn& c, int64_t id, const nlohmann::json& trigger,
                              const nlohmann::json& steps, int64_t now,
                              const crm::TraceLink& trace);
Status Delete(store::Conn& c, int64_t id);

// An automation whose trigger or a step names a list or tag.
struct RefUse {
  int64_t automation_id = 0;
  std::string name;
  std::string status;
  std::string role;  // "trigger" | "step"
};
// kind: "list" | "tag"; by automation id. REQUIRES: inside Database::Read or Write.
Result<std::vector<RefUse>> RefUses(store::Conn& c, const std::string& kind, int64_t ref_id);

// Whether some row of automations is called `name`. REQUIRES: inside Database::Read or Write.
Result<bool> NameTaken(store::Conn& c, const std::string& name);

}  // namespace crmd::marketing::automations_repo
