#include "auth/roles.h"

#include "auth/scopes.h"

namespace crmd::auth {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kEditor:
      return "editor";
    case Role::kAdministrator:
      return "administrator";
  }
  return "viewer";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kViewer, Role::kEditor, Role::kAdministrator})
    if (RoleName(r) == name) return r;
  return std::nullopt;
}

const std::vector<std::string>& RoleNames() {
  static const std::vector<std::string> kNames = {"viewer", "editor", "administrator"};
  return kNames;
}

const std::set<std::string>& ScopeCeiling(Role role) {
  static const std::set<std::string> kAll(AllScopes().begin(), AllScopes().end());
  static const std::set<std::string> kEditor = [] {
    std::set<std::string> s = kAll;
    s.erase("settings:write");
    return s;
  }();
  static const std::set<std::string> kViewer = [] {
    std::set<std::string> s;
    for (const auto& scope : kAll)
      if (scope.size() > 5 && scope.compare(scope.size() - 5, 5, ":read") == 0) s.insert(scope);
    return s;
  }();
  switch (role) {
    case Role::kViewer:
      return kViewer;
    case Role::kEditor:
      return kEditor;
    case Role::kAdministrator:
      return kAll;
  }
  return kViewer;
}

std::set<std::string> CapScopes(const std::set<std::string>& scopes, Role role) {
  const auto& ceiling = ScopeCeiling(role);
  std::set<std::string> out;
  for (const auto& s : scopes)
    if (ceiling.count(s)) out.insert(s);
  return out;
}

}  // namespace crmd::auth
