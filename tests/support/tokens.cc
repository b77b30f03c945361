#include "tests/support/tokens.h"

#include <set>
#include <stdexcept>

#include "auth/token_service.h"
#include "src/app/services.h"

namespace crmd::testing {

std::string MintTestToken(TestServer& server, const TestTokenOptions& options) {
  auto& tokens = *server.app().services().tokens;
  auto issued = tokens.IssueAccessToken(auth::AccessTokenRequest{
      .subject = options.subject,
      .client_id = options.client_id,
      .scopes = std::set<std::string>(options.scopes.begin(), options.scopes.end()),
      .grant_id = {},
      .audience = options.audience,
      .ttl_seconds = options.ttl_seconds,
  });
  if (!issued)
    throw std::runtime_error("MintTestToken: " + issued.error().message + " " +
                             issued.error().detail);
  return issued->token;
}

}  // namespace crmd::testing
