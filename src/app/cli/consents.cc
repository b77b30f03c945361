// crmctl consent ...: remembered consent; revoking it also revokes the grants it covered.
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int ConsentCommand(Context& ctx, const Args& a) {
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auth::Consents& consents = *(*s)->consents;
  if (!a.empty() && a[0] == "list") {
    auto list = consents.List();
    if (!list) return PrintError(list.error());
    for (const auto& c : *list)
      std::printf("%s\t%s\t%s\t%s\t%s\n", c.client_id.c_str(), c.user_email.c_str(),
                  c.scope.c_str(), FormatRfc3339(c.created_at).c_str(),
                  c.revoked_at ? ("revoked " + FormatRfc3339(*c.revoked_at)).c_str() : "active");
    return 0;
  }
  if (a.size() == 3 && a[0] == "revoke") {
    auto user = (*s)->users->FindByEmail(a[2]);
    if (!user) return PrintError(user.error());
    if (!*user) return PrintError(Error::NotFound("unknown user"));
    auto n = consents.Revoke(a[1], (*user)->id);
    if (!n) return PrintError(n.error());
    std::printf("revoked %lld consent(s) of %s for %s, and its grants\n",
                static_cast<long long>(*n), (*user)->email.c_str(), a[1].c_str());
    return 0;
  }
  return Usage("consent list | revoke <client_id> <user_email>");
}

}  // namespace crmd::app::cli
