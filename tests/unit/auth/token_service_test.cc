#include "auth/token_service.h"

#include <gtest/gtest.h>

#include "auth/bearer.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::auth {
namespace {

constexpr const char* kIssuer = "https://crm.example";
constexpr const char* kAudience = "https://crm.example/mcp";

class TokenServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/t.db");
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
    tokens_ = std::make_unique<TokenService>(
        TokenServiceOptions{.issuer = kIssuer,
                            .resource = kAudience,
                            .access_token_ttl = 3600,
                            .signing_key_rotation = 24 * 3600,
                            .revocation_refresh = std::chrono::milliseconds(0)},
        *db_, clock_, random_);
  }

  IssuedAccessToken Issue(AccessTokenRequest req = {}) {
    if (req.subject.empty()) req.subject = "7";
    if (req.client_id.empty()) req.client_id = "c1";
    if (req.scopes.empty()) req.scopes = {"contacts:read", "tags:read"};
    auto t = tokens_->IssueAccessToken(req);
    EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().detail);
    return t ? *t : IssuedAccessToken{};
  }

  int64_t Count(const std::string& sql) {
    auto n = db_->Read([&](store::Conn& c) -> Result<int64_t> {
      auto r = c.QueryOne(sql);
      if (!r) return Fail(r.error());
      return (*r)->Int(0);
    });
    return n.value_or(-1);
  }

  crmd::testing::TempDir dir_;
  FakeClock clock_;
  SecureRandom random_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<TokenService> tokens_;
};

TEST_F(TokenServiceTest, IssuedTokenVerifiesIntoAPrincipal) {
  auto t = Issue();
  auto p = tokens_->Verify(t.token);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->subject, "7");
  EXPECT_EQ(p->client_id, "c1");
  EXPECT_EQ(p->scopes, (std::set<std::string>{"contacts:read", "tags:read"}));
  EXPECT_EQ(p->token_id, t.jti);
  EXPECT_EQ(p->expires_at, clock_.NowUnix() + 3600);
  EXPECT_EQ(t.expires_in, 3600);
}

TEST_F(TokenServiceTest, IssuanceIsRecordedWithItsGrant) {
  auto t = Issue();
  EXPECT_EQ(Count("SELECT COUNT(*) FROM access_tokens WHERE jti = '" + t.jti + "'"), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM grants g JOIN access_tokens a ON a.grant_id = g.grant_id"),
            1);
}

TEST_F(TokenServiceTest, ExpiredTokenIsRefused_Rfc9068_4) {
  auto t = Issue();
  clock_.Advance(3600 + 11);
  auto p = tokens_->Verify(t.token);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, Errc::kUnauthenticated);
}

TEST_F(TokenServiceTest, AVerifiedTokenStillExpiresAndIsStillRevocable) {
  // The first Verify puts the token in the cache of verified tokens; the cache must not
  // outlive exp (with leeway) nor hide a revocation.
  auto t = Issue();
  ASSERT_TRUE(tokens_->Verify(t.token).has_value());
  ASSERT_TRUE(tokens_->Verify(t.token).has_value());
  clock_.Advance(3600 + 9);  // within the 10 s leeway
  EXPECT_TRUE(tokens_->Verify(t.token).has_value());
  clock_.Advance(2);
  EXPECT_FALSE(tokens_->Verify(t.token).has_value());

  auto u = Issue();
  ASSERT_TRUE(tokens_->Verify(u.token).has_value());
  ASSERT_TRUE(db_->Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec("UPDATE access_tokens SET revoked_at = 1 WHERE jti = ?", {u.jti});
  }));
  tokens_->RevocationsChanged();
  EXPECT_FALSE(tokens_->Verify(u.token).has_value());
}

