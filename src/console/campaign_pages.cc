#include "src/console/campaign_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/console/campaign_actions.h"
#include "src/console/campaign_report_view.h"
#include "src/mail/message.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr int kCampaignsPerPage = 50;
constexpr int kSendingRefreshS = 10;
// The preview's own policy, as the template preview's (templates_pages.cc).
constexpr const char* kMessagePreviewCsp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; sandbox; "
    "frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

std::string CampaignTimeText(const std::optional<int64_t>& t) {
  return t ? FormatRfc3339(*t) : std::string("—");
}

int64_t CampaignInt(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

ViewList CampaignStatusOptions(const std::string& current) {
  ViewList out{ViewMap{{"value", ""}, {"label", "Any"}, {"selected", current.empty()}}};
  for (const char* s : {"draft", "scheduled", "sending", "paused", "sent", "cancelled"})
    out.emplace_back(ViewMap{{"value", s}, {"label", s}, {"selected", current == s}});
  return out;
}

ViewMap CampaignRow(const CampaignPagesDeps& d, const marketing::Campaign& k) {
  json outcomes = json::object();
  if (auto r = d.reports->CampaignOutcomes(k.id)) outcomes = std::move(*r);
  const int64_t queued = CampaignInt(outcomes, "queued");
  const int64_t done = queued - CampaignInt(outcomes, "pending");
  return ViewMap{{"id", std::to_string(k.id)},
                 {"name", k.name},
                 {"subject", k.subject},
                 {"status", marketing::ToString(k.status)},
                 {"has_recipients", queued > 0},
                 {"queued", std::to_string(queued)},
                 {"done", std::to_string(done)},
                 {"percent", std::to_string(queued > 0 ? done * 100 / queued : 0)},
                 {"opened", std::to_string(CampaignInt(outcomes, "opened"))},
                 {"clicked", std::to_string(CampaignInt(outcomes, "clicked"))},
                 {"updated_at", FormatRfc3339(k.updated_at)}};
}

http::Response CampaignListPage(const CampaignPagesDeps& d, const http::Request& req,
                                const Person& p) {
  const PageChrome chrome = ChromeFor(p, "campaigns");
  auto q = http::ParseForm(req.query);
  const std::string status_text = FieldValue(q, "status");
  std::optional<marketing::CampaignStatus> status;
  if (!status_text.empty()) {
    status = marketing::ParseCampaignStatus(status_text);
    if (!status) return MessagePage(400, "Bad request", "Choose a status from the list.", chrome);
  }
  auto page = d.campaigns->List(status, FieldValue(q, "cursor"), kCampaignsPerPage);
  if (!page) return ServiceErrorPage(page.error(), chrome, "/console/campaigns");
  ViewList rows;
  for (const auto& k : page->items) rows.push_back(CampaignRow(d, k));
  ViewMap ctx{{"rows", std::move(rows)},
              {"has_rows", !page->items.empty()},
              {"filtered", status.has_value()},
              {"statuses", CampaignStatusOptions(status_text)}};
  if (page->next_cursor)
    ctx.emplace("next", "/console/campaigns?status=" + http::PercentEncode(status_text) +
                            "&cursor=" + http::PercentEncode(*page->next_cursor));
  return RenderPage(200, "Campaigns", "campaigns.mustache", ctx, chrome);
}

// "lists News, #7; not tags bounced" (a group that is gone by its id).
std::string CampaignAudienceText(const CampaignPagesDeps& d, const marketing::Audience& a) {
  auto names = [](crm::GroupService* groups, const char* what, const std::vector<int64_t>& ids) {
    std::string s;
    for (int64_t id : ids) {
      std::string name = "#" + std::to_string(id);
      if (groups)
        if (auto g = groups->Get(crm::Ref{id})) name = g->name;
      s += (s.empty() ? std::string(what) + " " : ", ") + name;
    }
    return s;
  };
  std::string out;
  for (const std::string& part :
       {names(d.lists, "lists", a.lists), names(d.tags, "tags", a.tags),
        names(d.lists, "not lists", a.exclude_lists), names(d.tags, "not tags", a.exclude_tags)})
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  return out.empty() ? "none yet" : out;
}

ViewList CampaignFacts(const CampaignPagesDeps& d, const marketing::Campaign& k) {
  std::vector<std::pair<std::string, std::string>> facts = {
      {"Status", marketing::ToString(k.status)},
      {"Subject", k.subject.empty() ? "(none yet)" : k.subject},
      {"From",
       k.from_email.empty()
           ? "the site's sender"
           : (k.from_name.empty() ? k.from_email : k.from_name + " <" + k.from_email + ">")},
      {"Audience", CampaignAudienceText(d, k.audience)},
      {"Template", k.template_id
                       ? (k.layout ? k.layout->name : "#" + std::to_string(*k.template_id))
                       : "none (the body as it is)"},
      {"Send at", k.send_at ? FormatRfc3339(*k.send_at) : "when activated"},
      {"Recipients recorded", std::to_string(k.audience_size)},
      {"Tracking", std::string(k.track_opens ? "opens" : "no opens") +
                       (k.track_clicks ? ", clicks" : ", no clicks")},
      {"Activated", CampaignTimeText(k.activated_at)},
      {"Finished", CampaignTimeText(k.finished_at)},
      {"Revision", std::to_string(k.revision)}};
  ViewList out;
  for (auto& [label, value] : facts) out.emplace_back(ViewMap{{"label", label}, {"value", value}});
  return out;
}

std::string CampaignNotice(const std::string& done) {
  if (done == "activate_campaign") return "Activated: the campaign is on its way.";
  if (done == "resend_campaign") return "The undelivered recipients are queued again.";
  if (done == "pause") return "Paused: nothing more is sent until you resume.";
  return "";
}

void AddCampaignActions(ViewMap& ctx, const marketing::Campaign& k, int64_t undelivered) {
  using S = marketing::CampaignStatus;
  ctx.emplace("can_activate", marketing::CanActivate(k.status));
  ctx.emplace("activate_label", k.status == S::kPaused ? "Resume" : "Activate");
  ctx.emplace("can_pause", k.status == S::kScheduled || k.status == S::kSending);
  ctx.emplace("can_resend", undelivered > 0 && (k.status == S::kSent || k.status == S::kPaused ||
                                                k.status == S::kSending));
  ctx.emplace("undelivered", std::to_string(undelivered));
}

http::Response CampaignPage(const CampaignPagesDeps& d, const http::Request& req, const Person& p) {
  PageChrome chrome = ChromeFor(p, "campaigns");
  auto q = http::ParseForm(req.query);
  auto id = IdField(q, "id");
  if (!id) return NotFoundPage(chrome);
  auto k = d.campaigns->Get(*id);
  if (!k) return ServiceErrorPage(k.error(), chrome, "/console/campaigns");
  auto report = d.reports->CampaignReport(*id);
  if (!report) return ServiceErrorPage(report.error(), chrome, "/console/campaigns");
  const std::string contact = FieldValue(q, "contact");
  ViewMap ctx{
      {"id", std::to_string(k->id)},
      {"revision", std::to_string(k->revision)},
      {"facts", CampaignFacts(d, *k)},
      {"contact", contact},
      {"contact_q", http::PercentEncode(contact)},
      {"preview_for", contact.empty() ? std::string("the first contact of the book") : contact},
      {"can_edit", p.can_edit},
      {"can_test", p.can_edit && d.test_sends != nullptr},
      {"csrf_token", p.csrf_token}};
  AddCampaignActions(ctx, *k, CampaignInt((*report)["totals"], "undelivered"));
  if (auto notice = CampaignNotice(FieldValue(q, "done")); !notice.empty())
    ctx.emplace("notice", notice);
  if (k->activated_at) {
    const bool sending = k->status == marketing::CampaignStatus::kSending;
    auto activity = d.reports->CampaignActivityReport(*id, sending ? d.clock->NowUnix() : 0);
    if (!activity) return InternalError(activity.error(), chrome);
    AddReportView(ctx, *report, *activity, k->track_clicks);
    if (sending) {
      chrome.refresh_s = kSendingRefreshS;
      ctx.emplace("sending", true);
      ctx.emplace("refresh", std::to_string(kSendingRefreshS));
    }
  }
  http::Response r = RenderPage(200, "Campaign: " + k->name, "campaign.mustache", ctx, chrome);
  r.Set("Content-Security-Policy", std::string(kConsoleCsp) + "; frame-src 'self'");
  return r;
}

http::Response CampaignPreviewAnswer(int status, std::string html) {
  http::Response r = http::Response::Html(status, std::move(html));
  r.Set("Content-Security-Policy", kMessagePreviewCsp);
  r.Set("X-Frame-Options", "SAMEORIGIN");
  r.Set("Referrer-Policy", "no-referrer");
  r.Set("Cache-Control", "no-store");
  return r;
}

// The contact a preview is for: `email`'s, else the first of the book; "someone" when
// the book is empty.
Result<marketing::MailRecipient> CampaignPreviewRecipient(const CampaignPagesDeps& d,
                                                          const std::string& email) {
  std::optional<crm::Contact> c;
  if (!email.empty()) {
    auto found = d.contacts->GetByEmail(email);
    if (!found) return Fail(found.error());
    c = std::move(*found);
  } else {
    auto page = d.contacts->List(crm::ContactFilter{}, "", 1);
    if (!page) return Fail(page.error());
    if (!page->items.empty()) c = std::move(page->items.front());
  }
  if (!c) return marketing::MailRecipient{.email = "someone@example.com"};
  return marketing::MailRecipient{.contact_id = 0,  // its links act for nobody
                                  .email = c->email,
                                  .first_name = c->first_name,
                                  .last_name = c->last_name,
                                  .phone = c->phone,
                                  .custom_fields_json = c->custom_fields.dump()};
}

http::Response CampaignMessagePreview(const CampaignPagesDeps& d, const http::Request& req) {
  auto q = http::ParseForm(req.query);
  auto id = IdField(q, "id");
  if (!id) return CampaignPreviewAnswer(404, "<p>No such campaign.</p>");
  auto k = d.campaigns->Get(*id);
  if (!k) return CampaignPreviewAnswer(404, "<p>No such campaign.</p>");
  const std::string email = FieldValue(q, "contact");
  auto to = CampaignPreviewRecipient(d, email);
  if (!to) {
    if (to.error().code == Errc::kNotFound)
      return CampaignPreviewAnswer(
          404, "<p>No contact has the address " + mail::HtmlEscape(email) + ".</p>");
    return CampaignPreviewAnswer(500, "<p>The preview could not be made.</p>");
  }
  k->track_opens = false;  // no tracking image in a preview: nobody opened anything
  auto templates = marketing::CampaignTemplates::Parse(*k);
  if (!templates)
    return CampaignPreviewAnswer(422, "<p>This campaign cannot be rendered: " +
                                          mail::HtmlEscape(templates.error().message) + "</p>");
  marketing::MailContext ctx = *d.mail;
  if (auto doc = d.settings->Get()) marketing::ApplySettings(ctx, doc->document);
  auto m = templates->Build(*to, k->send_round, ctx);
  if (!m)
    return CampaignPreviewAnswer(422, "<p>This campaign cannot be rendered: " +
                                          mail::HtmlEscape(m.error().message) + "</p>");
  return CampaignPreviewAnswer(200, m->html);
}

template <typename F>
http::Handler CampaignHandler(std::shared_ptr<CampaignPagesDeps> d, const char* methods, F f) {
  return [d, methods, f](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, methods, ChromeFor(p, "campaigns"))) return *refused;
      return f(*d, r, p);
    });
  };
}

}  // namespace

ConsoleRoutes CampaignRoutes(CampaignPagesDeps deps) {
  auto d = std::make_shared<CampaignPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/campaigns",
                            CampaignHandler(d, "GET, HEAD", CampaignListPage));
  routes.exact.emplace_back(
      "/console/campaigns/view",
      CampaignHandler(d, "GET, HEAD, POST",
                      [](const CampaignPagesDeps& d, const http::Request& r, const Person& p) {
                        return r.method == "POST" ? PostCampaign(d, r, p) : CampaignPage(d, r, p);
                      }));
  routes.exact.emplace_back(
      "/console/campaigns/preview",
      CampaignHandler(d, "GET, HEAD",
                      [](const CampaignPagesDeps& d, const http::Request& r, const Person&) {
                        return CampaignMessagePreview(d, r);
                      }));
  return routes;
}

}  // namespace crmd::console
