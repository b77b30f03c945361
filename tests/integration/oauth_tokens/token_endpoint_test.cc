// /oauth/token over real HTTP: the three grants and their refusals (RFC 6749 §4.1.3, §5.2,
// §6, §4.4; RFC 7636 §4.6; RFC 8707; OAuth 2.1 §4.3.1 refresh rotation).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/integration/oauth_tokens/fixtures.h"
#include "tests/support/test_server.h"

namespace crmd::oauth_test {
namespace {

using testing::JsonBody;
using testing::TestServer;

class TokenEndpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    InsertClient(server_, {.client_id = "pub"});
    InsertClient(server_, {.client_id = "other"});
    InsertClient(server_,
                 {.client_id = "conf",
                  .secret = "s3cret-value",
                  .auth_method = "client_secret_basic",
                  .grant_types = {"authorization_code", "refresh_token", "client_credentials"},
                  .allowed_scopes = "contacts:read reports:read"});
  }

  http::ClientResponse Post(const std::vector<std::pair<std::string, std::string>>& fields,
                            http::Headers headers = {}) {
    return server_.PostForm("/oauth/token", FormBody(fields), std::move(headers));
  }
  http::ClientResponse Redeem(const std::string& code, const std::string& client = "pub",
                              const std::string& verifier = kVerifier,
                              const std::string& redirect = kRedirect) {
    return Post({{"grant_type", "authorization_code"},
                 {"code", code},
                 {"redirect_uri", redirect},
                 {"code_verifier", verifier},
                 {"client_id", client}});
  }
  static void ExpectError(const http::ClientResponse& r, int status, const std::string& error) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(JsonBody(r)["error"], error) << r.body;
    EXPECT_EQ(r.Header("Cache-Control").value_or(""), "no-store");
  }
  // Polls the guard: revocation must reach it within 5 s (cache refresh every 2 s).
  bool RefusedWithinFiveSeconds(const std::string& token) {
    for (int i = 0; i < 50; ++i) {
      if (!Guard(server_, token)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  TestServer server_;
};

TEST_F(TokenEndpoint, AuthorizationCodeIssuesTokens_Rfc6749_5_1) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto r = Redeem("c1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Cache-Control").value_or(""), "no-store");
  EXPECT_EQ(r.Header("Pragma").value_or(""), "no-cache");
  auto body = JsonBody(r);
  EXPECT_EQ(body["token_type"], "Bearer");
  EXPECT_EQ(body["expires_in"], 3600);
  EXPECT_EQ(body["scope"], "contacts:read contacts:write");
  EXPECT_TRUE(body["refresh_token"].is_string());
  auto p = Guard(server_, body["access_token"]);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->subject, std::to_string(kFirstAdministrator));
  EXPECT_EQ(p->client_id, "pub");
  EXPECT_EQ(p->scopes, (std::set<std::string>{"contacts:read", "contacts:write"}));
}

TEST_F(TokenEndpoint, NoRefreshTokenWithoutTheRefreshGrant_Rfc6749_4_1_4) {
  InsertClient(server_, {.client_id = "norefresh", .grant_types = {"authorization_code"}});
  InsertCode(server_, {.code = "c1", .client_id = "norefresh"});
  auto r = Redeem("c1", "norefresh");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(JsonBody(r).contains("refresh_token"));
}

TEST_F(TokenEndpoint, CodeReplayRevokesEverythingFromTheGrant_Rfc6749_10_5) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto first = JsonBody(Redeem("c1"));
  ASSERT_TRUE(Guard(server_, first["access_token"]).has_value());
  ExpectError(Redeem("c1"), 400, "invalid_grant");
  EXPECT_TRUE(RefusedWithinFiveSeconds(first["access_token"]));
  ExpectError(Post({{"grant_type", "refresh_token"},
                    {"refresh_token", first["refresh_token"]},
                    {"client_id", "pub"}}),
              400, "invalid_grant");
}

TEST_F(TokenEndpoint, WrongCodeVerifierIsInvalidGrant_Rfc7636_4_6) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  ExpectError(Redeem("c1", "pub", std::string(43, 'x')), 400, "invalid_grant");
  // The failed attempt did not burn the code for its rightful holder.
  EXPECT_EQ(Redeem("c1").status, 200);
}

TEST_F(TokenEndpoint, MissingOrMalformedVerifierIsInvalidRequest_Rfc7636_4_5) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  ExpectError(Post({{"grant_type", "authorization_code"},
                    {"code", "c1"},
                    {"redirect_uri", kRedirect},
                    {"client_id", "pub"}}),
              400, "invalid_request");
  ExpectError(Redeem("c1", "pub", "short"), 400, "invalid_request");
}

TEST_F(TokenEndpoint, PlainPkceNeverVerifies_Rfc7636_4_3) {
  // A code whose challenge was stored "plain" (challenge == verifier) cannot be redeemed.
  InsertCode(server_, {.code = "c1", .client_id = "pub", .code_challenge = kVerifier});
  ExpectError(Redeem("c1"), 400, "invalid_grant");
}

