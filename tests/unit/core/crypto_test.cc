#include "src/core/crypto.h"

#include <gtest/gtest.h>

namespace crmd::crypto {
namespace {

TEST(Base64Url, RoundTripsWithoutPadding_Rfc4648_5) {
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(*Base64UrlDecode("-_8"), "\xfb\xff");
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    EXPECT_EQ(*Base64UrlDecode(Base64UrlEncode(s)), s);
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
}

TEST(Base64Url, RejectsForeignCharacters) {
  EXPECT_FALSE(Base64UrlDecode("ab+c").has_value());
  EXPECT_FALSE(Base64UrlDecode("a").has_value());
}

TEST(Sha256, MatchesKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HmacSha256, MatchesRfc4231Case2) {
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ConstantTimeEqual, ComparesContentAndLength) {
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abcd"));
}

TEST(Secrets, StoredHashIsNotTheSecretAndVerifies) {
  std::string h = HashSecret("s3cret-token");
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h.find("s3cret"), std::string::npos);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_TRUE(VerifySecret("s3cret-token", h));
  EXPECT_FALSE(VerifySecret("s3cret-tokem", h));
}

TEST(Password, ScryptHashIsSaltedAndVerifies) {
  std::string a = HashPassword("correct horse");
  std::string b = HashPassword("correct horse");
  EXPECT_NE(a, b);  // salted
  EXPECT_EQ(a.rfind("scrypt$", 0), 0u);
  EXPECT_TRUE(VerifyPassword("correct horse", a));
  EXPECT_FALSE(VerifyPassword("correct horsf", a));
  EXPECT_FALSE(VerifyPassword("correct horse", "scrypt$99$8$1$AAAA$AAAA"));
  EXPECT_FALSE(VerifyPassword("x", "garbage"));
}

TEST(Password, NewHashesUseTheWorkFactorSetAndAnyStoredFactorVerifies) {
  // The test binaries hash with 2^10 (test_main.cc); a real server with 2^15.
  const std::string cheap = HashPassword("correct horse");
  EXPECT_EQ(cheap.rfind("scrypt$10$8$1$", 0), 0u) << cheap;
  SetPasswordWorkFactorForTests(15);
  const std::string real = HashPassword("correct horse");
  SetPasswordWorkFactorForTests(10);
  EXPECT_EQ(real.rfind("scrypt$15$8$1$", 0), 0u) << real;
  EXPECT_TRUE(VerifyPassword("correct horse", real));
  EXPECT_TRUE(VerifyPassword("correct horse", cheap));
  EXPECT_FALSE(VerifyPassword("correct horsf", real));
}

}  // namespace
}  // namespace crmd::crypto
