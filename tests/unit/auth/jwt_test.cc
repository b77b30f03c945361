#include "auth/jwt.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"

namespace crmd::auth {
namespace {

constexpr const char* kIss = "https://crm.example";
constexpr const char* kAud = "https://crm.example/mcp";
constexpr int64_t kNow = 1'760'000'000;

AccessTokenClaims Claims() {
  return {.issuer = kIss,
          .audience = kAud,
          .subject = "7",
          .client_id = "c1",
          .scope = "contacts:read",
          .issued_at = kNow,
          .expires_at = kNow + 3600,
          .jti = "j1"};
}

ClaimCheck Check(int64_t now = kNow) {
  return {.issuer = kIss, .audience = kAud, .now = now, .leeway_s = 10};
}

class Jwt : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = EcKey::Generate();
    ASSERT_TRUE(k.has_value());
    key_.emplace(std::move(*k));
  }
  std::string Mint(const nlohmann::json& payload) {
    auto t = SignEs256Jws(*key_, "kid1", "at+jwt", payload);
    EXPECT_TRUE(t.has_value());
    return *t;
  }
  // Full verification as TokenService does it: parse, signature, claims.
  Result<AccessTokenClaims> Verify(const std::string& token, int64_t now = kNow) {
    auto jws = ParseEs256Jws(token);
    if (!jws) return Fail(jws.error());
    if (!key_->Verify(jws->signing_input, jws->signature))
      return Fail(Errc::kUnauthenticated, "bad signature");
    return CheckAccessTokenClaims(*jws, Check(now));
  }
  std::optional<EcKey> key_;
};

TEST_F(Jwt, MintVerifyRoundTrip_Rfc9068_2) {
  auto token = Mint(ToJson(Claims()));
  auto c = Verify(token);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->subject, "7");
  EXPECT_EQ(c->client_id, "c1");
  EXPECT_EQ(c->scope, "contacts:read");
  EXPECT_EQ(c->jti, "j1");
  EXPECT_EQ(c->expires_at, kNow + 3600);
  auto jws = ParseEs256Jws(token);
  ASSERT_TRUE(jws.has_value());
  EXPECT_EQ(jws->header["typ"], "at+jwt");
  EXPECT_EQ(jws->header["kid"], "kid1");
  EXPECT_EQ(jws->signature.size(), 64u);  // JOSE raw r||s, not DER (RFC 7518 §3.4)
}

TEST_F(Jwt, TamperedPayloadIsRefused_Rfc7515_5_2) {
  auto token = Mint(ToJson(Claims()));
  auto parts_end = token.find('.');
  auto sig_start = token.rfind('.');
  auto other = ToJson(Claims());
  other["scope"] = "contacts:read contacts:delete";
  std::string forged = token.substr(0, parts_end) + "." + crypto::Base64UrlEncode(other.dump()) +
                       token.substr(sig_start);
  EXPECT_FALSE(Verify(forged).has_value());
}

TEST_F(Jwt, TamperedSignatureIsRefused_Rfc7515_5_2) {
  auto token = Mint(ToJson(Claims()));
  auto sig = *crypto::Base64UrlDecode(token.substr(token.rfind('.') + 1));
  sig[10] ^= 1;
  std::string forged = token.substr(0, token.rfind('.') + 1) + crypto::Base64UrlEncode(sig);
  EXPECT_FALSE(Verify(forged).has_value());
}

TEST_F(Jwt, SignatureFromAnotherKeyIsRefused) {
  auto other = EcKey::Generate();
  ASSERT_TRUE(other.has_value());
  auto token = SignEs256Jws(*other, "kid1", "at+jwt", ToJson(Claims()));
  ASSERT_TRUE(token.has_value());
  EXPECT_FALSE(Verify(*token).has_value());
}

std::string Unsigned(const nlohmann::json& header, const nlohmann::json& payload,
                     const std::string& sig) {
  return crypto::Base64UrlEncode(header.dump()) + "." + crypto::Base64UrlEncode(payload.dump()) +
         "." + sig;
}

TEST_F(Jwt, AlgNoneIsRefused_Rfc8725_3_1) {
  auto t = Unsigned({{"alg", "none"}, {"typ", "at+jwt"}, {"kid", "kid1"}}, ToJson(Claims()), "");
  EXPECT_FALSE(ParseEs256Jws(t).has_value());
  EXPECT_FALSE(ParseEs256Jws(t.substr(0, t.size() - 1)).has_value());
}

