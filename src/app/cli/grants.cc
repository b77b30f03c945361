// crmctl grant ...: what each client was granted, and revocation with its tokens.
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int GrantCommand(Context& ctx, const Args& a) {
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auth::Grants& grants = *(*s)->grants;
  if (!a.empty() && a[0] == "list") {
    std::optional<std::string> client;
    if (a.size() == 3 && a[1] == "--client") client = a[2];
    auto list = grants.List(client);
    if (!list) return PrintError(list.error());
    for (const auto& g : *list)
      std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", g.grant_id.c_str(), g.client_id.c_str(),
                  g.user_email.c_str(), g.scope.c_str(), FormatRfc3339(g.created_at).c_str(),
                  g.revoked_at ? ("revoked " + FormatRfc3339(*g.revoked_at)).c_str() : "active");
    return 0;
  }
  if (a.size() == 2 && a[0] == "revoke") {
    if (auto st = grants.Revoke(a[1]); !st) return PrintError(st.error());
    std::printf("revoked grant %s and its tokens\n", a[1].c_str());
    return 0;
  }
  return Usage("grant list [--client <client_id>] | revoke <grant_id>");
}

}  // namespace crmd::app::cli
