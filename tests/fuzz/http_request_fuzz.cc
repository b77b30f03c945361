// The HTTP request path up to the router, as src/http/server.cc runs it on the bytes of a
// connection: the raw header-section scan (request_checks.h pass 1), Beast's parser with
// the server's header and body limits (chunked bodies included), and the checks of what
// Beast leaves to the application (pass 2). Any input ends in a request or a rejection.
// Differential: when ParsePlainHead (the server's own parser for plain heads) accepts a
// head, Beast must accept it too and read the same method, target, version, fields,
// Content-Length and keep-alive; any difference stops the fuzzer.
#include <algorithm>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/http/request_checks.h"

namespace bhttp = boost::beast::http;

namespace {
constexpr size_t kMaxHeaderBytes = 16 * 1024;  // HttpServerOptions defaults
constexpr size_t kMaxBodyBytes = 1024 * 1024;
std::string_view SV(boost::beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto scan =
      crmd::http::ScanHeaderBlock(std::span<char>(bytes.data(), bytes.size()), kMaxHeaderBytes);
  if (!scan || scan->size == 0) return 0;
  std::string_view rest = std::string_view(bytes).substr(scan->skip);
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(kMaxHeaderBytes));
  parser.body_limit(kMaxBodyBytes);
  parser.eager(false);
  boost::beast::error_code ec;
  size_t used = parser.put(boost::asio::buffer(rest.data(), scan->size), ec);
  auto plain = crmd::http::ParsePlainHead(rest.substr(0, scan->size), kMaxBodyBytes);
  if (plain && (ec || !parser.is_header_done() || used != scan->size)) __builtin_trap();
  if (ec || !parser.is_header_done() || used != scan->size) return 0;
  auto& head = parser.get();
  if (plain) {
    const auto& p = plain->head;
    if (p.method != SV(head.method_string()) || p.target != SV(head.target()) ||
        p.version != head.version() || plain->keep_alive != head.keep_alive())
      __builtin_trap();
    // Beast keeps fields of one name together; the fields per name, in order, must agree.
    using Fields = std::vector<std::pair<std::string, std::string_view>>;
    auto by_name = [](Fields f) {
      std::stable_sort(f.begin(), f.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      return f;
    };
    auto lower = [](std::string_view n) {
      std::string s(n);
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    Fields mine, beast;
    for (const auto& [n, v] : p.fields) mine.emplace_back(lower(n), v);
    for (const auto& f : head) beast.emplace_back(lower(SV(f.name_string())), SV(f.value()));
    if (by_name(mine) != by_name(beast)) __builtin_trap();
    for (const auto& [n, v] : p.fields) {
      bool spelled = false;  // each name as the wire spelled it
      for (const auto& f : head) spelled |= SV(f.name_string()) == n;
      if (!spelled) __builtin_trap();
    }
    auto length = parser.content_length();
    if (plain->content_length != (length ? *length : 0) || parser.chunked()) __builtin_trap();
  }
  crmd::http::RequestHead facts{.method = SV(head.method_string()),
                                .target = SV(head.target()),
                                .version = head.version(),
                                .fields = {}};
  for (const auto& f : head) facts.fields.emplace_back(SV(f.name_string()), SV(f.value()));
  auto checked = crmd::http::CheckRequestHead(facts);
  if (!checked) return 0;
  // The body, as much of it as the input holds (the server reads the rest from the socket).
  parser.eager(true);
  std::string_view body = rest.substr(used);
  while (!body.empty() && !parser.is_done()) {
    size_t n = parser.put(boost::asio::buffer(body.data(), body.size()), ec);
    if (ec == bhttp::error::need_more) break;
    if (ec || n == 0) break;
    body.remove_prefix(n);
  }
  return 0;
}
