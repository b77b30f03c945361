#include "auth/registration.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace crmd::auth {
namespace {

using nlohmann::json;

json Base() {
  return {{"redirect_uris", {"http://127.0.0.1:3000/callback"}},
          {"client_name", "Test MCP Client"},
          {"token_endpoint_auth_method", "none"},
          {"grant_types", {"authorization_code", "refresh_token"}},
          {"response_types", {"code"}}};
}

TEST(ClientMetadata, AcceptsAPublicMcpClient_Rfc7591_2) {
  auto c = ClientFromMetadata(Base());
  ASSERT_TRUE(c) << c.error().description;
  EXPECT_TRUE(c->IsPublic());
  EXPECT_EQ(c->client_name, "Test MCP Client");
  EXPECT_TRUE(c->AllowsGrant("refresh_token"));
  auto echoed = json::parse(c->metadata_json);
  EXPECT_EQ(echoed["redirect_uris"][0], "http://127.0.0.1:3000/callback");
  EXPECT_EQ(echoed["token_endpoint_auth_method"], "none");
}

TEST(ClientMetadata, DefaultsToClientSecretBasicAndAuthorizationCode_Rfc7591_2) {
  auto c = ClientFromMetadata({{"redirect_uris", {"https://app.example.com/cb"}}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->token_endpoint_auth_method, "client_secret_basic");
  EXPECT_EQ(c->grant_types, std::vector<std::string>{"authorization_code"});
  EXPECT_EQ(json::parse(c->metadata_json)["response_types"], json::array({"code"}));
}

TEST(ClientMetadata, RefusesBadRedirectUrisWithInvalidRedirectUri_Rfc7591_3_2_2) {
  for (const char* uri : {"https://app.example.com/cb#x", "javascript:alert(1)",
                          "http://app.example.com/cb", "https://*.example.com/cb", "/relative"}) {
    json m = Base();
    m["redirect_uris"] = {uri};
    auto c = ClientFromMetadata(m);
    ASSERT_FALSE(c) << uri;
    EXPECT_EQ(c.error().error, "invalid_redirect_uri") << uri;
  }
  json m = Base();
  m.erase("redirect_uris");
  EXPECT_EQ(ClientFromMetadata(m).error().error, "invalid_redirect_uri");
}

TEST(ClientMetadata, RefusesInconsistentOrUnsupportedMetadata_Rfc7591_2_1) {
  auto refused = [](json m) {
    auto c = ClientFromMetadata(m);
    return !c && c.error().error == "invalid_client_metadata";
  };
  json m = Base();
  m["token_endpoint_auth_method"] = "private_key_jwt";
  EXPECT_TRUE(refused(m));
  m = Base();
  m["grant_types"] = {"implicit"};
  EXPECT_TRUE(refused(m));
  m = Base();
  m["response_types"] = {"token"};
  EXPECT_TRUE(refused(m));
  m = Base();
  m["grant_types"] = {"client_credentials"};  // public client cannot use client_credentials
  EXPECT_TRUE(refused(m));
  m = Base();
  m["scope"] = "contacts:read nonsense:write";
  EXPECT_TRUE(refused(m));
  m = Base();
  m["client_uri"] = "javascript:alert(1)";
  EXPECT_TRUE(refused(m));
  EXPECT_TRUE(refused(json::array()));
}

TEST(ClientMetadata, IgnoresUnknownFieldsAndNormalisesScope_Rfc7591_2) {
  json m = Base();
  m["x_custom"] = "ignored";
  m["scope"] = "contacts:write contacts:read";
  auto c = ClientFromMetadata(m);
  ASSERT_TRUE(c);
  auto echoed = json::parse(c->metadata_json);
  EXPECT_FALSE(echoed.contains("x_custom"));
  EXPECT_EQ(echoed["scope"], "contacts:read contacts:write");
  EXPECT_EQ(c->RegisteredScope(), "contacts:read contacts:write");
}

}  // namespace
}  // namespace crmd::auth
