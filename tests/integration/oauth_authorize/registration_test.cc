// Dynamic client registration (RFC 7591) and client configuration (RFC 7592) over HTTP.
#include <gtest/gtest.h>

#include "src/app/services.h"
#include "src/core/crypto.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using nlohmann::json;
using testing::JsonBody;
using testing::TestServer;

json PublicClient() {
  return {{"client_name", "Test MCP Client"},
          {"redirect_uris", {"http://127.0.0.1:3000/callback"}},
          {"grant_types", {"authorization_code", "refresh_token"}},
          {"response_types", {"code"}},
          {"token_endpoint_auth_method", "none"}};
}

http::Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

TEST(Registration, RegistersAPublicClient_Rfc7591_3_2_1) {
  TestServer server;
  auto r = server.PostJson("/oauth/register", PublicClient());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Header("Cache-Control").value_or(""), "no-store");
  auto j = JsonBody(r);
  ASSERT_TRUE(j["client_id"].is_string());
  EXPECT_FALSE(j.contains("client_secret"));
  EXPECT_TRUE(j["client_id_issued_at"].is_number_integer());
  EXPECT_EQ(j["token_endpoint_auth_method"], "none");
  EXPECT_EQ(j["redirect_uris"], json::array({"http://127.0.0.1:3000/callback"}));
  EXPECT_EQ(j["grant_types"], json::array({"authorization_code", "refresh_token"}));
  EXPECT_EQ(j["response_types"], json::array({"code"}));
  EXPECT_EQ(j["client_name"], "Test MCP Client");
  EXPECT_TRUE(j["registration_access_token"].is_string());
  EXPECT_EQ(j["registration_client_uri"],
            server.base_url() + "/oauth/register/" + j["client_id"].get<std::string>());
}

TEST(Registration, ConfidentialClientGetsASecretStoredOnlyAsAHash_Rfc7591_3_2_1) {
  TestServer server;
  json m = PublicClient();
  m.erase("token_endpoint_auth_method");  // RFC 7591 default: client_secret_basic
  auto r = server.PostJson("/oauth/register", m);
  ASSERT_EQ(r.status, 201) << r.body;
  auto j = JsonBody(r);
  EXPECT_EQ(j["token_endpoint_auth_method"], "client_secret_basic");
  ASSERT_TRUE(j["client_secret"].is_string());
  EXPECT_EQ(j["client_secret_expires_at"], 0);
  std::string secret = j["client_secret"];
  auto stored = server.app().services().db->Read([&](store::Conn& c) -> Result<std::string> {
    auto row = c.QueryOne("SELECT client_secret_hash FROM oauth_clients WHERE client_id = ?",
                          {j["client_id"].get<std::string>()});
    if (!row) return Fail(row.error());
    return (*row)->Str(0);
  });
  ASSERT_TRUE(stored);
  EXPECT_NE(*stored, secret);
  EXPECT_EQ(*stored, crypto::HashSecret(secret));
  EXPECT_TRUE(
      server.app().services().clients->Authenticate(j["client_id"].get<std::string>(), secret));
  EXPECT_FALSE(
      server.app().services().clients->Authenticate(j["client_id"].get<std::string>(), "wrong"));
}

TEST(Registration, RefusesUnsafeRedirectUris_Rfc7591_3_2_2) {
  TestServer server;
  for (const char* uri : {"https://app.example.com/cb#fragment", "javascript:alert(1)",
                          "http://app.example.com/callback", "https://*.example.com/callback"}) {
    json m = PublicClient();
    m["redirect_uris"] = {uri};
    auto r = server.PostJson("/oauth/register", m);
    EXPECT_EQ(r.status, 400) << uri;
    EXPECT_EQ(JsonBody(r)["error"], "invalid_redirect_uri") << uri;
    EXPECT_TRUE(JsonBody(r)["error_description"].is_string());
  }
}