TEST_F(Jwt, AlgHs256IsRefused_Rfc8725_2_1) {
  std::string input =
      crypto::Base64UrlEncode(
          nlohmann::json{{"alg", "HS256"}, {"typ", "at+jwt"}, {"kid", "kid1"}}.dump()) +
      "." + crypto::Base64UrlEncode(ToJson(Claims()).dump());
  std::string t = input + "." + crypto::Base64UrlEncode(crypto::HmacSha256("secret", input));
  auto r = ParseEs256Jws(t);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::kUnauthenticated);
}

TEST_F(Jwt, MalformedTokensAreRefused) {
  auto token = Mint(ToJson(Claims()));
  EXPECT_FALSE(ParseEs256Jws("").has_value());
  EXPECT_FALSE(ParseEs256Jws("a.b").has_value());
  EXPECT_FALSE(ParseEs256Jws(token + ".x.y").has_value());  // JWE-shaped
  EXPECT_FALSE(ParseEs256Jws(token + "=").has_value());
  EXPECT_FALSE(ParseEs256Jws("e30.e30.AAAA").has_value());
  EXPECT_FALSE(ParseEs256Jws(std::string(9000, 'a')).has_value());
}

TEST_F(Jwt, CritHeaderIsRefused_Rfc7515_4_1_11) {
  nlohmann::json header = {{"alg", "ES256"}, {"typ", "at+jwt"}, {"kid", "k"}, {"crit", {"x"}}};
  std::string input = crypto::Base64UrlEncode(header.dump()) + "." +
                      crypto::Base64UrlEncode(ToJson(Claims()).dump());
  auto sig = key_->Sign(input);
  ASSERT_TRUE(sig.has_value());
  EXPECT_FALSE(ParseEs256Jws(input + "." + crypto::Base64UrlEncode(*sig)).has_value());
}

TEST_F(Jwt, ExpiredIsRefusedAfterLeeway_Rfc9068_4) {
  auto token = Mint(ToJson(Claims()));
  EXPECT_TRUE(Verify(token, kNow + 3600 + 5).has_value());  // within leeway
  auto r = Verify(token, kNow + 3600 + 10);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "token expired");
}

TEST_F(Jwt, WrongAudienceIsRefused_Rfc9068_4) {
  auto c = ToJson(Claims());
  c["aud"] = "https://other.example/mcp";
  EXPECT_FALSE(Verify(Mint(c)).has_value());
  c["aud"] = nlohmann::json::array({"https://other.example", kAud});
  EXPECT_TRUE(Verify(Mint(c)).has_value());
  c.erase("aud");
  EXPECT_FALSE(Verify(Mint(c)).has_value());
}

TEST_F(Jwt, WrongIssuerIsRefused_Rfc9068_4) {
  auto c = ToJson(Claims());
  c["iss"] = "https://evil.example";
  EXPECT_FALSE(Verify(Mint(c)).has_value());
}

TEST_F(Jwt, WrongTypIsRefused_Rfc9068_4) {
  auto t = SignEs256Jws(*key_, "kid1", "JWT", ToJson(Claims()));
  ASSERT_TRUE(t.has_value());
  EXPECT_FALSE(Verify(*t).has_value());
}

TEST_F(Jwt, MissingJtiOrSubIsRefused) {
  auto c = ToJson(Claims());
  c.erase("jti");
  EXPECT_FALSE(Verify(Mint(c)).has_value());
  c = ToJson(Claims());
  c.erase("sub");
  EXPECT_FALSE(Verify(Mint(c)).has_value());
}

TEST(EcKeyTest, PemRoundTripKeepsThePublicKey) {
  auto k = EcKey::Generate();
  ASSERT_TRUE(k.has_value());
  auto again = EcKey::FromPrivatePem(k->PrivatePem());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(k->Thumbprint(), again->Thumbprint());
  auto sig = k->Sign("data");
  ASSERT_TRUE(sig.has_value());
  EXPECT_TRUE(again->Verify("data", *sig));
  EXPECT_FALSE(again->Verify("datb", *sig));
  auto jwk = k->PublicJwk("kid");
  EXPECT_EQ(jwk["kty"], "EC");
  EXPECT_EQ(jwk["crv"], "P-256");
  EXPECT_EQ(crypto::Base64UrlDecode(jwk["x"].get<std::string>())->size(), 32u);
  EXPECT_FALSE(jwk.contains("d"));  // never publish the private part
}

TEST(EcKeyTest, GarbagePemIsAnError) {
  EXPECT_FALSE(
      EcKey::FromPrivatePem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
          .has_value());
}

}  // namespace
}  // namespace crmd::auth