TEST_F(TokenServiceTest, AVerifiedTokenIsRefusedOnceItsKeyIsDropped) {
  auto t = Issue();
  auto k1 = tokens_->keys().Current();
  ASSERT_TRUE(k1.has_value());
  ASSERT_TRUE(tokens_->Verify(t.token).has_value());
  // A token with a long lifetime outlives its key's grace period in this test.
  auto long_lived = Issue({.ttl_seconds = 10 * 24 * 3600});
  ASSERT_TRUE(tokens_->Verify(long_lived.token).has_value());
  clock_.Advance(24 * 3600 + 1);
  ASSERT_TRUE(tokens_->keys().Current().has_value());  // rotates
  clock_.Advance(3600 + 10 + 300 + 1);
  ASSERT_TRUE(tokens_->keys().Jwks().has_value());  // drops k1
  ASSERT_EQ(tokens_->keys().Find(k1->kid), nullptr);
  EXPECT_FALSE(tokens_->Verify(long_lived.token).has_value());
}

TEST_F(TokenServiceTest, TokenForAnotherResourceIsRefused_Rfc8707) {
  auto t = Issue({.audience = "https://other.example/mcp"});
  EXPECT_FALSE(tokens_->Verify(t.token).has_value());
}

TEST_F(TokenServiceTest, RevokedJtiIsRefusedAfterRefresh_Rfc7009_2) {
  auto t = Issue();
  ASSERT_TRUE(tokens_->Verify(t.token).has_value());
  auto st = db_->Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec("UPDATE access_tokens SET revoked_at = 1 WHERE jti = ?", {t.jti});
  });
  ASSERT_TRUE(st.has_value());
  tokens_->RevocationsChanged();
  auto p = tokens_->Verify(t.token);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message, "token revoked");
}

TEST_F(TokenServiceTest, RotationKeepsOldTokensValidUntilTheKeyExpires) {
  auto before = Issue();
  auto k1 = tokens_->keys().Current();
  ASSERT_TRUE(k1.has_value());
  clock_.Advance(24 * 3600 + 1);
  auto k2 = tokens_->keys().Current();
  ASSERT_TRUE(k2.has_value());
  EXPECT_NE(k1->kid, k2->kid);
  auto jwks = tokens_->keys().Jwks();
  ASSERT_TRUE(jwks.has_value());
  EXPECT_EQ((*jwks)["keys"].size(), 2u);
  auto after = Issue();
  EXPECT_TRUE(tokens_->Verify(after.token).has_value());
  // The old key's grace period covers the longest token lifetime, then it is dropped.
  clock_.Advance(3600 + 10 + 300 + 1);
  jwks = tokens_->keys().Jwks();
  ASSERT_TRUE(jwks.has_value());
  ASSERT_EQ((*jwks)["keys"].size(), 1u);
  EXPECT_EQ((*jwks)["keys"][0]["kid"], k2->kid);
  EXPECT_EQ(tokens_->keys().Find(k1->kid), nullptr);
}

TEST_F(TokenServiceTest, KeysSurviveARestart) {
  auto t = Issue();
  TokenService again(TokenServiceOptions{.issuer = kIssuer, .resource = kAudience}, *db_, clock_,
                     random_);
  EXPECT_TRUE(again.Verify(t.token).has_value());
  auto k = again.keys().Current();
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM signing_keys"), 1);
}

TEST_F(TokenServiceTest, RevokingAClientOrUserRevokesAllItsTokens) {
  auto a = Issue({.client_id = "c1"});
  auto b = Issue({.client_id = "c2"});
  auto n = tokens_->RevokeClientTokens("c1");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(tokens_->Verify(a.token).has_value());
  EXPECT_TRUE(tokens_->Verify(b.token).has_value());
  auto other_user = Issue({.subject = "8", .client_id = "c2"});
  // A numeric subject is recorded as the grant's user.
  auto u = tokens_->RevokeUserTokens(7);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(*u, 1);
  EXPECT_FALSE(tokens_->Verify(b.token).has_value());
  EXPECT_TRUE(tokens_->Verify(other_user.token).has_value());
}

http::Request WithAuth(std::string value) {
  http::Request r;
  r.method = "POST";
  r.path = "/mcp";
  r.headers.emplace_back("Authorization", std::move(value));
  return r;
}

