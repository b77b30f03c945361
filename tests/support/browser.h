#pragma once
// A tiny browser for integration tests over TestServer: a cookie jar, redirects followed
// (except a redirect that leaves the server, i.e. to the OAuth client's redirect_uri, which
// is returned instead), and parsing of the first <form> on a page so tests fill and submit
// forms as a person would. Also the whole OAuth dance an MCP client performs
// (RunOAuthFlow), for other modules' tests that need a real access token.
//
// Not thread-safe: one Browser per test.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/test_server.h"

namespace crmd::testing {

struct FormInput {
  std::string tag;   // "input" or "button"
  std::string type;  // lower-cased; "text" when absent on an input, "submit" on a button
  std::string name;
  std::string value;
  bool checked = false;
};

struct Form {
  std::string action;  // absolute URL
  std::string method;  // "GET" or "POST"
  std::vector<FormInput> inputs;

  // The value of the first input named `name` (any type).
  std::optional<std::string> Value(const std::string& name) const;
  // Sets the first input named `name`; adds a text input when there is none.
  void Set(const std::string& name, const std::string& value);
  // Removes every input named `name` (e.g. to drop the CSRF token).
  void Remove(const std::string& name);
  // (Un)checks the checkbox with this name and value; false when there is none.
  bool SetChecked(const std::string& name, const std::string& value, bool checked);
  // Values of the checkboxes named `name` (checked or not).
  std::vector<std::string> Options(const std::string& name) const;
  // What a browser submits: named inputs except buttons, checkboxes/radios only when
  // checked, plus the clicked button (name=value) if given.
  std::vector<std::pair<std::string, std::string>> Fields(
      const std::optional<std::pair<std::string, std::string>>& button = std::nullopt) const;
};

// The first <form> in `html`; relative actions resolve against `page_url`.
std::optional<Form> ParseFirstForm(std::string_view html, std::string_view page_url);
// Decoded query parameters of a URL (first value of each name).
std::map<std::string, std::string> QueryParams(std::string_view url);
// The value of the first `name="<name>" value="..."` in `html` (a hidden input as the
// console writes them), or "" when there is none.
std::string PageHidden(std::string_view html, const std::string& name);
// The page's CSRF token (PageHidden of csrf_token).
inline std::string PageCsrf(std::string_view html) { return PageHidden(html, "csrf_token"); }
// application/x-www-form-urlencoded body.
std::string EncodeForm(const std::vector<std::pair<std::string, std::string>>& fields);

struct Page {
  int status = 0;
  std::string url;  // the URL that produced this response
  http::Headers headers;
  std::string body;
  // Set when a redirect left the server (the OAuth client's redirect_uri); not followed.
  std::optional<std::string> client_redirect;
  // Every Set-Cookie value received while producing this page (all hops).
  std::vector<std::string> set_cookies;

  std::optional<std::string> Header(std::string_view name) const;
  std::optional<Form> form() const { return ParseFirstForm(body, url); }
};

class Browser {
 public:
  explicit Browser(TestServer& server) : server_(server) {}

  Page Get(const std::string& url_or_path);
  // Submits a form like a browser: POST bodies form-encoded, with an Origin header of the
  // server (override with set_origin).
  Page Submit(const Form& form,
              const std::optional<std::pair<std::string, std::string>>& button = std::nullopt);
  Page PostForm(const std::string& url_or_path,
                const std::vector<std::pair<std::string, std::string>>& fields);

  // A multipart/form-data POST (a form with enctype="multipart/form-data"): `fields`, then
  // the file `content` as the part `file_field` named `file_name`.
  Page PostMultipart(const std::string& url_or_path,
                     const std::vector<std::pair<std::string, std::string>>& fields,
                     const std::string& file_field, const std::string& file_name,
                     const std::string& content);

  std::optional<std::string> Cookie(const std::string& name) const;
  void SetCookie(const std::string& name, const std::string& value) { jar_[name] = value; }
  void ClearCookies() { jar_.clear(); }
  // Origin sent with POSTs; nullopt sends none.
  void set_origin(std::optional<std::string> origin) {
    origin_ = std::move(origin);
    origin_set_ = true;
  }
  void set_follow_redirects(bool follow) { follow_ = follow; }
  // Sent with every request, e.g. X-Forwarded-For to play a browser at another address
  // behind a proxy the server trusts (config trusted_proxies).
  void set_extra_header(std::string name, std::string value) {
    extra_headers_.emplace_back(std::move(name), std::move(value));
  }

 private:
  Page Fetch(std::string method, std::string url, std::string body,
             std::string content_type = "application/x-www-form-urlencoded");
  std::string Absolute(const std::string& url_or_path) const;

  TestServer& server_;
  std::map<std::string, std::string> jar_;
  std::optional<std::string> origin_;
  bool origin_set_ = false;
  bool follow_ = true;
  http::Headers extra_headers_;
};

// Signs `email` in on the console's sign-in page the way a person does (the form, its login
// CSRF token and cookie), following redirects; answers the page it lands on (the
// overview, or where the sign-in was sent from). Fails the test if the page or its form is
// missing.
Page SignInToConsole(Browser& browser, const std::string& email, const std::string& password);

struct OAuthFlowOptions {
  std::string email = "alice@example.com";
  std::string password = "correct horse battery staple";
  bool create_user = true;  // create the user if missing
  std::string scope;        // empty: no scope parameter (server default)
  std::string redirect_uri = "http://127.0.0.1:47999/callback";
  std::string client_name = "Test MCP Client";
  bool confidential = false;              // client_secret_basic instead of a public client
  bool exchange_code = true;              // false: stop once the code is received
  std::function<void(Form&)> on_consent;  // adjust the consent form (e.g. uncheck scopes)
};

struct OAuthFlowResult {
  std::string access_token, refresh_token, client_id, client_secret;
  std::string code, code_verifier, redirect_uri, state;
  std::string scope;  // from the token response (or the requested scope before exchange)
  int64_t expires_in = 0;
  std::string issuer;  // authorization server from discovery
  nlohmann::json protected_resource_metadata, authorization_server_metadata, registration,
      token_response;
  std::string error;  // empty on success; otherwise which step failed and why
  bool ok() const { return error.empty(); }
};

// Discovery (RFC 9728 then RFC 8414; falls back to /oauth/* when metadata is not served),
// dynamic registration (RFC 7591), authorization with PKCE S256 through the login and
// consent pages, and the code exchange at the token endpoint.
OAuthFlowResult RunOAuthFlow(TestServer& server, const OAuthFlowOptions& options = {});

// PKCE S256 challenge of a verifier.
std::string PkceChallenge(const std::string& verifier);

}  // namespace crmd::testing
