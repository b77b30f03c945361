#pragma once
// The console's "Connected apps": the OAuth clients (assistants) and the grants people
// gave them, with their scopes and last recorded activity, and revocation.
//   GET  /console/apps     administrators: every grant, and the registered clients a
//                          page at a time (?after=<the page's cursor>, oldest first);
//                          other people: the grants they gave themselves
//   POST /console/apps     action=revoke_grant (grant_id): the grant with its access and
//                          refresh tokens, refused at /mcp at once on this node (a few
//                          seconds on the others); a person may revoke only their own;
//                          action=revoke_client (client_id, administrators): the client and
//                          every grant it holds; action=revoke_consent (client_id,
//                          user_id): the remembered consent (the app must ask again) and
//                          the app's grants for that person
// The console knows nothing of auth: the composition root passes the registry as
// functions (ConnectedAppsSource), the same calls crmctl client/grant revoke make.
// Thread-safe; handlers block on the database (worker pool).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/console/shell.h"
#include "src/governance/audit.h"

namespace crmd::console {

struct AppClient {
  std::string client_id;
  std::string name;    // client_name, else the client_id
  std::string source;  // dcr | cimd | admin
  bool revoked = false;
  int64_t created_at = 0;
};

struct AppGrant {
  std::string grant_id;
  std::string client_id;
  std::string user_email;  // "-" for client_credentials grants
  std::string scope;
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
};

// Remembered consent: what a person allowed an app, so that it is not asked again.
struct AppConsent {
  std::string client_id;
  int64_t user_id = 0;
  std::string user_email;
  std::string scope;
  int64_t created_at = 0;
};

// One page of registered clients; `next` is the cursor of the following page, if any.
struct AppClientPage {
  std::vector<AppClient> clients;
  std::optional<std::string> next;
};

struct ConnectedAppsSource {
  // At most `limit` clients after the cursor `after` ("" for the first page).
  std::function<Result<AppClientPage>(const std::string& after, int64_t limit)> clients_page;
  // The client with this id (revoked or not), or nullopt.
  std::function<Result<std::optional<AppClient>>(const std::string& client_id)> client;
  std::function<Result<std::vector<AppGrant>>()> grants;
  // Both make this node refuse the revoked tokens at once.
  std::function<Status(const std::string& grant_id)> revoke_grant;
  std::function<Status(const std::string& client_id)> revoke_client;
  // Live remembered consents; revoking one also revokes the app's grants for that person.
  std::function<Result<std::vector<AppConsent>>()> consents;
  std::function<Status(const std::string& client_id, int64_t user_id)> revoke_consent;
};

struct AppsPagesDeps {
  ConnectedAppsSource apps;
  int64_t clients_per_page = 50;
  governance::AuditLog* audit = nullptr;  // last recorded activity per client
  ConsolePeople people;
};

ConsoleRoutes AppsRoutes(AppsPagesDeps deps);

}  // namespace crmd::console
