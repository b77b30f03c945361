#pragma once
// SQL of automations that run (migration 0047): the runs (automation_runs: one per
// automation, trigger event and contact, with the steps copied at enrolment), and the
// counters kept as they move (automation_stats, automation_step_stats). Promises:
// Enrol inserts a run at most once per (automation, trigger key, contact), however often
// it is called; Advance moves a run only from the step and due time it was read at, so of
// two workers that read the same run, one moves it and the other sees false (and rolls
// back whatever it applied in that transaction). Portable SQL, bound parameters only.
// Stateless; any thread, with its own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/crm/trace_link.h"
#include "src/store/db.h"

namespace crmd::marketing::automation_runs_repo {

// An active automation and what its trigger needs.
struct ActiveAutomation {
  int64_t id = 0;
  nlohmann::json trigger;  // {"type", params...}
  std::string steps;       // JSON text, copied into each run
  int64_t activated_at = 0;
};
Result<std::vector<ActiveAutomation>> ListActive(store::Conn& c);

// A new run due at `now`, counted in automation_stats.enrolled; false when the
// (automation, trigger_key, contact) run exists. `trace`: the trace its steps continue
// (the triggering event's).
Result<bool> Enrol(store::Conn& c, int64_t automation_id, const std::string& trigger_key,
                   int64_t contact_id, const std::string& steps, int64_t now,
                   const crm::TraceLink& trace = {});
// Runs of every contact matching a state-based trigger that has no run of the automation
// yet (trigger key 'activation'), counted; answers how many. `ids_sql` selects contact ids
// with one parameter, `param`.
Result<int64_t> EnrolMatching(store::Conn& c, int64_t automation_id, const std::string& ids_sql,
                              const store::Value& param, const std::string& steps, int64_t now,
                              const crm::TraceLink& trace = {});

// Active runs of active automations due at `now`, oldest due first: their ids and the
// trace each continues (empty strings when none).
struct DueRun {
  int64_t id = 0;
  std::string traceparent, tracestate;
};
Result<std::vector<DueRun>> DueRuns(store::Conn& c, int64_t now, int limit);

// A run with its contact, as a step needs it.
struct Run {
  int64_t id = 0, automation_id = 0, contact_id = 0;
  nlohmann::json steps;  // the copy taken at enrolment
  std::string status;
  int64_t current_step = 0, due_at = 0, attempts = 0;
  std::string automation_status;
  std::string email, first_name, last_name, phone, custom_fields_json, contact_status;
  std::string traceparent, tracestate;  // the trace it continues; empty when none
};
// The run `id`, locked FOR UPDATE on PostgreSQL; nullopt when it is gone, or with
// `skip_locked` when another transaction holds it.
Result<std::optional<Run>> Load(store::Conn& c, int64_t id, bool skip_locked);

// Moves run r from (r.current_step, r.due_at) to step `next_step` due at `due_at`, with
// `attempts` and `error`; status becomes `status`. False when the run was no longer where
// it was read (another worker moved it, or it was cancelled).
Result<bool> Advance(store::Conn& c, const Run& r, int64_t next_step, int64_t due_at,
                     int64_t attempts, const std::optional<std::string>& error,
                     const std::string& status, int64_t now);

// Active runs of the automation become cancelled (deactivation); counted; answers how many.
Result<int64_t> CancelActive(store::Conn& c, int64_t automation_id, int64_t now);

// The contact's active runs: (automation id, how many).
Result<std::vector<std::pair<int64_t, int64_t>>> ActiveRunsOfContact(store::Conn& c,
                                                                     int64_t contact_id);
// The active runs of a contact about to be deleted become exited in the counters (the rows
// go with the contact, ON DELETE CASCADE); answers how many.
Result<int64_t> ExitActiveOfContact(store::Conn& c, int64_t contact_id);

// Counters. column: "completed" | "exited" | "cancelled"; step column: "done" | "failed" |
// "skipped".
Status Count(store::Conn& c, int64_t automation_id, const std::string& column, int64_t n = 1);
Status CountStep(store::Conn& c, int64_t automation_id, int64_t step_index,
                 const std::string& column);

struct Stats {
  int64_t enrolled = 0, completed = 0, exited = 0, cancelled = 0;
  int64_t active() const { return enrolled - completed - exited - cancelled; }
};
struct StepStats {
  int64_t done = 0, failed = 0, skipped = 0;
};
Result<Stats> LoadStats(store::Conn& c, int64_t automation_id);
// By step index.
Result<std::vector<std::pair<int64_t, StepStats>>> LoadStepStats(store::Conn& c,
                                                                 int64_t automation_id);

// For the delete preview: (status, count) of the automation's runs and the first
// `limit` enrolled contacts (id, email, run status) by contact id.
struct EnrolledContact {
  int64_t id = 0;
  std::string email;
  std::string status;
};
Result<std::vector<EnrolledContact>> Sample(store::Conn& c, int64_t automation_id, int64_t limit);

// The step queue at `now`: active runs, and those due of active automations (what DueIds
// walks).
Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now);

}  // namespace crmd::marketing::automation_runs_repo
