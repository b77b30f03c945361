#include "src/console/automation_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/console/approvals.h"
#include "src/console/confirm_flow.h"
#include "src/core/clock.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr const char* kAutomationPath = "/console/automations/view";
constexpr const char* kSequencePath = "/console/sequences/view";

std::string AutoNum(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer()
             ? std::to_string(j[key].get<int64_t>())
             : "0";
}

std::string AutoScalar(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  return s.size() > 100 ? s.substr(0, 97) + "..." : s;
}

// A step or trigger as "key: value" pairs besides its type.
std::string AutoDescribe(const json& step) {
  std::string out;
  if (!step.is_object()) return AutoScalar(step);
  for (const auto& [k, v] : step.items()) {
    if (k == "type" || k == "html_body" || k == "text_body") continue;
    out += (out.empty() ? "" : "; ") + k + ": " + AutoScalar(v);
  }
  return out;
}

std::string AutoPath(const char* base, int64_t id) {
  return std::string(base) + "?id=" + std::to_string(id);
}

http::Response AutomationListPage(const AutomationPagesDeps& d, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "automations");
  auto automations = d.automations->List(std::nullopt, "", 100);
  if (!automations) return InternalError(automations.error(), chrome);
  auto sequences = d.sequences->List(std::nullopt, "", 100);
  if (!sequences) return InternalError(sequences.error(), chrome);
  ViewList a_rows, s_rows;
  for (const auto& a : automations->items) {
    json report = json::object();
    if (auto r = d.reports->AutomationReport(a.id)) report = (*r)["enrolments"];
    a_rows.emplace_back(ViewMap{{"id", std::to_string(a.id)},
                                {"name", a.name},
                                {"trigger", a.trigger.value("type", std::string())},
                                {"status", marketing::ToString(a.status)},
                                {"steps", std::to_string(a.steps.size())},
                                {"enrolled", AutoNum(report, "total")},
                                {"active", AutoNum(report, "active")}});
  }
  for (const auto& s : sequences->items)
    s_rows.emplace_back(ViewMap{{"id", std::to_string(s.id)},
                                {"name", s.name},
                                {"status", marketing::ToString(s.status)},
                                {"emails", std::to_string(s.emails.size())},
                                {"enrolled", AutoNum(s.enrolments, "enrolled")},
                                {"sent", AutoNum(s.enrolments, "sent")},
                                {"completed", AutoNum(s.enrolments, "completed")}});
  ViewMap ctx{{"has_automations", !a_rows.empty()},
              {"automations", std::move(a_rows)},
              {"has_sequences", !s_rows.empty()},
              {"sequences", std::move(s_rows)}};
  return RenderPage(200, "Automations and sequences", "automations.mustache", ctx, chrome);
}

ViewList AutoKeyValues(const std::vector<std::pair<std::string, std::string>>& kv) {
  ViewList out;
  for (const auto& [label, value] : kv)
    out.emplace_back(ViewMap{{"label", label}, {"value", value}});
  return out;
}

std::string AutomationNotice(const std::string& done) {
  if (done == "activated") return "Active: it runs from now on.";
  if (done == "deactivated") return "Switched off: nothing new starts.";
  if (done == "paused") return "Paused.";
  return "";
}

