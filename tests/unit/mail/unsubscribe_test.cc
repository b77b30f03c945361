#include "src/mail/unsubscribe.h"

#include <gtest/gtest.h>

#include "src/core/crypto.h"
#include "tests/support/fake_clock.h"

namespace crmd::mail {
namespace {

const std::string kSecret(32, 's');

TEST(LinkTokens, IssuedTokenVerifiesWithItsClaims) {
  FakeClock clock(1'000'000);
  LinkTokens tokens(kSecret, clock);
  std::string t = tokens.Issue(42, "unsubscribe", 3600);
  EXPECT_EQ(
      t.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."),
      std::string::npos);  // URL-safe as it is
  auto c = tokens.Verify(t, "unsubscribe");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->contact_id, 42);
  EXPECT_EQ(c->purpose, "unsubscribe");
  EXPECT_EQ(c->expires_at, 1'003'600);
}

TEST(LinkTokens, ExpiresAtItsTime) {
  FakeClock clock(1'000'000);
  LinkTokens tokens(kSecret, clock);
  std::string t = tokens.Issue(42, "unsubscribe", 60);
  clock.Advance(59);
  EXPECT_TRUE(tokens.Verify(t, "unsubscribe").has_value());
  clock.Advance(1);
  auto c = tokens.Verify(t, "unsubscribe");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, Errc::kConfirmationExpired);
}

TEST(LinkTokens, OtherPurposeOrSecretIsRejected) {
  FakeClock clock;
  LinkTokens tokens(kSecret, clock);
  LinkTokens other(std::string(32, 't'), clock);
  std::string t = tokens.Issue(7, "confirm", 600);
  EXPECT_FALSE(tokens.Verify(t, "unsubscribe").has_value());
  EXPECT_FALSE(other.Verify(t, "confirm").has_value());
  EXPECT_EQ(tokens.Verify(t, "unsubscribe").error().code, Errc::kInvalidArgument);
}

TEST(LinkTokens, TamperedPayloadOrMacIsRejected) {
  FakeClock clock;
  LinkTokens tokens(kSecret, clock);
  std::string t = tokens.Issue(7, "unsubscribe", 600);
  size_t dot = t.find('.');
  // Another contact id under the original MAC.
  std::string forged =
      crypto::Base64UrlEncode("8:unsubscribe:" + std::to_string(clock.NowUnix() + 600)) +
      t.substr(dot);
  EXPECT_FALSE(tokens.Verify(forged, "unsubscribe").has_value());
  std::string flipped = t;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tokens.Verify(flipped, "unsubscribe").has_value());
  for (const char* junk : {"", ".", "abc", "abc.def", "a.b.c", "!!!.???"}) {
    EXPECT_FALSE(tokens.Verify(junk, "unsubscribe").has_value()) << junk;
  }
  // The same bytes spelt another way (padding, the standard alphabet) are not the token.
  std::string payload_text = t.substr(0, dot), mac_text = t.substr(dot + 1);
  auto payload = crypto::Base64UrlDecode(payload_text);
  auto mac = crypto::Base64UrlDecode(mac_text);
  ASSERT_TRUE(payload && mac);
  std::string padded_mac = crypto::Base64Encode(*mac);  // 32 bytes: one '=' at the end
  ASSERT_EQ(padded_mac.back(), '=');
  EXPECT_FALSE(tokens.Verify(payload_text + "." + mac_text + "=", "unsubscribe").has_value());
  EXPECT_FALSE(
      tokens.Verify(crypto::Base64Encode(*payload) + "." + padded_mac, "unsubscribe").has_value());
  EXPECT_TRUE(tokens.Verify(payload_text + "." + mac_text, "unsubscribe").has_value());
  std::string oversized(600, 'a');
  oversized.append(".").append(43, 'a');
  EXPECT_FALSE(tokens.Verify(oversized, "unsubscribe").has_value());
}

}  // namespace
}  // namespace crmd::mail

namespace crmd::mail {
namespace {

TEST(LinkTokens, ReferenceTravelsInTheTokenAndBoundTextInTheMac) {
  FakeClock clock(1'000'000);
  LinkTokens tokens(std::string(40, 'k'), clock);
  std::string t = tokens.Issue(7, "unsubscribe", 3600, 42);
  auto claims = tokens.Verify(t, "unsubscribe");
  ASSERT_TRUE(claims.has_value()) << claims.error().message;
  EXPECT_EQ(claims->contact_id, 7);
  EXPECT_EQ(claims->ref, 42);
  EXPECT_EQ(claims->expires_at, 1'003'600);
  // Without a reference the token is the old shape and ref is 0.
  auto plain = tokens.Verify(tokens.Issue(7, "unsubscribe", 3600), "unsubscribe");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->ref, 0);
  // Bound text: only the same text verifies.
  std::string click = tokens.Issue(7, "click", 3600, 42, "https://a.example/x?y=1");
  EXPECT_TRUE(tokens.Verify(click, "click", "https://a.example/x?y=1").has_value());
  EXPECT_FALSE(tokens.Verify(click, "click", "https://evil.example/").has_value());
  EXPECT_FALSE(tokens.Verify(click, "click").has_value());
}

}  // namespace
}  // namespace crmd::mail
