#include "auth/scopes.h"

#include <algorithm>

namespace crmd::auth {

const std::vector<std::string>& AllScopes() {
  static const std::vector<std::string> kScopes = {
      "contacts:read",      "contacts:write",   "contacts:delete",   "lists:read",
      "lists:write",        "lists:delete",     "tags:read",         "tags:write",
      "tags:delete",        "campaigns:read",   "campaigns:write",   "campaigns:activate",
      "campaigns:delete",   "automations:read", "automations:write", "automations:activate",
      "automations:delete", "sequences:read",   "sequences:write",   "settings:read",
      "settings:write",     "reports:read"};
  return kScopes;
}

bool IsKnownScope(std::string_view scope) {
  const auto& all = AllScopes();
  return std::find(all.begin(), all.end(), scope) != all.end();
}

Result<std::set<std::string>> ParseScope(std::string_view scope) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < scope.size()) {
    if (scope[i] == ' ') {
      ++i;
      continue;
    }
    size_t end = scope.find(' ', i);
    if (end == std::string_view::npos) end = scope.size();
    std::string_view tok = scope.substr(i, end - i);
    for (unsigned char c : tok) {
      if (c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e)
        return Fail(Errc::kInvalidArgument, "scope contains an invalid character");
    }
    if (!IsKnownScope(tok))
      return Fail(Errc::kInvalidArgument, "unknown scope: " + std::string(tok));
    out.emplace(tok);
    i = end;
  }
  return out;
}

std::string JoinScope(const std::set<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

bool IsSubset(const std::set<std::string>& requested, const std::set<std::string>& granted) {
  return std::includes(granted.begin(), granted.end(), requested.begin(), requested.end());
}

}  // namespace crmd::auth
