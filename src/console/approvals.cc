#include "src/console/approvals.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "src/console/confirm_flow.h"
#include "src/console/templates.h"
#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/core/log.h"

namespace crmd::console {
namespace {

using nlohmann::json;

std::string ActionTitle(const std::string& action) {
  if (action == "delete_contacts") return "permanently delete contacts";
  if (action == "delete_list") return "permanently delete a list";
  if (action == "delete_tag") return "permanently delete a tag";
  if (action == "delete_campaign") return "permanently delete a campaign";
  if (action == "delete_automation") return "permanently delete an automation";
  if (action == "activate_campaign") return "start sending a campaign";
  if (action == "activate_automation") return "activate an automation";
  if (action == "resend_campaign") return "resend a campaign to its undelivered recipients";
  return action;
}

std::string StatusText(const std::string& status) {
  if (status == "pending") return "waiting for your decision";
  if (status == "approved") return "approved: the assistant may now complete it";
  if (status == "denied") return "denied";
  if (status == "used") return "done";
  if (status == "expired") return "expired";
  if (status == "superseded") return "replaced by a newer request";
  return status;
}

std::string Spaced(std::string key) {
  for (char& ch : key)
    if (ch == '_') ch = ' ';
  return key;
}

std::string Label(const std::string& key) {
  std::string out = Spaced(key);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::string Scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "—";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// One record of a list in the preview: its name (or email), id and a few scalar facts.
// A record of the preview by its name, email, title or subject; empty when it has none.
std::string RecordName(const json& x) {
  if (!x.is_object()) return x.is_null() ? "" : Scalar(x);
  for (const char* key : {"name", "email", "title", "subject"})
    if (x.contains(key) && x[key].is_string() && !x[key].get<std::string>().empty())
      return x[key].get<std::string>();
  return "";
}

std::string Item(const json& v) {
  if (!v.is_object()) return Scalar(v);
  std::string head = RecordName(v);
  std::string rest;
  for (const auto& [k, x] : v.items()) {
    if (k == "name" || k == "email" || k == "title" || k == "subject" || x.is_structured())
      continue;
    rest += (rest.empty() ? "" : ", ") + k + ": " + Scalar(x);
  }
  if (head.empty()) return rest;
  return rest.empty() ? head : head + " (" + rest + ")";
}

void AddRows(std::vector<PreviewRow>& rows, const std::string& prefix, const json& obj, int depth) {
  for (const auto& [k, v] : obj.items()) {
    if (depth == 0 && (k == "action" || k == "effect")) continue;  // shown separately
    std::string label = prefix.empty() ? Label(k) : prefix + " · " + Label(k);
    if (v.is_array()) {
      PreviewRow row{.label = label, .value = std::to_string(v.size())};
      for (const auto& x : v) row.items.push_back(Item(x));
      rows.push_back(std::move(row));
    } else if (v.is_object() && depth < 1) {
      AddRows(rows, label, v, depth + 1);
    } else if (v.is_object()) {
      rows.push_back({.label = label, .value = Item(v)});
    } else {
      rows.push_back({.label = label, .value = Scalar(v)});
    }
  }
}

// The pre-send check's findings ({id, severity, message}) and whether approving overrides
// errors ("blocked_by"): then the Approve form asks the person to tick "Send anyway".
void AddChecks(ViewMap& ctx, const json& preview) {
  ViewList checks;
  if (preview.is_object() && preview.contains("checks") && preview["checks"].is_array())
    for (const auto& c : preview["checks"])
      if (c.is_object())
        checks.emplace_back(ViewMap{{"id", c.value("id", "")},
                                    {"severity", c.value("severity", "")},
                                    {"message", c.value("message", "")},
                                    {"error", c.value("severity", "") == "error"}});
  ctx.emplace("has_checks", !checks.empty());
  ctx.emplace("checks", std::move(checks));
  ctx.emplace("blocked", preview.is_object() && preview.contains("blocked_by") &&
                             preview["blocked_by"].is_array() && !preview["blocked_by"].empty());
}

ViewList RowsNode(const std::vector<PreviewRow>& rows) {
  ViewList out;
  for (const auto& r : rows) {
    ViewList items;
    for (const auto& i : r.items) items.emplace_back(i);
    out.emplace_back(ViewMap{{"label", r.label},
                             {"value", r.value},
                             {"has_items", !items.empty()},
                             {"items", std::move(items)}});
  }
  return out;
}

http::Response Message(int status, const std::string& title, const std::string& message,
                       const Person* p = nullptr, const std::string& link = "",
                       const std::string& link_text = "") {
  return MessagePage(status, title, message, p ? ChromeFor(*p, "approvals") : PageChrome{}, link,
                     link_text);
}

ViewMap ApprovalNode(const ApprovalPagesDeps& d, const governance::ApprovalInfo& a) {
  // A person's own action in the console (confirm_flow.h) names no app.
  const bool from_console = a.client_id == kConsoleClientId;
  std::optional<std::string> name =
      d.app_name && !from_console ? d.app_name(a.client_id) : std::nullopt;
  if (from_console) name = "Someone in the console";
  return ViewMap{{"id", a.id},
                 {"from_console", from_console},
                 {"action_title", ActionTitle(a.action)},
                 {"client_id", a.client_id},
                 {"app_name", name ? *name : a.client_id},
                 {"has_app_name", name.has_value() && !from_console},
                 {"summary", PreviewSummary(a.preview)},
                 {"expires_at", FormatRfc3339(a.expires_at)}};
}

http::Response HandleList(const ApprovalPagesDeps& d, const http::Request& req, const Person& p) {
  if (req.method != "GET" && req.method != "HEAD") {
    auto r = Message(405, "Method not allowed", "Use GET.", &p);
    r.Set("Allow", "GET, HEAD");
    return r;
  }
  auto items = d.confirmations->PendingApprovals(p.subject, p.is_admin);
  if (!items) {
    spdlog::error(R"("event":"console_error","detail":"{}")", JsonEscape(items.error().detail));
    return Message(500, "Error", "Something went wrong. Try again in a minute.", &p);
  }
  ViewList list;
  for (const auto& a : *items) list.emplace_back(ApprovalNode(d, a));
  bool any = !list.empty();
  return RenderPage(200, "Pending approvals", "approvals.mustache",
                    ViewMap{{"has_items", any}, {"items", std::move(list)}},
                    ChromeFor(p, "approvals"));
}

http::Response ShowApproval(const ApprovalPagesDeps& d, const governance::ApprovalInfo& a,
                            const Person& p, int status = 200) {
  ViewMap ctx = ApprovalNode(d, a);
  ctx.emplace("status", a.status);
  ctx.emplace("status_text", StatusText(a.status));
  ctx.emplace("created_at", FormatRfc3339(a.created_at));
  ctx.emplace("pending", a.status == "pending");
  ctx.emplace("csrf_token", p.csrf_token);
  if (a.preview.is_object() && a.preview.contains("effect") && a.preview["effect"].is_string())
    ctx.emplace("effect", a.preview["effect"].get<std::string>());
  json rows_of = a.preview;
  if (rows_of.is_object()) {
    rows_of.erase("checks");  // shown in their own section
    rows_of.erase("blocked_by");
  }
  ctx.emplace("rows", RowsNode(PreviewRows(rows_of)));
  AddChecks(ctx, a.preview);
  return RenderPage(status, "Approve this action?", "approval.mustache", ctx,
                    ChromeFor(p, "approvals"));
}

http::Response HandleApproval(const ApprovalPagesDeps& d, const http::Request& req, const Person& p,
                              const std::string& id) {
  if (req.method != "GET" && req.method != "HEAD" && req.method != "POST") {
    auto r = Message(405, "Method not allowed", "Use the page's buttons.", &p);
    r.Set("Allow", "GET, HEAD, POST");
    return r;
  }
  auto a = d.confirmations->GetApproval(id);
  if (!a) {
    if (a.error().code == Errc::kNotFound)
      return Message(404, "Not found", "There is no such approval.", &p);
    spdlog::error(R"("event":"console_error","detail":"{}")", JsonEscape(a.error().detail));
    return Message(500, "Error", "Something went wrong. Try again in a minute.", &p);
  }
  // The grant's user or an administrator: another person sees nothing of it.
  if (a->subject != p.subject && !p.is_admin)
    return Message(403, "Not yours", "This approval belongs to another user.", &p);
  if (req.method != "POST") return ShowApproval(d, *a, p);

  if (!d.people.origin_allowed(req))
    return Message(403, "Forbidden", "This form was sent from another site.", &p);
  auto form = http::ParseForm(req.body);
  auto csrf = http::FormValue(form, "csrf_token");
  if (!csrf || csrf->empty() || p.csrf_token.empty() ||
      !crypto::ConstantTimeEqual(*csrf, p.csrf_token))
    return Message(403, "Forbidden", "The form has expired. Reload the page and try again.", &p);
  std::string decision = http::FormValue(form, "decision").value_or("");
  if (decision != "approve" && decision != "deny")
    return Message(400, "Bad request", "Choose Approve or Deny.", &p);
  bool approve = decision == "approve";
  governance::Actor person{.kind = "user", .subject = p.subject, .request_id = req.request_id};
  // "Send anyway": the person overrides the pre-send check's errors (never the assistant).
  const bool override_checks = http::FormValue(form, "override").value_or("") == "1";
  auto st = d.confirmations->Decide(id, person, approve, p.is_admin, override_checks);
  if (!st) {
    const Error& e = st.error();
    switch (e.code) {
      case Errc::kPermissionDenied:
        if (a->subject == p.subject)
          return Message(403, "An administrator must approve",
                         "Your own request needs an administrator's approval. Ask one to "
                         "approve it; you may still deny it.",
                         &p, "/console/approvals/" + id, "Back to the request");
        return Message(403, "Not yours", "This approval belongs to another user.", &p);
      case Errc::kConfirmationExpired:
        return Message(410, "Expired", e.message, &p);
      case Errc::kConfirmationInvalid:
      case Errc::kStalePreview:
      case Errc::kNotFound:           // a record of the preview is gone
      case Errc::kDependencyBlocked:  // the action became impossible
      case Errc::kInvalidArgument:
        return Message(
            409, "Not decided",
            e.code == Errc::kNotFound || e.code == Errc::kDependencyBlocked
                ? "Nothing was approved: " + e.message + ". Ask the assistant for a fresh preview."
                : e.message,
            &p, "/console/approvals/" + id, "Back to the request");
      default:
        spdlog::error(R"("event":"console_error","detail":"{}")", JsonEscape(e.detail));
        return Message(500, "Error", "Something went wrong. Try again in a minute.", &p);
    }
  }
  // Not the approval id: it is the page's address (see kApprovalPagePrefix).
  spdlog::info(
      R"("event":"approval_decided","action":"{}","client_id":"{}","decision":"{}","subject":"{}")",
      JsonEscape(a->action), JsonEscape(a->client_id), decision, JsonEscape(p.subject));
  return Message(200, approve ? "Approved" : "Denied",
                 approve ? "Approved. The assistant can now complete the action; it happens once."
                         : "Denied. The assistant cannot perform this action.",
                 &p, "/console/approvals", "Pending approvals");
}

}  // namespace

std::vector<PreviewRow> PreviewRows(const nlohmann::json& preview) {
  std::vector<PreviewRow> rows;
  if (preview.is_object()) AddRows(rows, "", preview, 0);
  return rows;
}

std::string PreviewSummary(const json& preview) {
  if (!preview.is_object()) return "";
  constexpr size_t kShown = 3;
  // The records acted on: the first list of them (what uses a record is not one of them).
  for (const auto& [k, v] : preview.items()) {
    if (!v.is_array() || v.empty() || k == "used_by") continue;
    std::string noun = Spaced(k);
    if (v.size() == 1 && noun.size() > 1 && noun.back() == 's') noun.pop_back();
    std::string out = std::to_string(v.size()) + " " + noun + ": ";
    for (size_t i = 0; i < v.size() && i < kShown; ++i) {
      std::string name = RecordName(v[i]);
      out += (i ? ", " : "") + (name.empty() ? Item(v[i]) : name);
    }
    if (v.size() > kShown) out += " and " + std::to_string(v.size() - kShown) + " more";
    return out;
  }
  // Else the one record acted on, by its name.
  for (const auto& [k, v] : preview.items())
    if (v.is_object())
      if (std::string name = RecordName(v); !name.empty()) return Spaced(k) + " " + name;
  return "";
}

ConsoleRoutes ApprovalRoutes(ApprovalPagesDeps deps) {
  auto d = std::make_shared<ApprovalPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/approvals", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) { return HandleList(*d, r, p); });
  });
  routes.prefix.emplace_back(std::string(kApprovalPagePrefix), [d](const http::Request& r) {
    std::string id = r.path.substr(kApprovalPagePrefix.size());
    return WithPerson(d->people, r, [&](const Person& p) {
      if (id.empty() || id.size() > 64 || id.find('/') != std::string::npos)
        return Message(404, "Not found", "There is no such page.", &p);
      return HandleApproval(*d, r, p, id);
    });
  });
  return routes;
}

}  // namespace crmd::console
