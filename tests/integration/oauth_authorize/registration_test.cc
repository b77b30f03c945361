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

// RFC 3986 has no place for these characters; a registered URI holding them would be
// copied into Location headers and pages as it is.
TEST(Registration, RefusesRedirectUrisThatAreNotRfc3986Uris) {
  TestServer server;
  for (const char* uri :
       {"https://app.example/cb?x=\"><script>alert(1)</script>", "https://app.example/<cb>",
        "https://app.example/cb?q={x}", "https://app.example/cb|x", "https://app.example/cb^",
        "https://app.example/`cb`", "https://app.example/cb%zz", "https://app.example/cb%4",
        "https://app.example/[cb]", "com.example.app:/cb\"x"}) {
    json m = PublicClient();
    m["redirect_uris"] = {uri};
    auto r = server.PostJson("/oauth/register", m);
    EXPECT_EQ(r.status, 400) << uri;
    EXPECT_EQ(JsonBody(r)["error"], "invalid_redirect_uri") << uri;
  }
  for (const char* uri : {"https://app.example/cb?x=%22%3C", "http://[::1]:4000/cb",
                          "https://app.example/a-b_c.d~e/!$&'()+,;=:@"}) {
    json m = PublicClient();
    m["redirect_uris"] = {uri};
    EXPECT_EQ(server.PostJson("/oauth/register", m).status, 201) << uri;
  }
}

TEST(Registration, RefusesOtherUrlsThatAreNotRfc3986Urls) {
  // Each registration from its own address: more than one address may send in a minute.
  TestServer server({.configure = [](Config& c) { c.trusted_proxies = {"127.0.0.1"}; }});
  int n = 0;
  auto post = [&](const json& m) {
    return server.PostJson("/oauth/register", m,
                           {{"X-Forwarded-For", "192.0.2." + std::to_string(++n)}});
  };
  for (const char* field : {"client_uri", "logo_uri", "tos_uri", "policy_uri"}) {
    for (const char* url :
         {"https://app.example/\"onmouseover=\"alert(1)", "https://app.example/<x>", "https://",
          "https://user@app.example/", "https://app.example/a b"}) {
      json m = PublicClient();
      m[field] = url;
      auto r = post(m);
      EXPECT_EQ(r.status, 400) << field << " " << url;
      EXPECT_EQ(JsonBody(r)["error"], "invalid_client_metadata") << field << " " << url;
    }
    json m = PublicClient();
    m[field] = "https://app.example/about?lang=en#top";
    EXPECT_EQ(post(m).status, 201) << field;
  }
}

// Many addresses together cannot fill the registry: a global cap beside the per-address one.
TEST(Registration, HasAGlobalCapBesideThePerAddressLimit) {
  TestServer server({.configure = [](Config& c) {
    c.trusted_proxies = {"127.0.0.1"};
    c.registration_limit_per_hour = 3;
  }});
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(server
                  .PostJson("/oauth/register", PublicClient(),
                            {{"X-Forwarded-For", "203.0.113." + std::to_string(i + 1)}})
                  .status,
              201)
        << i;
  auto r =
      server.PostJson("/oauth/register", PublicClient(), {{"X-Forwarded-For", "198.51.100.77"}});
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(JsonBody(r)["error"], "rate_limited");
  ASSERT_TRUE(r.Header("Retry-After").has_value());
  EXPECT_GT(std::stoi(std::string(*r.Header("Retry-After"))), 0);
  // A malformed registration is refused for what it is and does not use up the cap.
  auto bad = server.Send("POST", "/oauth/register", "{not json",
                         {{"Content-Type", "application/json"}, {"X-Forwarded-For", "192.0.2.9"}});
  EXPECT_EQ(bad.status, 400);
}

// A caller must not learn from the error whether a host name resolves to a private address
// (crmd refuses those) or does not resolve at all.
TEST(Registration, MetadataDocumentFetchErrorsDoNotTellPrivateFromUnresolvable) {
  TestServer server({.configure = [](Config& c) { c.allow_private_network_targets = false; }});
  auto authorize = [&](const std::string& client_id) {
    return server.Get(
        "/oauth/authorize?response_type=code&code_challenge_method=S256"
        "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&client_id=" +
        http::PercentEncode(client_id));
  };
  auto private_host = authorize("https://localhost/client.json");
  auto no_such_host = authorize("https://no-such-host.invalid/client.json");
  EXPECT_EQ(private_host.status, 400);
  EXPECT_EQ(private_host.status, no_such_host.status);
  EXPECT_EQ(private_host.body, no_such_host.body);
  EXPECT_EQ(private_host.body.find("not allowed"), std::string::npos) << private_host.body;
  EXPECT_NE(private_host.body.find("could not be fetched"), std::string::npos) << private_host.body;
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