TEST_F(TokenEndpoint, WrongRedirectUriIsInvalidGrant_Rfc6749_4_1_3) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  ExpectError(Redeem("c1", "pub", kVerifier, "http://127.0.0.1:9999/other"), 400, "invalid_grant");
}

TEST_F(TokenEndpoint, CodeOfAnotherClientIsInvalidGrant_Rfc6749_4_1_3) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  ExpectError(Redeem("c1", "other"), 400, "invalid_grant");
  EXPECT_EQ(Redeem("c1").status, 200);
}

TEST_F(TokenEndpoint, UnknownOrRevokedClientIsInvalidClient_Rfc6749_5_2) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  ExpectError(Redeem("c1", "nobody"), 401, "invalid_client");
  InsertClient(server_, {.client_id = "gone", .revoked = true});
  InsertCode(server_, {.code = "c2", .client_id = "gone"});
  ExpectError(Redeem("c2", "gone"), 401, "invalid_client");
}

TEST_F(TokenEndpoint, ExpiredCodeIsInvalidGrant_Rfc6749_4_1_2) {
  InsertCode(server_, {.code = "c1", .client_id = "pub", .expires_in = -1});
  ExpectError(Redeem("c1"), 400, "invalid_grant");
}

TEST_F(TokenEndpoint, ResourceMustMatchTheCode_Rfc8707_2_2) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto r = Post({{"grant_type", "authorization_code"},
                 {"code", "c1"},
                 {"redirect_uri", kRedirect},
                 {"code_verifier", kVerifier},
                 {"client_id", "pub"},
                 {"resource", "https://elsewhere.example/mcp"}});
  ExpectError(r, 400, "invalid_target");
  r = Post({{"grant_type", "authorization_code"},
            {"code", "c1"},
            {"redirect_uri", kRedirect},
            {"code_verifier", kVerifier},
            {"client_id", "pub"},
            {"resource", server_.base_url() + "/mcp"}});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(TokenEndpoint, RefreshRotatesAndReuseRevokesTheFamily_OAuth21_4_3_1) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto first = JsonBody(Redeem("c1"));
  auto refresh = [&](const std::string& rt) {
    return Post({{"grant_type", "refresh_token"}, {"refresh_token", rt}, {"client_id", "pub"}});
  };
  auto r2 = refresh(first["refresh_token"]);
  ASSERT_EQ(r2.status, 200) << r2.body;
  auto second = JsonBody(r2);
  EXPECT_NE(second["refresh_token"], first["refresh_token"]);
  EXPECT_EQ(r2.Header("Cache-Control").value_or(""), "no-store");
  ASSERT_TRUE(Guard(server_, second["access_token"]).has_value());
  // The rotated-out token comes back: somebody copied it. Everything of the grant dies.
  ExpectError(refresh(first["refresh_token"]), 400, "invalid_grant");
  ExpectError(refresh(second["refresh_token"]), 400, "invalid_grant");
  EXPECT_TRUE(RefusedWithinFiveSeconds(second["access_token"]));
  EXPECT_TRUE(RefusedWithinFiveSeconds(first["access_token"]));
}

TEST_F(TokenEndpoint, RefreshMayNarrowButNotWidenScope_Rfc6749_6) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto first = JsonBody(Redeem("c1"));
  auto wide = Post({{"grant_type", "refresh_token"},
                    {"refresh_token", first["refresh_token"]},
                    {"client_id", "pub"},
                    {"scope", "contacts:read contacts:delete"}});
  ExpectError(wide, 400, "invalid_scope");
  auto narrow = Post({{"grant_type", "refresh_token"},
                      {"refresh_token", first["refresh_token"]},
                      {"client_id", "pub"},
                      {"scope", "contacts:read"}});
  ASSERT_EQ(narrow.status, 200) << narrow.body;
  auto body = JsonBody(narrow);
  EXPECT_EQ(body["scope"], "contacts:read");
  auto p = Guard(server_, body["access_token"]);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->scopes, std::set<std::string>{"contacts:read"});
  // The new refresh token still carries the whole grant.
  auto again = Post({{"grant_type", "refresh_token"},
                     {"refresh_token", body["refresh_token"]},
                     {"client_id", "pub"}});
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(JsonBody(again)["scope"], "contacts:read contacts:write");
}

