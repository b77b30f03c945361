// io_threads: 0 (the default) means one I/O thread per core; a negative count is refused
// with a message that names the key. Integer keys never wrap: a value its field cannot hold
// is refused by Set, and one the key cannot mean (a negative count, a zero timeout) by
// Validate.
#include "src/core/config.h"

#include <gtest/gtest.h>

namespace crmd {
namespace {

TEST(Config, IoThreadsDefaultsToOnePerCoreAndRefusesANegativeCount) {
  Config c;
  EXPECT_EQ(c.io_threads, 0);
  EXPECT_TRUE(c.Validate()) << c.Validate().error().message;
  ASSERT_TRUE(c.Set("io_threads", "3"));
  EXPECT_EQ(c.io_threads, 3);
  EXPECT_TRUE(c.Validate());
  ASSERT_TRUE(c.Set("io_threads", "-1"));
  auto refused = c.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("io_threads"), std::string::npos);
}

TEST(Config, PortOutsideZeroTo65535IsRefusedNotWrapped) {
  Config c;
  ASSERT_TRUE(c.Set("port", "0"));  // any free port (the tests' listeners)
  EXPECT_EQ(c.port, 0);
  ASSERT_TRUE(c.Set("port", "65535"));
  EXPECT_EQ(c.port, 65535);
  for (const char* bad : {"65536", "99999", "-5", "-1"}) {
    auto refused = c.Set("port", bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("config port: out of range"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(c.port, 65535) << "a refused value leaves the field alone";
  }
}

TEST(Config, IntegerKeysRefuseValuesTheirFieldCannotHold) {
  Config c;
  EXPECT_FALSE(c.Set("max_body_bytes", "-1"));  // size_t: once 18446744073709551615
  EXPECT_FALSE(c.Set("max_header_bytes", "-16384"));
  EXPECT_FALSE(c.Set("rest_max_body_bytes", "-1"));
  EXPECT_FALSE(c.Set("read_timeout_s", "4294967297"));  // int: once 1
  EXPECT_FALSE(c.Set("worker_threads", "4294967360"));  // int: once 64
  EXPECT_EQ(c.max_body_bytes, 1024u * 1024);
  EXPECT_EQ(c.read_timeout_s, 30);
  EXPECT_EQ(c.worker_threads, 64);
}

TEST(Config, ValidateRefusesNegativeCountsAndNonPositiveTimeoutsNamingTheKey) {
  struct Case {
    const char* key;
    const char* value;
  };
  for (const Case& bad : std::initializer_list<Case>{
           {"read_timeout_s", "0"},
           {"idle_timeout_s", "-1"},
           {"max_connections", "0"},
           {"max_body_bytes", "0"},
           {"shutdown_grace_s", "-1"},
           {"refresh_token_ttl", "-60"},
           {"auth_code_ttl", "0"},
           {"signing_key_rotation", "0"},
           {"form_rate_limit_per_minute", "-1"},
           {"hook_rate_limit_per_minute", "-1"},
           {"registration_limit_per_hour", "-1"},
           {"webhook_poll_interval_ms", "0"},
           {"webhook_timeout_ms", "-1"},
           {"webhook_backoff_base_s", "0"},
           {"webhook_retry_horizon_s", "-1"},
           {"mail_poll_interval_ms", "0"},
           {"housekeeping_interval_s", "-600"},
           {"retention_days", "-1"},
       }) {
    Config c;
    ASSERT_TRUE(c.Set(bad.key, bad.value)) << bad.key;
    auto refused = c.Validate();
    ASSERT_FALSE(refused) << bad.key << "=" << bad.value;
    EXPECT_NE(refused.error().message.find(bad.key), std::string::npos) << refused.error().message;
  }
  // Where 0 means "disabled" or "none" it is still accepted.
  Config zero;
  for (const char* key :
       {"shutdown_grace_s", "form_rate_limit_per_minute", "hook_rate_limit_per_minute",
        "registration_limit_per_hour", "housekeeping_interval_s", "webhook_lease_grace_s"})
    ASSERT_TRUE(zero.Set(key, "0")) << key;
  EXPECT_TRUE(zero.Validate()) << zero.Validate().error().message;
}

TEST(Config, MetricsListenAddressNeedsAHostAndADigitsPortUpTo65535) {
  for (const char* good : {"127.0.0.1:9464", "[::1]:9464", "localhost:0"}) {
    Config c;
    ASSERT_TRUE(c.Set("metrics_listen_address", good));
    EXPECT_TRUE(c.Validate()) << good;
  }
  auto hp = SplitHostPort("[::1]:9464");
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 9464);
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:-5", "127.0.0.1:9464abc",
                          "127.0.0.1:", ":9464", "127.0.0.1", "127.0.0.1:+80"}) {
    Config c;
    ASSERT_TRUE(c.Set("metrics_listen_address", bad));
    auto refused = c.Validate();
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("metrics_listen_address"), std::string::npos);
  }
}

