// The HTTP request path up to the router, as src/http/server.cc runs it on the bytes of a
// connection: the raw header-section scan (request_checks.h pass 1), Beast's parser with
// the server's header and body limits (chunked bodies included), and the checks of what
// Beast leaves to the application (pass 2). Any input ends in a request or a rejection.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "src/http/request_checks.h"

namespace bhttp = boost::beast::http;

namespace {
constexpr size_t kMaxHeaderBytes = 16 * 1024;  // HttpServerOptions defaults
constexpr size_t kMaxBodyBytes = 1024 * 1024;
std::string_view SV(boost::beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto scan = crmd::http::ScanHeaderBlock(std::span<char>(bytes.data(), bytes.size()), kMaxHeaderBytes);
  if (!scan || scan->size == 0) return 0;
  std::string_view rest = std::string_view(bytes).substr(scan->skip);
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(kMaxHeaderBytes));
  parser.body_limit(kMaxBodyBytes);
  parser.eager(false);
  boost::beast::error_code ec;
  size_t used = parser.put(boost::asio::buffer(rest.data(), scan->size), ec);
  if (ec || !parser.is_header_done() || used != scan->size) return 0;
  auto& head = parser.get();
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
