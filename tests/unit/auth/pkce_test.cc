#include "auth/pkce.h"

#include <gtest/gtest.h>

#include <string>

namespace crmd::auth::pkce {
namespace {

// RFC 7636 Appendix B.
constexpr const char* kVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
constexpr const char* kChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

TEST(Pkce, S256MatchesAppendixBVector_Rfc7636_AppendixB) {
  EXPECT_EQ(S256Challenge(kVerifier), kChallenge);
  EXPECT_TRUE(VerifyS256(kVerifier, kChallenge));
}

TEST(Pkce, WrongVerifierIsRefused_Rfc7636_4_6) {
  std::string other = kVerifier;
  other[0] = 'e';
  EXPECT_FALSE(VerifyS256(other, kChallenge));
}

TEST(Pkce, PlainChallengeEqualToVerifierIsRefused_Rfc7636_4_6) {
  // A "plain" client sends challenge == verifier; under S256 that never verifies.
  EXPECT_FALSE(VerifyS256(kVerifier, kVerifier));
}

TEST(Pkce, RejectsPlainMethod_Rfc7636_4_3) {
  EXPECT_FALSE(CheckMethod("plain").has_value());
  EXPECT_FALSE(CheckMethod("").has_value());
  EXPECT_FALSE(CheckMethod("s256").has_value());
  EXPECT_TRUE(CheckMethod("S256").has_value());
}

TEST(Pkce, VerifierLengthBounds_Rfc7636_4_1) {
  EXPECT_FALSE(IsValidVerifier(std::string(42, 'a')));
  EXPECT_TRUE(IsValidVerifier(std::string(43, 'a')));
  EXPECT_TRUE(IsValidVerifier(std::string(128, '~')));
  EXPECT_FALSE(IsValidVerifier(std::string(129, 'a')));
}

TEST(Pkce, VerifierCharactersAreUnreservedOnly_Rfc7636_4_1) {
  std::string v(43, 'a');
  v[10] = '+';
  EXPECT_FALSE(IsValidVerifier(v));
  v[10] = '/';
  EXPECT_FALSE(IsValidVerifier(v));
  v[10] = ' ';
  EXPECT_FALSE(IsValidVerifier(v));
  v[10] = '.';
  EXPECT_TRUE(IsValidVerifier(v));
  // A too-short verifier never verifies, even against its own challenge.
  EXPECT_FALSE(VerifyS256("short", S256Challenge("short")));
}

TEST(Pkce, ChallengeSyntax) {
  EXPECT_TRUE(IsValidChallenge(kChallenge));
  EXPECT_FALSE(IsValidChallenge(std::string(kChallenge) + "="));
  EXPECT_FALSE(IsValidChallenge(std::string(42, 'a')));
  EXPECT_FALSE(IsValidChallenge(std::string(42, 'a') + "+"));
}

}  // namespace
}  // namespace crmd::auth::pkce
