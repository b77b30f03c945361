#pragma once
// The authorization server's HTML pages: login, consent and error. Plain HTML with no
// scripts or inline styles (the Content-Security-Policy set by http::Response::Html
// forbids them); every value from a client or a person is HTML-escaped.
// Pure functions; thread-safe.
#include <string>
#include <string_view>
#include <vector>

namespace crmd::auth {

std::string HtmlEscape(std::string_view text);
// A short human description of a scope ("contacts:read" → "Read contacts").
std::string DescribeScope(std::string_view scope);

struct LoginPage {
  std::string client_name;  // who asks
  std::string request;      // pending authorization request handle (hidden field)
  std::string csrf_token;   // hidden field
  std::string email;        // pre-filled after a failed attempt
  std::string error;        // shown above the form when set
};
std::string RenderLoginPage(const LoginPage& page);

struct ConsentPage {
  std::string client_name;
  std::string client_id;
  std::string redirect_host;  // where the person will be sent
  std::string user_email;     // who is signed in
  std::string request;
  std::string csrf_token;
  std::vector<std::string> scopes;  // each gets a checkbox, checked
};
std::string RenderConsentPage(const ConsentPage& page);

std::string RenderErrorPage(std::string_view title, std::string_view message);

}  // namespace crmd::auth
