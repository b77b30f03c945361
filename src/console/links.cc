#include "src/console/links.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "src/core/log.h"
#include "src/mail/message.h"
#include "src/marketing/campaign_render.h"

namespace crmd::console {
namespace {

// A GIF89a of one transparent pixel.
constexpr unsigned char kPixel[] = {
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xff, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b};

http::Response Page(int status, const std::string& title, const std::string& body_html) {
  std::string html =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<meta name=\"robots\" content=\"noindex\"><title>" +
      mail::HtmlEscape(title) +
      "</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;"
      "padding:0 1rem;color:#222}button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}"
      ".list{display:flex;gap:.8rem;align-items:flex-start;margin:1rem 0}"
      ".list input{width:1.3rem;height:1.3rem;margin:.2rem 0}.list p{margin:.2rem 0;color:#555}"
      ".actions{display:flex;gap:1rem;flex-wrap:wrap;margin-top:1.5rem}"
      "</style></head><body><h1>" +
      mail::HtmlEscape(title) + "</h1>" + body_html + "</body></html>";
  http::Response r = http::Response::Html(status, std::move(html));
  // The page's address holds the token: no Referer at all, not even to this site.
  r.Set("Referrer-Policy", "no-referrer");
  r.Set("Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'");
  return r;
}

http::Response BadLink(const Error& e) {
  bool expired = e.code == Errc::kConfirmationExpired;
  return Page(expired ? 410 : 400, expired ? "This link has expired" : "This link is not valid",
              "<p>The link may have been copied incompletely. Use the link in the most recent "
              "message you received.</p>");
}

// The token: the path segment after `prefix`, without any query.
std::string TokenAfter(const http::Request& req, std::string_view prefix) {
  std::string token = req.path.substr(prefix.size());
  if (token.find('/') != std::string::npos) return {};
  return token;
}

// The preference page: the contact's public lists, each with a switch, and "Unsubscribe
// from everything". The form carries a CSRF value bound to the link token (a token of its
// own purpose whose MAC covers the link token), so that a page elsewhere cannot post it.
http::Response PreferencePage(const LinkDeps& d, const mail::LinkClaims& claims,
                              const std::string& token, const std::string& notice) {
  std::vector<crm::ListPreference> lists;
  if (d.preferences) {
    auto got = d.preferences->Get(claims.contact_id);
    if (!got && got.error().code == Errc::kNotFound)
      return Page(200, "You are unsubscribed", "<p>This address is no longer on our list.</p>");
    if (got) lists = std::move(*got);
  }
  std::string csrf = d.tokens->Issue(claims.contact_id, kPreferencesCsrfPurpose,
                                     kPreferencesCsrfTtlSeconds, claims.ref, token);
  std::string from =
      d.business_name.empty() ? std::string() : " from " + mail::HtmlEscape(d.business_name);
  std::string body = notice.empty() ? std::string()
                                    : "<p role=\"status\" id=\"notice\"><strong>" +
                                          mail::HtmlEscape(notice) + "</strong></p>";
  body += "<form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"" +
          mail::HtmlEscape(csrf) + "\">";
  if (lists.empty()) {
    body += "<p>Stop receiving these emails" + from + "?</p>";
  } else {
    body += "<p>Choose the emails you receive" + from + ":</p>";
    for (const auto& l : lists) {
      std::string id = std::to_string(l.list_id);
      body += "<input type=\"hidden\" name=\"shown\" value=\"" + id +
              "\"><div class=\"list\"><input type=\"checkbox\" role=\"switch\" name=\"list\" "
              "id=\"list-" +
              id + "\" value=\"" + id + "\"" + (l.subscribed ? " checked" : "") +
              "><div><label for=\"list-" + id + "\"><strong>" + mail::HtmlEscape(l.name) +
              "</strong></label>" +
              (l.description.empty() ? "" : "<p>" + mail::HtmlEscape(l.description) + "</p>") +
              "</div></div>";
    }
  }
  body += "<div class=\"actions\">";
  if (!lists.empty())
    body += "<button type=\"submit\" name=\"action\" value=\"save\">Save preferences</button>";
  body +=
      "<button type=\"submit\" name=\"action\" value=\"all\">Unsubscribe from "
      "everything</button></div></form>";
  if (d.history)
    body += "<form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"" +
            mail::HtmlEscape(csrf) +
            "\"><p>Everything we keep about you, as a JSON file:</p><div class=\"actions\">"
            "<button type=\"submit\" name=\"action\" value=\"download\">Download my "
            "data</button></div></form>";
  return Page(200, lists.empty() ? "Unsubscribe" : "Your email preferences", body);
}

// Applies the switches of the page: a list switched off is left, one switched on is
// joined again (only lists that were on the page: "shown").
http::Response SavePreferences(const LinkDeps& d, const mail::LinkClaims& claims,
                               const std::string& token, const http::Request& req,
                               const std::vector<std::pair<std::string, std::string>>& form) {
  std::vector<crm::ListPreferenceChoice> choices;
  for (const auto& [name, value] : form) {
    if (name != "shown") continue;
    int64_t id = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
    if (ec != std::errc() || end != value.data() + value.size()) continue;  // not a list id
    bool on = std::any_of(form.begin(), form.end(),
                          [&](const auto& f) { return f.first == "list" && f.second == value; });
    choices.push_back({.list_id = id, .subscribed = on});
  }
  governance::Actor actor{
      .kind = "system", .subject = "preference_page", .request_id = req.request_id};
  auto changed = d.preferences ? d.preferences->Set(actor, claims.contact_id, choices)
                               : Result<std::vector<crm::NamedRef>>{};
  if (!changed) {
    if (changed.error().code == Errc::kNotFound)
      return Page(200, "You are unsubscribed", "<p>This address is no longer on our list.</p>");
    spdlog::warn(R"("event":"preferences_failed","detail":"{}")",
                 JsonEscape(changed.error().message));
    return Page(503, "Please try again",
                "<p>We could not record this just now. Please try again in a minute.</p>");
  }
  spdlog::info(R"("event":"preferences_saved","contact_id":{},"changed":{})", claims.contact_id,
               changed->size());
  return PreferencePage(d, claims, token, "Your preferences are saved.");
}

// "Download my data": the contact's own export, as an attachment. Limited per contact and
// per client address, so that a leaked link cannot be used to load the database.
http::Response DownloadData(const LinkDeps& d, const mail::LinkClaims& claims,
                            const http::Request& req) {
  if (!d.history) return Page(404, "Not available", "<p>This page offers no download.</p>");
  if (d.download_limit) {
    int wait = d.download_limit("contact:" + std::to_string(claims.contact_id));
    if (wait == 0) wait = d.download_limit("ip:" + req.remote_ip);
    if (wait > 0) {
      http::Response r = Page(429, "Please wait a moment",
                              "<p>Your data was downloaded a short while ago. Please try again "
                              "in a minute.</p>");
      r.Set("Retry-After", std::to_string(wait));
      return r;
    }
  }
  auto doc = d.history->Export(claims.contact_id);
  if (!doc) {
    if (doc.error().code == Errc::kNotFound)
      return Page(200, "You are unsubscribed", "<p>This address is no longer on our list.</p>");
    spdlog::warn(R"("event":"data_download_failed","detail":"{}")",
                 JsonEscape(doc.error().message));
    return Page(503, "Please try again", "<p>We could not prepare this just now.</p>");
  }
  spdlog::info(R"("event":"data_downloaded","contact_id":{})", claims.contact_id);
  http::Response r = http::Response::Text(200, doc->dump(2) + "\n", "application/json");
  r.Set("Content-Disposition", "attachment; filename=\"my-data.json\"");
  r.Set("Cache-Control", "no-store");
  r.Set("Referrer-Policy", "no-referrer");
  r.Set("X-Content-Type-Options", "nosniff");
  return r;
}

http::Response Unsubscribe(const LinkDeps& d, const http::Request& req) {
  std::string token = TokenAfter(req, kUnsubscribePrefix);
  auto claims = d.tokens->Verify(token, mail::kUnsubscribePurpose);
  if (!claims) return BadLink(claims.error());
  if (req.method == "GET" || req.method == "HEAD") {
    // Never unsubscribe on GET: link scanners and previews follow links.
    return PreferencePage(d, *claims, token, "");
  }
  if (req.method != "POST") {
    http::Response r = Page(405, "Method not allowed", "<p>Use the button on the page.</p>");
    r.Set("Allow", "GET, HEAD, POST");
    return r;
  }
  auto form = http::ParseForm(req.body);
  // RFC 8058 one-click (a mail client's POST, no page): a global unsubscribe. Anything else
  // comes from the page and must carry its CSRF value.
  if (http::FormValue(form, "List-Unsubscribe") != "One-Click") {
    auto csrf = d.tokens->Verify(http::FormValue(form, "csrf").value_or(""),
                                 kPreferencesCsrfPurpose, token);
    if (!csrf || csrf->contact_id != claims->contact_id)
      return Page(403, "Please open the link again",
                  "<p>This form is out of date. Open the link in the email again and retry; "
                  "nothing was changed.</p>");
    if (http::FormValue(form, "action") == "download") return DownloadData(d, *claims, req);
    if (http::FormValue(form, "action") != "all")
      return SavePreferences(d, *claims, token, req, form);
  }
  auto done = d.delivery->Unsubscribe(claims->contact_id, claims->ref, req.request_id);
  if (!done) {
    if (done.error().code == Errc::kNotFound)
      return Page(200, "You are unsubscribed", "<p>This address is no longer on our list.</p>");
    spdlog::warn(R"("event":"unsubscribe_failed","detail":"{}")", JsonEscape(done.error().message));
    return Page(503, "Please try again",
                "<p>We could not record this just now. Please try again in a minute.</p>");
  }
  spdlog::info(R"("event":"unsubscribed","contact_id":{},"campaign_id":{})", claims->contact_id,
               claims->ref);
  return Page(200, "You are unsubscribed",
              "<p>" + mail::HtmlEscape(*done) + " will not receive these emails any more.</p>");
}

http::Response Open(const LinkDeps& d, const http::Request& req) {
  std::string token = TokenAfter(req, kOpenPrefix);
  auto claims = d.tokens->Verify(token, marketing::kOpenPurpose);
  if (claims && claims->ref > 0) (void)d.delivery->Opened(claims->contact_id, claims->ref);
  // Always the pixel: a broken image helps nobody.
  http::Response r = http::Response::Text(
      200, std::string(reinterpret_cast<const char*>(kPixel), sizeof kPixel), "image/gif");
  r.Set("Cache-Control", "no-store, private");
  return r;
}

http::Response Click(const LinkDeps& d, const http::Request& req) {
  std::string token = TokenAfter(req, kClickPrefix);
  auto url = http::FormValue(http::ParseForm(req.query), "u");
  if (!url) return Page(400, "This link is not valid", "<p>The link is incomplete.</p>");
  // The token binds the URL: only a target that was in the message is redirected to.
  auto claims = d.tokens->Verify(token, marketing::kClickPurpose, *url);
  if (!claims && claims.error().code != Errc::kConfirmationExpired) return BadLink(claims.error());
  if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
    return Page(400, "This link is not valid", "<p>The link is incomplete.</p>");
  if (claims && claims->ref > 0) (void)d.delivery->Clicked(claims->contact_id, claims->ref, *url);
  http::Response r = http::Response::Empty(302);
  r.Set("Location", *url);
  r.Set("Cache-Control", "no-store");
  r.Set("Referrer-Policy", "no-referrer");
  return r;
}

http::Response Confirm(const LinkDeps& d, const http::Request& req) {
  std::string token = TokenAfter(req, kConfirmPrefix);
  auto claims = d.tokens->Verify(token, mail::kConfirmPurpose);
  if (!claims) return BadLink(claims.error());
  if (req.method != "GET" && req.method != "POST" && req.method != "HEAD")
    return Page(405, "Method not allowed", "<p>Open the link in a browser.</p>");
  if (req.method != "POST") {
    // A button, so that a mail scanner following the link does not subscribe anyone.
    return Page(200, "Confirm your subscription",
                "<p>Please confirm that you want to receive these emails.</p>"
                "<form method=\"post\"><button type=\"submit\">Yes, subscribe me</button></form>");
  }
  // The person's own confirmation: it also lifts their address's suppression entry.
  auto confirmed =
      d.contacts->ConfirmOptIn(claims->contact_id, req.request_id,
                               {.ip_address = req.remote_ip,
                                .user_agent = std::string(req.Header("User-Agent").value_or(""))});
  if (!confirmed) {
    switch (confirmed.error().code) {
      case Errc::kNotFound:
        return Page(410, "This link has expired", "<p>This address is no longer on file.</p>");
      case Errc::kInvalidTransition:
      case Errc::kSuppressed:
        return Page(409, "This address cannot be subscribed here",
                    "<p>This address unsubscribed or could not be reached. Contact us to "
                    "subscribe again.</p>");
      default:
        spdlog::warn(R"("event":"confirm_failed","detail":"{}")",
                     JsonEscape(confirmed.error().detail.empty() ? confirmed.error().message
                                                                 : confirmed.error().detail));
        return Page(503, "Please try again", "<p>We could not record this just now.</p>");
    }
  }
  // Lists left on the preference page and asked for again through a form: joined now.
  governance::Actor actor{
      .kind = "system", .subject = "double_opt_in", .request_id = req.request_id};
  if (d.preferences)
    if (auto joined = d.preferences->ConfirmPending(actor, claims->contact_id); !joined)
      return Page(503, "Please try again", "<p>We could not record this just now.</p>");
  return Page(200, "You are subscribed", "<p>Thank you for confirming.</p>");
}

}  // namespace

std::vector<std::pair<std::string, http::Handler>> LinkRoutes(LinkDeps deps) {
  auto d = std::make_shared<LinkDeps>(std::move(deps));
  return {
      {std::string(kUnsubscribePrefix), [d](const http::Request& r) { return Unsubscribe(*d, r); }},
      {std::string(kOpenPrefix), [d](const http::Request& r) { return Open(*d, r); }},
      {std::string(kClickPrefix), [d](const http::Request& r) { return Click(*d, r); }},
      {std::string(kConfirmPrefix), [d](const http::Request& r) { return Confirm(*d, r); }},
  };
}

}  // namespace crmd::console
