#include "src/marketing/automation_runs_repo.h"

namespace crmd::marketing::automation_runs_repo {
namespace {

using nlohmann::json;
using store::Value;

bool AllowedColumn(const std::string& column) {
  return column == "completed" || column == "exited" || column == "cancelled" ||
         column == "enrolled";
}

bool AllowedStepColumn(const std::string& column) {
  return column == "done" || column == "failed" || column == "skipped";
}

}  // namespace

Result<std::vector<ActiveAutomation>> ListActive(store::Conn& c) {
  auto rows = c.Query(
      "SELECT id, trigger_type, trigger_params, steps, activated_at FROM automations "
      "WHERE status = 'active' ORDER BY id");
  if (!rows) return Fail(rows.error());
  std::vector<ActiveAutomation> out;
  for (const auto& r : *rows) {
    json trigger = json::parse(r.Str(2), nullptr, false);
    if (!trigger.is_object()) trigger = json::object();
    trigger["type"] = r.Str(1);
    out.push_back({.id = r.Int(0),
                   .trigger = std::move(trigger),
                   .steps = r.Str(3),
                   .activated_at = r.Int(4)});
  }
  return out;
}

Result<bool> Enrol(store::Conn& c, int64_t automation_id, const std::string& trigger_key,
                   int64_t contact_id, const std::string& steps, int64_t now,
                   const crm::TraceLink& trace) {
  auto n = c.Exec(
      "INSERT INTO automation_runs (automation_id, contact_id, trigger_key, steps, status, "
      "current_step, due_at, attempts, enrolled_at, updated_at, traceparent, tracestate) "
      "SELECT ?, id, ?, ?, 'active', 0, ?, 0, ?, ?, ?, ? FROM contacts WHERE id = ? "
      "ON CONFLICT (automation_id, trigger_key, contact_id) DO NOTHING",
      {automation_id, trigger_key, steps, now, now, now, store::Opt(trace.traceparent),
       store::Opt(trace.tracestate), contact_id});
  if (!n) return Fail(n.error());
  if (*n == 0) return false;
  if (auto s = Count(c, automation_id, "enrolled"); !s) return Fail(s.error());
  return true;
}

Result<int64_t> EnrolMatching(store::Conn& c, int64_t automation_id, const std::string& ids_sql,
                              const Value& param, const std::string& steps, int64_t now,
                              const crm::TraceLink& trace) {
  auto n = c.Exec(
      "INSERT INTO automation_runs (automation_id, contact_id, trigger_key, steps, status, "
      "current_step, due_at, attempts, enrolled_at, updated_at, traceparent, tracestate) "
      "SELECT ?, k.id, 'activation', ?, 'active', 0, ?, 0, ?, ?, ?, ? FROM contacts k WHERE k.id "
      "IN (" +
          ids_sql +
          ") AND NOT EXISTS (SELECT 1 FROM automation_runs x WHERE x.automation_id = ? AND "
          "x.contact_id = k.id) ON CONFLICT (automation_id, trigger_key, contact_id) DO NOTHING",
      {automation_id, steps, now, now, now, store::Opt(trace.traceparent),
       store::Opt(trace.tracestate), param, automation_id});
  if (!n) return Fail(n.error());
  if (*n > 0)
    if (auto s = Count(c, automation_id, "enrolled", *n); !s) return Fail(s.error());
  return *n;
}

Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now) {
  auto pending = c.QueryOne("SELECT COUNT(*) FROM automation_runs WHERE status = 'active'");
  if (!pending) return Fail(pending.error());
  auto due = c.QueryOne(
      "SELECT COUNT(*), MIN(r.due_at) FROM automation_runs r "
      "JOIN automations a ON a.id = r.automation_id "
      "WHERE r.status = 'active' AND r.due_at <= ? AND a.status = 'active'",
      {now});
  if (!due) return Fail(due.error());
  store::QueueStats s{.pending = (*pending)->Int(0), .due = (*due)->Int(0)};
  if (s.due > 0) s.oldest_due_at = (*due)->Int(1);
  return s;
}

