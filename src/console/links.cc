#include "src/console/links.h"

#include <spdlog/spdlog.h>

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

http::Response Unsubscribe(const LinkDeps& d, const http::Request& req) {
  std::string token = TokenAfter(req, kUnsubscribePrefix);
  auto claims = d.tokens->Verify(token, mail::kUnsubscribePurpose);
  if (!claims) return BadLink(claims.error());
  if (req.method == "GET" || req.method == "HEAD") {
    // Never unsubscribe on GET: link scanners and previews follow links.
    return Page(
        200, "Unsubscribe",
        "<p>Stop receiving these emails" +
            (d.business_name.empty() ? std::string()
                                     : " from " + mail::HtmlEscape(d.business_name)) +
            "?</p><form method=\"post\"><button type=\"submit\">Unsubscribe</button></form>");
  }
  if (req.method != "POST") {
    http::Response r = Page(405, "Method not allowed", "<p>Use the button on the page.</p>");
    r.Set("Allow", "GET, HEAD, POST");
    return r;
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
  if (claims && claims->ref > 0) (void)d.delivery->Clicked(claims->contact_id, claims->ref);
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
  auto confirmed = d.contacts->ConfirmOptIn(claims->contact_id, req.request_id);
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
