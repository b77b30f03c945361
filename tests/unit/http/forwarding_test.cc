// Trusted proxies and the Forwarded / X-Forwarded-* fields (src/http/forwarding.h); the
// wire-level behaviour is in tests/integration/http/hosts_test.cc and nginx_test.cc.
#include "src/http/forwarding.h"

#include <gtest/gtest.h>

namespace crmd::http {
namespace {

using Fields = std::vector<std::pair<std::string_view, std::string_view>>;

IpAddress Ip(std::string_view s) {
  auto ip = ParseIp(s);
  EXPECT_TRUE(ip.has_value()) << s;
  return ip.value_or(IpAddress{});
}

ProxyTrust Trust(std::vector<std::string> entries) {
  auto t = ProxyTrust::Parse(entries);
  EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message);
  return t ? std::move(*t) : ProxyTrust();
}

std::string NodeText(std::string_view node) {
  auto ip = ParseNode(node);
  return ip ? IpToString(*ip) : "-";
}

// ---- addresses and ranges ---------------------------------------------------------------

TEST(ParseIp, Ipv4AndIpv6CanonicalText) {
  EXPECT_EQ(IpToString(Ip("192.0.2.1")), "192.0.2.1");
  EXPECT_EQ(IpToString(Ip("2001:DB8:0:0::1")), "2001:db8::1");
  EXPECT_EQ(IpToString(Ip("::ffff:192.0.2.1")), "192.0.2.1");  // IPv4-mapped is IPv4
  EXPECT_EQ(Ip("::ffff:192.0.2.1"), Ip("192.0.2.1"));
  for (std::string_view bad : {"", "1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "fe80::1%eth0",
                               "[::1]", "example.com", "1.2.3.4:80"})
    EXPECT_FALSE(ParseIp(bad).has_value()) << bad;
}

TEST(ProxyTrust, AddressesAndCidrRanges) {
  auto t = Trust({"10.0.0.0/8", "192.0.2.7", "fd00::/8", "[::1]", "172.16.5.0/22"});
  EXPECT_TRUE(t.Trusts(Ip("10.255.1.2")));
  EXPECT_FALSE(t.Trusts(Ip("11.0.0.1")));
  EXPECT_TRUE(t.Trusts(Ip("192.0.2.7")));
  EXPECT_FALSE(t.Trusts(Ip("192.0.2.8")));
  EXPECT_TRUE(t.Trusts(Ip("fd12:3456::1")));
  EXPECT_FALSE(t.Trusts(Ip("fe80::1")));
  EXPECT_TRUE(t.Trusts(Ip("::1")));
  EXPECT_TRUE(t.Trusts(Ip("172.16.7.255")));
  EXPECT_FALSE(t.Trusts(Ip("172.16.8.0")));
  EXPECT_TRUE(t.Trusts(Ip("::ffff:10.1.1.1")));  // a dual-stack peer
  EXPECT_FALSE(ProxyTrust().Trusts(Ip("127.0.0.1")));
  EXPECT_TRUE(Trust({"0.0.0.0/0"}).Trusts(Ip("203.0.113.9")));
  EXPECT_FALSE(Trust({"0.0.0.0/0"}).Trusts(Ip("2001:db8::1")));
  EXPECT_TRUE(Trust({"10.1.2.3/8"}).Trusts(Ip("10.9.9.9")));  // host bits ignored
}

TEST(ProxyTrust, BadEntriesAreRefused) {
  for (std::string bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "nginx",
                          "10.0.0.0/8/8", "1.2.3.4:80", "10.0.0.0/-1", ""})
    EXPECT_FALSE(ProxyTrust::Parse({bad}).has_value()) << bad;
}

// ---- RFC 7239 node syntax -----------------------------------------------------------------

TEST(ParseNode, AddressesWithAndWithoutPort_Rfc7239_6) {
  EXPECT_EQ(NodeText("192.0.2.43"), "192.0.2.43");
  EXPECT_EQ(NodeText("192.0.2.43:47011"), "192.0.2.43");
  EXPECT_EQ(NodeText("[2001:db8:cafe::17]"), "2001:db8:cafe::17");
  EXPECT_EQ(NodeText("[2001:db8:cafe::17]:4711"), "2001:db8:cafe::17");
  EXPECT_EQ(NodeText("[2001:db8:cafe::17]:_obfport"), "2001:db8:cafe::17");
  EXPECT_EQ(NodeText("2001:db8::17"), "2001:db8::17");  // X-Forwarded-For spelling
  EXPECT_EQ(NodeText(" 192.0.2.43 "), "192.0.2.43");
}

