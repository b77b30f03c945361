#pragma once
// Real access tokens for integration tests: signed with the test server's own keys and
// recorded (grants + access_tokens rows) exactly like an issuance at /oauth/token, so the
// bearer guard, revocation and introspection treat them like any other token.
#include <cstdint>
#include <string>
#include <vector>

#include "auth/scopes.h"
#include "src/core/http_types.h"
#include "tests/support/test_server.h"

namespace crmd::testing {

struct TestTokenOptions {
  std::vector<std::string> scopes = auth::AllScopes();
  std::string client_id = "test-client";
  std::string subject = "1";   // user id; "client:<id>" for a client_credentials principal
  std::string audience;        // empty: the server's McpResource() (anything else fails the guard)
  int64_t ttl_seconds = 3600;  // negative: already expired by that many seconds
};

// A signed JWT access token from `server`. Throws (test failure) if minting fails.
std::string MintTestToken(TestServer& server, const TestTokenOptions& options = {});

// {"Authorization": "Bearer <token>"} for TestServer::Send/Get/PostJson.
inline http::Headers BearerHeaders(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

}  // namespace crmd::testing