Result<std::vector<DueRun>> DueRuns(store::Conn& c, int64_t now, int limit) {
  auto rows = c.Query(
      "SELECT r.id, r.traceparent, r.tracestate FROM automation_runs r JOIN automations a ON a.id "
      "= r.automation_id "
      "WHERE r.status = 'active' AND r.due_at <= ? AND a.status = 'active' "
      "ORDER BY r.due_at, r.id LIMIT ?",
      {now, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<DueRun> out;
  out.reserve(rows->size());
  for (const auto& r : *rows)
    out.push_back({.id = r.Int(0), .traceparent = r.Str(1), .tracestate = r.Str(2)});
  return out;
}

Result<std::optional<Run>> Load(store::Conn& c, int64_t id, bool skip_locked) {
  const std::string lock =
      skip_locked ? store::SkipLocked(c.dialect(), "r") : store::ForUpdateOf(c.dialect(), "r");
  auto row = c.QueryOne(
      "SELECT r.id, r.automation_id, r.contact_id, r.steps, r.status, r.current_step, r.due_at, "
      "r.attempts, a.status, k.email, k.first_name, k.last_name, k.phone, k.custom_fields, "
      "k.status, r.traceparent, r.tracestate FROM automation_runs r JOIN automations a ON a.id = "
      "r.automation_id "
      "JOIN contacts k ON k.id = r.contact_id WHERE r.id = ?" +
          lock,
      {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Run>{};
  const auto& r = **row;
  Run run{.id = r.Int(0),
          .automation_id = r.Int(1),
          .contact_id = r.Int(2),
          .steps = json::parse(r.Str(3), nullptr, false),
          .status = r.Str(4),
          .current_step = r.Int(5),
          .due_at = r.Int(6),
          .attempts = r.Int(7),
          .automation_status = r.Str(8),
          .email = r.Str(9),
          .first_name = r.Str(10),
          .last_name = r.Str(11),
          .phone = r.Str(12),
          .custom_fields_json = r.Str(13),
          .contact_status = r.Str(14),
          .traceparent = r.Str(15),
          .tracestate = r.Str(16)};
  if (!run.steps.is_array()) run.steps = json::array();
  return std::optional<Run>(std::move(run));
}

Result<bool> Advance(store::Conn& c, const Run& r, int64_t next_step, int64_t due_at,
                     int64_t attempts, const std::optional<std::string>& error,
                     const std::string& status, int64_t now) {
  auto n = c.Exec(
      "UPDATE automation_runs SET current_step = ?, due_at = ?, attempts = ?, last_error = ?, "
      "status = ?, updated_at = ? WHERE id = ? AND current_step = ? AND due_at = ? AND "
      "status = 'active'",
      {next_step, due_at, attempts, store::Opt(error), status, now, r.id, r.current_step,
       r.due_at});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<int64_t> CancelActive(store::Conn& c, int64_t automation_id, int64_t now) {
  auto n = c.Exec(
      "UPDATE automation_runs SET status = 'cancelled', updated_at = ? "
      "WHERE automation_id = ? AND status = 'active'",
      {now, automation_id});
  if (!n) return Fail(n.error());
  if (*n > 0)
    if (auto s = Count(c, automation_id, "cancelled", *n); !s) return Fail(s.error());
  return *n;
}

Result<std::vector<std::pair<int64_t, int64_t>>> ActiveRunsOfContact(store::Conn& c,
                                                                     int64_t contact_id) {
  auto rows = c.Query(
      "SELECT automation_id, COUNT(*) FROM automation_runs WHERE contact_id = ? AND "
      "status = 'active' GROUP BY automation_id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& r : *rows) out.emplace_back(r.Int(0), r.Int(1));
  return out;
}

Result<int64_t> ExitActiveOfContact(store::Conn& c, int64_t contact_id) {
  auto runs = ActiveRunsOfContact(c, contact_id);
  if (!runs) return Fail(runs.error());
  int64_t total = 0;
  for (const auto& [automation_id, n] : *runs) {
    if (auto s = Count(c, automation_id, "exited", n); !s) return Fail(s.error());
    total += n;
  }
  return total;
}

Status Count(store::Conn& c, int64_t automation_id, const std::string& column, int64_t n) {
  if (!AllowedColumn(column)) return Fail(Errc::kInternal, "unknown automation counter " + column);
  auto r = c.Exec("INSERT INTO automation_stats (automation_id, " + column +
                      ") VALUES (?, ?) ON CONFLICT (automation_id) DO UPDATE SET " + column +
                      " = automation_stats." + column + " + excluded." + column,
                  {automation_id, n});
  if (!r) return Fail(r.error());
  return Ok();
}

Status CountStep(store::Conn& c, int64_t automation_id, int64_t step_index,
                 const std::string& column) {
  if (!AllowedStepColumn(column)) return Fail(Errc::kInternal, "unknown step counter " + column);
  auto r = c.Exec("INSERT INTO automation_step_stats (automation_id, step_index, " + column +
                      ") VALUES (?, ?, 1) ON CONFLICT (automation_id, step_index) DO UPDATE SET " +
                      column + " = automation_step_stats." + column + " + 1",
                  {automation_id, step_index});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<Stats> LoadStats(store::Conn& c, int64_t automation_id) {
  auto row = c.QueryOne(
      "SELECT enrolled, completed, exited, cancelled FROM automation_stats WHERE automation_id = ?",
      {automation_id});
  if (!row) return Fail(row.error());
  if (!*row) return Stats{};
  return Stats{.enrolled = (*row)->Int(0),
               .completed = (*row)->Int(1),
               .exited = (*row)->Int(2),
               .cancelled = (*row)->Int(3)};
}

Result<std::vector<std::pair<int64_t, StepStats>>> LoadStepStats(store::Conn& c,
                                                                 int64_t automation_id) {
  auto rows = c.Query(
      "SELECT step_index, done, failed, skipped FROM automation_step_stats "
      "WHERE automation_id = ? ORDER BY step_index",
      {automation_id});
  if (!rows) return Fail(rows.error());
  std::vector<std::pair<int64_t, StepStats>> out;
  for (const auto& r : *rows)
    out.emplace_back(r.Int(0),
                     StepStats{.done = r.Int(1), .failed = r.Int(2), .skipped = r.Int(3)});
  return out;
}

Result<std::vector<EnrolledContact>> Sample(store::Conn& c, int64_t automation_id, int64_t limit) {
  auto rows = c.Query(
      "SELECT k.id, k.email, MIN(r.status) FROM automation_runs r JOIN contacts k ON k.id = "
      "r.contact_id WHERE r.automation_id = ? GROUP BY k.id, k.email ORDER BY k.id LIMIT ?",
      {automation_id, limit});
  if (!rows) return Fail(rows.error());
  std::vector<EnrolledContact> out;
  for (const auto& r : *rows) out.push_back({r.Int(0), r.Str(1), r.Str(2)});
  return out;
}

}  // namespace crmd::marketing::automation_runs_repo
