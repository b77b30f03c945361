#include "src/webhooks/signing.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"

namespace crmd::webhooks {
namespace {

// The example secret of the Standard Webhooks reference libraries' test suites.
constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

TEST(StandardWebhooks, SignatureIsV1Base64HmacOfIdDotTimestampDotBody) {
  auto sig = Sign(kSecret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})");
  ASSERT_TRUE(sig.has_value());
  auto key = crypto::Base64Decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  ASSERT_TRUE(key.has_value());
  std::string expected = "v1," + crypto::Base64Encode(crypto::HmacSha256(
                                     *key, std::string("msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.") +
                                               R"({"test": 2432232314})"));
  EXPECT_EQ(*sig, expected);
  EXPECT_EQ(*sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(StandardWebhooks, VerifyAcceptsAnyEntryOfTheListAndRejectsTampering) {
  const std::string body = R"({"a":1})";
  auto sig = Sign(kSecret, "evt_1", 100, body);
  ASSERT_TRUE(sig.has_value());
  EXPECT_TRUE(VerifySignature(kSecret, "evt_1", 100, body, *sig));
  EXPECT_TRUE(VerifySignature(kSecret, "evt_1", 100, body, "v1,bogus " + *sig));
  EXPECT_FALSE(VerifySignature(kSecret, "evt_1", 101, body, *sig));
  EXPECT_FALSE(VerifySignature(kSecret, "evt_2", 100, body, *sig));
  EXPECT_FALSE(VerifySignature(kSecret, "evt_1", 100, body + " ", *sig));
}

TEST(StandardWebhooks, NewSecretsAreWhsecWith32Bytes) {
  SecureRandom random;
  std::string s = NewSigningSecret(random);
  EXPECT_EQ(s.rfind("whsec_", 0), 0u);
  auto key = SigningKey(s);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->size(), 32u);
  EXPECT_FALSE(SigningKey("nope").has_value());
  EXPECT_FALSE(SigningKey("whsec_c2hvcnQ=").has_value());  // too short
}

TEST(IncomingSignature, HexHmacSha256OfBody) {
  const std::string body = R"({"x":1})";
  std::string hex = crypto::Hex(crypto::HmacSha256("s3cret", body));
  EXPECT_TRUE(VerifyHexSignature("s3cret", body, "sha256=" + hex));
  EXPECT_FALSE(VerifyHexSignature("s3cret", body, hex));
  EXPECT_FALSE(VerifyHexSignature("other", body, "sha256=" + hex));
}

}  // namespace
}  // namespace crmd::webhooks
