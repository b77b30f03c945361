#include "src/http/server_text.h"

#include <cstdio>
#include <ctime>

namespace crmd::http {

// RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT". RFC 9110 §6.6.1: an
// origin server with a clock sends Date.
std::string HttpDate(std::chrono::system_clock::time_point t) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

// The request path as it may be logged: a secret carried in the path (an incoming
// webhook's URL token, crmd_hook_<8>_<43>) is cut to its visible 18-character prefix.
std::string LoggablePath(std::string_view path) {
  constexpr std::string_view kHook = "crmd_hook_";
  constexpr size_t kVisible = 18;
  std::string out;
  out.reserve(path.size());
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view seg = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg.substr(0, kHook.size()) == kHook && seg.size() > kVisible) {
      out.append(seg.substr(0, kVisible)).append("_[redacted]");
    } else {
      out.append(seg);
    }
    if (slash == std::string_view::npos) break;
    out.push_back('/');
    start = slash + 1;
  }
  return out;
}

}  // namespace crmd::http
