#pragma once
// The approval pages (docs/mcp.md "Human approval"), where the person decides on an
// action that the approval policy reserves for them:
//   GET  /console/approvals        the signed-in person's pending approvals (an
//                                  administrator's list has everyone's)
//   GET  /console/approvals/<id>   what will happen (the preview) + Approve / Deny forms
//   POST /console/approvals/<id>   decision=approve|deny, csrf_token = the session's token
// The grant's user (the OAuth token's subject) and administrators may see an approval;
// who may decide is the approval policy's rule (governance/approval_policy.h: an
// administrator decides any; the person denies their own, and approves it only when the
// policy says so). Others get 403; sign-in, sessions and CSRF are the shell's (shell.h).
// Thread-safe; handlers block on the database (worker pool).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/console/shell.h"
#include "src/core/http_types.h"
#include "src/core/result.h"
#include "src/governance/confirmations.h"

namespace crmd::console {

struct ApprovalPagesDeps {
  governance::ConfirmationService* confirmations = nullptr;
  ConsolePeople people;
  // The name an app registered (client_name), or nullopt when the client is unknown or
  // has none; the pages then show its client id. Unset: ids only.
  std::function<std::optional<std::string>(const std::string& client_id)> app_name;
};

// What the list says of a request besides its action: how many records, and the first
// few by name or email ("3 contacts: a@x.com, b@x.com, c@x.com and 1 more"); empty when
// the preview lists none. Exposed for tests.
std::string PreviewSummary(const nlohmann::json& preview);

// The approval page's path is this prefix and the approval id, which the access log
// redacts (http::ServerOptions::secret_path_prefixes).
inline constexpr std::string_view kApprovalPagePrefix = "/console/approvals/";

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
