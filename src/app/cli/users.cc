// crmctl user ...: the people who sign in to authorize clients and to the console
// (passwords on stdin). Every change is an audit row by "cli" (auth/users.h).
#include <cstdio>

#include "src/app/cli/commands.h"

namespace crmd::app::cli {
namespace {

const auth::PersonChanger kOperator{.kind = "cli", .subject = "crmctl"};

// Tells the operator what a change ended, and who must sign in again.
void PrintEnded(const auth::AccessEnded& ended) {
  if (ended.clients.empty()) {
    std::printf("no assistant held access\n");
    return;
  }
  std::printf("ended %lld grant(s); these assistants must sign in again:\n",
              static_cast<long long>(ended.grants_revoked));
  // Client names come from registrations: no control character reaches the terminal.
  for (std::string name : ended.clients) {
    for (char& ch : name)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    std::printf("  %s\n", name.c_str());
  }
}

const char* kUserUsage =
    "user create <email> [--role viewer|editor|administrator | --admin] | "
    "password <email> | role <email> viewer|editor|administrator | disable <email> | "
    "enable <email> | delete <email> | list";

}  // namespace

int UserCommand(Context& ctx, const Args& a) {
  if (a.empty()) return Usage(kUserUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  auth::Users& users = *(*s)->users;
  if (a[0] == "create" && (a.size() == 2 || a.size() == 3 || a.size() == 4)) {
    auth::Role role = auth::Role::kEditor;
    if (a.size() == 3 && a[2] == "--admin") {
      role = auth::Role::kAdministrator;
    } else if (a.size() == 4 && a[2] == "--role") {
      auto parsed = auth::ParseRole(a[3]);
      if (!parsed) return Usage(kUserUsage);
      role = *parsed;
    } else if (a.size() != 2) {
      return Usage(kUserUsage);
    }
    auto u = users.Create(a[1], ReadStdinLine(), role, kOperator);
    if (!u) return PrintError(u.error());
    std::printf("created user %s [%s] (id %lld)\n", u->email.c_str(),
                std::string(auth::RoleName(u->role)).c_str(), static_cast<long long>(u->id));
    return 0;
  }
  if (a[0] == "password" && a.size() == 2) {
    auto ended = users.SetPassword(a[1], ReadStdinLine(), kOperator);
    if (!ended) return PrintError(ended.error());
    std::printf("password changed for %s; their console sessions are signed out\n", a[1].c_str());
    PrintEnded(*ended);
    return 0;
  }
  if (a[0] == "role" && a.size() == 3) {
    auto role = auth::ParseRole(a[2]);
    if (!role) {
      std::fprintf(stderr, "crmctl: unknown role %s (viewer, editor or administrator)\n",
                   a[2].c_str());
      return 2;
    }
    auto ended = users.SetRole(a[1], *role, kOperator);
    if (!ended) return PrintError(ended.error());
    std::printf("%s is now %s\n", a[1].c_str(), a[2].c_str());
    PrintEnded(*ended);
    return 0;
  }
  if (a[0] == "disable" && a.size() == 2) {
    auto ended = users.Disable(a[1], kOperator);
    if (!ended) return PrintError(ended.error());
    std::printf("disabled %s; their console sessions are signed out\n", a[1].c_str());
    PrintEnded(*ended);
    return 0;
  }
  if (a[0] == "enable" && a.size() == 2) {
    if (auto st = users.Enable(a[1], kOperator); !st) return PrintError(st.error());
    std::printf("enabled %s\n", a[1].c_str());
    return 0;
  }
  if (a[0] == "delete" && a.size() == 2) {
    auto ended = users.Delete(a[1], kOperator);
    if (!ended) return PrintError(ended.error());
    std::printf("deleted %s (the audit log keeps their actions)\n", a[1].c_str());
    PrintEnded(*ended);
    return 0;
  }
  if (a[0] == "list") {
    auto list = users.List();
    if (!list) return PrintError(list.error());
    for (const auto& u : *list)
      std::printf("%lld\t%s\t%s\t%s\t%s\n", static_cast<long long>(u.id), u.email.c_str(),
                  std::string(auth::RoleName(u.role)).c_str(),
                  u.disabled_at ? "disabled" : "active", FormatRfc3339(u.created_at).c_str());
    return 0;
  }
  return Usage(kUserUsage);
}

}  // namespace crmd::app::cli
