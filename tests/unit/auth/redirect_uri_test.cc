#include "auth/redirect_uri.h"

#include <gtest/gtest.h>

namespace crmd::auth {
namespace {

bool Accepted(const std::string& uri) { return ValidateRedirectUri(uri).has_value(); }

TEST(RedirectUri, AcceptsHttpsWithPathAndQuery_Rfc6749_3_1_2) {
  EXPECT_EQ(*ValidateRedirectUri("https://app.example.com/callback"), RedirectUriKind::kHttps);
  EXPECT_EQ(*ValidateRedirectUri("https://app.example.com:8443/cb?x=1"), RedirectUriKind::kHttps);
  EXPECT_EQ(*ValidateRedirectUri("https://[2001:db8::1]/cb"), RedirectUriKind::kHttps);
}

TEST(RedirectUri, AcceptsHttpOnlyOnLoopback_Rfc8252_7_3) {
  EXPECT_EQ(*ValidateRedirectUri("http://127.0.0.1:3000/callback"), RedirectUriKind::kLoopback);
  EXPECT_EQ(*ValidateRedirectUri("http://[::1]:3000/callback"), RedirectUriKind::kLoopback);
  EXPECT_EQ(*ValidateRedirectUri("http://localhost:3000/callback"), RedirectUriKind::kLoopback);
  EXPECT_EQ(*ValidateRedirectUri("http://127.0.0.1/callback"), RedirectUriKind::kLoopback);
}

TEST(RedirectUri, RefusesHttpOnNonLoopbackHosts_Rfc8252_8_3) {
  EXPECT_FALSE(Accepted("http://app.example.com/callback"));
  EXPECT_FALSE(Accepted("http://10.0.0.1/callback"));
  EXPECT_FALSE(Accepted("http://127.0.0.1.evil.com/callback"));
  EXPECT_FALSE(Accepted("http://localhost.evil.com/callback"));
}

TEST(RedirectUri, AcceptsReverseDnsPrivateUseSchemes_Rfc8252_7_1) {
  EXPECT_EQ(*ValidateRedirectUri("com.example.app:/oauth2redirect"), RedirectUriKind::kPrivateUse);
  EXPECT_EQ(*ValidateRedirectUri("com.example.app://callback"), RedirectUriKind::kPrivateUse);
}

TEST(RedirectUri, RefusesPrivateUseSchemesThatAreNotReverseDns_Rfc8252_7_1) {
  EXPECT_FALSE(Accepted("myapp:/callback"));
  EXPECT_FALSE(Accepted("com.example.app:"));
}

TEST(RedirectUri, RefusesFragments_Rfc6749_3_1_2) {
  EXPECT_FALSE(Accepted("https://app.example.com/cb#frag"));
  EXPECT_FALSE(Accepted("https://app.example.com/cb#"));
  EXPECT_FALSE(Accepted("http://127.0.0.1:3000/cb#x"));
}

TEST(RedirectUri, RefusesDangerousSchemes_Rfc6819_4_4_1_7) {
  EXPECT_FALSE(Accepted("javascript:alert(1)"));
  EXPECT_FALSE(Accepted("JavaScript:alert(1)"));
  EXPECT_FALSE(Accepted("data:text/html,hi"));
  EXPECT_FALSE(Accepted("file:///etc/passwd"));
  EXPECT_FALSE(Accepted("vbscript:msgbox"));
}

TEST(RedirectUri, RefusesWildcards_OAuth21_2_3) {
  EXPECT_FALSE(Accepted("https://*.example.com/cb"));
  EXPECT_FALSE(Accepted("https://app.example.com/*"));
}

TEST(RedirectUri, RefusesUserinfo_Rfc3986_3_2_1) {
  EXPECT_FALSE(Accepted("https://user:pass@app.example.com/cb"));
  EXPECT_FALSE(Accepted("https://good.example.com@evil.example.com/cb"));
  EXPECT_FALSE(Accepted("http://x@127.0.0.1/cb"));
  EXPECT_FALSE(Accepted("com.example.app://user@host/cb"));
}

TEST(RedirectUri, RefusesRelativeAndMalformedUris_Rfc6749_3_1_2) {
  EXPECT_FALSE(Accepted(""));
  EXPECT_FALSE(Accepted("/callback"));
  EXPECT_FALSE(Accepted("callback"));
  EXPECT_FALSE(Accepted("//app.example.com/cb"));
  EXPECT_FALSE(Accepted("https:///cb"));
  EXPECT_FALSE(Accepted("https://app.example.com:99999/cb"));
  EXPECT_FALSE(Accepted("https://app.example.com:80x/cb"));
  EXPECT_FALSE(Accepted("https://app.example.com/c b"));
  EXPECT_FALSE(Accepted("https://app.example.com\\@evil.com/cb"));
  EXPECT_FALSE(Accepted("HTTPS://app.example.com/cb"));
  EXPECT_FALSE(Accepted(std::string("https://app.example.com/") + std::string(3000, 'a')));
}

TEST(RedirectUriMatch, RequiresExactStringMatch_OAuth21_4_1_1) {
  EXPECT_TRUE(RedirectUriMatches("https://app.example.com/cb", "https://app.example.com/cb"));
  EXPECT_FALSE(RedirectUriMatches("https://app.example.com/cb", "https://app.example.com/cb/"));
  EXPECT_FALSE(RedirectUriMatches("https://app.example.com/cb", "https://app.example.com/CB"));
  EXPECT_FALSE(RedirectUriMatches("https://app.example.com/cb", "https://app.example.com/cb?x=1"));
  EXPECT_FALSE(RedirectUriMatches("https://app.example.com/cb", "https://app.example.com:443/cb"));
  EXPECT_FALSE(RedirectUriMatches("https://app.example.com/cb", "https://evil.example.com/cb"));
  EXPECT_TRUE(RedirectUriMatches("com.example.app:/cb", "com.example.app:/cb"));
  EXPECT_FALSE(RedirectUriMatches("com.example.app:/cb", "com.example.app:/cb2"));
}

TEST(RedirectUriMatch, LoopbackPortMayDiffer_Rfc8252_7_3) {
  EXPECT_TRUE(RedirectUriMatches("http://127.0.0.1/cb", "http://127.0.0.1:51004/cb"));
  EXPECT_TRUE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://127.0.0.1:51004/cb"));
  EXPECT_TRUE(RedirectUriMatches("http://[::1]:3000/cb", "http://[::1]:4000/cb"));
  EXPECT_TRUE(RedirectUriMatches("http://localhost:3000/cb?a=1", "http://localhost:9/cb?a=1"));
}

TEST(RedirectUriMatch, LoopbackStillMatchesHostPathAndQueryExactly_Rfc8252_7_3) {
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://127.0.0.1:3000/other"));
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://localhost:3000/cb"));
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://[::1]:3000/cb"));
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://127.0.0.1:3000/cb?x"));
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://127.0.0.1:3000/cb#f"));
  EXPECT_FALSE(RedirectUriMatches("http://127.0.0.1:3000/cb", "http://u@127.0.0.1:3000/cb"));
  // Port freedom is for plain-http loopback only.
  EXPECT_FALSE(RedirectUriMatches("https://127.0.0.1:3000/cb", "https://127.0.0.1:4000/cb"));
}

TEST(RedirectUriMatch, FindsTheRegisteredUri) {
  std::vector<std::string> registered = {"https://a.example.com/cb", "http://127.0.0.1/cb"};
  EXPECT_EQ(FindMatchingRedirectUri(registered, "http://127.0.0.1:5555/cb"), "http://127.0.0.1/cb");
  EXPECT_EQ(FindMatchingRedirectUri(registered, "https://a.example.com/cb"),
            "https://a.example.com/cb");
  EXPECT_FALSE(FindMatchingRedirectUri(registered, "https://b.example.com/cb").has_value());
}

TEST(RedirectUri, RefusesWhatIsNotAnRfc3986Uri_Rfc3986_2) {
  for (const char* uri :
       {"https://app.example/cb?x=\"><script>", "https://app.example/<cb>",
        "https://app.example/{x}", "https://app.example/a|b", "https://app.example/a^b",
        "https://app.example/`a`", "https://app.example/%", "https://app.example/%4",
        "https://app.example/%zz", "https://app.example/[x]", "https://app.example]/cb",
        "com.example.app:/cb\"x"})
    EXPECT_FALSE(Accepted(uri)) << uri;
  EXPECT_TRUE(Accepted("https://app.example/cb?x=%22%3C%3e"));
  EXPECT_TRUE(Accepted("http://[::1]:4000/cb"));
  EXPECT_TRUE(Accepted("https://app.example/a-b_c.d~e/!$&'()+,;=:@"));
}

TEST(WebUrl, NeedsHttpASoundHostAndRfc3986Characters) {
  EXPECT_TRUE(ValidateWebUrl("https://app.example/about?lang=en#top", "client_uri"));
  EXPECT_TRUE(ValidateWebUrl("http://app.example", "logo_uri"));
  for (const char* url :
       {"https://", "ftp://app.example/", "javascript:alert(1)", "https://user@app.example/",
        "https://app.example/\"x", "https://app.example/a b", "https://bad host/"}) {
    auto r = ValidateWebUrl(url, "client_uri");
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().message.rfind("client_uri ", 0), 0u) << r.error().message;
  }
}

}  // namespace
}  // namespace crmd::auth
