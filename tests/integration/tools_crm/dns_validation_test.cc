// Email validation in dns mode asks the DNS server of the dns_server config key (a real
// one on loopback, tests/support/dns_server.py) instead of the system's resolver: MX, then
// A/AAAA; NXDOMAIN and a dropped query come back as their reasons.
#include <gtest/gtest.h>

#include "src/app/services.h"
#include "src/core/config.h"
#include "src/governance/settings.h"
#include "tests/support/dns_server.h"
#include "tests/support/mcp_client.h"
#include "tests/support/test_server.h"
#include "tests/support/tokens.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

TEST(DnsServerConfig, EmailValidationAsksTheConfiguredServer) {
  DnsServer dns;
  dns.Set("mx-only.net", {{{"type", "MX"}, {"value", "mail.mx-only.net"}, {"priority", 10}}});
  dns.Set("a-only.net", {{{"type", "A"}, {"value", "192.0.2.7"}}});
  dns.Set("txt-only.net", {{{"type", "TXT"}, {"value", "v=spf1 -all"}}});
  dns.Drop("slow.net");
  TestServer server({.configure = [&](Config& c) { c.dns_server = dns.address(); }});
  auto& settings = *server.app().services().governance->settings;
  auto cur = settings.Get();
  ASSERT_TRUE(cur.has_value());
  ASSERT_TRUE(settings.Update({.kind = "cli", .subject = "test"}, cur->revision,
                              {{"email_validation_mode", "dns"}}));
  McpClient c(server, {.token = MintTestToken(server)});
  ASSERT_TRUE(c.Initialize().ok());
  auto validate = [&](const std::string& email) {
    return c.CallToolOk("validate_email", {{"email", email}});
  };
  EXPECT_EQ(validate("ada@mx-only.net")["valid"], true);
  EXPECT_EQ(validate("ada@a-only.net")["valid"], true);
  json none = validate("ada@nowhere-at-all.net");
  EXPECT_EQ(none["valid"], false);
  EXPECT_EQ(none["reasons"], json::array({"dns:no_such_domain"})) << none.dump();
  json no_host = validate("ada@txt-only.net");
  EXPECT_EQ(no_host["valid"], false);
  EXPECT_EQ(no_host["reasons"], json::array({"dns:no_mail_host"})) << no_host.dump();
  json slow = validate("ada@slow.net");
  EXPECT_EQ(slow["reasons"], json::array({"dns:temporary_failure"})) << slow.dump();
}

TEST(DnsServerConfig, AMalformedDnsServerIsRefusedAtStart) {
  for (const char* bad : {"localhost:53", "127.0.0.1", "127.0.0.1:0", "[::1]:53", "1.2.3.4:x"}) {
    EXPECT_FALSE(ValidateDnsServer(bad).has_value()) << bad;
  }
  EXPECT_TRUE(ValidateDnsServer("127.0.0.1:5353").has_value());
  EXPECT_TRUE(ValidateDnsServer("").has_value());
}

}  // namespace
}  // namespace crmd::testing
