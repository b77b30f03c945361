#include "auth/client_auth.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "tests/support/test_server.h"

namespace crmd::auth {
namespace {

class ClientAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::Open("sqlite:" + dir_.path() + "/c.db");
    ASSERT_TRUE(db.has_value());
    db_ = std::move(*db);
    Insert("pub", std::nullopt, "none");
    // A secret with characters that must be form-encoded inside Basic (RFC 6749 §2.3.1).
    Insert("conf:1", "p@ss word+%", "client_secret_basic");
  }
  void Insert(const std::string& id, std::optional<std::string> secret, const std::string& method) {
    auto r = db_->Write([&](store::Conn& c) -> Result<int64_t> {
      return c.Exec(
          "INSERT INTO oauth_clients (client_id, client_secret_hash, token_endpoint_auth_method, "
          "redirect_uris, grant_types, metadata, source, created_at, updated_at) "
          "VALUES (?, ?, ?, '[]', '[\"client_credentials\"]', '{}', 'admin', 0, 0)",
          {id, secret ? store::Value(crypto::HashSecret(*secret)) : store::Null(), method});
    });
    ASSERT_TRUE(r.has_value()) << r.error().detail;
  }
  OAuthResult<OAuthClient> Auth(http::Headers headers, Form form) {
    http::Request req;
    req.headers = std::move(headers);
    return AuthenticateClient(*db_, req, form);
  }
  static http::Headers Basic(const std::string& id, const std::string& secret) {
    return {{"Authorization", "Basic " + crypto::Base64Encode(http::PercentEncode(id) + ":" +
                                                              http::PercentEncode(secret))}};
  }

  crmd::testing::TempDir dir_;
  std::unique_ptr<store::Database> db_;
};

TEST_F(ClientAuth, BasicCredentialsAreFormDecoded_Rfc6749_2_3_1) {
  auto c = Auth(Basic("conf:1", "p@ss word+%"), {});
  ASSERT_TRUE(c.has_value()) << c.error().description;
  EXPECT_EQ(c->client_id, "conf:1");
  EXPECT_TRUE(c->authenticated_with_secret);
  EXPECT_TRUE(c->Confidential());
  EXPECT_TRUE(c->AllowsGrant("client_credentials"));
}

TEST_F(ClientAuth, SecretPostWorksForAConfidentialClient) {
  auto c = Auth({}, {{"client_id", "conf:1"}, {"client_secret", "p@ss word+%"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->authenticated_with_secret);
}

TEST_F(ClientAuth, WrongSecretUnknownClientAndMissingSecretAreInvalidClient) {
  auto wrong = Auth(Basic("conf:1", "nope"), {});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().status, 401);
  EXPECT_EQ(wrong.error().error, "invalid_client");
  EXPECT_TRUE(wrong.error().basic_challenge);
  EXPECT_FALSE(Auth(Basic("ghost", "x"), {}).has_value());
  EXPECT_FALSE(Auth({}, {{"client_id", "conf:1"}}).has_value());
  EXPECT_FALSE(Auth({}, {}).has_value());
  // A public client has no secret to present.
  EXPECT_FALSE(Auth({}, {{"client_id", "pub"}, {"client_secret", "x"}}).has_value());
}

TEST_F(ClientAuth, PublicClientNamesItself_OAuth21_2_4) {
  auto c = Auth({}, {{"client_id", "pub"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->authenticated_with_secret);
  EXPECT_FALSE(c->Confidential());
}

TEST_F(ClientAuth, TwoMethodsAtOnceIsInvalidRequest_Rfc6749_2_3) {
  auto c = Auth(Basic("conf:1", "p@ss word+%"), {{"client_secret", "p@ss word+%"}});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().error, "invalid_request");
  auto mismatch = Auth(Basic("conf:1", "p@ss word+%"), {{"client_id", "pub"}});
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_EQ(mismatch.error().error, "invalid_client");
}

}  // namespace
}  // namespace crmd::auth
