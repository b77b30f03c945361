#include "src/http/server.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <spdlog/spdlog.h>

#include "src/core/log.h"
#include "src/core/random.h"
#include "src/core/crypto.h"

namespace crmd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

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

class Server::Impl {
 public:
  Impl(ServerOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        ioc_(options_.io_threads),
        workers_(static_cast<size_t>(options_.worker_threads)),
        acceptor_(ioc_),
        signals_(ioc_) {
    SecureRandom rnd;
    id_prefix_ = crypto::Hex(rnd.Bytes(4));
  }

  ~Impl() {
    Stop();
    Join();
  }

  Result<uint16_t> Listen() {
    if (!options_.tls_cert_file.empty() && !options_.tls_key_file.empty()) {
      tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
      tls_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                        asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                        asio::ssl::context::no_tlsv1_1);
      beast::error_code ec;
      tls_->use_certificate_chain_file(options_.tls_cert_file, ec);
      if (!ec) tls_->use_private_key_file(options_.tls_key_file, asio::ssl::context::pem, ec);
      if (ec) return Fail(Errc::kInvalidArgument, "cannot load TLS certificate/key: " + ec.message());
    }
    beast::error_code ec;
    auto addr = asio::ip::make_address(options_.address, ec);
    if (ec) return Fail(Errc::kInvalidArgument, "bad listen address: " + options_.address);
    tcp::endpoint ep(addr, options_.port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Fail(Errc::kUnavailable, "cannot listen on " + options_.address + ":" +
                                                std::to_string(options_.port) + ": " + ec.message());
    return acceptor_.local_endpoint().port();
  }

  void Run() {
    asio::co_spawn(ioc_, Accept(), asio::detached);
    for (int i = 0; i < options_.io_threads; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  void StopOnSignals() {
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.async_wait([this](const beast::error_code& ec, int sig) {
      if (ec) return;
      spdlog::info(R"("event":"shutdown","signal":{})", sig);
      std::thread([this] { Stop(); }).detach();
    });
  }

  void Stop() {
    bool expected = false;
    if (!stopping_.compare_exchange_strong(expected, true)) {
      WaitStopped();
      return;
    }
    asio::post(ioc_, [this] {
      beast::error_code ec;
      acceptor_.close(ec);
      signals_.cancel(ec);
    });
    // Let in-flight requests finish; idle keep-alive connections are closed by their reads
    // seeing stopping_ (they are woken by the cancellation below).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options_.shutdown_grace_s);
    {
      std::unique_lock lock(mu_);
      CancelIdleLocked();
      while (active_ > 0 && std::chrono::steady_clock::now() < deadline) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        CancelIdleLocked();
      }
    }
    workers_.join();
    ioc_.stop();
    Join();
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

  void Wait() { WaitStopped(); }

 private:
  struct Conn {
    std::function<void()> cancel;  // closes the socket (posted to its executor)
    bool busy = false;             // a request is being handled
  };

  void WaitStopped() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopped_; });
  }

  void Join() {
    for (auto& t : threads_)
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    threads_.clear();
  }

  void CancelIdleLocked() {
    for (auto& [id, c] : conns_)
      if (!c.busy) c.cancel();
  }

