#include "src/core/clock.h"

#include <ctime>
#include <string>

namespace crmd {

std::string FormatRfc3339(int64_t unix_seconds) {
  // Years 0 to 9999 (every date crmd stores) without gmtime_r and strftime, which were a
  // sixth of building a contact's JSON (docs/performance.md): the civil date of the day
  // number (H. Hinnant's days_from_civil inverse, as in std::chrono), digits written here.
  constexpr int64_t kMin = -62167219200;  // 0000-01-01T00:00:00Z
  constexpr int64_t kMax = 253402300799;  // 9999-12-31T23:59:59Z
  if (unix_seconds >= kMin && unix_seconds <= kMax) {
    int64_t days = unix_seconds / 86400;
    int64_t secs = unix_seconds % 86400;
    if (secs < 0) {
      secs += 86400;
      --days;
    }
    const int64_t z = days + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;                                   // [0, 146096]
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);              // [0, 365]
    const int64_t mp = (5 * doy + 2) / 153;                                   // [0, 11]
    const int64_t day = doy - (153 * mp + 2) / 5 + 1;                         // [1, 31]
    const int64_t month = mp < 10 ? mp + 3 : mp - 9;                         // [1, 12]
    const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    char buf[20] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0', 'T',
                    '0', '0', ':', '0', '0', ':', '0', '0', 'Z'};
    auto put = [&buf](int at, int64_t v, int width) {
      for (int k = at + width - 1; k >= at; --k, v /= 10) buf[k] = static_cast<char>('0' + v % 10);
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, secs / 3600, 2);
    put(14, secs / 60 % 60, 2);
    put(17, secs % 60, 2);
    return std::string(buf, sizeof buf);
  }
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace crmd
