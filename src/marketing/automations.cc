#include "src/marketing/automations.h"

#include <array>
#include <tuple>
#include <utility>

#include "src/marketing/automation_runs_repo.h"
#include "src/marketing/automation_steps.h"
#include "src/marketing/automations_repo.h"
#include "src/marketing/templates.h"

namespace crmd::marketing {
namespace {

using nlohmann::json;

constexpr StatusNames<AutomationStatus, 3> kNames{{{
    {AutomationStatus::kDraft, "draft"},
    {AutomationStatus::kActive, "active"},
    {AutomationStatus::kInactive, "inactive"},
}}};

std::string AutomationRevisionKey(int64_t id) { return "automation:" + std::to_string(id); }

Status SaveRefs(store::Conn& c, const Automation& a) {
  return automations_repo::ReplaceRefs(c, a.id, CollectRefs(a.trigger, a.steps));
}

Status Save(store::Conn& c, Automation& a, int64_t expected_revision) {
  auto n = automations_repo::Update(c, a, expected_revision);
  if (!n) return Fail(n.error());
  if (!*n) return Fail(Errc::kRevisionConflict, "the automation was changed by someone else");
  a.revision = expected_revision + 1;
  return SaveRefs(c, a);
}

// Applies name, description, trigger and steps from tool arguments.
Status ApplyFields(const json& j, Automation& a) {
  for (auto [key, member, max] :
       {std::tuple{"name", &Automation::name, size_t{200}},
        std::tuple{"description", &Automation::description, size_t{2000}}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_string())
      return Fail(Errc::kInvalidArgument, std::string(key) + ": must be a string");
    auto s = j[key].get<std::string>();
    if (s.size() > max) return Fail(Errc::kInvalidArgument, std::string(key) + ": too long");
    a.*member = std::move(s);
  }
  if (a.name.empty()) return Fail(Errc::kInvalidArgument, "name: must not be empty");
  if (j.contains("trigger")) {
    auto t = ValidateTrigger(j["trigger"]);
    if (!t) return Fail(t.error());
    a.trigger = std::move(*t);
  }
  if (!a.trigger.contains("type")) return Fail(Errc::kInvalidArgument, "trigger: required");
  if (j.contains("steps")) {
    auto s = ValidateSteps(j["steps"]);
    if (!s) return Fail(s.error());
    a.steps = std::move(*s);
  }
  return Ok();
}

json EnrolmentSummary(store::Conn& c, int64_t id, Status* st) {
  auto rows = automations_repo::EnrolmentCounts(c, id);
  if (!rows) {
    *st = Fail(rows.error());
    return nullptr;
  }
  json by = {{"active", 0}, {"completed", 0}, {"exited", 0}, {"cancelled", 0}};
  int64_t total = 0;
  for (const auto& [status, count] : *rows) {
    by[status] = count;
    total += count;
  }
  return {{"total", total}, {"by_status", by}};
}

}  // namespace

const char* ToString(AutomationStatus s) { return kNames.Name(s); }

std::optional<AutomationStatus> ParseAutomationStatus(std::string_view s) {
  return kNames.Parse(s);
}

json ToJson(const Automation& a, bool full) {
  json j = {{"id", a.id},
            {"name", a.name},
            {"status", ToString(a.status)},
            {"trigger", a.trigger},
            {"step_count", a.steps.size()},
            {"revision", a.revision},
            {"updated_at", TimeJson(a.updated_at)}};
  if (full) {
    j["description"] = a.description;
    j["steps"] = a.steps;
    j["activated_at"] = TimeJson(a.activated_at);
    j["created_at"] = TimeJson(a.created_at);
  }
  return j;
}

AutomationService::AutomationService(store::Database& db, const Clock& clock, AuditSink audit,
                                     governance::Idempotency* idempotency,
                                     WebhookTargetKnown webhook_target_known)
    : db_(db),
      clock_(clock),
      rows_(
          "automation", automations_repo::Find,
          [](const Automation& a) { return ToString(a.status); }, db, std::move(audit),
          idempotency),
      webhook_target_known_(std::move(webhook_target_known)) {}

Status AutomationService::CheckWebhookTargets(store::Conn& c, const json& steps) const {
  if (!webhook_target_known_ || !steps.is_array()) return Ok();
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& step = steps[i];
    if (step.value("type", "") != "call_webhook") continue;
    auto known = webhook_target_known_(c, step.value("url", ""));
    if (!known) return Fail(known.error());
    if (!*known)
      return Fail(Errc::kInvalidArgument,
                  "steps[" + std::to_string(i) +
                      "].url: must be the URL of an outgoing webhook endpoint; an "
                      "administrator adds one (console Webhook & API, or crmctl webhook create)");
  }
  return Ok();
}

