#pragma once
// Who is calling: the result of bearer-token verification, passed to MCP and tools.
#include <cstdint>
#include <set>
#include <string>

namespace crmd {

struct Principal {
  std::string subject;    // user id (sub); for client_credentials, "client:<client_id>"
  std::string client_id;  // OAuth client
  std::set<std::string> scopes;
  std::string token_id;    // jti
  int64_t expires_at = 0;  // unix seconds

  bool HasScope(const std::string& scope) const { return scopes.count(scope) > 0; }
};

}  // namespace crmd
