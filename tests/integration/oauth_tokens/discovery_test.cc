// Discovery documents, JWKS and test-token minting over real HTTP.
#include <gtest/gtest.h>

#include "auth/scopes.h"
#include "src/app/services.h"
#include "src/core/crypto.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd {
namespace {

using testing::JsonBody;
using testing::MintTestToken;
using testing::TestServer;

TEST(OAuthMetadata, AuthorizationServerMetadataHasEveryRequiredField_Rfc8414_2) {
  TestServer server;
  const std::string iss = server.base_url();
  for (const char* path :
       {"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}) {
    auto r = server.Get(path);
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.Header("Access-Control-Allow-Origin").value_or(""), "*");
    auto m = JsonBody(r);
    EXPECT_EQ(m["issuer"], iss);
    EXPECT_EQ(m["authorization_endpoint"], iss + "/oauth/authorize");
    EXPECT_EQ(m["token_endpoint"], iss + "/oauth/token");
    EXPECT_EQ(m["registration_endpoint"], iss + "/oauth/register");
    EXPECT_EQ(m["revocation_endpoint"], iss + "/oauth/revoke");
    EXPECT_EQ(m["introspection_endpoint"], iss + "/oauth/introspect");
    EXPECT_EQ(m["jwks_uri"], iss + "/oauth/jwks");
    EXPECT_EQ(m["response_types_supported"], nlohmann::json({"code"}));
    EXPECT_EQ(m["grant_types_supported"],
              nlohmann::json({"authorization_code", "refresh_token", "client_credentials"}));
    EXPECT_EQ(m["code_challenge_methods_supported"], nlohmann::json({"S256"}));
    EXPECT_EQ(m["token_endpoint_auth_methods_supported"],
              nlohmann::json({"none", "client_secret_basic", "client_secret_post"}));
    EXPECT_TRUE(m.contains("revocation_endpoint_auth_methods_supported"));
    EXPECT_TRUE(m.contains("introspection_endpoint_auth_methods_supported"));
    EXPECT_EQ(m["scopes_supported"], nlohmann::json(auth::AllScopes()));
    EXPECT_EQ(m["client_id_metadata_document_supported"], true);
    EXPECT_EQ(m["authorization_response_iss_parameter_supported"], true);
  }
}

TEST(OAuthMetadata, ProtectedResourceMetadataNamesTheMcpResource_Rfc9728_3) {
  TestServer server;
  for (const char* path :
       {"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}) {
    auto r = server.Get(path);
    ASSERT_EQ(r.status, 200) << path;
    auto m = JsonBody(r);
    EXPECT_EQ(m["resource"], server.base_url() + "/mcp");
    EXPECT_EQ(m["authorization_servers"], nlohmann::json({server.base_url()}));
    EXPECT_EQ(m["bearer_methods_supported"], nlohmann::json({"header"}));
    EXPECT_EQ(m["scopes_supported"], nlohmann::json(auth::AllScopes()));
    EXPECT_TRUE(m["resource_name"].is_string());
  }
}

TEST(OAuthMetadata, CorsPreflightAndMethodCheck) {
  TestServer server;
  auto pre =
      server.Send("OPTIONS", "/.well-known/oauth-authorization-server", "",
                  {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "GET"}});
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(pre.Header("Access-Control-Allow-Origin").value_or(""), "*");
  EXPECT_NE(pre.Header("Access-Control-Allow-Headers").value_or("").find("MCP-Protocol-Version"),
            std::string::npos);
  EXPECT_EQ(server.Send("POST", "/oauth/jwks").status, 405);
}

TEST(Jwks, ContainsTheKidOfIssuedTokens_Rfc7517_5) {
  TestServer server;
  std::string token = MintTestToken(server);
  auto header = nlohmann::json::parse(*crypto::Base64UrlDecode(token.substr(0, token.find('.'))));
  for (const char* path : {"/oauth/jwks", "/.well-known/jwks.json"}) {
    auto r = server.Get(path);
    ASSERT_EQ(r.status, 200);
    auto keys = JsonBody(r)["keys"];
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys[0]["kid"], header["kid"]);
    EXPECT_EQ(keys[0]["kty"], "EC");
    EXPECT_EQ(keys[0]["alg"], "ES256");
    EXPECT_FALSE(keys[0].contains("d"));
  }
}

TEST(MintTestTokenSupport, TokenPassesTheServersOwnGuard) {
  TestServer server;
  auto& s = server.app().services();
  http::Request req;
  req.path = "/mcp";
  req.headers = testing::BearerHeaders(MintTestToken(server, {.scopes = {"contacts:read"}}));
  auto p = s.authenticate(req);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ((*p)->subject, "1");
  EXPECT_EQ((*p)->client_id, "test-client");
  EXPECT_EQ((*p)->scopes, std::set<std::string>{"contacts:read"});

  req.headers = testing::BearerHeaders(MintTestToken(server, {.ttl_seconds = -120}));
  EXPECT_EQ(s.authenticate(req).error().detail, "invalid_token");
  req.headers =
      testing::BearerHeaders(MintTestToken(server, {.audience = "https://elsewhere.example/mcp"}));
  EXPECT_EQ(s.authenticate(req).error().detail, "invalid_token");
}

}  // namespace
}  // namespace crmd