// Tokens carry at most the person's role as it is when they are issued
// (docs/oauth-authorize.md "People and roles"): a grant that outlived a demotion (say, a
// code redeemed while the role changed) refreshes to the new role's scopes only, and a
// disabled person's code or refresh token is refused.
TEST_F(TokenEndpoint, CodeAndRefreshAreCappedAtThePersonsRoleNow) {
  auto& users = *server_.app().services().users;
  auto ana = users.Create("ana@example.com", "correct horse battery", false);  // an editor
  ASSERT_TRUE(ana);
  InsertCode(server_, {.code = "c1",
                       .client_id = "pub",
                       .user_id = ana->id,
                       .scope = "contacts:read contacts:write settings:write"});
  auto first = Redeem("c1");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(JsonBody(first)["scope"], "contacts:read contacts:write");

  // The role drops underneath the grant (as a concurrent role change could leave it).
  auto demoted = server_.app().services().db->Write([&](store::Conn& c) {
    return c.Exec("UPDATE users SET role = 'viewer' WHERE id = ?", {ana->id});
  });
  ASSERT_TRUE(demoted);
  auto refreshed = Post({{"grant_type", "refresh_token"},
                         {"refresh_token", JsonBody(first)["refresh_token"]},
                         {"client_id", "pub"}});
  ASSERT_EQ(refreshed.status, 200) << refreshed.body;
  auto body = JsonBody(refreshed);
  EXPECT_EQ(body["scope"], "contacts:read");
  auto p = Guard(server_, body["access_token"]);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->scopes, std::set<std::string>{"contacts:read"});
  ExpectError(Post({{"grant_type", "refresh_token"},
                    {"refresh_token", body["refresh_token"]},
                    {"client_id", "pub"},
                    {"scope", "contacts:write"}}),
              400, "invalid_scope");

  // A disabled person's code and refresh token give nothing.
  InsertCode(server_, {.code = "c2", .client_id = "pub", .user_id = ana->id});
  auto disabled = server_.app().services().db->Write([&](store::Conn& c) {
    return c.Exec("UPDATE users SET disabled_at = 1 WHERE id = ?", {ana->id});
  });
  ASSERT_TRUE(disabled);
  ExpectError(Redeem("c2"), 400, "invalid_grant");
  ExpectError(Post({{"grant_type", "refresh_token"},
                    {"refresh_token", body["refresh_token"]},
                    {"client_id", "pub"}}),
              400, "invalid_grant");
}

TEST_F(TokenEndpoint, RefreshTokenOfAnotherClientIsInvalidGrant) {
  InsertCode(server_, {.code = "c1", .client_id = "pub"});
  auto first = JsonBody(Redeem("c1"));
  ExpectError(Post({{"grant_type", "refresh_token"},
                    {"refresh_token", first["refresh_token"]},
                    {"client_id", "other"}}),
              400, "invalid_grant");
  ExpectError(
      Post({{"grant_type", "refresh_token"}, {"refresh_token", "nope"}, {"client_id", "pub"}}), 400,
      "invalid_grant");
}

TEST_F(TokenEndpoint, ClientCredentialsWithBasicAuth_Rfc6749_4_4) {
  auto r = Post({{"grant_type", "client_credentials"}}, BasicAuth("conf", "s3cret-value"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = JsonBody(r);
  EXPECT_FALSE(body.contains("refresh_token"));
  EXPECT_EQ(body["scope"], "contacts:read reports:read");
  auto p = Guard(server_, body["access_token"]);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->subject, "client:conf");

  auto narrow = Post({{"grant_type", "client_credentials"},
                      {"scope", "reports:read"},
                      {"client_id", "conf"},
                      {"client_secret", "s3cret-value"}});
  ASSERT_EQ(narrow.status, 200) << narrow.body;
  EXPECT_EQ(JsonBody(narrow)["scope"], "reports:read");
  ExpectError(Post({{"grant_type", "client_credentials"}, {"scope", "contacts:delete"}},
                   BasicAuth("conf", "s3cret-value")),
              400, "invalid_scope");
}

TEST_F(TokenEndpoint, ClientCredentialsRefusesPublicClients_Rfc6749_4_4_2) {
  ExpectError(Post({{"grant_type", "client_credentials"}, {"client_id", "pub"}}), 400,
              "unauthorized_client");
}

TEST_F(TokenEndpoint, WrongSecretIs401WithBasicChallenge_Rfc6749_5_2) {
  auto r = Post({{"grant_type", "client_credentials"}}, BasicAuth("conf", "wrong"));
  ExpectError(r, 401, "invalid_client");
  EXPECT_EQ(r.Header("WWW-Authenticate").value_or("").rfind("Basic", 0), 0u);
  ExpectError(Post({{"grant_type", "client_credentials"},
                    {"client_id", "conf"},
                    {"client_secret", "wrong"}}),
              401, "invalid_client");
  // A confidential client cannot fall back to naming itself.
  ExpectError(Post({{"grant_type", "client_credentials"}, {"client_id", "conf"}}), 401,
              "invalid_client");
}

TEST_F(TokenEndpoint, MalformedRequestsAreRefused_Rfc6749_5_2) {
  ExpectError(Post({{"client_id", "pub"}}), 400, "invalid_request");
  ExpectError(Post({{"grant_type", "password"}, {"client_id", "pub"}}), 400,
              "unsupported_grant_type");
  ExpectError(Post({{"grant_type", "client_credentials"},
                    {"grant_type", "client_credentials"},
                    {"client_id", "pub"}}),
              400, "invalid_request");
  auto json = server_.PostJson("/oauth/token", {{"grant_type", "client_credentials"}});
  ExpectError(json, 400, "invalid_request");
  EXPECT_EQ(server_.Get("/oauth/token").status, 405);
  auto both = Post({{"grant_type", "client_credentials"}, {"client_secret", "s3cret-value"}},
                   BasicAuth("conf", "s3cret-value"));
  ExpectError(both, 400, "invalid_request");
}

}  // namespace
}  // namespace crmd::oauth_test
