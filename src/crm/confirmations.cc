#include "src/crm/confirmations.h"

#include "src/core/crypto.h"
#include "src/crm/audit.h"
#include "src/crm/confirmations_repo.h"
#include "src/crm/settings.h"

namespace crmd::crm {

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
    msg += b[i].kind + " " + std::to_string(b[i].id) + " \"" + b[i].name + "\" (" + b[i].reason +
           ")";
  }
  return msg + ". Resolve these first.";
}

constexpr const char* kNextStep =
    "Nothing has changed yet. Show this preview to the user; only after they agree, call "
    "confirm_action with confirmation_token.";

}  // namespace

json ToJson(const Blocker& b) {
  return {{"kind", b.kind}, {"id", b.id}, {"name", b.name}, {"reason", b.reason}};
}

struct ConfirmationService::Issued {
  int64_t id = 0;
  std::string token;
  int64_t expires_at = 0;
  int64_t ttl = 0;
  json ToReply(const std::string& action, const json& preview) const {
    return {{"status", "confirmation_required"},
            {"action", action},
            {"preview", preview},
            {"confirmation_token", token},
            {"expires_at", FormatRfc3339(expires_at)},
            {"expires_in", ttl},
            {"next_step", kNextStep}};
  }
};

ConfirmationService::ConfirmationService(ConfirmationOptions options) : o_(options) {}

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
  if (o_.settings) {
    auto s = o_.settings->GetIn(conn);
    if (s) ttl = s->document.value("confirmation_ttl_seconds", int64_t{600});
  }
  Issued out;
  out.token = o_.random->Token(32);
  out.ttl = ttl;
  int64_t now = o_.clock->NowUnix();
  out.expires_at = now + ttl;
  std::string canonical = args.dump();  // nlohmann objects are key-sorted: canonical
  auto id = confirmations_repo::Insert(
      conn, {.token_hash = crypto::HashSecret(out.token),
             .action = spec.name,
             .scope = spec.scope,
             .client_id = actor.client_id,
             .subject = actor.subject,
             .args = canonical,
             .args_hash = crypto::Sha256Hex(canonical),
             .revisions = RevisionsJson(preview.revisions).dump(),
             .preview = preview.preview.dump(),
             .created_at = now,
             .expires_at = out.expires_at});
  if (!id) return Fail(id.error());
  out.id = *id;
  return out;
}

ConfirmOutcome ConfirmationService::Request(const Actor& actor, const std::string& action,
                                            const json& args) {
  auto it = actions_.find(action);
  if (it == actions_.end())
    return {Fail(Error::Internal("unregistered confirmation action " + action)), nullptr};
  const ActionSpec& spec = it->second;
  json details;
  auto r = o_.db->Write([&](store::Conn& c) -> Result<json> {
    auto p = spec.preview(c, args);
    if (!p) return Fail(p.error());
    if (!p->blockers.empty()) {
      details = {{"blockers", BlockersJson(p->blockers)}, {"preview", p->preview}};
      return Fail(Errc::kDependencyBlocked, BlockedMessage(p->blockers));
    }
    auto issued = Issue(c, actor, spec, args, *p);
    if (!issued) return Fail(issued.error());
    return issued->ToReply(spec.name, p->preview);
  });
  bool ok = r.has_value();
  return {std::move(r), ok ? json(nullptr) : details};
}

ConfirmOutcome ConfirmationService::Confirm(const Actor& actor,
                                            const std::set<std::string>& scopes,
                                            const std::string& token) {
  json details;
  bool stale = false;
  auto r = o_.db->Write([&](store::Conn& c) -> Result<json> {
    auto row = confirmations_repo::FindByTokenHash(c, crypto::HashSecret(token));
    if (!row) return Fail(row.error());
    const auto invalid = [] {
      return Fail(Errc::kConfirmationInvalid,
                  "this confirmation token is not valid (unknown, already used, or issued to "
                  "another client or user); request a new preview");
    };
    if (!*row) return invalid();
    const confirmations_repo::StoredConfirmation& x = **row;
    int64_t id = x.id;
    // Bound to the OAuth client and the user who saw the preview.
    if (!crypto::ConstantTimeEqual(x.client_id, actor.client_id) ||
        !crypto::ConstantTimeEqual(x.subject, actor.subject))
      return invalid();
    std::string status = x.status;
    int64_t now = o_.clock->NowUnix();
    if (status == "expired" || ((status == "pending" || status == "approved") &&
                                x.expires_at <= now))
      return Fail(Errc::kConfirmationExpired,
                  "this confirmation token has expired; call the tool again for a new preview");
    if (status != "pending" && status != "approved") return invalid();
    if (x.requires_approval && status != "approved")
      return Fail(Errc::kConfirmationInvalid,
                  "this action is waiting for a person to approve it; it cannot be confirmed "
                  "with confirm_action alone");
    auto it = actions_.find(x.action);
    if (it == actions_.end()) return invalid();
    const ActionSpec& spec = it->second;
    if (!scopes.count(spec.scope)) {
      details = {{"required_scope", spec.scope}};
      return Fail(Errc::kPermissionDenied, "confirming " + spec.name + " needs the scope " +
                                               spec.scope);
    }
    std::string canonical = x.args;
    if (crypto::Sha256Hex(canonical) != x.args_hash) return invalid();
    json args = json::parse(canonical, nullptr, false);
    if (args.is_discarded()) return invalid();

    // The world may have moved since the preview.
    auto p = spec.preview(c, args);
    if (!p) return Fail(p.error());
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
                            .details = {{"action", spec.name}, {"args", args}}});
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

Status ConfirmationService::Approve(int64_t id, const Actor& approver) {
  return o_.db->Write([&](store::Conn& c) -> Status {
    auto n = confirmations_repo::Approve(c, id, approver.kind + ":" + approver.subject,
                                         o_.clock->NowUnix());
    if (!n) return Fail(n.error());
    if (!*n)
      return Fail(Errc::kConfirmationInvalid, "the action is no longer waiting for approval");
    AuditLog audit(o_.clock);
    return audit.Record(c, approver,
                        {.action = "approve_action", .target_type = "confirmation",
                         .target_ids = {id}});
  });
}

Result<int64_t> ConfirmationService::ExpireStale() {
  return o_.db->Write([&](store::Conn& c) {
    return confirmations_repo::ExpireStale(c, o_.clock->NowUnix());
  });
}

}  // namespace crmd::crm
