#include "src/http/server_text.h"

#include "src/core/clock.h"

namespace crmd::http {

// RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT". RFC 9110 §6.6.1: an
// origin server with a clock sends Date.
std::string HttpDate(std::chrono::system_clock::time_point t) {
  return FormatImfDate(std::chrono::system_clock::to_time_t(t), "GMT");
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