TEST(Config, RateKeysAreFiniteAmountsOfAtLeastZero) {
  for (const char* key : {"mcp_calls_per_second", "mcp_calls_burst", "mail_rate_per_second"}) {
    for (const char* bad :
         {"nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1", "-0.5", "0x10", "", " 5", "5 "}) {
      Config c;
      auto refused = c.Set(key, bad);
      ASSERT_FALSE(refused) << key << "=" << bad;
      EXPECT_NE(refused.error().message.find(key), std::string::npos) << refused.error().message;
    }
    Config c;
    ASSERT_TRUE(c.Set(key, "0")) << key;  // 0 disables the limit
    ASSERT_TRUE(c.Set(key, "2.5")) << key;
    EXPECT_TRUE(c.Validate());
  }
  Config c;
  EXPECT_FALSE(c.Set("mcp_calls_burst", "-1"));
  EXPECT_EQ(c.mcp_calls_burst, 1000);  // a refused value leaves the setting as it was
}

TEST(Config, WebhookBackoffMaxIsNotBelowItsBase) {
  Config c;
  ASSERT_TRUE(c.Set("webhook_backoff_base_s", "60"));
  ASSERT_TRUE(c.Set("webhook_backoff_max_s", "30"));
  auto refused = c.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("webhook_backoff_max_s"), std::string::npos);
  ASSERT_TRUE(c.Set("webhook_backoff_max_s", "60"));
  EXPECT_TRUE(c.Validate()) << c.Validate().error().message;
}

TEST(Config, BounceMailboxIsImapOrPop3AndNeedsABounceDomain) {
  Config c;
  ASSERT_TRUE(c.Set("bounce_mailbox_url", "imaps://u:p@mail.example.com/INBOX"));
  auto refused = c.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("bounce_domain"), std::string::npos);
  ASSERT_TRUE(c.Set("bounce_domain", "bounces.example.com"));
  EXPECT_TRUE(c.Validate()) << c.Validate().error().message;
  for (const char* ok : {"imap://u:p@h/INBOX", "pop3s://u:p@h/", "pop3://u:p@h:1100/"}) {
    ASSERT_TRUE(c.Set("bounce_mailbox_url", ok));
    EXPECT_TRUE(c.Validate()) << ok;
  }
  ASSERT_TRUE(c.Set("bounce_mailbox_url", "https://u:p@h/INBOX"));
  refused = c.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("bounce_mailbox_url"), std::string::npos);
  // The message never repeats the URL (it holds a password).
  EXPECT_EQ(refused.error().message.find("u:p@"), std::string::npos);
  ASSERT_TRUE(c.Set("bounce_mailbox_url", ""));
  ASSERT_TRUE(c.Set("bounce_domain", "bounce@example.com"));
  EXPECT_FALSE(c.Validate());
  ASSERT_TRUE(c.Set("bounce_domain", "bounces.example.com"));
  ASSERT_TRUE(c.Set("bounce_poll_seconds", "0"));
  EXPECT_FALSE(c.Validate());
}

}  // namespace
}  // namespace crmd