TEST(Registration, RefusesMalformedMetadata_Rfc7591_3_2_2) {
  TestServer server;
  auto r =
      server.Send("POST", "/oauth/register", "{not json", {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(JsonBody(r)["error"], "invalid_client_metadata");
  json m = PublicClient();
  m["grant_types"] = {"password"};
  r = server.PostJson("/oauth/register", m);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(JsonBody(r)["error"], "invalid_client_metadata");
  EXPECT_EQ(server.Get("/oauth/register").status, 405);
}

TEST(Registration, IsRateLimitedPerAddress) {
  TestServer server;
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(server.PostJson("/oauth/register", PublicClient()).status, 201) << i;
  auto r = server.PostJson("/oauth/register", PublicClient());
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(JsonBody(r)["error"], "rate_limited");
  ASSERT_TRUE(r.Header("Retry-After").has_value());
  EXPECT_GT(std::stoi(std::string(*r.Header("Retry-After"))), 0);
}

class ClientConfiguration : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = server_.PostJson("/oauth/register", PublicClient());
    ASSERT_EQ(r.status, 201);
    reg_ = JsonBody(r);
    uri_ = reg_["registration_client_uri"];
    token_ = reg_["registration_access_token"];
  }
  TestServer server_;
  json reg_;
  std::string uri_, token_;
};

TEST_F(ClientConfiguration, ReadNeedsTheRegistrationToken_Rfc7592_2_1) {
  auto none = server_.Get(uri_);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.Header("WWW-Authenticate").value_or(""), "Bearer");
  auto wrong = server_.Get(uri_, Bearer("not-the-token"));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_NE(wrong.Header("WWW-Authenticate").value_or("").find("invalid_token"), std::string::npos);
  auto other = server_.Get(server_.base_url() + "/oauth/register/someone-else", Bearer(token_));
  EXPECT_EQ(other.status, 401);

  auto ok = server_.Get(uri_, Bearer(token_));
  ASSERT_EQ(ok.status, 200) << ok.body;
  auto j = JsonBody(ok);
  EXPECT_EQ(j["client_id"], reg_["client_id"]);
  EXPECT_EQ(j["redirect_uris"], reg_["redirect_uris"]);
  // The token is rotated on every response (RFC 7592 §3): the old one stops working.
  ASSERT_TRUE(j["registration_access_token"].is_string());
  EXPECT_NE(j["registration_access_token"], token_);
  EXPECT_EQ(server_.Get(uri_, Bearer(token_)).status, 401);
  EXPECT_EQ(server_.Get(uri_, Bearer(j["registration_access_token"])).status, 200);
}

TEST_F(ClientConfiguration, UpdateReplacesMetadata_Rfc7592_2_2) {
  json m = PublicClient();
  m["client_id"] = reg_["client_id"];
  m["client_name"] = "Renamed";
  m["redirect_uris"] = {"http://127.0.0.1:4000/new"};
  EXPECT_EQ(server_.Send("PUT", uri_, m.dump(), {{"Content-Type", "application/json"}}).status,
            401);
  auto r = server_.Send("PUT", uri_, m.dump(),
                        {{"Content-Type", "application/json"}, Bearer(token_)[0]});
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = JsonBody(r);
  EXPECT_EQ(j["client_name"], "Renamed");
  EXPECT_EQ(j["redirect_uris"], json::array({"http://127.0.0.1:4000/new"}));
  auto stored = server_.app().services().clients->Find(reg_["client_id"].get<std::string>());
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->client_name, "Renamed");

  std::string token2 = j["registration_access_token"];
  json bad = m;
  bad["client_id"] = "another";
  EXPECT_EQ(server_.Send("PUT", uri_, bad.dump(), {Bearer(token2)[0]}).status, 400);
  bad = m;
  bad["redirect_uris"] = {"http://evil.example.com/cb"};
  auto br = server_.Send("PUT", uri_, bad.dump(), {Bearer(token2)[0]});
  EXPECT_EQ(br.status, 400);
  EXPECT_EQ(JsonBody(br)["error"], "invalid_redirect_uri");
}

TEST_F(ClientConfiguration, DeleteRemovesTheClient_Rfc7592_2_3) {
  EXPECT_EQ(server_.Send("DELETE", uri_).status, 401);
  auto r = server_.Send("DELETE", uri_, "", Bearer(token_));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(server_.Get(uri_, Bearer(token_)).status, 401);
  auto stored = server_.app().services().clients->Find(reg_["client_id"].get<std::string>());
  ASSERT_TRUE(stored);
  EXPECT_FALSE(stored->has_value());
}

}  // namespace
}  // namespace crmd
