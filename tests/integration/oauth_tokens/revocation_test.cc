// /oauth/revoke (RFC 7009), /oauth/introspect (RFC 7662) and the bearer guard's refusals
// (RFC 6750, RFC 9068 §4) over real HTTP.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/integration/oauth_tokens/fixtures.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::oauth_test {
namespace {

using testing::JsonBody;
using testing::MintTestToken;
using testing::TestServer;

class Revocation : public ::testing::Test {
 protected:
  void SetUp() override {
    InsertClient(server_, {.client_id = "pub"});
    InsertClient(server_,
                 {.client_id = "conf",
                  .secret = "s3cret-value",
                  .auth_method = "client_secret_basic",
                  .grant_types = {"authorization_code", "refresh_token", "client_credentials"},
                  .allowed_scopes = "contacts:read"});
    InsertClient(server_, {.client_id = "conf2",
                           .secret = "another-secret",
                           .auth_method = "client_secret_post",
                           .grant_types = {"client_credentials"},
                           .allowed_scopes = "contacts:read"});
  }
  nlohmann::json CodeTokens(const std::string& client = "pub") {
    InsertCode(server_, {.code = "code-" + client, .client_id = client});
    http::Headers h;
    std::vector<std::pair<std::string, std::string>> f = {{"grant_type", "authorization_code"},
                                                          {"code", "code-" + client},
                                                          {"redirect_uri", kRedirect},
                                                          {"code_verifier", kVerifier}};
    if (client == "conf")
      h = BasicAuth("conf", "s3cret-value");
    else
      f.emplace_back("client_id", client);
    auto r = server_.PostForm("/oauth/token", FormBody(f), h);
    EXPECT_EQ(r.status, 200) << r.body;
    return JsonBody(r);
  }
  http::ClientResponse Revoke(const std::string& token, const std::string& client = "pub",
                              const std::string& hint = "") {
    std::vector<std::pair<std::string, std::string>> f = {{"token", token}, {"client_id", client}};
    if (!hint.empty()) f.emplace_back("token_type_hint", hint);
    return server_.PostForm("/oauth/revoke", FormBody(f));
  }
  nlohmann::json Introspect(const std::string& token, http::Headers auth) {
    auto r = server_.PostForm("/oauth/introspect", FormBody({{"token", token}}), std::move(auth));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.Header("Cache-Control").value_or(""), "no-store");
    return JsonBody(r);
  }
  bool RefusedWithinFiveSeconds(const std::string& token) {
    for (int i = 0; i < 50; ++i) {
      if (!Guard(server_, token)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  std::string ClientCredentialsToken() {
    auto r = server_.PostForm("/oauth/token", FormBody({{"grant_type", "client_credentials"}}),
                              BasicAuth("conf", "s3cret-value"));
    EXPECT_EQ(r.status, 200) << r.body;
    return JsonBody(r).value("access_token", "");
  }
  int64_t Count(const std::string& sql) {
    auto n = server_.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    return n.value_or(-1);
  }
  TestServer server_;
};

TEST_F(Revocation, RevokedAccessTokenIsRefusedByTheGuard_Rfc7009_2_1) {
  auto t = CodeTokens();
  ASSERT_TRUE(Guard(server_, t["access_token"]).has_value());
  auto r = Revoke(t["access_token"], "pub", "access_token");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(RefusedWithinFiveSeconds(t["access_token"]));
  // Revoking an access token leaves the refresh token usable.
  auto rr = server_.PostForm("/oauth/token", FormBody({{"grant_type", "refresh_token"},
                                                       {"refresh_token", t["refresh_token"]},
                                                       {"client_id", "pub"}}));
  EXPECT_EQ(rr.status, 200) << rr.body;
}

TEST_F(Revocation, RevokingARefreshTokenRevokesItsGrant_Rfc7009_2_1) {
  auto t = CodeTokens();
  EXPECT_EQ(Revoke(t["refresh_token"], "pub", "refresh_token").status, 200);
  EXPECT_TRUE(RefusedWithinFiveSeconds(t["access_token"]));
  auto rr = server_.PostForm("/oauth/token", FormBody({{"grant_type", "refresh_token"},
                                                       {"refresh_token", t["refresh_token"]},
                                                       {"client_id", "pub"}}));
  EXPECT_EQ(rr.status, 400);
  EXPECT_EQ(JsonBody(rr)["error"], "invalid_grant");
}

TEST_F(Revocation, UnknownTokenStillAnswers200_Rfc7009_2_2) {
  EXPECT_EQ(Revoke("not-a-token").status, 200);
  EXPECT_EQ(Revoke("a.b.c", "pub", "access_token").status, 200);
}

TEST_F(Revocation, AnotherClientCannotRevokeMyToken_Rfc7009_2_1) {
  InsertClient(server_, {.client_id = "intruder"});
  auto t = CodeTokens();
  EXPECT_EQ(Revoke(t["access_token"], "intruder").status, 200);
  EXPECT_EQ(Revoke(t["refresh_token"], "intruder").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  EXPECT_TRUE(Guard(server_, t["access_token"]).has_value());
}

TEST_F(Revocation, RevocationRequiresClientAuthentication_Rfc7009_2_1) {
  auto r = server_.PostForm("/oauth/revoke", FormBody({{"token", "x"}}));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(JsonBody(r)["error"], "invalid_client");
}

TEST_F(Revocation, IntrospectionActiveThenInactive_Rfc7662_2_2) {
  auto t = CodeTokens("conf");
  auto auth = BasicAuth("conf", "s3cret-value");
  auto a = Introspect(t["access_token"], auth);
  EXPECT_EQ(a["active"], true);
  EXPECT_EQ(a["client_id"], "conf");
  EXPECT_EQ(a["sub"], std::to_string(kFirstAdministrator));
  EXPECT_EQ(a["scope"], "contacts:read contacts:write");
  EXPECT_EQ(a["aud"], server_.base_url() + "/mcp");
  EXPECT_TRUE(a["exp"].is_number());
  auto rt = Introspect(t["refresh_token"], auth);
  EXPECT_EQ(rt["active"], true);

  auto rev = server_.PostForm("/oauth/revoke", FormBody({{"token", t["access_token"]}}), auth);
  EXPECT_EQ(rev.status, 200);
  EXPECT_EQ(Introspect(t["access_token"], auth), nlohmann::json({{"active", false}}));
  EXPECT_EQ(Introspect("garbage", auth), nlohmann::json({{"active", false}}));
}

TEST_F(Revocation, IntrospectionOfAnotherClientsTokenIsInactive_Rfc7662_4) {
  auto t = CodeTokens("conf");
  auto other =
      server_.PostForm("/oauth/introspect", FormBody({{"token", t["access_token"]},
                                                      {"client_id", "conf2"},
                                                      {"client_secret", "another-secret"}}));
  ASSERT_EQ(other.status, 200);
  EXPECT_EQ(JsonBody(other), nlohmann::json({{"active", false}}));
}

TEST_F(Revocation, IntrospectionRefusesPublicClients_Rfc7662_2_1) {
  auto t = CodeTokens();
  auto r = server_.PostForm("/oauth/introspect",
                            FormBody({{"token", t["access_token"]}, {"client_id", "pub"}}));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(JsonBody(r)["error"], "invalid_client");
}

TEST_F(Revocation, ExpiredAndForeignAudienceTokensAreRefused_Rfc9068_4) {
  auto expired = Guard(server_, MintTestToken(server_, {.ttl_seconds = -120}));
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error().detail, "invalid_token");
  auto foreign = Guard(server_, MintTestToken(server_, {.audience = "https://other.example/mcp"}));
  ASSERT_FALSE(foreign.has_value());
  EXPECT_EQ(foreign.error().detail, "invalid_token");
}

TEST_F(Revocation, McpRefusesWrongAudienceAndQueryTokens_Rfc6750_2_3) {
  auto foreign = MintTestToken(server_, {.audience = "https://other.example/mcp"});
  auto r = server_.PostJson("/mcp", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
                            testing::BearerHeaders(foreign));
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.Header("WWW-Authenticate").value_or("").find("invalid_token"), std::string::npos);
  auto good = MintTestToken(server_);
  auto q = server_.PostJson("/mcp?access_token=" + good,
                            {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_TRUE(q.status == 400 || q.status == 401) << q.status;
}

TEST_F(Revocation, RevokedMintedTokenIsRefused) {
  auto token = MintTestToken(server_);
  ASSERT_TRUE(Guard(server_, token).has_value());
  auto r =
      server_.PostForm("/oauth/revoke", FormBody({{"token", token}, {"client_id", "test-client"}}));
  // test-client is not registered: client authentication fails and nothing is revoked.
  EXPECT_EQ(r.status, 401);
  InsertClient(server_, {.client_id = "test-client"});
  EXPECT_EQ(
      server_.PostForm("/oauth/revoke", FormBody({{"token", token}, {"client_id", "test-client"}}))
          .status,
      200);
  EXPECT_TRUE(RefusedWithinFiveSeconds(token));
}

// client_credentials tokens carry their grant (gid) and are not recorded one by one: a
// client asking again and again joins one live grant and writes nothing (issue 12).
TEST_F(Revocation, ClientCredentialsTokensJoinOneGrantAndAreRevokedWithIt) {
  auto a = ClientCredentialsToken();
  auto b = ClientCredentialsToken();
  ASSERT_NE(a, b);
  EXPECT_TRUE(Guard(server_, a).has_value());
  EXPECT_TRUE(Guard(server_, b).has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM grants WHERE client_id = 'conf'"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM access_tokens WHERE client_id = 'conf'"), 0);
  auto auth = BasicAuth("conf", "s3cret-value");
  EXPECT_EQ(Introspect(a, auth)["active"], true);

  // The administrator revokes the grant (the console's "revoke" on connected apps).
  auto grants = server_.app().services().grants->List(std::string("conf"));
  ASSERT_TRUE(grants.has_value());
  ASSERT_EQ(grants->size(), 1u);
  ASSERT_TRUE(server_.app().services().grants->Revoke((*grants)[0].grant_id).has_value());
  EXPECT_TRUE(RefusedWithinFiveSeconds(a));
  EXPECT_TRUE(RefusedWithinFiveSeconds(b));
  EXPECT_EQ(Introspect(a, auth), nlohmann::json({{"active", false}}));

  // The next request does not join the revoked grant: a new one, and its token works.
  auto c = ClientCredentialsToken();
  EXPECT_TRUE(Guard(server_, c).has_value());
  EXPECT_EQ(Introspect(c, auth)["active"], true);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM grants WHERE client_id = 'conf'"), 2);
  EXPECT_FALSE(Guard(server_, a).has_value());
}

TEST_F(Revocation, RevokingOneClientCredentialsTokenLeavesTheOthers_Rfc7009_2_1) {
  auto a = ClientCredentialsToken();
  auto b = ClientCredentialsToken();
  auto auth = BasicAuth("conf", "s3cret-value");
  // Another client cannot revoke it, even though it has no record yet.
  auto foreign = server_.PostForm(
      "/oauth/revoke",
      FormBody({{"token", a}, {"client_id", "conf2"}, {"client_secret", "another-secret"}}));
  EXPECT_EQ(foreign.status, 200);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM access_tokens"), 0);

  auto r = server_.PostForm("/oauth/revoke",
                            FormBody({{"token", a}, {"token_type_hint", "access_token"}}), auth);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(RefusedWithinFiveSeconds(a));
  EXPECT_TRUE(Guard(server_, b).has_value());
  EXPECT_EQ(Introspect(a, auth), nlohmann::json({{"active", false}}));
  EXPECT_EQ(Introspect(b, auth)["active"], true);
  EXPECT_EQ(
      Count(
          "SELECT COUNT(*) FROM access_tokens WHERE client_id = 'conf' AND revoked_at IS NOT NULL"),
      1);
  // Revoking it again changes nothing and still answers 200.
  EXPECT_EQ(server_.PostForm("/oauth/revoke", FormBody({{"token", a}}), auth).status, 200);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM access_tokens"), 1);
}

TEST_F(Revocation, DeletingTheClientRefusesItsClientCredentialsTokens_Rfc7592_2_3) {
  auto a = ClientCredentialsToken();
  ASSERT_TRUE(Guard(server_, a).has_value());
  ASSERT_TRUE(server_.app().services().clients->Delete("conf").has_value());
  EXPECT_TRUE(RefusedWithinFiveSeconds(a));
}

}  // namespace
}  // namespace crmd::oauth_test
