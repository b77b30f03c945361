#pragma once
// What a person may do: three roles, each with a scope ceiling. Consent never grants a
// scope beyond the person's role, and every token issued for a person (at the code
// exchange and at every refresh) carries at most the role's scopes as they are at that
// moment, so a demoted person's assistant cannot regain what the role lost
// (docs/oauth-authorize.md "People and roles").
//
//   viewer         every :read scope
//   editor         every scope except settings:write (the settings hold the approval
//                  policy, so an editor cannot loosen the rules that bind them)
//   administrator  every scope; decides approvals; manages people, keys and webhooks
//
// Pure functions; thread-safe.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace crmd::auth {

enum class Role { kViewer, kEditor, kAdministrator };

// "viewer" | "editor" | "administrator".
std::string_view RoleName(Role role);
// nullopt unless `name` is one of the names above.
std::optional<Role> ParseRole(std::string_view name);
// The names, least to most powerful.
const std::vector<std::string>& RoleNames();
// The scopes a person of `role` may hold.
const std::set<std::string>& ScopeCeiling(Role role);
// `scopes` without what `role` may not hold.
std::set<std::string> CapScopes(const std::set<std::string>& scopes, Role role);

}  // namespace crmd::auth
