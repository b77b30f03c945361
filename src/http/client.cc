#include "src/http/client.h"

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <optional>

#include "src/core/worker_pool.h"

namespace crmd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

bool IsPrivateAddress(const std::string& ip) {
  boost::system::error_code ec;
  auto a = asio::ip::make_address(ip, ec);
  if (ec) return true;  // unparseable: treat as not allowed
  if (a.is_v6()) {
    auto v6 = a.to_v6();
    if (v6.is_v4_mapped())
      return IsPrivateAddress(asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string());
    auto b = v6.to_bytes();
    if (v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_multicast() ||
        v6.is_site_local())
      return true;
    if ((b[0] & 0xfe) == 0xfc) return true;  // fc00::/7 unique local
    // Addresses that carry an IPv4 address: judged by that address.
    auto embedded = [&](int at) {
      return IsPrivateAddress(
          asio::ip::address_v4({b[at], b[at + 1], b[at + 2], b[at + 3]}).to_string());
    };
    bool zero96 = true;
    for (int i = 0; i < 12; ++i) zero96 = zero96 && b[i] == 0;
    if (zero96) return true;  // ::a.b.c.d, IPv4-compatible (deprecated, RFC 4291 §2.5.5.1)
    const unsigned char nat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::equal(nat64, nat64 + 12, b.begin())) return embedded(12);  // 64:ff9b::/96
    if (b[0] == 0x20 && b[1] == 0x02) return embedded(2);               // 2002::/16, 6to4
    return false;
  }
  auto v4 = a.to_v4().to_bytes();
  if (v4[0] == 10 || v4[0] == 127 || v4[0] == 0) return true;
  if (v4[0] == 172 && (v4[1] & 0xf0) == 16) return true;
  if (v4[0] == 192 && v4[1] == 168) return true;
  if (v4[0] == 169 && v4[1] == 254) return true;
  if (v4[0] == 100 && (v4[1] & 0xc0) == 64) return true;  // CGNAT
  if (v4[0] >= 224) return true;                          // multicast, reserved, broadcast
  if (v4[0] == 192 && v4[1] == 0 && v4[2] == 0) return true;
  if (v4[0] == 198 && (v4[1] & 0xfe) == 18) return true;  // benchmarking
  return false;
}

namespace {

struct Url {
  bool https = false;
  std::string host;
  std::string port;
  std::string target;
};

Result<Url> ParseUrl(const std::string& url) {
  Url u;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    u.https = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return Fail(Errc::kInvalidArgument, "unsupported URL scheme");
  }
  auto slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (auto hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  if (u.target.empty() || u.target[0] != '/') u.target = "/" + u.target;
  if (authority.find('@') != std::string::npos)
    return Fail(Errc::kInvalidArgument, "userinfo in URL");
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) return Fail(Errc::kInvalidArgument, "bad IPv6 literal");
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      u.port = authority.substr(close + 2);
  } else {
    auto colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) u.port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Fail(Errc::kInvalidArgument, "URL has no host");
  if (u.port.empty()) u.port = u.https ? "443" : "80";
  return u;
}

class BeastClient final : public HttpClient {
 public:
  BeastClient() = default;

  Result<ClientResponse> Send(const ClientRequest& request) override {
    BlockingRegion blocking;  // network I/O (src/core/worker_pool.h)
    auto url = ParseUrl(request.url);
    if (!url) return Fail(url.error());
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    boost::system::error_code ec;
    auto results = resolver.resolve(url->host, url->port, ec);
    if (ec) return Fail(Errc::kUnavailable, "cannot resolve host", ec.message());
    std::vector<tcp::endpoint> allowed;
    for (const auto& r : results) {
      if (!request.allow_private && IsPrivateAddress(r.endpoint().address().to_string())) {
        return Fail(Errc::kPermissionDenied, "target address is not allowed");
      }
      allowed.push_back(r.endpoint());
    }
    if (allowed.empty()) return Fail(Errc::kUnavailable, "host has no address");

    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(request.method), url->target, 11};
    // RFC 9110 §7.2: the port is part of Host unless it is the scheme's default.
    std::string host = url->host.find(':') != std::string::npos ? "[" + url->host + "]" : url->host;
    if (url->port != (url->https ? "443" : "80")) host += ":" + url->port;
    req.set(bhttp::field::host, host);
    req.set(bhttp::field::user_agent, "crmd");
    for (const auto& [k, v] : request.headers) req.set(k, v);
    req.body() = request.body;
    req.prepare_payload();
    auto timeout = std::chrono::milliseconds(request.timeout_ms);

