// The host allow-list behind the listener's 421 (src/http/allowed_hosts.h); the wire-level
// behaviour is in tests/integration/http/hosts_test.cc.
#include "src/http/allowed_hosts.h"

#include <gtest/gtest.h>

namespace crmd::http {
namespace {

HostAllowList List(std::vector<std::string> entries) {
  auto list = HostAllowList::Parse(entries);
  EXPECT_TRUE(list.has_value()) << (list ? "" : list.error().message);
  return list ? std::move(*list) : HostAllowList();
}

TEST(HostAllowList, EmptyListAllowsEveryHost) {
  HostAllowList any;
  EXPECT_TRUE(any.AllowsAny());
  EXPECT_TRUE(any.Allows("evil.example", false));
  EXPECT_TRUE(List({}).Allows("", false));
}

TEST(HostAllowList, HostEntryAllowsAnyPortCaseInsensitively_Rfc9110_4_2_3) {
  auto l = List({"CRM.example.com"});
  EXPECT_TRUE(l.Allows("crm.example.com", true));
  EXPECT_TRUE(l.Allows("Crm.Example.Com:8443", true));
  EXPECT_TRUE(l.Allows("crm.example.com:", false));  // empty port (RFC 3986 §3.2.3)
  EXPECT_FALSE(l.Allows("crm.example.org", true));
  EXPECT_FALSE(l.Allows("xcrm.example.com", true));
  EXPECT_FALSE(l.Allows("", true));  // an empty Host names no host
}

TEST(HostAllowList, TrailingDotIsTheSameHost_Rfc1034_3_1) {
  auto l = List({"crm.example.com", "api.example.com.:8443"});
  EXPECT_TRUE(l.Allows("crm.example.com.", false));
  EXPECT_TRUE(l.Allows("crm.example.com.:80", false));
  EXPECT_TRUE(l.Allows("api.example.com:8443", false));
  EXPECT_TRUE(l.Allows("api.example.com.:8443", false));
  EXPECT_FALSE(l.Allows("crm.example.com..", false));
}

TEST(HostAllowList, HostPortEntryAllowsThatPortOnlyAndTheSchemeDefault_Rfc9110_4_2) {
  auto l = List({"crm.example.com:8443", "www.example.com:443", "plain.example.com:80"});
  EXPECT_TRUE(l.Allows("crm.example.com:8443", true));
  EXPECT_FALSE(l.Allows("crm.example.com:8444", true));
  EXPECT_FALSE(l.Allows("crm.example.com", true));
  // No port in Host: the scheme's default port (RFC 9110 §4.2.1, §4.2.2).
  EXPECT_TRUE(l.Allows("www.example.com", true));
  EXPECT_FALSE(l.Allows("www.example.com", false));
  EXPECT_TRUE(l.Allows("plain.example.com", false));
  EXPECT_FALSE(l.Allows("plain.example.com", true));
}

TEST(HostAllowList, IpLiterals) {
  auto l = List({"127.0.0.1", "[::1]", "[2001:DB8::1]:8080"});
  EXPECT_TRUE(l.Allows("127.0.0.1:41234", false));
  EXPECT_TRUE(l.Allows("[::1]", false));
  EXPECT_TRUE(l.Allows("[::1]:9", false));
  EXPECT_TRUE(l.Allows("[2001:db8::1]:8080", false));
  EXPECT_FALSE(l.Allows("[2001:db8::1]", false));
  EXPECT_FALSE(l.Allows("127.0.0.2", false));
}

TEST(HostAllowList, WildcardMatchesNamesBelowTheDomainOnly) {
  auto l = List({"*.example.com", "*.tenant.example.net:8443"});
  EXPECT_TRUE(l.Allows("a.example.com", true));
  EXPECT_TRUE(l.Allows("A.B.Example.COM:9000", true));
  EXPECT_TRUE(l.Allows("a.example.com.", true));
  EXPECT_FALSE(l.Allows("example.com", true));
  EXPECT_FALSE(l.Allows("evilexample.com", true));
  EXPECT_TRUE(l.Allows("x.tenant.example.net:8443", true));
  EXPECT_FALSE(l.Allows("x.tenant.example.net:8444", true));
  EXPECT_FALSE(l.Allows("x.tenant.example.net", true));  // 443
}

TEST(HostAllowList, StarAllowsEverything) {
  auto l = List({"crm.example.com", "*"});
  EXPECT_TRUE(l.Allows("anything.example", false));
}

TEST(HostAllowList, BadEntriesAreRefused) {
  for (std::string bad : {"", "a b", "crm.example.com/", "http://crm.example.com", "*.", "*",
                          "*.[::1]", "h:8x", "[::1", "**.example.com", "user@host"}) {
    if (bad == "*") continue;  // valid: the check is off
    SCOPED_TRACE(bad);
    EXPECT_FALSE(HostAllowList::Parse({bad}).has_value());
  }
}

TEST(DefaultAllowedHosts, IssuerHostAnyPortPlusLoopback) {
  auto entries = DefaultAllowedHosts("https://CRM.example.com:8443/base");
  auto l = List(entries);
  EXPECT_TRUE(l.Allows("crm.example.com:8443", true));
  EXPECT_TRUE(l.Allows("crm.example.com", true));
  EXPECT_TRUE(l.Allows("localhost:3000", false));
  EXPECT_TRUE(l.Allows("127.0.0.1:41234", false));
  EXPECT_TRUE(l.Allows("[::1]:8080", false));
  EXPECT_TRUE(l.Allows("LOCALHOST", false));
  EXPECT_FALSE(l.Allows("evil.example.com", false));
  EXPECT_FALSE(l.Allows("127.0.0.2", false));

  auto v6 = List(DefaultAllowedHosts("http://[2001:db8::5]:8080"));
  EXPECT_TRUE(v6.Allows("[2001:db8::5]:8080", false));
  auto plain = List(DefaultAllowedHosts("http://127.0.0.1:0"));
  EXPECT_TRUE(plain.Allows("127.0.0.1:5555", false));
}

}  // namespace
}  // namespace crmd::http
