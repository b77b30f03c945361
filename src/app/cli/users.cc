// crmctl user ...: the people who sign in to authorize clients (passwords on stdin).
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

int UserCommand(Context& ctx, const Args& a) {
  if (a.empty()) return 2;
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auth::Users& users = *(*s)->users;
  if (a[0] == "create" && a.size() >= 2) {
    bool admin = a.size() >= 3 && a[2] == "--admin";
    auto u = users.Create(a[1], ReadStdinLine(), admin);
    if (!u) return PrintError(u.error());
    std::printf("created user %s%s (id %lld)\n", u->email.c_str(), admin ? " [admin]" : "",
                static_cast<long long>(u->id));
    return 0;
  }
  if (a[0] == "password" && a.size() == 2) {
    if (auto st = users.SetPassword(a[1], ReadStdinLine()); !st) return PrintError(st.error());
    std::printf("password changed for %s\n", a[1].c_str());
    return 0;
  }
  if (a[0] == "list") {
    auto list = users.List();
    if (!list) return PrintError(list.error());
    for (const auto& u : *list)
      std::printf("%lld\t%s\t%s\t%s\n", static_cast<long long>(u.id), u.email.c_str(),
                  u.is_admin ? "admin" : "-", FormatRfc3339(u.created_at).c_str());
    return 0;
  }
  return Usage("user create <email> [--admin] | password <email> | list");
}

}  // namespace crmd::app::cli
