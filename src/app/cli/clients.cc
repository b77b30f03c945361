// crmctl client ...: registered OAuth clients.
#include <cstdio>

#include "auth/scopes.h"
#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int ClientCommand(Context& ctx, const Args& a) {
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auth::ClientStore& clients = *(*s)->clients;
  if (!a.empty() && a[0] == "list") {
    auto list = clients.List();
    if (!list) return PrintError(list.error());
    for (const auto& c : *list) {
      std::string uris;
      for (const auto& u : c.redirect_uris) uris += (uris.empty() ? "" : ",") + u;
      std::printf("%s\t%s\t%s\t%s\t%s\t%s%s\n", c.client_id.c_str(), c.source.c_str(),
                  c.token_endpoint_auth_method.c_str(), c.client_name.value_or("-").c_str(),
                  uris.c_str(), c.revoked ? "revoked" : "active",
                  c.allowed_scopes ? ("\tallowed_scopes=" + *c.allowed_scopes).c_str() : "");
    }
    return 0;
  }
  if (a.size() == 2 && a[0] == "revoke") {
    if (auto st = clients.Revoke(a[1]); !st) return PrintError(st.error());
    std::printf("revoked client %s and its grants\n", a[1].c_str());
    return 0;
  }
  if (a.size() == 3 && a[0] == "grant-scopes") {
    auto scopes = auth::ParseScope(a[2]);
    if (!scopes) return PrintError(scopes.error());
    auto client = clients.Find(a[1]);
    if (!client) return PrintError(client.error());
    if (!*client) return PrintError(Error::NotFound("unknown client"));
    if (!(*client)->AllowsGrant("client_credentials"))
      std::fprintf(stderr, "crmctl: note: client %s is not registered for client_credentials\n",
                   a[1].c_str());
    const std::string joined = auth::JoinScope(*scopes);
    if (auto st = clients.SetAllowedScopes(a[1], joined); !st) return PrintError(st.error());
    std::printf("client %s may now use: %s\n", a[1].c_str(), joined.c_str());
    return 0;
  }
  return Usage("client list | revoke <client_id> | grant-scopes <client_id> \"<scopes>\"");
}

}  // namespace crmd::app::cli
