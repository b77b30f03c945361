#pragma once
// What the server writes besides a handler's answer: the Date header's value and the
// request path as the access log may show it. No Beast here (src/http/server.cc uses them).
#include <chrono>
#include <string>
#include <string_view>

namespace crmd::http {

// RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(std::chrono::system_clock::time_point t);

// The request path with an incoming webhook's URL token (crmd_hook_<8>_<43>) cut to its
// visible 18-character prefix.
std::string LoggablePath(std::string_view path);

}  // namespace crmd::http