TEST_F(TokenServiceTest, BearerGuardAcceptsHeaderToken_Rfc6750_2_1) {
  BearerGuard guard(*tokens_);
  auto t = Issue();
  auto p = guard.Authenticate(WithAuth("Bearer " + t.token));
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ((*p)->subject, "7");
  EXPECT_TRUE(guard.Authenticate(WithAuth("bearer  " + t.token)).has_value());
}

TEST_F(TokenServiceTest, BearerGuardMissingTokenHasNoErrorCode_Rfc6750_3_1) {
  BearerGuard guard(*tokens_);
  http::Request none;
  auto e = guard.Authenticate(none);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, Errc::kUnauthenticated);
  EXPECT_EQ(e.error().detail, kBearerMissing);
  EXPECT_EQ(BearerStatus(e.error()), 401);
  EXPECT_EQ(BearerChallenge(e.error(), "https://x/.well-known/oauth-protected-resource/mcp"),
            "Bearer resource_metadata=\"https://x/.well-known/oauth-protected-resource/mcp\"");
  EXPECT_EQ(guard.Authenticate(WithAuth("Basic Zm9vOmJhcg==")).error().detail, kBearerMissing);
}

TEST_F(TokenServiceTest, BearerGuardRefusesQueryToken_Rfc6750_2_3) {
  BearerGuard guard(*tokens_);
  auto t = Issue();
  http::Request r;
  r.path = "/mcp";
  r.query = "access_token=" + t.token;
  auto e = guard.Authenticate(r);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().detail, kBearerInvalidRequest);
  EXPECT_EQ(BearerStatus(e.error()), 400);
  r.headers.emplace_back("Authorization", "Bearer " + t.token);
  EXPECT_FALSE(guard.Authenticate(r).has_value());
}

TEST_F(TokenServiceTest, BearerGuardInvalidTokenChallenge_Rfc6750_3_1) {
  BearerGuard guard(*tokens_);
  auto e = guard.Authenticate(WithAuth("Bearer abc.def.ghi"));
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().detail, kBearerInvalidToken);
  auto challenge = BearerChallenge(e.error(), "https://x/m", "contacts:read");
  EXPECT_NE(challenge.find("error=\"invalid_token\""), std::string::npos) << challenge;
  EXPECT_NE(challenge.find("scope=\"contacts:read\""), std::string::npos) << challenge;
  EXPECT_EQ(guard.Authenticate(WithAuth("Bearer")).error().detail, kBearerInvalidRequest);
  EXPECT_EQ(guard.Authenticate(WithAuth("Bearer a b")).error().detail, kBearerInvalidRequest);
  auto two = WithAuth("Bearer x");
  two.headers.emplace_back("authorization", "Bearer y");
  EXPECT_EQ(guard.Authenticate(two).error().detail, kBearerInvalidRequest);
}

// The b64token check is made only for a token the cache of verified tokens does not hold;
// a cached token's neighbours (one byte more) are not in it, so they are still checked.
TEST_F(TokenServiceTest, BearerGuardChecksTheTokenSyntaxOfEveryTokenNotVerifiedBefore_Rfc6750_2_1) {
  BearerGuard guard(*tokens_);
  auto t = Issue();
  ASSERT_TRUE(guard.Authenticate(WithAuth("Bearer " + t.token)).has_value());
  ASSERT_TRUE(guard.Authenticate(WithAuth("Bearer " + t.token)).has_value());  // from the cache
  for (std::string bad : {t.token + "!", t.token + "\x01", t.token + "=a", "!" + t.token}) {
    auto e = guard.Authenticate(WithAuth("Bearer " + bad));
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_EQ(e.error().detail, kBearerInvalidRequest) << bad;
    EXPECT_EQ(BearerStatus(e.error()), 400) << bad;
  }
  // Well formed (b64token allows trailing '='), but not the token that was signed.
  auto padded = guard.Authenticate(WithAuth("Bearer " + t.token + "="));
  ASSERT_FALSE(padded.has_value());
  EXPECT_EQ(padded.error().detail, kBearerInvalidToken);
  EXPECT_TRUE(guard.Authenticate(WithAuth("Bearer " + t.token)).has_value());
}

}  // namespace
}  // namespace crmd::auth