  awaitable<void> Accept() {
    while (true) {
      auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
      if (ec) {
        if (ec == asio::error::operation_aborted || stopping_) co_return;
        continue;
      }
      if (connections_.load() >= options_.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);  // over the cap: refuse at once
        continue;
      }
      ++connections_;
      asio::co_spawn(socket.get_executor(), Session(std::move(socket)),
                     [this](std::exception_ptr) { --connections_; });
    }
  }

  std::string NextRequestId() {
    return id_prefix_ + "-" + std::to_string(next_id_.fetch_add(1) + 1);
  }

  awaitable<void> Session(tcp::socket socket) {
    std::string remote;
    {
      beast::error_code ec;
      auto ep = socket.remote_endpoint(ec);
      if (!ec) remote = ep.address().to_string();
    }
    uint64_t conn_id = next_conn_.fetch_add(1);
    if (tls_) {
      beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls_);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(options_.read_timeout_s));
      auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, kTuple);
      if (ec) co_return;
      co_await Serve(stream, remote, conn_id, true);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
      co_await stream.async_shutdown(kTuple);
    } else {
      beast::tcp_stream stream(std::move(socket));
      co_await Serve(stream, remote, conn_id, false);
      beast::error_code ec;
      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    }
  }

  void Register(uint64_t id, std::function<void()> cancel) {
    std::lock_guard lock(mu_);
    conns_[id] = Conn{std::move(cancel), false};
  }
  void SetBusy(uint64_t id, bool busy) {
    {
      std::lock_guard lock(mu_);
      conns_[id].busy = busy;
      active_ += busy ? 1 : -1;
    }
    cv_.notify_all();
  }
  void Unregister(uint64_t id) {
    std::lock_guard lock(mu_);
    conns_.erase(id);
  }

  template <typename Stream>
  awaitable<void> Serve(Stream& stream, const std::string& remote, uint64_t conn_id, bool tls) {
    auto& lowest = beast::get_lowest_layer(stream);
    auto executor = co_await asio::this_coro::executor;
    Register(conn_id, [&lowest, executor] {
      asio::post(executor, [&lowest] { lowest.cancel(); });
    });
    struct Guard {
      Impl* self;
      uint64_t id;
      ~Guard() { self->Unregister(id); }
    } guard{this, conn_id};

    beast::flat_buffer buffer;
    while (!stopping_) {
      // A fresh parser per message (Beast: stale_parser).
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(static_cast<uint32_t>(options_.max_header_bytes));
      parser.body_limit(options_.max_body_bytes);
      lowest.expires_after(std::chrono::seconds(options_.idle_timeout_s));
      auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, kTuple);
      if (ec == bhttp::error::end_of_stream || ec == asio::error::operation_aborted ||
          ec == beast::error::timeout || ec == asio::error::eof) {
        co_return;
      }
      if (ec) {
        int status = ec == bhttp::error::body_limit     ? 413
                     : ec == bhttp::error::header_limit ? 431
                                                        : 400;
        co_await WriteError(stream, status, remote);
        co_return;
      }
      SetBusy(conn_id, true);
      struct Busy {
        Impl* self;
        uint64_t id;
        ~Busy() { self->SetBusy(id, false); }
      } busy{this, conn_id};

      auto& head = parser.get();
      if (head[bhttp::field::expect] == "100-continue") {
        bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, 11};
        co_await bhttp::async_write(stream, cont, kTuple);
      }
      if (!parser.is_done()) {
        lowest.expires_after(std::chrono::seconds(options_.read_timeout_s));
        auto [ec2, n2] = co_await bhttp::async_read(stream, buffer, parser, kTuple);
        if (ec2) {
          if (ec2 == bhttp::error::body_limit) co_await WriteError(stream, 413, remote);
          co_return;
        }
      }
      auto msg = parser.release();
      Request req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      auto q = req.target.find('?');
      req.path = req.target.substr(0, q);
      if (q != std::string::npos) req.query = req.target.substr(q + 1);
      req.headers.reserve(16);
      for (const auto& f : msg) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      req.body = std::move(msg.body());
      req.remote_ip = remote;
      req.request_id = NextRequestId();
      req.tls = tls;
      bool keep_alive = msg.keep_alive();
      unsigned version = msg.version();

      auto started = std::chrono::steady_clock::now();
      // Run the handler on the worker pool; resume here on the connection's executor.
      Response res = co_await asio::co_spawn(
          workers_, [this, &req]() -> awaitable<Response> { co_return SafeHandle(req); },
          use_awaitable);

      bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(res.status), version};
      for (auto& [k, v] : res.headers) out.insert(k, v);
      out.set(bhttp::field::server, "crmd");
      out.set("X-Request-Id", req.request_id);
      if (tls) out.set(bhttp::field::strict_transport_security, "max-age=31536000");
      bool close = !keep_alive || stopping_;
      out.keep_alive(!close);
      if (req.method == "HEAD") {
        // RFC 9110 §9.3.2: the GET answer's headers, Content-Length included, no body.
        out.content_length(res.body.size());
      } else {
        out.body() = std::move(res.body);
        out.prepare_payload();
      }
      lowest.expires_after(std::chrono::seconds(options_.read_timeout_s));
      auto [wec, wn] = co_await bhttp::async_write(stream, out, kTuple);
      if (options_.access_log) {
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - started).count();
        spdlog::info(R"("event":"request","request_id":"{}","method":"{}","path":"{}","status":{},"duration_us":{},"remote":"{}")",
                     req.request_id, JsonEscape(req.method), JsonEscape(LoggablePath(req.path)), res.status, us, remote);
      }
      if (wec || close) co_return;
    }
  }

  Response SafeHandle(const Request& req) {
    try {
      return handler_(req);
    } catch (const std::exception& e) {
      spdlog::error(R"("event":"unhandled_exception","request_id":"{}","what":"{}")", req.request_id,
                    JsonEscape(e.what()));
    } catch (...) {
      spdlog::error(R"("event":"unhandled_exception","request_id":"{}")", req.request_id);
    }
    Response r = Response::Text(500, R"({"error":"internal error"})", "application/json");
    return r;
  }

  template <typename Stream>
  awaitable<void> WriteError(Stream& stream, int status, const std::string& remote) {
    bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(status), 11};
    // RFC 9457 problem JSON (what the REST API speaks), with "error" as well for clients
    // that read OAuth-style bodies. Sent before any handler saw the request.
    out.set(bhttp::field::content_type, "application/problem+json");
    out.set(bhttp::field::server, "crmd");
    out.set(bhttp::field::cache_control, "no-store");
    const char* code = status == 413 ? "payload_too_large"
                       : status == 431 ? "headers_too_large"
                                       : "bad_request";
    const char* title = status == 413 ? "Content Too Large"
                        : status == 431 ? "Request Header Fields Too Large"
                                        : "Bad Request";
    std::string detail = status == 413 ? "the body is larger than " +
                                             std::to_string(options_.max_body_bytes) + " bytes"
                         : status == 431 ? std::string("the request headers are too large")
                                         : std::string("the request could not be parsed");
    out.body() = std::string(R"({"type":"urn:crmd:problem:)") + code + R"(","title":")" + title +
                 R"(","status":)" + std::to_string(status) + R"(,"code":")" + code +
                 R"(","error":")" + code + R"(","detail":")" + detail + R"("})";
    out.keep_alive(false);
    out.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
    co_await bhttp::async_write(stream, out, kTuple);
    if (options_.access_log)
      spdlog::info(R"("event":"request_rejected","status":{},"remote":"{}")", status, remote);
  }

  const ServerOptions options_;
  const Handler handler_;
  asio::io_context ioc_;
  asio::thread_pool workers_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  std::unique_ptr<asio::ssl::context> tls_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> next_id_{0};
  std::atomic<uint64_t> next_conn_{0};
  std::string id_prefix_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<uint64_t, Conn> conns_;
  int active_ = 0;
  bool stopped_ = false;
};

Server::Server(ServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}
Server::~Server() = default;
Result<uint16_t> Server::Listen() { return impl_->Listen(); }
void Server::Run() { impl_->Run(); }
Result<uint16_t> Server::Start() {
  auto port = impl_->Listen();
  if (port) impl_->Run();
  return port;
}
void Server::Stop() { impl_->Stop(); }
void Server::Wait() { impl_->Wait(); }
void Server::StopOnSignals() { impl_->StopOnSignals(); }

}  // namespace crmd::http