    ClientResponse out;
    auto read_response = [&](auto& stream) -> Status {
      beast::flat_buffer buffer;
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(request.max_response_bytes);
      parser.header_limit(64 * 1024);
      if (request.method == "HEAD") parser.skip(true);  // headers only (RFC 9110 §9.3.2)
      beast::error_code e;
      bhttp::write(stream, req, e);
      if (e) return Fail(Errc::kUnavailable, "request failed", e.message());
      bhttp::read(stream, buffer, parser, e);
      if (e == bhttp::error::body_limit) return Fail(Errc::kPayloadTooLarge, "response too large");
      if (e) return Fail(Errc::kUnavailable, "response failed", e.message());
      auto res = parser.release();
      out.status = res.result_int();
      for (const auto& f : res)
        out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      out.body = std::move(res.body());
      return Ok();
    };

    // The whole exchange runs asynchronously on a private io_context so that one deadline
    // (the tcp_stream timer) covers connect, TLS, write and read.
    Status status = Fail(Errc::kUnavailable, "request failed");
    if (url->https) {
      beast::ssl_stream<beast::tcp_stream> stream(ioc, Tls());
      if (!SSL_set_tlsext_host_name(stream.native_handle(), url->host.c_str()))
        return Fail(Errc::kUnavailable, "TLS SNI failed");
      stream.set_verify_callback(asio::ssl::host_name_verification(url->host));
      status = RunAsync(ioc, stream, allowed, timeout, true, read_response);
    } else {
      beast::tcp_stream stream(ioc);
      status = RunAsync(ioc, stream, allowed, timeout, false, read_response);
    }
    if (!status) return Fail(status.error());
    return out;
  }

 private:
  template <typename Stream, typename Fn>
  Status RunAsync(asio::io_context& ioc, Stream& stream, const std::vector<tcp::endpoint>& eps,
                  std::chrono::milliseconds timeout, bool tls, Fn& exchange) {
    // Blocking calls with a watchdog: close the socket when the deadline passes.
    auto& lowest = beast::get_lowest_layer(stream);
    asio::steady_timer timer(ioc);
    std::atomic<bool> timed_out{false};
    std::thread watchdog;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    watchdog = std::thread([&] {
      std::unique_lock lock(m);
      if (!cv.wait_for(lock, timeout, [&] { return done; })) {
        timed_out = true;
        boost::system::error_code ignored;
        lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
        lowest.socket().close(ignored);
      }
    });
    auto finish = [&](Status s) {
      {
        std::lock_guard lock(m);
        done = true;
      }
      cv.notify_all();
      watchdog.join();
      if (timed_out) return Status(Fail(Errc::kUnavailable, "request timed out"));
      return s;
    };
    boost::system::error_code ec;
    lowest.socket().open(eps.front().protocol(), ec);
    if (ec) return finish(Fail(Errc::kUnavailable, "socket failed", ec.message()));
    lowest.socket().connect(eps.front(), ec);
    if (ec) return finish(Fail(Errc::kUnavailable, "connect failed", ec.message()));
    if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
      stream.handshake(asio::ssl::stream_base::client, ec);
      if (ec) return finish(Fail(Errc::kUnavailable, "TLS handshake failed", ec.message()));
    }
    return finish(exchange(stream));
  }

  // Made on the first https request: loading the system's CA bundle costs OpenSSL 3 tens of
  // milliseconds (about a third of a test server's start under ASan), and most nodes send
  // no https request for a long time, or ever (webhook receivers on http, SMTP by curl).
  asio::ssl::context& Tls() {
    std::call_once(ssl_once_, [this] {
      ssl_.emplace(asio::ssl::context::tls_client);
      ssl_->set_default_verify_paths();
      ssl_->set_verify_mode(asio::ssl::verify_peer);
    });
    return *ssl_;
  }

  std::once_flag ssl_once_;
  std::optional<asio::ssl::context> ssl_;
};

}  // namespace

std::unique_ptr<HttpClient> MakeHttpClient() { return std::make_unique<BeastClient>(); }

}  // namespace crmd::http
