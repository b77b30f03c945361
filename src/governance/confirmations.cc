#include "src/governance/confirmations.h"

#include <optional>

#include "src/core/crypto.h"
#include "src/governance/approval_policy.h"
#include "src/governance/approvals_repo.h"
#include "src/governance/audit.h"
#include "src/governance/confirmations_repo.h"
#include "src/governance/settings.h"

namespace crmd::governance {

using nlohmann::json;

namespace {

json RevisionsJson(const std::map<std::string, int64_t>& r) {
  json j = json::object();
  for (const auto& [k, v] : r) j[k] = v;
  return j;
}

json BlockersJson(const std::vector<Blocker>& b) {
  json arr = json::array();
  for (const auto& x : b) arr.push_back(ToJson(x));
  return arr;
}

std::string BlockedMessage(const std::vector<Blocker>& b) {
  std::string msg = "the action is blocked by " + std::to_string(b.size()) + " dependant(s): ";
  for (size_t i = 0; i < b.size() && i < 5; ++i) {
    if (i) msg += "; ";
    msg +=
        b[i].kind + " " + std::to_string(b[i].id) + " \"" + b[i].name + "\" (" + b[i].reason + ")";
  }
  return msg + ". Resolve these first.";
}

// The names of the overridable problems a stored preview showed ("blocked_by").
std::set<std::string> ShownProblems(const json& preview) {
  std::set<std::string> out;
  if (!preview.is_object() || !preview.contains("blocked_by") || !preview["blocked_by"].is_array())
    return out;
  for (const auto& b : preview["blocked_by"])
    if (b.is_object() && b.contains("name") && b["name"].is_string()) out.insert(b["name"]);
  return out;
}

// Whether every problem in `now` was among those shown.
bool AllShown(const std::vector<Blocker>& now, const std::set<std::string>& shown) {
  for (const auto& b : now)
    if (!shown.count(b.name)) return false;
  return true;
}

std::string OverridableMessage(const std::vector<Blocker>& b) {
  std::string msg = "activation is blocked by the pre-send check: ";
  for (size_t i = 0; i < b.size(); ++i)
    msg += (i ? "; " : "") + b[i].name + " (" + b[i].reason + ")";
  return msg +
         ". Fix these and call the tool again for a fresh preview, or ask the user: only they "
         "can override them, on the approval page (approval_url)";
}

constexpr const char* kNextStep =
    "Nothing has changed yet. Show this preview to the user; only after they agree, call "
    "confirm_action with confirmation_token.";
constexpr const char* kNextStepApproval =
    "Nothing has changed yet. This action needs the user's own approval: show the user "
    "approval_url and ask them to open it, sign in and approve (you cannot approve it). "
    "Then call confirm_action with confirmation_token; before they approve it answers "
    "approval_pending.";

}  // namespace

json ToJson(const Blocker& b) {
  return {{"kind", b.kind}, {"id", b.id}, {"name", b.name}, {"reason", b.reason}};
}

struct ConfirmationService::Issued {
  int64_t id = 0;
  std::string token;
  int64_t expires_at = 0;
  int64_t ttl = 0;
  std::string approval_id;  // empty: the assistant may confirm alone
  std::string approval_url;
  json ToReply(const std::string& action, const json& preview) const {
    json j = {{"status", "confirmation_required"},
              {"action", action},
              {"preview", preview},
              {"confirmation_token", token},
              {"expires_at", FormatRfc3339(expires_at)},
              {"expires_in", ttl},
              {"approval_required", !approval_id.empty()},
              {"next_step", approval_id.empty() ? kNextStep : kNextStepApproval}};
    if (!approval_id.empty()) {
      j["approval"] = {{"id", approval_id}, {"url", approval_url}, {"status", "pending"}};
      j["approval_url"] = approval_url;
    }
    return j;
  }
};

namespace {

// What confirm_action's audit row keeps: the action, its arguments, and what the pre-send
// check found (warnings are recorded; overridden errors too).
// Confirming what the pre-send check blocked: null when nothing is, or the person approved
// with every problem of now in view; else the dependency_blocked details.
json Overridden(const Preview& p, const std::optional<approvals_repo::ApprovalRow>& approval,
                const std::string& shown_preview, const std::string& approval_url) {
  if (p.overridable.empty()) return nullptr;
  if (approval && approval->status == "approved" &&
      AllShown(p.overridable, ShownProblems(json::parse(shown_preview, nullptr, false))))
    return nullptr;
  json details = {{"blockers", BlockersJson(p.overridable)}, {"preview", p.preview}};
  if (!approval_url.empty()) details["approval_url"] = approval_url;
  return details;
}

// Approving what the pre-send check blocked: the person must say so, and nothing may be
// blocked now that the page did not show.
Status CheckOverride(const Preview& now, const json& shown_preview, bool override_checks) {
  const auto shown = ShownProblems(shown_preview);
  if (!AllShown(now.overridable, shown))
    return Fail(Errc::kStalePreview,
                "the pre-send check finds problems this page did not show; nothing was "
                "approved. Ask the assistant for a fresh preview");
  if (!shown.empty() && !override_checks)
    return Fail(Errc::kInvalidArgument,
                "the pre-send check found errors: tick \"Send anyway\" to override them, or "
                "deny the request");
  return Ok();
}

// A token that cannot confirm anything: unknown, used, or another principal's.
Error InvalidConfirmation() {
  return Error{Errc::kConfirmationInvalid,
               "this confirmation token is not valid (unknown, already used, or issued to "
               "another client or user); request a new preview",
               {}};
}

// The person's decision on a confirmation that requires one (nullopt when it does not): the
// approval made for exactly this preview. A denial ends the confirmation at once.
Result<std::optional<approvals_repo::ApprovalRow>> DecisionFor(
    store::Conn& c, const confirmations_repo::StoredConfirmation& x) {
  if (!x.requires_approval) return std::nullopt;
  auto found = approvals_repo::FindByConfirmation(c, x.id);
  if (!found) return Fail(found.error());
  if (!*found) return Fail(InvalidConfirmation());
  const approvals_repo::ApprovalRow& a = **found;
  if (a.args_hash != x.args_hash || a.revisions != x.revisions || a.client_id != x.client_id ||
      a.subject != x.subject)
    return Fail(InvalidConfirmation());
  if (a.status == "denied")
    return Fail(Errc::kApprovalDenied,
                "the user denied this action on the approval page; do not retry it unless "
                "the user asks again");
  return std::move(*found);
}

json ConfirmAuditDetails(const std::string& action, const json& args, const Preview& p) {
  json d = {{"action", action}, {"args", args}};
  if (p.preview.is_object() && p.preview.contains("checks")) d["checks"] = p.preview["checks"];
  if (!p.overridable.empty()) d["overridden"] = BlockersJson(p.overridable);
  return d;
}

}  // namespace

ConfirmationService::ConfirmationService(ConfirmationOptions options) : o_(std::move(options)) {}

std::string ConfirmationService::ApprovalUrl(const std::string& approval_id) const {
  return o_.approval_url_base + "/console/approvals/" + approval_id;
}

Status ConfirmationService::RegisterAction(ActionSpec spec) {
  if (spec.name.empty() || spec.scope.empty() || !spec.preview || !spec.execute)
    return Fail(Errc::kInvalidArgument, "action needs name, scope, preview and execute");
  if (actions_.count(spec.name))
    return Fail(Errc::kAlreadyExists, "action already registered: " + spec.name);
  std::string name = spec.name;
  actions_.emplace(std::move(name), std::move(spec));
  return Ok();
}

bool ConfirmationService::HasAction(const std::string& name) const {
  return actions_.count(name) > 0;
}

Result<ConfirmationService::Issued> ConfirmationService::Issue(store::Conn& conn,
                                                               const Actor& actor,
                                                               const ActionSpec& spec,
                                                               const json& args,
                                                               const Preview& preview) {
  int64_t ttl = 600;
  json policy = DefaultApprovalPolicy();
  if (o_.settings) {
    auto s = o_.settings->GetIn(conn);
    if (!s) return Fail(s.error());  // never fall back to a weaker policy
    ttl = s->document.value("confirmation_ttl_seconds", int64_t{600});
    policy = s->document.value("approval_policy", policy);
  }
  const bool needs_person =
      NeedsPerson(policy, spec.name, preview.preview) || !preview.overridable.empty();
  json shown = preview.preview;
  if (!preview.overridable.empty() && shown.is_object())
    shown["blocked_by"] = BlockersJson(preview.overridable);
  Issued out;
  out.token = o_.random->Token(32);
  out.ttl = ttl;
  int64_t now = o_.clock->NowUnix();
  out.expires_at = now + ttl;
  std::string canonical = args.dump();  // nlohmann objects are key-sorted: canonical
  auto id = confirmations_repo::Insert(conn, {.token_hash = crypto::HashSecret(out.token),
                                              .action = spec.name,
                                              .scope = spec.scope,
                                              .client_id = actor.client_id,
                                              .subject = actor.subject,
                                              .args = canonical,
                                              .args_hash = crypto::Sha256Hex(canonical),
                                              .revisions = RevisionsJson(preview.revisions).dump(),
                                              .preview = shown.dump(),
                                              .created_at = now,
                                              .expires_at = out.expires_at,
                                              .requires_approval = needs_person});
  if (!id) return Fail(id.error());
  out.id = *id;
  if (needs_person) {
    out.approval_id = o_.random->Token(16);
    out.approval_url = ApprovalUrl(out.approval_id);
    auto st = approvals_repo::Insert(conn, {.id = out.approval_id,
                                            .confirmation_id = out.id,
                                            .action = spec.name,
                                            .client_id = actor.client_id,
                                            .subject = actor.subject,
                                            .args_hash = crypto::Sha256Hex(canonical),
                                            .revisions = RevisionsJson(preview.revisions).dump(),
                                            .created_at = now,
                                            .expires_at = out.expires_at});
    if (!st) return Fail(st.error());
  }
  return out;
}

void ConfirmationService::Count(std::string_view step, std::string_view outcome) {
  if (!o_.metrics) return;
  o_.metrics
      ->Counter("crmd_confirmations_total",
                "Confirmable actions: previews issued and confirmations, by outcome (error code "
                "when refused).",
                {{"step", step}, {"outcome", outcome}})
      .Inc();
}

ConfirmOutcome ConfirmationService::Request(const Actor& actor, const std::string& action,
                                            const nlohmann::json& args) {
  ConfirmOutcome out = RequestUncounted(actor, action, args);
  if (!out.result)
    Count("preview", ErrcCode(out.result.error().code));
  else
    Count("preview",
          out.result->value("approval_required", false) ? "issued_needs_approval" : "issued");
  return out;
}

ConfirmOutcome ConfirmationService::Confirm(const Actor& actor, const std::set<std::string>& scopes,
                                            const std::string& token) {
  ConfirmOutcome out = ConfirmUncounted(actor, scopes, token);
  Count("confirm", out.result ? "done" : ErrcCode(out.result.error().code));
  return out;
}

Status ConfirmationService::Decide(const std::string& approval_id, const Actor& person,
                                   bool approve, bool administrator, bool override_checks) {
  Status st = DecideUncounted(approval_id, person, approve, administrator, override_checks);
  if (o_.metrics)
    o_.metrics
        ->Counter("crmd_approvals_total", "Decisions on approval pages, by decision and outcome.",
                  {{"decision", approve ? "approve" : "deny"},
                   {"outcome", st ? "ok" : ErrcCode(st.error().code)}})
        .Inc();
  return st;
}

ConfirmOutcome ConfirmationService::RequestUncounted(const Actor& actor, const std::string& action,
                                                     const json& args) {
  auto it = actions_.find(action);
  if (it == actions_.end())
    return {Fail(Error::Internal("unregistered confirmation action " + action)), nullptr};
  const ActionSpec& spec = it->second;
  json details;
  auto r = o_.db->Write([&](store::Conn& c) -> Result<json> {
    details = nullptr;  // the callback may run twice (store/db.h)
    auto p = spec.preview(c, args);
    if (!p) return Fail(p.error());
    if (!p->blockers.empty()) {
      details = {{"blockers", BlockersJson(p->blockers)}, {"preview", p->preview}};
      return Fail(Errc::kDependencyBlocked, BlockedMessage(p->blockers));
    }
    auto issued = Issue(c, actor, spec, args, *p);
    if (!issued) return Fail(issued.error());
    json reply = issued->ToReply(spec.name, p->preview);
    if (!p->overridable.empty()) {
      reply["blocked_by"] = BlockersJson(p->overridable);
      reply["next_step"] = OverridableMessage(p->overridable);
    }
    return reply;
  });
  bool ok = r.has_value();
  return {std::move(r), ok ? json(nullptr) : details};
}

ConfirmOutcome ConfirmationService::ConfirmUncounted(const Actor& actor,
                                                     const std::set<std::string>& scopes,
                                                     const std::string& token) {
  json details;
  bool stale = false;
  auto r = o_.db->Write([&](store::Conn& c) -> Result<json> {
    // The callback may run twice (store/db.h): what it reports starts afresh.
    details = nullptr;
    stale = false;
    auto row = confirmations_repo::FindByTokenHash(c, crypto::HashSecret(token));
    if (!row) return Fail(row.error());
    const auto invalid = [] { return Fail(InvalidConfirmation()); };
    if (!*row) return invalid();
    const confirmations_repo::StoredConfirmation& x = **row;
    // Bound to the OAuth client and the user who saw the preview.
    if (!crypto::ConstantTimeEqual(x.client_id, actor.client_id) ||
        !crypto::ConstantTimeEqual(x.subject, actor.subject))
      return invalid();
    const std::string& status = x.status;
    const int64_t now = o_.clock->NowUnix(), id = x.id;
    if (status == "expired" ||
        ((status == "pending" || status == "approved") && x.expires_at <= now))
      return Fail(Errc::kConfirmationExpired,
                  "this confirmation token has expired; call the tool again for a new preview");
    if (status != "pending" && status != "approved") return invalid();
    // The person's decision, read here and acted on below: a denial ends it at once, a
    // pending approval only once the preview is known to be current (TOOLS.md
    // "Confirmation" 5: rule 2 comes first, whatever the policy).
    auto decision = DecisionFor(c, x);
    if (!decision) return Fail(decision.error());
    std::optional<approvals_repo::ApprovalRow> approval = std::move(*decision);
    auto it = actions_.find(x.action);
    if (it == actions_.end()) return invalid();
    const ActionSpec& spec = it->second;
    if (!scopes.count(spec.scope)) {
      details = {{"required_scope", spec.scope}};
      return Fail(Errc::kPermissionDenied,
                  "confirming " + spec.name + " needs the scope " + spec.scope);
    }
    std::string canonical = x.args;
    if (crypto::Sha256Hex(canonical) != x.args_hash) return invalid();
    json args = json::parse(canonical, nullptr, false);
    if (args.is_discarded()) return invalid();

    // The world may have moved since the preview: a record it showed may be gone.
    auto p = spec.preview(c, args);
    if (!p) {
      if (p.error().code == Errc::kNotFound)
        return Fail(Errc::kStalePreview,
                    "the records changed since the preview: " + p.error().message +
                        "; nothing was done. Call " + spec.name + " again for a fresh preview");
      return Fail(p.error());
    }
    if (!p->blockers.empty()) {
      details = {{"blockers", BlockersJson(p->blockers)}, {"preview", p->preview}};
      return Fail(Errc::kDependencyBlocked, BlockedMessage(p->blockers));
    }
    json seen = json::parse(x.revisions, nullptr, false);
    if (seen != RevisionsJson(p->revisions)) {
      if (auto sup = confirmations_repo::MarkSuperseded(c, id); !sup) return Fail(sup.error());
      auto issued = Issue(c, actor, spec, args, *p);
      if (!issued) return Fail(issued.error());
      stale = true;
      return issued->ToReply(spec.name, p->preview);  // committed, then reported as an error
    }
    if (details = Overridden(*p, approval, x.preview, approval ? ApprovalUrl(approval->id) : "");
        !details.is_null())
      return Fail(Errc::kDependencyBlocked, OverridableMessage(p->overridable));
    if (approval && approval->status != "approved") {
      details = {{"approval_id", approval->id}, {"approval_url", ApprovalUrl(approval->id)}};
      return Fail(Errc::kApprovalPending,
                  "this action is waiting for the user's approval: show the user "
                  "approval_url, ask them to sign in and approve, then call confirm_action "
                  "again with the same token");
    }

    // Single use, guaranteed by the database in the action's own transaction.
    auto used = confirmations_repo::MarkUsed(c, id, now);
    if (!used) return Fail(used.error());
    if (!*used) return invalid();
    auto result = spec.execute(c, args, actor);
    if (!result) return Fail(result.error());
    if (auto saved = confirmations_repo::SaveResult(c, id, result->dump()); !saved)
      return Fail(saved.error());
    AuditLog audit(o_.clock);
    auto st = audit.Record(c, actor,
                           {.action = "confirm_action",
                            .target_type = "confirmation",
                            .target_ids = {id},
                            .details = ConfirmAuditDetails(spec.name, args, *p)});
    if (!st) return Fail(st.error());
    return json{{"status", "done"}, {"action", spec.name}, {"result", *result}};
  });
  if (r && stale) {
    json fresh = std::move(*r);
    fresh.erase("status");
    return {Fail(Errc::kStalePreview,
                 "the records changed since the preview; review the fresh preview and confirm "
                 "again with the new confirmation_token"),
            fresh};
  }
  bool ok = r.has_value();
  return {std::move(r), ok ? json(nullptr) : details};
}

Result<ConfirmationInfo> ConfirmationService::Get(int64_t id) {
  return o_.db->Read([&](store::Conn& c) -> Result<ConfirmationInfo> {
    auto row = confirmations_repo::FindInfo(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::NotFound("no such confirmation"));
    ConfirmationInfo info = std::move(**row);
    if ((info.status == "pending" || info.status == "approved") &&
        info.expires_at <= o_.clock->NowUnix())
      info.status = "expired";
    return info;
  });
}

namespace {

ApprovalInfo MakeApprovalInfo(const approvals_repo::ApprovalRow& a, const ConfirmationInfo& c,
                              int64_t now) {
  ApprovalInfo info{.id = a.id,
                    .status = a.status,
                    .action = a.action,
                    .client_id = a.client_id,
                    .subject = a.subject,
                    .args = c.args,
                    .preview = c.preview,
                    .decided_by = a.decided_by,
                    .created_at = a.created_at,
                    .expires_at = a.expires_at};
  // The confirmation's fate wins once it is final: used or replaced by a fresh preview.
  if (c.status == "used" || c.status == "superseded")
    info.status = c.status;
  else if (a.status == "pending" && a.expires_at <= now)
    info.status = "expired";
  else if (c.status == "expired")
    info.status = "expired";
  return info;
}

}  // namespace

Result<ApprovalInfo> ConfirmationService::GetApproval(const std::string& approval_id) {
  return o_.db->Read([&](store::Conn& c) -> Result<ApprovalInfo> {
    auto a = approvals_repo::Find(c, approval_id);
    if (!a) return Fail(a.error());
    if (!*a) return Fail(Error::NotFound("no such approval"));
    auto conf = confirmations_repo::FindInfo(c, (*a)->confirmation_id);
    if (!conf) return Fail(conf.error());
    if (!*conf) return Fail(Error::NotFound("no such approval"));
    return MakeApprovalInfo(**a, **conf, o_.clock->NowUnix());
  });
}

Result<std::vector<ApprovalInfo>> ConfirmationService::PendingApprovals(const std::string& subject,
                                                                        bool administrator) {
  return o_.db->Read([&](store::Conn& c) -> Result<std::vector<ApprovalInfo>> {
    int64_t now = o_.clock->NowUnix();
    auto rows = administrator ? approvals_repo::ListAllPending(c, now, 100)
                              : approvals_repo::ListPending(c, subject, now, 100);
    if (!rows) return Fail(rows.error());
    std::vector<ApprovalInfo> out;
    for (const auto& a : *rows) {
      auto conf = confirmations_repo::FindInfo(c, a.confirmation_id);
      if (!conf) return Fail(conf.error());
      if (!*conf) continue;
      ApprovalInfo info = MakeApprovalInfo(a, **conf, now);
      if (info.status == "pending") out.push_back(std::move(info));
    }
    return out;
  });
}

Status ConfirmationService::DecideUncounted(const std::string& approval_id, const Actor& person,
                                            bool approve, bool administrator,
                                            bool override_checks) {
  return o_.db->Write([&](store::Conn& c) -> Status {
    int64_t now = o_.clock->NowUnix();
    auto a = approvals_repo::Find(c, approval_id);
    if (!a) return Fail(a.error());
    if (!*a) return Fail(Error::NotFound("no such approval"));
    const approvals_repo::ApprovalRow& row = **a;
    // An administrator decides any approval; the grant's user denies their own, and
    // approves it only when the policy lets people approve their own actions.
    const bool own =
        !person.subject.empty() && crypto::ConstantTimeEqual(row.subject, person.subject);
    if (!own && !administrator)
      return Fail(Errc::kPermissionDenied, "this approval belongs to another user");
    if (own && approve && !administrator) {
      json policy = DefaultApprovalPolicy();
      if (o_.settings) {
        auto s = o_.settings->GetIn(c);
        if (!s) return Fail(s.error());
        policy = s->document.value("approval_policy", policy);
      }
      if (!PersonMayApproveOwn(policy))
        return Fail(Errc::kPermissionDenied, "an administrator must approve this action");
    }
    auto conf = confirmations_repo::FindInfo(c, row.confirmation_id);
    if (!conf) return Fail(conf.error());
    if (!*conf) return Fail(Error::NotFound("no such approval"));
    ApprovalInfo info = MakeApprovalInfo(row, **conf, now);
    if (info.status == "expired")
      return Fail(Errc::kConfirmationExpired, "this request has expired; ask the assistant again");
    if (info.status != "pending")
      return Fail(Errc::kConfirmationInvalid, "this request is no longer waiting for a decision");
    if (approve) {
      // The person approves what the page showed: if the records moved, nothing is approved.
      auto it = actions_.find(row.action);
      if (it == actions_.end()) return Fail(Error::Internal("unregistered action " + row.action));
      auto p = it->second.preview(c, info.args);
      if (!p) return Fail(p.error());
      if (json::parse(row.revisions, nullptr, false) != RevisionsJson(p->revisions))
        return Fail(Errc::kStalePreview,
                    "the records changed since this request was made; nothing was approved. "
                    "The assistant is given a fresh preview when it next confirms: approve "
                    "that one instead");
      if (auto st = CheckOverride(*p, info.preview, override_checks); !st) return st;
    }
    const std::string status = approve ? "approved" : "denied";
    auto done = approvals_repo::Decide(c, row.id, row.subject, status,
                                       person.kind + ":" + person.subject, now);
    if (!done) return Fail(done.error());
    if (!*done)
      return Fail(Errc::kConfirmationInvalid, "this request is no longer waiting for a decision");
    AuditLog audit(o_.clock);
    return audit.Record(c, person,
                        {.action = approve ? "approve_action" : "deny_action",
                         .target_type = "confirmation",
                         .target_ids = {row.confirmation_id},
                         .details = {{"approval_id", row.id},
                                     {"action", row.action},
                                     {"requested_for", row.subject},
                                     {"client_id", row.client_id},
                                     {"args", info.args},
                                     {"overridden", approve && override_checks
                                                        ? info.preview.value("blocked_by", json())
                                                        : json()}}});
  });
}

Result<int64_t> ConfirmationService::ExpireStale() {
  return o_.db->Write(
      [&](store::Conn& c) { return confirmations_repo::ExpireStale(c, o_.clock->NowUnix()); });
}

}  // namespace crmd::governance