http::Response AutomationPage(const AutomationPagesDeps& d, const Person& p, int64_t id,
                              const std::string& done) {
  const PageChrome chrome = ChromeFor(p, "automations");
  auto a = d.automations->Get(id);
  if (!a) return ServiceErrorPage(a.error(), chrome, "/console/automations");
  auto report = d.reports->AutomationReport(id);
  if (!report) return InternalError(report.error(), chrome);
  const json& per_step = (*report)["steps"];
  ViewList steps;
  for (size_t i = 0; i < a->steps.size(); ++i) {
    const json st = i < per_step.size() ? per_step[i] : json::object();
    steps.emplace_back(
        ViewMap{{"n", std::to_string(i + 1)},
                {"type", a->steps[i].value("type", std::string())},
                {"what", AutoDescribe(a->steps[i])},
                {"counts", ViewList{View(AutoNum(st, "reached")), View(AutoNum(st, "done")),
                                    View(AutoNum(st, "failed")), View(AutoNum(st, "skipped"))}}});
  }
  const json& e = (*report)["enrolments"];
  using S = marketing::AutomationStatus;
  ViewMap ctx{
      {"path", std::string(kAutomationPath)},
      {"id", std::to_string(id)},
      {"revision", std::to_string(a->revision)},
      {"facts",
       AutoKeyValues(
           {{"Status", marketing::ToString(a->status)},
            {"Trigger", a->trigger.value("type", std::string()) + " " + AutoDescribe(a->trigger)},
            {"Description", a->description},
            {"Activated", a->activated_at ? FormatRfc3339(*a->activated_at) : "—"},
            {"Revision", std::to_string(a->revision)}})},
      {"can_activate", a->status != S::kActive},
      {"confirmable", true},
      {"can_deactivate", a->status == S::kActive},
      {"off_action", "deactivate"},
      {"off_label", "Deactivate"},
      {"steps_title", "Steps and their outcomes"},
      {"step_head", ViewList{View("Reached"), View("Done"), View("Failed"), View("Skipped")}},
      {"has_steps", !steps.empty()},
      {"steps", std::move(steps)},
      {"has_runs", true},
      {"runs", AutoKeyValues({{"Enrolled", AutoNum(e, "total")},
                              {"Running", AutoNum(e, "active")},
                              {"Completed", AutoNum(e, "completed")},
                              {"Exited", AutoNum(e, "exited")},
                              {"Cancelled", AutoNum(e, "cancelled")}})},
      {"can_edit", p.can_edit},
      {"csrf_token", p.csrf_token}};
  if (auto notice = AutomationNotice(done); !notice.empty()) ctx.emplace("notice", notice);
  return RenderPage(200, "Automation: " + a->name, "automation.mustache", ctx, chrome);
}

http::Response SequencePage(const AutomationPagesDeps& d, const Person& p, int64_t id,
                            const std::string& done) {
  const PageChrome chrome = ChromeFor(p, "automations");
  auto s = d.sequences->Get(id);
  if (!s) return ServiceErrorPage(s.error(), chrome, "/console/automations");
  ViewList steps;
  for (size_t i = 0; i < s->emails.size(); ++i) {
    const json& m = s->emails[i];
    const int64_t delay = m.value("delay_seconds", int64_t{0});
    steps.emplace_back(
        ViewMap{{"n", std::to_string(i + 1)},
                {"type", m.value("subject", std::string())},
                {"what", delay == 0 ? std::string("at once")
                                    : "after " + std::to_string(delay / 3600) + " h " +
                                          std::to_string(delay % 3600 / 60) + " min"},
                {"counts", ViewList{}}});
  }
  using S = marketing::SequenceStatus;
  const json& e = s->enrolments;
  ViewMap ctx{{"path", std::string(kSequencePath)},
              {"id", std::to_string(id)},
              {"revision", std::to_string(s->revision)},
              {"facts", AutoKeyValues({{"Status", marketing::ToString(s->status)},
                                       {"Enrols the contacts who join the list",
                                        s->list_id ? "#" + std::to_string(*s->list_id) : "none"},
                                       {"Description", s->description},
                                       {"Revision", std::to_string(s->revision)}})},
              {"can_activate", s->status != S::kActive},
              {"can_deactivate", s->status == S::kActive},
              {"off_action", "pause"},
              {"off_label", "Pause"},
              {"steps_title", "Emails"},
              {"has_steps", !steps.empty()},
              {"steps", std::move(steps)},
              {"has_runs", true},
              {"runs", AutoKeyValues({{"Enrolled", AutoNum(e, "enrolled")},
                                      {"Running", AutoNum(e, "active")},
                                      {"Emails sent", AutoNum(e, "sent")},
                                      {"Emails failed", AutoNum(e, "failed")},
                                      {"Completed", AutoNum(e, "completed")},
                                      {"Exited", AutoNum(e, "exited")}})},
              {"can_edit", p.can_edit},
              {"csrf_token", p.csrf_token}};
  if (auto notice = AutomationNotice(done); !notice.empty()) ctx.emplace("notice", notice);
  return RenderPage(200, "Sequence: " + s->name, "automation.mustache", ctx, chrome);
}