TEST(ParseNode, UnknownObfuscatedAndGarbageAreNotAddresses_Rfc7239_6_2_6_3) {
  for (std::string_view n : {"unknown", "_hidden", "_SEVKISEK", "[192.0.2.1]", "[::1", "[::1]x",
                             "192.0.2.1:99999", "192.0.2.1:", "example.com", ""})
    EXPECT_EQ(NodeText(n), "-") << n;
}

// ---- RFC 7239 Forwarded field ---------------------------------------------------------------

TEST(ParseForwarded, ExamplesOfTheRfc_Rfc7239_4) {
  auto r = ParseForwarded({R"(for="_gazonk")", R"(For="[2001:db8:cafe::17]:4711")",
                           "for=192.0.2.60;proto=http;by=203.0.113.43",
                           "for=192.0.2.43, for=198.51.100.17"});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].for_node, "_gazonk");
  EXPECT_EQ((*r)[1].for_node, "[2001:db8:cafe::17]:4711");
  EXPECT_EQ((*r)[2].for_node, "192.0.2.60");
  EXPECT_EQ((*r)[2].proto, "http");
  EXPECT_EQ((*r)[3].for_node, "192.0.2.43");
  EXPECT_EQ((*r)[4].for_node, "198.51.100.17");
}

TEST(ParseForwarded, QuotedValuesAndEscapes_Rfc7239_4_Rfc9110_5_6_4) {
  auto r = ParseForwarded({R"(for="192.0.2.1:80";host="crm.example.com:8443";proto="https")",
                           R"(for=1.2.3.4;x-ext="a\"b,c;d", host=a.example)"});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].for_node, "192.0.2.1:80");
  EXPECT_EQ((*r)[0].host, "crm.example.com:8443");
  EXPECT_EQ((*r)[0].proto, "https");
  // A comma or semicolon inside quotes does not split; an unknown parameter is ignored.
  EXPECT_EQ((*r)[1].for_node, "1.2.3.4");
  EXPECT_EQ((*r)[1].host, "");
  EXPECT_EQ((*r)[2].for_node, "");
  EXPECT_EQ((*r)[2].host, "a.example");
}

TEST(ParseForwarded, EmptyElementsAreSkipped_Rfc9110_5_6_1) {
  auto r = ParseForwarded({" , for=192.0.2.1 ,, for=192.0.2.2 ,"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size(), 2u);
}

TEST(ParseForwarded, MalformedFieldIsRefusedWhole_Rfc7239_4) {
  for (std::string_view bad : {"for=192.0.2.1;for=192.0.2.2",  // a parameter twice in one element
                               R"(for="192.0.2.1)",            // unterminated quoted-string
                               "for=[2001:db8::1]",            // IPv6 must be quoted
                               "for=192.0.2.1:80",             // so must a port
                               "for",                          // no value
                               "for=",                         // empty token
                               "=1.2.3.4",                     // no name
                               "for = 1.2.3.4",                // whitespace around '='
                               "for=1.2.3.4 proto=http",       // missing ';'
                               "",                             // nothing
                               " , "}) {
    EXPECT_FALSE(ParseForwarded({bad}).has_value()) << bad;
  }
  // One malformed line spoils the list.
  EXPECT_FALSE(ParseForwarded({"for=192.0.2.1", "for=\"x"}).has_value());
}

// ---- who the client is ----------------------------------------------------------------------

class Resolve : public ::testing::Test {
 protected:
  ClientView Run(std::string_view peer, Fields fields, bool tls = false) {
    auto ip = Ip(peer);
    return ResolveClient(ip, trust_.Trusts(ip), tls, fields, trust_);
  }
  ProxyTrust trust_ = Trust({"10.0.0.0/8", "127.0.0.1"});
};

TEST_F(Resolve, UntrustedPeerFieldsAreIgnoredEntirely) {
  auto v = Run("203.0.113.5", {{"X-Forwarded-For", "198.51.100.1"},
                               {"X-Forwarded-Proto", "https"},
                               {"X-Forwarded-Host", "evil.example"},
                               {"Forwarded", "for=198.51.100.2;proto=https;host=evil.example"}});
  EXPECT_EQ(v.ip, "203.0.113.5");
  EXPECT_FALSE(v.https);
  EXPECT_EQ(v.host, "");
  EXPECT_FALSE(v.forwarded);
}

TEST_F(Resolve, TrustedPeerWithoutFieldsIsTheClient) {
  auto v = Run("10.0.0.2", {{"Host", "crm.example.com"}}, true);
  EXPECT_EQ(v.ip, "10.0.0.2");
  EXPECT_TRUE(v.https);
  EXPECT_FALSE(v.forwarded);
}

TEST_F(Resolve, XForwardedForRightMostUntrustedIsTheClient) {
  // A client forged "1.1.1.1"; the proxies appended what they saw.
  auto v = Run("10.0.0.2",
               {{"X-Forwarded-For", "1.1.1.1, 198.51.100.7"}, {"X-Forwarded-For", "10.0.0.9"}});
  EXPECT_EQ(v.ip, "198.51.100.7");
  EXPECT_TRUE(v.forwarded);
}

TEST_F(Resolve, XForwardedForAllTrustedEndsAtTheLeftMost) {
  auto v = Run("127.0.0.1", {{"X-Forwarded-For", "10.1.1.1, 10.2.2.2"}});
  EXPECT_EQ(v.ip, "10.1.1.1");
}

TEST_F(Resolve, XForwardedForGarbageStopsTheWalk) {
  auto v = Run("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7, unknown, 10.0.0.3"}});
  EXPECT_EQ(v.ip, "10.0.0.3");
  auto w = Run("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7, not-an-ip"}});
  EXPECT_EQ(w.ip, "10.0.0.2");
}

