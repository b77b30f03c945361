#include "src/core/clock.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

namespace crmd {

namespace {

// A UTC instant as calendar fields, without gmtime_r (which takes glibc's time zone lock
// even for UTC, on every HTTP answer's Date) and for any year: the civil date of the day
// number (H. Hinnant's days_from_civil inverse, as in std::chrono).
struct Civil {
  int64_t year;
  int month, day, hour, minute, second;
  int weekday;  // 0 = Sunday
};

Civil ToCivil(int64_t unix_seconds) {
  int64_t days = unix_seconds / 86400;
  int64_t secs = unix_seconds % 86400;
  if (secs < 0) {
    secs += 86400;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                                       // [0, 146096]
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;                            // [1, 12]
  return Civil{.year = yoe + era * 400 + (month <= 2 ? 1 : 0),
               .month = static_cast<int>(month),
               .day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1),
               .hour = static_cast<int>(secs / 3600),
               .minute = static_cast<int>(secs / 60 % 60),
               .second = static_cast<int>(secs % 60),
               .weekday = static_cast<int>(((days % 7) + 11) % 7)};  // 1970-01-01: Thursday
}

}  // namespace

std::string FormatRfc3339(int64_t unix_seconds) {
  // Years 0 to 9999 (every date crmd stores): digits written here, four for the year as
  // RFC 3339's date-fullyear asks. gmtime_r + strftime were a sixth of building a
  // contact's JSON (docs/performance.md).
  constexpr int64_t kMin = -62167219200;  // 0000-01-01T00:00:00Z
  constexpr int64_t kMax = 253402300799;  // 9999-12-31T23:59:59Z
  if (unix_seconds >= kMin && unix_seconds <= kMax) {
    const Civil c = ToCivil(unix_seconds);
    char buf[20] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0',
                    'T', '0', '0', ':', '0', '0', ':', '0', '0', 'Z'};
    auto put = [&buf](int at, int64_t v, int width) {
      for (int k = at + width - 1; k >= at; --k, v /= 10) buf[k] = static_cast<char>('0' + v % 10);
    };
    put(0, c.year, 4);
    put(5, c.month, 2);
    put(8, c.day, 2);
    put(11, c.hour, 2);
    put(14, c.minute, 2);
    put(17, c.second, 2);
    return std::string(buf, sizeof buf);
  }
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatImfDate(int64_t unix_seconds, std::string_view zone) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const Civil c = ToCivil(unix_seconds);
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "%s, %02d %s %04lld %02d:%02d:%02d %.*s", kDays[c.weekday],
                        c.day, kMonths[c.month - 1], static_cast<long long>(c.year), c.hour,
                        c.minute, c.second, static_cast<int>(zone.size()), zone.data());
  return std::string(buf, static_cast<size_t>(std::min<int>(n, sizeof buf - 1)));
}

}  // namespace crmd
