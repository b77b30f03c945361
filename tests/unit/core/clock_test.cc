#include "src/core/clock.h"

#include <gtest/gtest.h>

#include <ctime>
#include <random>
#include <string>

namespace crmd {
namespace {

// What FormatRfc3339 wrote before it computed the date itself: gmtime_r and strftime.
std::string ViaStrftime(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// RFC 3339 writes the year with four digits (date-fullyear); glibc's %Y writes years before
// 1000 with fewer. FormatRfc3339 pads them, as the RFC asks.
std::string Expected(int64_t unix_seconds) {
  std::string via = ViaStrftime(unix_seconds);
  if (via.size() < 20 && via[0] != '-') via.insert(0, 20 - via.size(), '0');
  return via;
}

TEST(FormatRfc3339, KnownInstants) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(1795737599), "2026-11-26T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(-62167219200), "0000-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(-58308746003), "0122-04-09T06:06:37Z");
  EXPECT_EQ(FormatRfc3339(253402300799), "9999-12-31T23:59:59Z");
}

// Both ends of every day from 1900 to 2199 (leap days, century years) and random instants
// over the whole range it computes itself match the C library (years padded to four
// digits); outside that range, the C library decides.
TEST(FormatRfc3339, MatchesGmtimeAndStrftime) {
  for (int64_t day = -25567; day <= 84000; ++day) {  // 1900 to 2199
    for (int64_t s : {day * 86400, day * 86400 + 86399}) {
      ASSERT_EQ(FormatRfc3339(s), ViaStrftime(s)) << s;
    }
  }
  std::mt19937_64 rng(20261127);
  std::uniform_int_distribution<int64_t> any(-62167219200, 253402300799);
  for (int i = 0; i < 200000; ++i) {
    int64_t s = any(rng);
    ASSERT_EQ(FormatRfc3339(s), Expected(s)) << s;
  }
  for (int64_t s : {int64_t{-62167219201}, int64_t{253402300800}, int64_t{300000000000}}) {
    EXPECT_EQ(FormatRfc3339(s), ViaStrftime(s)) << s;
  }
}

// The date of HTTP's Date header and of a mail's Date header: day and month names, day
// of the week included, as the C library writes them (C locale).
TEST(FormatImfDate, MatchesStrftime) {
  auto via = [](int64_t unix_seconds, const char* zone) {
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S ", &tm);
    return std::string(buf) + zone;
  };
  EXPECT_EQ(FormatImfDate(784111777, "GMT"),
            "Sun, 06 Nov 1994 08:49:37 GMT");  // RFC 9110's example
  EXPECT_EQ(FormatImfDate(0, "+0000"), "Thu, 01 Jan 1970 00:00:00 +0000");
  EXPECT_EQ(FormatImfDate(-1, "GMT"), "Wed, 31 Dec 1969 23:59:59 GMT");
  for (int64_t day = -25567; day <= 84000; ++day) {  // 1900 to 2199
    for (int64_t s : {day * 86400, day * 86400 + 86399}) {
      ASSERT_EQ(FormatImfDate(s, "GMT"), via(s, "GMT")) << s;
    }
  }
  std::mt19937_64 rng(1127);
  std::uniform_int_distribution<int64_t> any(-30610224000, 253402300799);  // 1000 to 9999
  for (int i = 0; i < 100000; ++i) {
    int64_t s = any(rng);
    ASSERT_EQ(FormatImfDate(s, "+0000"), via(s, "+0000")) << s;
  }
}

}  // namespace
}  // namespace crmd