TEST_F(Resolve, XForwardedForWithPortsAndIpv6) {
  EXPECT_EQ(Run("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7:5555"}}).ip, "198.51.100.7");
  EXPECT_EQ(Run("10.0.0.2", {{"X-Forwarded-For", "2001:db8::9"}}).ip, "2001:db8::9");
  EXPECT_EQ(Run("10.0.0.2", {{"X-Forwarded-For", "[2001:db8::9]:80"}}).ip, "2001:db8::9");
}

TEST_F(Resolve, XForwardedProtoAndHostRightMostValue) {
  auto v = Run("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7"},
                            {"X-Forwarded-Proto", "http, HTTPS"},
                            {"X-Forwarded-Host", "other.example, crm.example.com:8443"}});
  EXPECT_TRUE(v.https);
  EXPECT_EQ(v.host, "crm.example.com:8443");
  auto bad = Run("10.0.0.2", {{"X-Forwarded-Proto", "ftp"}, {"X-Forwarded-Host", "a b/c"}}, true);
  EXPECT_TRUE(bad.https);   // an unknown proto is not believed: the connection's scheme
  EXPECT_EQ(bad.host, "");  // an invalid host is not believed: Host is used
}

TEST_F(Resolve, ForwardedRightMostUntrustedElement_Rfc7239_5_2) {
  auto v = Run("10.0.0.2",
               {{"Forwarded",
                 R"(for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https;host=crm.example.com)"},
                {"Forwarded", "for=10.0.0.5;proto=http"}});
  EXPECT_EQ(v.ip, "2001:db8:cafe::17");
  EXPECT_TRUE(v.https);  // proto and host of the element the client was found in
  EXPECT_EQ(v.host, "crm.example.com");
  EXPECT_TRUE(v.forwarded);
}

TEST_F(Resolve, ForwardedObfuscatedOrUnknownForIsIgnored_Rfc7239_6_2_6_3) {
  // The nearest proxy hid the client: the walk stops at the last address it could vouch
  // for, and does not go on into what the client may have written.
  auto v = Run("10.0.0.2", {{"Forwarded", R"(for=198.51.100.1, for="_hidden";proto=https)"}});
  EXPECT_EQ(v.ip, "10.0.0.2");
  EXPECT_TRUE(v.https);
  auto u = Run("10.0.0.2", {{"Forwarded", "for=198.51.100.1, for=unknown, for=10.0.0.7"}});
  EXPECT_EQ(u.ip, "10.0.0.7");
}

TEST_F(Resolve, MalformedForwardedIsIgnored_Rfc7239_4) {
  auto v = Run("10.0.0.2", {{"Forwarded", "for=198.51.100.1;proto=https"},
                            {"Forwarded", "for=\"unterminated"}});
  EXPECT_EQ(v.ip, "10.0.0.2");
  EXPECT_FALSE(v.https);
  EXPECT_FALSE(v.forwarded);
}

TEST_F(Resolve, XForwardedForWinsOverAForwardedTheProxyPassedThrough) {
  // A proxy that maintains X-Forwarded-For passes a client's own Forwarded on untouched.
  auto v = Run("10.0.0.2", {{"Forwarded", "for=1.1.1.1;host=evil.example"},
                            {"X-Forwarded-For", "198.51.100.7"}});
  EXPECT_EQ(v.ip, "198.51.100.7");
  EXPECT_EQ(v.host, "");
}

}  // namespace
}  // namespace crmd::http