Result<AutomationPage> AutomationService::List(std::optional<AutomationStatus> status,
                                               std::string_view cursor, int limit) const {
  return ListPageAfterCursor<AutomationPage>(
      db_, cursor, limit, [&](store::Conn& c, int64_t after, int64_t n) {
        return automations_repo::ListAfter(c, after, status, n);
      });
}

Result<Automation> AutomationService::Get(int64_t id) const { return rows_.Get(id); }

Result<Automation> AutomationService::CreateIn(store::Conn& c, const governance::Actor& actor,
                                               const json& fields) {
  Automation a;
  if (auto s = ApplyFields(fields, a); !s) return Fail(s.error());
  if (auto s = CheckWebhookTargets(c, a.steps); !s) return Fail(s.error());
  if (auto s = CheckTemplateRefs(c, a.steps, "steps"); !s) return Fail(s.error());
  a.created_at = a.updated_at = clock_.NowUnix();
  if (auto s = CheckRefsExist(c, CollectRefs(a.trigger, a.steps), a.trigger); !s) {
    return Fail(s.error());
  }
  auto id = automations_repo::Insert(c, a);
  if (!id) return Fail(id.error());
  a.id = *id;
  if (auto s = SaveRefs(c, a); !s) return Fail(s.error());
  if (auto s = rows_.Audit(c, actor, "create_automation", a, std::nullopt); !s)
    return Fail(s.error());
  return a;
}

Result<Automation> AutomationService::Create(const governance::Actor& actor, const json& fields,
                                             const std::string& idempotency_key) {
  return rows_.Create(actor, "create_automation", idempotency_key,
                      [&](store::Conn& c) { return CreateIn(c, actor, fields); });
}

Result<Automation> AutomationService::Update(const governance::Actor& actor, int64_t id,
                                             int64_t expected_revision, const json& fields) {
  return db_.Write([&](store::Conn& c) -> Result<Automation> {
    auto a = rows_.LoadOr404(c, id);
    if (!a) return Fail(a.error());
    if (auto s = rows_.CheckRevision(*a, expected_revision); !s) return Fail(s.error());
    // An active automation may be edited: each run keeps the steps copied at its
    // enrolment, so the edit applies to new enrolments only.
    if (auto s = ApplyFields(fields, *a); !s) return Fail(s.error());
    if (fields.contains("steps")) {
      if (auto s = CheckWebhookTargets(c, a->steps); !s) return Fail(s.error());
      if (auto s = CheckTemplateRefs(c, a->steps, "steps"); !s) return Fail(s.error());
    }
    if (a->status == AutomationStatus::kActive && a->steps.empty()) {
      return Fail(Errc::kInvalidArgument, "steps: an active automation needs at least one step");
    }
    if (auto s = CheckRefsExist(c, CollectRefs(a->trigger, a->steps), a->trigger); !s) {
      return Fail(s.error());
    }
    int64_t before = a->revision;
    a->updated_at = clock_.NowUnix();
    if (auto s = Save(c, *a, a->revision); !s) return Fail(s.error());
    if (auto s = rows_.Audit(c, actor, "update_automation", *a, before); !s) return Fail(s.error());
    return a;
  });
}

Result<Automation> AutomationService::Deactivate(const governance::Actor& actor, int64_t id,
                                                 int64_t expected_revision) {
  return db_.Write([&](store::Conn& c) -> Result<Automation> {
    auto a = rows_.LoadOr404(c, id);
    if (!a) return Fail(a.error());
    if (auto s = rows_.CheckRevision(*a, expected_revision); !s) return Fail(s.error());
    if (a->status != AutomationStatus::kActive) {
      return Fail(Errc::kInvalidTransition, std::string("only an active automation can be "
                                                        "deactivated; this one is ") +
                                                ToString(a->status));
    }
    int64_t before = a->revision;
    a->status = AutomationStatus::kInactive;
    a->updated_at = clock_.NowUnix();
    // Pending steps of every run are cancelled with the deactivation, atomically.
    if (auto n = automation_runs_repo::CancelActive(c, id, a->updated_at); !n)
      return Fail(n.error());
    if (auto s = Save(c, *a, a->revision); !s) return Fail(s.error());
    if (auto s = rows_.Audit(c, actor, "deactivate_automation", *a, before); !s)
      return Fail(s.error());
    return a;
  });
}

namespace {

Status CheckActivatable(store::Conn& c, const Automation& a) {
  if (a.status == AutomationStatus::kActive) {
    return Fail(Errc::kInvalidTransition, "the automation is already active");
  }
  if (a.steps.empty()) return Fail(Errc::kInvalidArgument, "steps: add at least one step first");
  return CheckRefsExist(c, CollectRefs(a.trigger, a.steps), a.trigger);
}

}  // namespace

