#pragma once
// Rows the authorization side would create (clients, authorization codes), written
// straight into the test server's database so the token side is tested on its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "auth/pkce.h"
#include "src/app/services.h"
#include "src/core/crypto.h"
#include "tests/support/test_server.h"

namespace crmd::oauth_test {

inline constexpr const char* kVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
inline constexpr const char* kRedirect = "http://127.0.0.1:9999/callback";

struct ClientSpec {
  std::string client_id;
  std::optional<std::string> secret;  // confidential when set
  std::string auth_method = "none";
  std::vector<std::string> grant_types = {"authorization_code", "refresh_token"};
  std::optional<std::string> allowed_scopes;
  bool revoked = false;
};

inline void InsertClient(testing::TestServer& server, const ClientSpec& spec) {
  auto& s = server.app().services();
  int64_t now = s.clock->NowUnix();
  auto r = s.db->Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec(
        "INSERT INTO oauth_clients (client_id, client_secret_hash, token_endpoint_auth_method, "
        "client_name, redirect_uris, grant_types, metadata, allowed_scopes, source, revoked, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, '{}', ?, 'admin', ?, ?, ?)",
        {spec.client_id,
         spec.secret ? store::Value(crypto::HashSecret(*spec.secret)) : store::Null(),
         spec.auth_method, spec.client_id, nlohmann::json({kRedirect}).dump(),
         nlohmann::json(spec.grant_types).dump(), store::Opt(spec.allowed_scopes),
         int64_t{spec.revoked ? 1 : 0}, now, now});
  });
  ASSERT_TRUE(r.has_value()) << r.error().detail;
}

inline constexpr int64_t kFirstAdministrator = 1;

struct CodeSpec {
  std::string code;
  std::string client_id;
  // The person the code was issued to: admin@localhost, made at first start (tokens are
  // only issued for a person who exists and is active).
  int64_t user_id = kFirstAdministrator;
  std::string redirect_uri = kRedirect;
  std::string scope = "contacts:read contacts:write";
  std::string resource;  // empty: the server's McpResource()
  std::string code_challenge = auth::pkce::S256Challenge(kVerifier);
  int64_t expires_in = 60;
};

inline std::string InsertCode(testing::TestServer& server, const CodeSpec& spec) {
  auto& s = server.app().services();
  int64_t now = s.clock->NowUnix();
  std::string grant_id = s.random->Token(16);
  auto r = s.db->Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec(
        "INSERT INTO auth_codes (code_hash, client_id, user_id, redirect_uri, scope, resource, "
        "code_challenge, grant_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {crypto::HashSecret(spec.code), spec.client_id, spec.user_id, spec.redirect_uri, spec.scope,
         spec.resource.empty() ? s.config.McpResource() : spec.resource, spec.code_challenge,
         grant_id, now, now + spec.expires_in});
  });
  EXPECT_TRUE(r.has_value()) << r.error().detail;
  return grant_id;
}

// application/x-www-form-urlencoded from ordered pairs.
inline std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += http::PercentEncode(k) + "=" + http::PercentEncode(v);
  }
  return out;
}

inline http::Headers BasicAuth(const std::string& id, const std::string& secret) {
  return {{"Authorization", "Basic " + crypto::Base64Encode(http::PercentEncode(id) + ":" +
                                                            http::PercentEncode(secret))}};
}

// The bearer guard's verdict on a token, as /mcp would get it.
inline Result<Principal> Guard(testing::TestServer& server, const std::string& token) {
  http::Request req;
  req.method = "POST";
  req.path = "/mcp";
  req.headers.emplace_back("Authorization", "Bearer " + token);
  auto principal = server.app().services().authenticate(req);
  if (!principal) return Fail(principal.error());
  return **principal;
}

}  // namespace crmd::oauth_test