struct AutomationConfirmView {
  int64_t id = 0;
  json reply;
  std::string error, waiting;
  int status = 200;
};

http::Response AutomationConfirmPage(const Person& p, const AutomationConfirmView& v) {
  const json preview = v.reply.value("preview", json::object());
  ViewList rows, blockers;
  for (const auto& r : PreviewRows(preview)) {
    ViewList items;
    for (const auto& i : r.items) items.emplace_back(i);
    rows.emplace_back(ViewMap{{"label", r.label},
                              {"value", r.value},
                              {"has_items", !items.empty()},
                              {"items", std::move(items)}});
  }
  if (v.reply.contains("blockers"))
    for (const json& b : v.reply["blockers"])
      blockers.emplace_back(b.value("reason", std::string()));
  const std::string token = v.reply.value("confirmation_token", "");
  const json approval = v.reply.value("approval", json::object());
  ViewMap ctx{{"back", AutoPath(kAutomationPath, v.id)},
              {"path", std::string(kAutomationPath)},
              {"id", std::to_string(v.id)},
              {"rows", std::move(rows)},
              {"has_blockers", !blockers.empty()},
              {"blockers", std::move(blockers)},
              {"has_token", !token.empty()},
              {"token", token},
              {"approval_id", approval.value("id", "")},
              {"confirm_label", "Confirm: activate"},
              {"expires", "This preview can be confirmed until " +
                              v.reply.value("expires_at", std::string("it expires")) + "."},
              {"csrf_token", p.csrf_token}};
  if (!v.error.empty()) ctx.emplace("error", v.error);
  if (!v.waiting.empty()) {
    ctx.emplace("waiting", v.waiting);
    ctx.emplace("approval_url", "/console/approvals/" + approval.value("id", ""));
  }
  return RenderPage(v.status, "Activate the automation", "confirm_action.mustache", ctx,
                    ChromeFor(p, "automations"));
}

http::Response ConfirmAutomationActivation(const AutomationPagesDeps& d, const http::Request& req,
                                           const Person& p, int64_t id, const FormFields& in) {
  const PageChrome chrome = ChromeFor(p, "automations");
  const std::string approval_id = FieldValue(in, "approval_id");
  if (!approval_id.empty()) {
    auto st = ApproveOwnAction(*d.confirmations, req, p, approval_id);
    if (!st && st.error().code == Errc::kPermissionDenied)
      return MessagePage(202, "Waiting for an administrator",
                         "The approval policy needs an administrator to approve this "
                         "activation. Ask one to approve it, then confirm again.",
                         chrome, "/console/approvals/" + approval_id, "The approval page");
    if (!st) return ServiceErrorPage(st.error(), chrome, AutoPath(kAutomationPath, id));
  }
  auto out = d.confirmations->Confirm(ConsoleActor(p, req), p.scopes,
                                      FieldValue(in, "confirmation_token"));
  if (out.result) return SeeOther(AutoPath(kAutomationPath, id) + "&done=activated");
  const Error& e = out.result.error();
  if (e.code == Errc::kStalePreview && out.error_details.contains("confirmation_token"))
    return AutomationConfirmPage(
        p, {.id = id,
            .reply = out.error_details,
            .error = "The automation changed since the preview: check it again.",
            .status = 409});
  if (e.code == Errc::kDependencyBlocked)
    return AutomationConfirmPage(
        p, {.id = id, .reply = out.error_details, .error = e.message, .status = 409});
  if (e.code == Errc::kConfirmationInvalid || e.code == Errc::kConfirmationExpired ||
      e.code == Errc::kStalePreview)
    return MessagePage(409, "Not confirmed",
                       "This preview can no longer be confirmed: start again from the automation.",
                       chrome, AutoPath(kAutomationPath, id), "Back");
  return ServiceErrorPage(e, chrome, AutoPath(kAutomationPath, id));
}

