#pragma once
// The approval pages (docs/mcp.md "Human approval"), where the person decides on an
// action that the approval policy reserves for them:
//   GET  /console/login?next=…     sign-in form (the same accounts and session cookie as
//   POST /console/login            the OAuth login page; rate-limited there)
//   GET  /console/approvals        the signed-in person's pending approvals
//   GET  /console/approvals/<id>   what will happen (the preview) + Approve / Deny forms
//   POST /console/approvals/<id>   decision=approve|deny, csrf_token = the session's token
//   GET  /console/console.css
// Only the grant's user (the OAuth token's subject) may see or decide an approval: another
// signed-in user gets 403, a visitor without a session is sent to sign in. POSTs with a
// foreign Origin or without the session's CSRF token are refused (403).
//
// The console knows nothing of auth: the composition root passes the person lookups as
// functions (ConsolePeople). Thread-safe; handlers block on the database (worker pool).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/http_types.h"
#include "src/core/result.h"
#include "src/crm/confirmations.h"

namespace crmd::console {

struct Person {
  std::string subject;     // as in OAuth tokens: the user id in decimal
  std::string email;
  std::string csrf_token;  // the login session's form token
};

struct SignInResult {
  bool ok = false;
  int status = 401;            // when !ok: 401 wrong credentials, 429 rate limited, 500
  std::string error;           // when !ok: shown above the form
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
};

struct ApprovalPagesDeps {
  crm::ConfirmationService* confirmations = nullptr;
  ConsolePeople people;
};

// (path, handler) pairs: exact paths for Exact(), prefixes (ending in '/') for Prefix().
struct ConsoleRoutes {
  std::vector<std::pair<std::string, http::Handler>> exact;
  std::vector<std::pair<std::string, http::Handler>> prefix;
};
ConsoleRoutes ApprovalRoutes(ApprovalPagesDeps deps);

// The preview as rows for the page: scalars as label/value, arrays as lists of records
// (name or email with id), objects one level down. Exposed for tests.
struct PreviewRow {
  std::string label;
  std::string value;
  std::vector<std::string> items;
};
std::vector<PreviewRow> PreviewRows(const nlohmann::json& preview);

}  // namespace crmd::console
