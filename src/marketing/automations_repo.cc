#include "src/marketing/automations_repo.h"

#include "src/marketing/automation_runs_repo.h"
#include "src/store/schema_info.h"

namespace crmd::marketing::automations_repo {
namespace {

using nlohmann::json;
using store::Value;

constexpr const char* kAutomationColumns =
    "id, name, description, trigger_type, trigger_params, steps, status, activated_at, revision, "
    "created_at, updated_at";

Automation AutomationFromRow(const store::Row& r) {
  Automation a;
  a.id = r.Int(0);
  a.name = r.Str(1);
  a.description = r.Str(2);
  a.trigger = json::parse(r.Str(4), nullptr, false);
  if (!a.trigger.is_object()) a.trigger = json::object();
  a.trigger["type"] = r.Str(3);
  a.steps = json::parse(r.Str(5), nullptr, false);
  if (!a.steps.is_array()) a.steps = json::array();
  a.status = ParseAutomationStatus(r.Str(6)).value_or(AutomationStatus::kDraft);
  a.activated_at = r.OptInt(7);
  a.revision = r.Int(8);
  a.created_at = r.Int(9);
  a.updated_at = r.Int(10);
  return a;
}

json TriggerParams(const json& trigger) {
  json p = trigger;
  p.erase("type");
  return p;
}

// The state-based trigger's contact-id subquery and its parameter (see Candidates).
std::pair<std::string, Value> TriggerSet(const json& trigger) {
  std::string type = trigger.value("type", "");
  if (type == "tag_added") {
    return {"SELECT contact_id FROM contact_tags WHERE tag_id = ?",
            trigger.value("tag_id", int64_t{0})};
  }
  if (type == "list_added") {
    return {"SELECT contact_id FROM contact_lists WHERE list_id = ? AND state = 'subscribed'",
            trigger.value("list_id", int64_t{0})};
  }
  if (type == "status_changed") {
    return {"SELECT id FROM contacts WHERE status = ?", trigger.value("status", std::string())};
  }
  return {"", nullptr};
}

std::string CandidatesFrom(const std::string& ids) {
  return " FROM contacts k WHERE k.id IN (" + ids +
         ") AND NOT EXISTS (SELECT 1 FROM automation_runs e"
         " WHERE e.automation_id = ? AND e.contact_id = k.id)";
}

}  // namespace

Result<std::optional<Automation>> Find(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(
      std::string("SELECT ") + kAutomationColumns + " FROM automations WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Automation>{};
  return std::optional<Automation>(AutomationFromRow(**row));
}

Result<std::vector<Automation>> ListAfter(store::Conn& c, int64_t after_id,
                                          std::optional<AutomationStatus> status, int64_t limit) {
  std::string sql = std::string("SELECT ") + kAutomationColumns + " FROM automations WHERE id > ?";
  std::vector<Value> params{after_id};
  if (status) {
    sql += " AND status = ?";
    params.emplace_back(std::string(ToString(*status)));
  }
  sql += " ORDER BY id LIMIT ?";
  params.emplace_back(limit);
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<Automation> out;
  for (const auto& r : *rows) out.push_back(AutomationFromRow(r));
  return out;
}

Result<std::vector<std::pair<std::string, int64_t>>> EnrolmentCounts(store::Conn& c, int64_t id) {
  auto st = automation_runs_repo::LoadStats(c, id);
  if (!st) return Fail(st.error());
  return std::vector<std::pair<std::string, int64_t>>{{"active", st->active()},
                                                      {"completed", st->completed},
                                                      {"exited", st->exited},
                                                      {"cancelled", st->cancelled}};
}

Result<std::vector<EnrolledContact>> EnrolmentSample(store::Conn& c, int64_t id, int64_t limit) {
  auto rows = automation_runs_repo::Sample(c, id, limit);
  if (!rows) return Fail(rows.error());
  std::vector<EnrolledContact> out;
  for (auto& r : *rows) out.push_back({r.id, std::move(r.email), std::move(r.status)});
  return out;
}

bool StateBasedTrigger(const json& trigger) { return !TriggerSet(trigger).first.empty(); }

Result<int64_t> CountCandidates(store::Conn& c, int64_t id, const json& trigger) {
  auto [ids, param] = TriggerSet(trigger);
  if (ids.empty()) return int64_t{0};
  auto n = c.QueryOne("SELECT COUNT(*)" + CandidatesFrom(ids), {param, id});
  if (!n) return Fail(n.error());
  return (*n)->Int(0);
}

Result<std::vector<json>> SampleCandidates(store::Conn& c, int64_t id, const json& trigger,
                                           int64_t limit) {
  auto [ids, param] = TriggerSet(trigger);
  std::vector<json> out;
  if (ids.empty()) return out;
  auto rows = c.Query("SELECT k.id, k.email" + CandidatesFrom(ids) + " ORDER BY k.id LIMIT ?",
                      {param, id, limit});
  if (!rows) return Fail(rows.error());
  for (const auto& r : *rows) out.push_back({{"id", r.Int(0)}, {"email", r.Str(1)}});
  return out;
}

Result<bool> FormExistsOrNoForms(store::Conn& c, int64_t form_id) {
  // Forms belong to another module; only check when their table exists.
  auto table = store::TableExists(c, "forms");
  if (!table) return Fail(table.error());
  if (!*table) return true;
  auto form = c.QueryOne("SELECT 1 FROM forms WHERE id = ?", {form_id});
  if (!form) return Fail(form.error());
  return form->has_value();
}

Result<int64_t> Insert(store::Conn& c, const Automation& a) {
  return c.InsertReturningId(
      "INSERT INTO automations (id, name, description, trigger_type, trigger_params, steps, "
      "status, "
      "revision, created_at, updated_at) VALUES (" +
          store::NextIdSql("automations") + ", ?, ?, ?, ?, ?, 'draft', 1, ?, ?) RETURNING id",
      {a.name, a.description, a.trigger.value("type", ""), TriggerParams(a.trigger).dump(),
       a.steps.dump(), a.created_at, a.updated_at});
}

Result<bool> Update(store::Conn& c, const Automation& a, int64_t expected_revision) {
  auto n = c.Exec(
      "UPDATE automations SET name = ?, description = ?, trigger_type = ?, trigger_params = ?, "
      "steps = ?, status = ?, activated_at = ?, revision = revision + 1, updated_at = ? "
      "WHERE id = ? AND revision = ?",
      {a.name, a.description, a.trigger.value("type", ""), TriggerParams(a.trigger).dump(),
       a.steps.dump(), std::string(ToString(a.status)), store::Opt(a.activated_at), a.updated_at,
       a.id, expected_revision});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status ReplaceRefs(store::Conn& c, int64_t id, const std::vector<AutomationRef>& refs) {
  if (auto r = c.Exec("DELETE FROM automation_refs WHERE automation_id = ?", {id}); !r) {
    return Fail(r.error());
  }
  for (const auto& ref : refs) {
    auto r = c.Exec(
        "INSERT INTO automation_refs (automation_id, kind, ref_id, role) VALUES (?, ?, ?, ?)",
        {id, ref.kind, ref.id, ref.role});
    if (!r) return Fail(r.error());
  }
  return Ok();
}

Result<int64_t> EnrolMatching(store::Conn& c, int64_t id, const json& trigger, const json& steps,
                              int64_t now, const crm::TraceLink& trace) {
  auto [ids, param] = TriggerSet(trigger);
  if (ids.empty()) return int64_t{0};
  return automation_runs_repo::EnrolMatching(c, id, ids, param, steps.dump(), now, trace);
}

Status Delete(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM automations WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<std::vector<RefUse>> RefUses(store::Conn& c, const std::string& kind, int64_t ref_id) {
  auto automations = c.Query(
      "SELECT a.id, a.name, a.status, r.role FROM automation_refs r JOIN automations a ON a.id = "
      "r.automation_id WHERE r.kind = ? AND r.ref_id = ? ORDER BY a.id, r.role",
      {kind, ref_id});
  if (!automations) return Fail(automations.error());
  std::vector<RefUse> out;
  for (const auto& r : *automations) out.push_back({r.Int(0), r.Str(1), r.Str(2), r.Str(3)});
  return out;
}

Result<bool> NameTaken(store::Conn& c, const std::string& name) {
  auto row = c.QueryOne("SELECT 1 FROM automations WHERE name = ?", {name});
  if (!row) return Fail(row.error());
  return row->has_value();
}

}  // namespace crmd::marketing::automations_repo
