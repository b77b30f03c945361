#include "src/console/campaign_actions.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "src/console/confirm_flow.h"

namespace crmd::console {
namespace {

using nlohmann::json;

std::string ActionStr(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string ActionNum(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer()
             ? std::to_string(j[key].get<int64_t>())
             : "";
}

std::string CampaignViewPath(int64_t id) {
  return "/console/campaigns/view?id=" + std::to_string(id);
}

// The facts of an activate_campaign or resend_campaign preview, worded for a person.
ViewList CampaignPreviewFacts(const json& preview) {
  std::vector<std::pair<std::string, std::string>> rows;
  const json& k = preview.contains("campaign") ? preview["campaign"] : json::object();
  rows.emplace_back("Campaign", ActionStr(k, "name"));
  rows.emplace_back("Subject", ActionStr(k, "subject"));
  rows.emplace_back("Status now", ActionStr(k, "status"));
  rows.emplace_back("Status after", ActionStr(preview, "new_status"));
  if (preview.contains("recipients")) {
    rows.emplace_back("Undelivered recipients sent again", ActionNum(preview, "recipients"));
    rows.emplace_back("Send round", ActionNum(preview, "round"));
  }
  if (preview.contains("audience_size")) {
    rows.emplace_back("Recipients", ActionNum(preview, "audience_size"));
    rows.emplace_back("Of them suppressed (skipped at their turn)",
                      ActionNum(preview, "suppressed_recipients"));
  }
  if (preview.contains("sender")) {
    const std::string name = ActionStr(preview["sender"], "name");
    const std::string email = ActionStr(preview["sender"], "email");
    rows.emplace_back("From", name.empty() ? email : name + " <" + email + ">");
  }
  if (preview.contains("schedule"))
    rows.emplace_back("When", ActionStr(preview["schedule"], "mode") == "scheduled"
                                  ? "at " + ActionStr(preview["schedule"], "send_at")
                                  : "as soon as you confirm");
  if (preview.contains("sample_message")) {
    const json& m = preview["sample_message"];
    rows.emplace_back("The first message goes to",
                      ActionStr(m.value("to", json::object()), "email"));
    rows.emplace_back("Its subject", ActionStr(m, "subject"));
  }
  ViewList out;
  for (auto& [label, value] : rows)
    if (!value.empty()) out.emplace_back(ViewMap{{"label", label}, {"value", value}});
  return out;
}

// The preview's pre-send checks (issue 50 section 3), as the service answers them.
ViewList PresendChecks(const json& preview) {
  ViewList out;
  if (!preview.contains("checks") || !preview["checks"].is_array()) return out;
  for (const json& c : preview["checks"])
    out.emplace_back(ViewMap{{"severity", ActionStr(c, "severity")},
                             {"message", ActionStr(c, "message")},
                             {"has_detail", !ActionStr(c, "detail").empty()},
                             {"detail", ActionStr(c, "detail")}});
  return out;
}

struct CampaignConfirmView {
  int64_t id = 0;
  std::string action;  // activate_campaign | resend_campaign
  json reply;          // the confirmation service's confirmation_required answer
  std::string error, waiting;
  int status = 200;
};

http::Response CampaignConfirmPage(const Person& p, const CampaignConfirmView& v) {
  const json& preview = v.reply.contains("preview") ? v.reply["preview"] : json::object();
  const json& approval = v.reply.contains("approval") ? v.reply["approval"] : json::object();
  const bool resend = v.action == "resend_campaign";
  const std::string token = ActionStr(v.reply, "confirmation_token");
  ViewList checks = PresendChecks(preview);
  ViewMap ctx{
      {"id", std::to_string(v.id)},
      {"lead", resend ? "Send the campaign again to the recipients it did not reach?"
                      : "Send this campaign? Check what will happen, then confirm."},
      {"facts", CampaignPreviewFacts(preview)},
      {"has_checks", !checks.empty()},
      {"checks", std::move(checks)},
      {"has_token", !token.empty()},
      {"token", token},
      {"approval_id", ActionStr(approval, "id")},
      {"approval_required", v.reply.value("approval_required", false)},
      {"confirm_label", resend ? "Confirm: resend" : "Confirm: send"},
      {"expires", "This preview can be confirmed until " + ActionStr(v.reply, "expires_at") + "."},
      {"csrf_token", p.csrf_token}};
  if (!v.error.empty()) ctx.emplace("error", v.error);
  if (!v.waiting.empty()) {
    ctx.emplace("waiting", v.waiting);
    ctx.emplace("approval_url", "/console/approvals/" + ActionStr(approval, "id"));
  }
  return RenderPage(v.status, resend ? "Resend the undelivered" : "Activate the campaign",
                    "campaign_confirm.mustache", ctx, ChromeFor(p, "campaigns"));
}

http::Response CampaignBlockedPage(const Person& p, int64_t id, const Error& e,
                                   const json& details) {
  ViewList blockers;
  if (details.is_object() && details.contains("blockers"))
    for (const json& b : details["blockers"]) blockers.emplace_back(ActionStr(b, "reason"));
  const json preview = details.is_object() ? details.value("preview", json::object()) : json();
  ViewList checks = PresendChecks(preview);
  ViewMap ctx{{"id", std::to_string(id)},
              {"error", e.message},
              {"lead", "This campaign cannot be sent as it is."},
              {"facts", CampaignPreviewFacts(preview)},
              {"has_blockers", !blockers.empty()},
              {"blockers", std::move(blockers)},
              {"has_checks", !checks.empty()},
              {"checks", std::move(checks)},
              {"has_token", false},
              {"csrf_token", p.csrf_token}};
  return RenderPage(409, "Not sent", "campaign_confirm.mustache", ctx, ChromeFor(p, "campaigns"));
}

http::Response AskCampaign(const CampaignPagesDeps& d, const http::Request& req, const Person& p,
                           int64_t id, const std::string& action) {
  auto out = d.confirmations->Request(ConsoleActor(p, req), action, json{{"id", id}});
  if (!out.result) {
    if (out.result.error().code == Errc::kDependencyBlocked)
      return CampaignBlockedPage(p, id, out.result.error(), out.error_details);
    return ServiceErrorPage(out.result.error(), ChromeFor(p, "campaigns"), CampaignViewPath(id));
  }
  return CampaignConfirmPage(p, {.id = id, .action = action, .reply = *out.result});
}

// The reply to show again while the approval waits: the approval's own preview.
json CampaignPendingReply(const governance::ApprovalInfo& a, const std::string& token) {
  return json{{"preview", a.preview},
              {"confirmation_token", token},
              {"approval_required", true},
              {"approval", {{"id", a.id}}},
              {"expires_at", FormatRfc3339(a.expires_at)}};
}

// The person's approval of their own console action when the policy asks for one
// (confirm_flow.h). nullopt when the confirmation may go ahead; otherwise the page to show.
std::optional<http::Response> ApproveCampaign(const CampaignPagesDeps& d, const http::Request& req,
                                              const Person& p, int64_t id,
                                              const std::string& approval_id,
                                              const std::string& token) {
  const PageChrome chrome = ChromeFor(p, "campaigns");
  auto st = ApproveOwnAction(*d.confirmations, req, p, approval_id);
  if (st) return std::nullopt;
  if (st.error().code != Errc::kPermissionDenied)
    return ServiceErrorPage(st.error(), chrome, CampaignViewPath(id));
  auto a = d.confirmations->GetApproval(approval_id);
  if (!a) return ServiceErrorPage(a.error(), chrome, CampaignViewPath(id));
  return CampaignConfirmPage(
      p, {.id = id,
          .action = a->action,
          .reply = CampaignPendingReply(*a, token),
          .waiting = "The approval policy needs an administrator to approve "
                     "this; ask one to open the approval page, then confirm here "
                     "again.",
          .status = 202});
}

http::Response ConfirmCampaign(const CampaignPagesDeps& d, const http::Request& req,
                               const Person& p, int64_t id, const FormFields& in) {
  const PageChrome chrome = ChromeFor(p, "campaigns");
  const std::string token = FieldValue(in, "confirmation_token");
  const std::string approval_id = FieldValue(in, "approval_id");
  if (!approval_id.empty())
    if (auto page = ApproveCampaign(d, req, p, id, approval_id, token)) return *page;
  auto out = d.confirmations->Confirm(ConsoleActor(p, req), p.scopes, token);
  if (out.result)
    return SeeOther(CampaignViewPath(id) + "&done=" + out.result->value("action", std::string()));
  const Error& e = out.result.error();
  switch (e.code) {
    case Errc::kStalePreview:
      if (out.error_details.is_object() && out.error_details.contains("confirmation_token"))
        return CampaignConfirmPage(
            p, {.id = id,
                .action = out.error_details.value("action", "activate_campaign"),
                .reply = out.error_details,
                .error = "The campaign changed since the preview: check it again.",
                .status = 409});
      return MessagePage(409, "Changed", e.message, chrome, CampaignViewPath(id), "Back");
    case Errc::kDependencyBlocked:
      return CampaignBlockedPage(p, id, e, out.error_details);
    case Errc::kApprovalDenied:
      return MessagePage(403, "Denied", "An administrator denied this action.", chrome,
                         CampaignViewPath(id), "Back to the campaign");
    case Errc::kConfirmationInvalid:
    case Errc::kConfirmationExpired:
      return MessagePage(409, "Not confirmed",
                         "This preview can no longer be confirmed (used, expired or not "
                         "yours). Start again from the campaign.",
                         chrome, CampaignViewPath(id), "Back to the campaign");
    case Errc::kPermissionDenied:
      return MessagePage(403, "Not allowed", e.message, chrome, CampaignViewPath(id), "Back");
    default:
      return ServiceErrorPage(e, chrome, CampaignViewPath(id));
  }
}

// The Send test form: the addresses typed, by comma or space, to the test sends service (the
// same rules as the tools' test_recipients; its refusals name the field or the setting).
http::Response SendTest(const CampaignPagesDeps& d, const http::Request& req, const Person& p,
                        int64_t id, const std::string& typed) {
  const PageChrome chrome = ChromeFor(p, "campaigns");
  if (!d.test_sends)
    return MessagePage(404, "Not offered", "Test sends are not set up on this server.", chrome,
                       CampaignViewPath(id), "Back to the campaign");
  json recipients = json::array();
  std::string word;
  for (char ch : typed + ",") {
    if (ch == ',' || ch == ';' || ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
      if (!word.empty()) recipients.push_back(std::exchange(word, ""));
    } else {
      word.push_back(ch);
    }
  }
  auto sent = d.test_sends->Send(ConsoleActor(p, req), id, recipients, nullptr);
  if (!sent) return ServiceErrorPage(sent.error(), chrome, CampaignViewPath(id));
  std::string to;
  for (const auto& a : sent->value("sent_to", json::array()))
    to += (to.empty() ? "" : ", ") + a.get<std::string>();
  return MessagePage(200, "Test sent",
                     "Sent to " + to + ", with [Test] before the subject. Nothing else changed.",
                     chrome, CampaignViewPath(id), "Back to the campaign");
}

}  // namespace

http::Response PostCampaign(const CampaignPagesDeps& d, const http::Request& req, const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "campaigns");
  if (!p.can_edit)
    return MessagePage(403, "Editors only", "Your role lets you read campaigns, not send them.",
                       chrome, "/console/campaigns", "Campaigns");
  auto id = IdField(in, "id");
  if (!id)
    return MessagePage(400, "Bad request", "Use the buttons on the campaign's page.", chrome);
  const std::string action = FieldValue(in, "action");
  if (action == "activate") return AskCampaign(d, req, p, *id, "activate_campaign");
  if (action == "resend") return AskCampaign(d, req, p, *id, "resend_campaign");
  if (action == "confirm") return ConfirmCampaign(d, req, p, *id, in);
  if (action == "test") return SendTest(d, req, p, *id, FieldValue(in, "test_recipients"));
  if (action == "pause") {
    auto revision = IdField(in, "revision");
    auto paused = d.campaigns->Pause(ConsoleActor(p, req), *id, revision.value_or(0));
    if (!paused) return ServiceErrorPage(paused.error(), chrome, CampaignViewPath(*id));
    return SeeOther(CampaignViewPath(*id) + "&done=pause");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the campaign's page.", chrome,
                     CampaignViewPath(*id), "Back to the campaign");
}

}  // namespace crmd::console