http::Response PostAutomationChange(const AutomationPagesDeps& d, const http::Request& req,
                                    const Person& p, const FormFields& in, int64_t id) {
  const PageChrome chrome = ChromeFor(p, "automations");
  const std::string action = FieldValue(in, "action");
  if (action == "activate") {
    auto out = d.confirmations->Request(ConsoleActor(p, req), "activate_automation", {{"id", id}});
    if (out.result) return AutomationConfirmPage(p, {.id = id, .reply = *out.result});
    if (out.result.error().code == Errc::kDependencyBlocked)
      return AutomationConfirmPage(p, {.id = id,
                                       .reply = out.error_details,
                                       .error = out.result.error().message,
                                       .status = 409});
    return ServiceErrorPage(out.result.error(), chrome, AutoPath(kAutomationPath, id));
  }
  if (action == "confirm") return ConfirmAutomationActivation(d, req, p, id, in);
  if (action == "deactivate") {
    auto off =
        d.automations->Deactivate(ConsoleActor(p, req), id, IdField(in, "revision").value_or(0));
    if (!off) return ServiceErrorPage(off.error(), chrome, AutoPath(kAutomationPath, id));
    return SeeOther(AutoPath(kAutomationPath, id) + "&done=deactivated");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the page.", chrome,
                     AutoPath(kAutomationPath, id), "Back");
}

http::Response PostSequenceChange(const AutomationPagesDeps& d, const http::Request& req,
                                  const Person& p, const FormFields& in, int64_t id) {
  const PageChrome chrome = ChromeFor(p, "automations");
  const std::string action = FieldValue(in, "action");
  if (action != "activate" && action != "pause")
    return MessagePage(400, "Bad request", "Use the buttons on the page.", chrome,
                       AutoPath(kSequencePath, id), "Back");
  auto to = action == "activate" ? marketing::SequenceStatus::kActive
                                 : marketing::SequenceStatus::kPaused;
  auto changed =
      d.sequences->SetStatus(ConsoleActor(p, req), id, to, IdField(in, "revision").value_or(0));
  if (!changed) return ServiceErrorPage(changed.error(), chrome, AutoPath(kSequencePath, id));
  return SeeOther(AutoPath(kSequencePath, id) +
                  (action == "activate" ? "&done=activated" : "&done=paused"));
}

http::Response AutomationView(const AutomationPagesDeps& d, const http::Request& req,
                              const Person& p, bool sequence) {
  const PageChrome chrome = ChromeFor(p, "automations");
  if (req.method == "POST") {
    auto in = http::ParseForm(req.body);
    if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
    if (!p.can_edit)
      return MessagePage(403, "Editors only", "Your role lets you read these, not change them.",
                         chrome, "/console/automations", "Back");
    auto id = IdField(in, "id");
    if (!id) return MessagePage(400, "Bad request", "Use the buttons on the page.", chrome);
    return sequence ? PostSequenceChange(d, req, p, in, *id)
                    : PostAutomationChange(d, req, p, in, *id);
  }
  auto q = http::ParseForm(req.query);
  auto id = IdField(q, "id");
  if (!id) return NotFoundPage(chrome);
  return sequence ? SequencePage(d, p, *id, FieldValue(q, "done"))
                  : AutomationPage(d, p, *id, FieldValue(q, "done"));
}

}  // namespace

ConsoleRoutes AutomationRoutes(AutomationPagesDeps deps) {
  auto d = std::make_shared<AutomationPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/automations", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "automations"))) return *refused;
      return AutomationListPage(*d, p);
    });
  });
  for (bool sequence : {false, true})
    routes.exact.emplace_back(
        sequence ? kSequencePath : kAutomationPath, [d, sequence](const http::Request& r) {
          return WithPerson(d->people, r, [&](const Person& p) {
            if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "automations")))
              return *refused;
            return AutomationView(*d, r, p, sequence);
          });
        });
  return routes;
}

}  // namespace crmd::console
