#pragma once
// The console's shell: who is signed in, and the rules every console page follows.
//  - A visitor without a session who asks for any /console page (GET) is sent to
//    /console/login?next=<page>; a POST without a session gets a 403 page.
//  - Administrators' pages (Webhook & API, Audit) answer 403 to other people; editors'
//    pages (the contact import) answer 403 to viewers.
//  - Every POST must come from crmd's own origin (Origin header) and carry the session's
//    CSRF token (csrf_token field, compared in constant time); otherwise 403, nothing done.
//  - Errors are HTML pages in the console's layout (400, 403, 404, 405, 409, 500); a 500
//    never shows internal detail (it is logged).
//
// The console knows nothing of auth: the composition root passes the person lookups as
// functions (ConsolePeople). Everything here is stateless and thread-safe.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/console/templates.h"
#include "src/core/http_types.h"
#include "src/core/result.h"

namespace crmd::console {

struct Person {
  std::string subject;  // as in OAuth tokens: the user id in decimal
  std::string email;
  std::string csrf_token;  // the login session's form token
  bool is_admin = false;
  bool can_edit = false;  // an editor or an administrator (a viewer only reads)
  // What the person's role allows (auth/roles.h): the scopes a confirmation made in the
  // console is checked against, as a token's are for an assistant.
  std::set<std::string> scopes;
};

struct SignInResult {
  bool ok = false;
  int status = 401;                      // when !ok: 401 wrong credentials, 429 rate limited, 500
  std::string error;                     // when !ok: shown above the form
  int64_t retry_after = 0;               // with 429: seconds, sent as Retry-After
  std::vector<std::string> set_cookies;  // when ok
};

struct ConsolePeople {
  // The signed-in person of the request's session cookie, or nullopt.
  std::function<Result<std::optional<Person>>(const http::Request&)> current;
  std::function<SignInResult(const http::Request&, const std::string& email,
                             const std::string& password)>
      sign_in;
  // False for a POST whose Origin is foreign (cross-site form).
  std::function<bool(const http::Request&)> origin_allowed;
  // Ends the request's session; the Set-Cookie values that clear its cookie.
  std::function<std::vector<std::string>(const http::Request&)> sign_out;
  // The sign-in form's CSRF token and the Set-Cookie that carries its twin (login CSRF).
  std::function<std::pair<std::string, std::string>(const http::Request&)> login_form_token;
  std::function<bool(const http::Request&, const std::string& presented)> login_form_token_valid;
};

// (path, handler) pairs: exact paths for Exact(), prefixes (ending in '/') for Prefix().
struct ConsoleRoutes {
  std::vector<std::pair<std::string, http::Handler>> exact;
  std::vector<std::pair<std::string, http::Handler>> prefix;
  void Append(ConsoleRoutes other);
};

// The layout around a signed-in person's page; `section` marks the navigation entry.
PageChrome ChromeFor(const Person& p, std::string section);

// A page with one message (and an optional link).
http::Response MessagePage(int status, const std::string& title, const std::string& message,
                           const PageChrome& chrome = {}, const std::string& link = "",
                           const std::string& link_text = "");
http::Response SeeOther(const std::string& location);
// 500 with a generic text; `e` is logged.
http::Response InternalError(const Error& e, const PageChrome& chrome = {});
http::Response NotFoundPage(const PageChrome& chrome = {});

// What a service error means on a console page, decided here only (as src/rest/errors.h
// does for REST): the status with which the service's own message is shown to the
// person, who can act on it, or nullopt for crmd's own failure (a 500 page; the detail
// goes to the log only). The approval and link pages word each outcome for their reader
// themselves (approvals.cc, links.cc).
std::optional<int> PersonFacingStatus(const Error& e);
// A service error as a page of its own: the person's with the service's message and a
// link `back`, or InternalError.
http::Response ServiceErrorPage(const Error& e, const PageChrome& chrome,
                                const std::string& back = "");
// nullopt when the method is one of `allowed` ("GET, HEAD, POST"); otherwise 405.
std::optional<http::Response> OnlyMethods(const http::Request& req, std::string_view allowed,
                                          const PageChrome& chrome = {});

// Runs `then` with the signed-in person (see above for visitors).
http::Response WithPerson(const ConsolePeople& people, const http::Request& req,
                          const std::function<http::Response(const Person&)>& then);
// The same, and 403 for a person who is not an administrator.
http::Response WithAdmin(const ConsolePeople& people, const http::Request& req,
                         const std::string& section,
                         const std::function<http::Response(const Person&)>& then);

// The same, and 403 for a viewer (editors' pages: the contact import).
http::Response WithEditor(const ConsolePeople& people, const http::Request& req,
                          const std::string& section,
                          const std::function<http::Response(const Person&)>& then);

using FormFields = std::vector<std::pair<std::string, std::string>>;
// A form field's value, "" when the form has none.
std::string FieldValue(const FormFields& form, const std::string& name);
// A positive id of at most 18 digits in field `name`, or nullopt.
std::optional<int64_t> IdField(const FormFields& form, std::string_view name);
// The non-empty members of a list typed into a field, split at any of `separators`, each
// trimmed of whitespace.
std::vector<std::string> SplitList(const std::string& s, std::string_view separators);
// The 403 page for a forged POST (foreign Origin, missing or wrong csrf_token); nullopt
// when the form may be acted on.
std::optional<http::Response> RefuseForgedPost(const ConsolePeople& people,
                                               const http::Request& req, const Person& p,
                                               const FormFields& form);

// Only a console path is a place to return to after signing in (no open redirect).
std::string SafeNext(const std::string& next);

// The sign-in and sign-out pages, the static files (console.css, console.js with a long
// cache) and the catch-all that answers 404 for unknown /console pages (to signed-in
// people; visitors are sent to sign in first).
ConsoleRoutes SessionRoutes(ConsolePeople people);

}  // namespace crmd::console