Result<EnrolmentCandidates> AutomationService::Candidates(store::Conn& c, int64_t automation_id,
                                                          const json& trigger, int sample) {
  if (!automations_repo::StateBasedTrigger(trigger)) return EnrolmentCandidates{};
  EnrolmentCandidates out{.state_based = true};
  auto n = automations_repo::CountCandidates(c, automation_id, trigger);
  if (!n) return Fail(n.error());
  out.count = *n;
  auto rows = automations_repo::SampleCandidates(c, automation_id, trigger, sample);
  if (!rows) return Fail(rows.error());
  out.sample = std::move(*rows);
  return out;
}

Result<governance::Preview> AutomationService::PreviewActivate(store::Conn& c, int64_t id) const {
  auto a = rows_.LoadOr404(c, id);
  if (!a) return Fail(a.error());
  if (auto s = CheckActivatable(c, *a); !s) return Fail(s.error());
  auto cand = Candidates(c, id, a->trigger, 10);
  if (!cand) return Fail(cand.error());
  governance::Preview p;
  p.preview = {
      {"automation", {{"id", a->id}, {"name", a->name}, {"status", ToString(a->status)}}},
      {"trigger", a->trigger},
      {"steps", a->steps},
      {"enrol_now",
       {{"count", cand->count},
        {"sample", cand->sample},
        {"note", cand->state_based
                     ? "contacts that match the trigger now are enrolled on activation"
                     : "this trigger is an event; contacts enrol when it happens"}}},
      {"new_status", "active"},
  };
  p.revisions[AutomationRevisionKey(id)] = a->revision;
  return p;
}

Result<json> AutomationService::Activate(store::Conn& c, const governance::Actor& actor,
                                         int64_t id) {
  int64_t now = clock_.NowUnix();
  auto a = rows_.LoadOr404(c, id);
  if (!a) return Fail(a.error());
  if (auto s = CheckActivatable(c, *a); !s) return Fail(s.error());
  int64_t enrolled = 0;
  {
    auto n =
        automations_repo::EnrolMatching(c, id, a->trigger, a->steps, now,
                                        crm::CurrentTraceLink());  // its runs continue this trace
    if (!n) return Fail(n.error());
    enrolled = *n;
  }
  int64_t before = a->revision;
  a->status = AutomationStatus::kActive;
  a->activated_at = now;
  a->updated_at = now;
  if (auto s = Save(c, *a, a->revision); !s) return Fail(s.error());
  if (auto s = rows_.Audit(c, actor, "activate_automation", *a, before); !s) return Fail(s.error());
  return json{{"automation", ToJson(*a, false)}, {"enrolled", enrolled}};
}

Result<governance::Preview> AutomationService::PreviewDelete(store::Conn& c, int64_t id) const {
  auto a = rows_.LoadOr404(c, id);
  if (!a) return Fail(a.error());
  Status st;
  json enrolments = EnrolmentSummary(c, id, &st);
  if (!st) return Fail(st.error());
  auto sample = automations_repo::EnrolmentSample(c, id, 10);
  if (!sample) return Fail(sample.error());
  json s = json::array();
  for (const auto& r : *sample) {
    s.push_back({{"id", r.id}, {"email", r.email}, {"status", r.status}});
  }
  enrolments["sample"] = std::move(s);
  governance::Preview p;
  p.preview = {{"automation", ToJson(*a, false)},
               {"enrolled_contacts", std::move(enrolments)},
               {"irreversible", true}};
  p.revisions[AutomationRevisionKey(id)] = a->revision;
  if (a->status == AutomationStatus::kActive) {
    p.blockers.push_back({.kind = "automation",
                          .id = a->id,
                          .name = a->name,
                          .reason = "the automation is active; deactivate it before deleting"});
  }
  return p;
}

Result<json> AutomationService::Delete(store::Conn& c, const governance::Actor& actor, int64_t id) {
  auto a = rows_.LoadOr404(c, id);
  if (!a) return Fail(a.error());
  if (a->status == AutomationStatus::kActive) {
    return Fail(Errc::kDependencyBlocked,
                "automation " + std::to_string(id) + " is active; deactivate it before deleting");
  }
  if (auto n = automations_repo::Delete(c, id); !n) return Fail(n.error());
  if (auto s = rows_.Audit(c, actor, "delete_automation", *a, a->revision); !s)
    return Fail(s.error());
  return json{{"deleted", {{"id", id}, {"name", a->name}}}};
}

}  // namespace crmd::marketing
