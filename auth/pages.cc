#include "auth/pages.h"

#include <map>

#include "src/core/text.h"

namespace crmd::auth {
namespace {

std::string Document(std::string_view title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         // same-origin, not no-referrer: under no-referrer browsers send "Origin: null"
         // with the page's own form POSTs, which the Origin check refuses; same-origin
         // still tells the client's redirect URI nothing.
         "<meta name=\"referrer\" content=\"same-origin\">\n<title>" +
         HtmlEscape(title) + "</title>\n</head>\n<body>\n<main>\n" + body +
         "</main>\n</body>\n</html>\n";
}

std::string Hidden(std::string_view name, std::string_view value) {
  return "<input type=\"hidden\" name=\"" + HtmlEscape(name) + "\" value=\"" + HtmlEscape(value) +
         "\">\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) { return text::HtmlEscape(text); }

std::string DescribeScope(std::string_view scope) {
  static const std::map<std::string_view, std::string_view> kVerbs = {
      {"read", "Read"},
      {"write", "Create and change"},
      {"delete", "Delete"},
      {"activate", "Activate and pause"}};
  size_t colon = scope.find(':');
  if (colon == std::string_view::npos) return std::string(scope);
  auto verb = kVerbs.find(scope.substr(colon + 1));
  std::string area(scope.substr(0, colon));
  if (verb == kVerbs.end()) return std::string(scope);
  if (area == "settings" || area == "reports") area = "CRM " + area;
  return std::string(verb->second) + " " + area;
}

std::string RenderLoginPage(const LoginPage& p) {
  std::string body = "<h1>Sign in</h1>\n<p>" + HtmlEscape(p.client_name) +
                     " wants to access your CRM. Sign in to continue.</p>\n";
  if (!p.error.empty())
    body += "<p role=\"alert\"><strong>" + HtmlEscape(p.error) + "</strong></p>\n";
  body += "<form method=\"post\" action=\"/oauth/login\">\n" + Hidden("request", p.request) +
          Hidden("csrf_token", p.csrf_token) +
          "<p><label>Email<br><input type=\"email\" name=\"email\" autocomplete=\"username\" "
          "required value=\"" +
          HtmlEscape(p.email) +
          "\"></label></p>\n"
          "<p><label>Password<br><input type=\"password\" name=\"password\" "
          "autocomplete=\"current-password\" required></label></p>\n"
          "<p><button type=\"submit\">Sign in</button></p>\n</form>\n";
  return Document("Sign in", body);
}

std::string RenderConsentPage(const ConsentPage& p) {
  std::string body =
      "<h1>Allow access?</h1>\n<p><strong>" + HtmlEscape(p.client_name) + "</strong>";
  if (p.client_name != p.client_id)
    body += " (client <code>" + HtmlEscape(p.client_id) + "</code>)";
  body += " asks for access to your CRM as <strong>" + HtmlEscape(p.user_email) +
          "</strong>. After you decide you will be sent to <strong>" + HtmlEscape(p.redirect_host) +
          "</strong>.</p>\n<form method=\"post\" action=\"/oauth/consent\">\n" +
          Hidden("request", p.request) + Hidden("csrf_token", p.csrf_token) +
          "<fieldset>\n<legend>It will be able to:</legend>\n";
  for (const auto& s : p.scopes) {
    body += "<p><label><input type=\"checkbox\" name=\"scope\" value=\"" + HtmlEscape(s) +
            "\" checked> " + HtmlEscape(DescribeScope(s)) + " <code>" + HtmlEscape(s) +
            "</code></label></p>\n";
  }
  body +=
      "</fieldset>\n<p>Uncheck anything you do not want to allow.</p>\n"
      "<p><button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\n"
      "<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></p>\n</form>\n";
  return Document("Allow access?", body);
}

std::string RenderErrorPage(std::string_view title, std::string_view message) {
  return Document(title,
                  "<h1>" + HtmlEscape(title) + "</h1>\n<p>" + HtmlEscape(message) + "</p>\n");
}

}  // namespace crmd::auth
