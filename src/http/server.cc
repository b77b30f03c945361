#include "src/http/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "src/core/crypto.h"
#include "src/core/log.h"
#include "src/core/random.h"
#include "src/core/worker_pool.h"
#include "src/http/allowed_hosts.h"
#include "src/http/connection_deadline.h"
#include "src/http/forwarding.h"
#include "src/http/request_checks.h"
#include "src/http/server_text.h"
#include "src/http/streaming.h"
#include "src/http/tls_contexts.h"

namespace crmd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadChunk = 4096;

std::string_view SV(beast::string_view s) { return {s.data(), s.size()}; }

std::string_view ReasonPhrase(int status) {
  return SV(bhttp::obsolete_reason(static_cast<bhttp::status>(status)));
}

class Server::Impl {
 public:
  Impl(ServerOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        ioc_(1),
        workers_(std::min(WorkerPool::Cores(), std::max(1, options_.worker_threads)),
                 std::max(1, options_.worker_threads)),
        acceptor_(ioc_),
        signals_(ioc_),
        hangup_(ioc_) {
    SecureRandom rnd;
    id_prefix_ = crypto::Hex(rnd.Bytes(4));
    for (int i = 1; i < options_.io_threads; ++i)
      more_iocs_.push_back(std::make_unique<asio::io_context>(1));
  }

  ~Impl() {
    Stop();
    Join();
  }

  Result<uint16_t> Listen() {
    auto hosts = HostAllowList::Parse(options_.allowed_hosts);
    if (!hosts) return Fail(hosts.error());
    allowed_hosts_ = std::move(*hosts);
    auto trust = ProxyTrust::Parse(options_.trusted_proxies);
    if (!trust) return Fail(trust.error());
    trust_ = std::move(*trust);
    if (auto st = tls_.Load(false); !st) return Fail(st.error());
    beast::error_code ec;
    auto addr = asio::ip::make_address(options_.address, ec);
    if (ec) return Fail(Errc::kInvalidArgument, "bad listen address: " + options_.address);
    tcp::endpoint ep(addr, options_.port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Fail(Errc::kUnavailable, "cannot listen on " + options_.address + ":" +
                                          std::to_string(options_.port) + ": " + ec.message());
    return acceptor_.local_endpoint().port();
  }

  void Run() {
    asio::co_spawn(ioc_, Accept(), asio::detached);
    threads_.emplace_back([this] { ioc_.run(); });
    // Runs until Stop() stops it, also while no connection is on it yet.
    for (auto& ioc : more_iocs_)
      threads_.emplace_back([&ioc] {
        auto keep = asio::make_work_guard(*ioc);
        ioc->run();
      });
  }

  void StopOnSignals() {
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.async_wait([this](const beast::error_code& ec, int sig) {
      if (ec) return;
      spdlog::info(R"("event":"shutdown","signal":{})", sig);
      std::thread([this] { Stop(); }).detach();
    });
    hangup_.add(SIGHUP);
    WaitForHangup();
  }

  // SIGHUP: the certificate and key are read again (renewed certificates). Connections
  // open now keep the context they were accepted with; new ones get the new one.
  void WaitForHangup() {
    hangup_.async_wait([this](const beast::error_code& ec, int) {
      if (ec) return;
      if (auto st = ReloadTls(); !st)
        spdlog::error(R"("event":"tls_reload_failed","detail":"{}")",
                      JsonEscape(st.error().message));
      WaitForHangup();
    });
  }

  Status ReloadTls() { return tls_.Load(true); }

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
      hangup_.cancel(ec);
    });
    // Let in-flight requests finish; idle keep-alive connections are closed by their reads
    // seeing stopping_ (they are woken by the cancellation below).
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(options_.shutdown_grace_s);
    {
      std::unique_lock lock(mu_);
      CancelIdleLocked();
      // Until the idle ones have closed too: an io_context stopped first would never run
      // their cancellation, and they would stay open until the server is destroyed.
      while ((active_ > 0 || !conns_.empty()) && std::chrono::steady_clock::now() < deadline) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        CancelIdleLocked();
      }
    }
    workers_.Join();
    ioc_.stop();
    for (auto& ioc : more_iocs_) ioc->stop();
    Join();
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    stopped_cv_.notify_all();
  }

  void Wait() { WaitStopped(); }

 private:
  // The TCP peer of a connection.
  struct Peer {
    std::string text;  // canonical address text (IPv4-mapped IPv6 as IPv4)
    IpAddress ip;
    bool trusted = false;  // in trusted_proxies
  };

  struct Conn {
    std::function<void()> cancel;    // closes the socket (posted to its executor)
    std::atomic<bool> busy = false;  // a request is being handled
  };

  void WaitStopped() {
    std::unique_lock lock(mu_);
    stopped_cv_.wait(lock, [&] { return stopped_; });
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
      // Each I/O thread runs an io_context of its own (one reactor, no lock shared
      // between the threads); connections go to them in turn.
      auto [ec, socket] = co_await acceptor_.async_accept(NextIoContext(), kTuple);
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

  asio::io_context& NextIoContext() {
    size_t i = next_ioc_++ % (more_iocs_.size() + 1);
    return i == 0 ? ioc_ : *more_iocs_[i - 1];
  }

  std::string NextRequestId() {
    return id_prefix_ + "-" + std::to_string(next_id_.fetch_add(1) + 1);
  }

  awaitable<void> Session(tcp::socket socket) {
    Peer peer;
    {
      beast::error_code ec;
      auto ep = socket.remote_endpoint(ec);
      if (!ec) {
        auto addr = ep.address();
        if (addr.is_v6() && addr.to_v6().is_v4_mapped())
          addr = asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6());
        peer.text = addr.to_string();
        if (auto ip = ParseIp(peer.text)) {
          peer.ip = *ip;
          // Once per connection: the peer does not change.
          peer.trusted = !trust_.empty() && trust_.Trusts(*ip);
        }
      }
    }
    uint64_t conn_id = next_conn_.fetch_add(1);
    // This connection's TLS context, held for its lifetime (a reload swaps in another).
    std::shared_ptr<asio::ssl::context> tls = tls_.Current();
    if (tls) {
      beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(options_.read_timeout_s));
      auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, kTuple);
      if (ec) co_return;
      co_await Serve(stream, peer, conn_id, true);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
      co_await stream.async_shutdown(kTuple);
    } else {
      beast::tcp_stream stream(std::move(socket));
      co_await Serve(stream, peer, conn_id, false);
      beast::error_code ec;
      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
      // RFC 9112 §9.6 staged close: after the half-close, read (and drop) what the client
      // still sends, briefly and bounded, so that closing with unread bytes does not reset
      // the connection before the client has read our last answer.
      if (!ec && !stopping_) {
        stream.expires_after(std::chrono::seconds(1));
        char sink[4096];
        for (size_t drained = 0; drained < 64 * 1024;) {
          auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), kTuple);
          if (rec) break;
          drained += n;
        }
      }
    }
  }

  // The entry stays where it is until Unregister (unordered_map nodes do not move).
  Conn* Register(uint64_t id, std::function<void()> cancel) {
    std::lock_guard lock(mu_);
    Conn& c = conns_[id];
    c.cancel = std::move(cancel);
    return &c;
  }
  // Twice per request, so without mu_ (both I/O threads took it, with a hash lookup, on
  // every request), and no wake-up unless Stop() is waiting for the requests in flight (a
  // notify with a waiter is a futex call and a context switch). Stop() polls as well.
  void SetBusy(Conn* c, bool busy) {
    c->busy.store(busy);
    active_.fetch_add(busy ? 1 : -1);
    if (!busy && stopping_) {
      std::lock_guard lock(mu_);
      cv_.notify_all();
    }
  }
  void Unregister(uint64_t id) {
    std::lock_guard lock(mu_);
    conns_.erase(id);
  }

  // One request on its way in: where its header section lies, the section parsed (by
  // ParsePlainHead, or by Beast when it is not plain), and what the checks and the
  // forwarding rules made of it.
  struct Incoming {
    HeaderBlock block;
    std::optional<PlainHead> plain;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser;
    RequestHead facts;
    CheckedHead checked;
    ClientView client;
    bool host_forwarded = false;
    bool keep_alive = false;
  };

  // A connection's requests, one after another: read the header block, parse it, admit
  // it, read the body, answer. Each step that refuses a request answers it and ends the
  // connection; a client that goes away ends it without an answer.
  template <typename Stream>
  awaitable<void> Serve(Stream& stream, const Peer& peer, uint64_t conn_id, bool tls) {
    const std::string& remote = peer.text;
    auto& lowest = beast::get_lowest_layer(stream);
    auto executor = co_await asio::this_coro::executor;
    // The cancellation runs later, on the connection's executor, by which time the
    // connection may have ended and its stream be gone (AddressSanitizer caught the
    // posted cancel touching a freed stream when a stop met a closing connection). So it
    // cancels only while the connection is still registered, and holds mu_ while it does:
    // the Guard below unregisters (under mu_) before Serve returns and the stream dies.
    Conn* const conn = Register(conn_id, [this, &lowest, executor, conn_id] {
      asio::post(executor, [this, &lowest, conn_id] {
        std::lock_guard lock(mu_);
        if (conns_.count(conn_id)) lowest.cancel();
      });
    });
    struct Guard {
      Impl* self;
      uint64_t id;
      ~Guard() { self->Unregister(id); }
    } guard{this, conn_id};

    // Deadlines from here on are the connection's own (ConnectionDeadline), not Beast's
    // per-operation timers; WriteError's last write sets Beast's again.
    lowest.expires_never();
    ConnectionDeadline deadline(executor, [&lowest] { lowest.cancel(); });

    beast::flat_buffer buffer;
    while (!stopping_) {
      Incoming in;
      if (!co_await ReadHeaderBlock(stream, buffer, deadline, remote, in.block)) co_return;
      if (auto ec = ParseHead(buffer, in); ec) {
        co_await WriteParseError(stream, ec, remote);
        co_return;
      }
      if (auto refused = Admit(peer, tls, in)) {
        co_await WriteError(stream, refused->status, refused->code, std::string(refused->detail),
                            in.client.ip);
        co_return;
      }
      Request req = HeaderSection(in, buffer);
      const bool streamed = Streams(in, req);
      if (!streamed && in.plain && in.plain->content_length > options_.max_body_bytes) {
        co_await WriteParseError(stream, bhttp::error::body_limit, remote);
        co_return;
      }

      SetBusy(conn, true);
      struct Busy {
        Impl* self;
        Conn* conn;
        ~Busy() { self->SetBusy(conn, false); }
      } busy{this, conn};

      std::optional<StreamedContent<Stream>> content;
      if (streamed) {
        if (!co_await Continue(stream, buffer, in)) co_return;
        content.emplace(stream, buffer, deadline, std::chrono::seconds(options_.read_timeout_s),
                        in.plain->content_length);
        req.body_stream = content->Source();
      } else if (!co_await ReadBody(stream, buffer, deadline, remote, in, req)) {
        co_return;
      }
      Complete(req, in, remote, tls);

      auto started = std::chrono::steady_clock::now();
      LogContext log_context{.request_id = req.request_id, .trace = req.trace};
      Response res;
      if (req.target == "*") {
        // OPTIONS * (RFC 9112 §3.2.4, RFC 9110 §9.3.7): about the server as a whole.
        res = Response::Empty(200);
        res.Set("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
      } else {
        // Run the handler on the worker pool; resume here on the connection's executor.
        // The handler's log lines carry the request and trace ids; the handler may replace
        // the trace (MCP _meta), and the access log line below names the final one.
        res = co_await OnWorker(req, log_context);
      }
      // Content the handler left unread ends the connection: it cannot carry another
      // request.
      if (content) content->Close();
      const bool close = !in.keep_alive || stopping_ || (content && !content->Complete()) ||
                         (res.stream && in.facts.version < 11);
      const bool written =
          res.stream ? co_await WriteStreamed(stream, deadline, req, res, in.facts.version, close,
                                              log_context)
                     : co_await WriteAnswer(stream, deadline, req, res, in.facts.version, close);
      LogRequest(req, res, in.client, remote, started, std::move(log_context));
      if (!written || close) co_return;
    }
  }

  // 1. The header section as raw bytes, checked before anything parses it
  //    (request_checks.h, pass 1). Bytes of a pipelined request may already be in
  //    `buffer`. False: the connection ends (refused here, or the client went away).
  template <typename Stream>
  awaitable<bool> ReadHeaderBlock(Stream& stream, beast::flat_buffer& buffer,
                                  ConnectionDeadline& deadline, const std::string& remote,
                                  HeaderBlock& block) {
    deadline.Set(
        std::chrono::seconds(buffer.size() ? options_.read_timeout_s : options_.idle_timeout_s));
    while (true) {
      auto bytes = buffer.data();
      auto scan = ScanHeaderBlock({static_cast<char*>(bytes.data()), bytes.size()},
                                  options_.max_header_bytes);
      if (!scan) {
        co_await WriteError(stream, scan.error().status, scan.error().code,
                            std::string(scan.error().detail), remote);
        co_return false;
      }
      if (scan->size) {
        block = *scan;
        break;
      }
      bool first_bytes = buffer.size() == 0;
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kReadChunk), kTuple);
      // End of stream, timeout, cancellation, reset: nothing to answer.
      if (ec) co_return false;
      buffer.commit(n);
      if (first_bytes) deadline.Set(std::chrono::seconds(options_.read_timeout_s));
    }
    buffer.consume(block.skip);
    co_return true;
  }

  // 2. The header section parsed. A plain one (nearly every request) is parsed here
  //    (ParsePlainHead, request_checks.h), its fields viewed in `buffer` until
  //    HeaderSection copies them; anything else by Beast, with a fresh parser per message
  //    (Beast: stale_parser). Beast's parser and fields were about a twentieth of a tool
  //    call. Answers the Beast error to refuse the request with, or none.
  beast::error_code ParseHead(beast::flat_buffer& buffer, Incoming& in) {
    const std::string_view block_text(static_cast<const char*>(buffer.data().data()),
                                      in.block.size);
    // Any Content-Length: Serve holds it to max_body_bytes unless the handler streams it.
    in.plain = ParsePlainHead(block_text, std::numeric_limits<size_t>::max());
    if (in.plain) {
      in.facts = std::move(in.plain->head);
      in.keep_alive = in.plain->keep_alive;
      return {};
    }
    auto& parser = in.parser.emplace();
    parser.header_limit(static_cast<uint32_t>(options_.max_header_bytes));
    parser.body_limit(options_.max_body_bytes);
    parser.eager(false);
    beast::error_code ec;
    size_t used = parser.put(asio::buffer(block_text.data(), block_text.size()), ec);
    // Beast must end the header section exactly where ScanHeaderBlock did; anything
    // else means the two disagree on framing, and the request is refused.
    if (!ec && (!parser.is_header_done() || used != in.block.size))
      ec = bhttp::error::partial_message;
    if (ec) return ec;
    buffer.consume(used);
    auto& head = parser.get();
    in.facts = RequestHead{.method = SV(head.method_string()),
                           .target = SV(head.target()),
                           .version = head.version(),
                           .fields = {}};
    for (const auto& f : head) in.facts.fields.emplace_back(SV(f.name_string()), SV(f.value()));
    return {};
  }

  // 3. What the parser leaves to the application (request_checks.h, pass 2); who the
  //    client is (forwarding fields believed from trusted proxies only); and whether the
  //    host it named is one this server answers for. Answers the refusal, if any.
  std::optional<Rejection> Admit(const Peer& peer, bool tls, Incoming& in) {
    in.client = ClientView{.ip = peer.text, .https = tls, .host = {}, .forwarded = false};
    auto checked = CheckRequestHead(in.facts);
    if (!checked) return checked.error();
    in.checked = std::move(*checked);
    if (peer.trusted) in.client = ResolveClient(peer.ip, true, tls, in.facts.fields, trust_);
    in.host_forwarded = !in.client.host.empty();
    if (in.host_forwarded) in.checked.host = std::move(in.client.host);
    if ((in.checked.has_host || in.host_forwarded) &&
        !allowed_hosts_.Allows(in.checked.host, in.client.https)) {
      // RFC 9110 §15.5.20. The detail does not echo the host.
      return Rejection{.status = 421,
                       .code = "misdirected_request",
                       .detail = "this server does not answer for the host the request names"};
    }
    return std::nullopt;
  }

  // 4. The header section as the handler will see it, taken before the body is read:
  //    Beast adds chunked trailer fields to the same container (next to fields of the
  //    same name), and RFC 9112 §7.1.2 forbids merging them into the header section.
  //    Trailers are dropped.
  static Request HeaderSection(Incoming& in, beast::flat_buffer& buffer) {
    Request req;
    req.method = std::string(in.facts.method);
    req.headers.reserve(in.facts.fields.size() + 1);
    for (const auto& [name, value] : in.facts.fields) req.headers.emplace_back(name, value);
    in.facts.method = {};
    in.facts.target = {};
    in.facts.fields.clear();
    if (in.plain) buffer.consume(in.block.size);  // nothing views it any more
    return req;
  }

  // Whether the handler reads this request's content as it arrives
  // (ServerOptions::stream_body) rather than the listener reading it whole.
  bool Streams(const Incoming& in, const Request& req) const {
    if (!in.plain || in.plain->content_length == 0 || !options_.stream_body) return false;
    std::string_view target = in.checked.target;
    std::string_view path = target.substr(0, target.find('?'));
    return options_.stream_body(req.method, path, req.Header("Content-Type").value_or(""));
  }

  // RFC 9110 §10.1.1: 100 Continue only to HTTP/1.1 (CheckRequestHead ignores Expect in
  // 1.0), only after the header checks passed, and only when content is still to come.
  template <typename Stream>
  awaitable<bool> Continue(Stream& stream, beast::flat_buffer& buffer, Incoming& in) {
    const bool content_here =
        in.plain ? buffer.size() >= in.plain->content_length : in.parser->is_done();
    if (!in.checked.expect_continue || content_here) co_return true;
    bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, 11};
    auto [ec, n] = co_await bhttp::async_write(stream, cont, kTuple);
    co_return !ec;
  }

  // 5. The content. For a plain head exactly Content-Length bytes (0 without the field;
  //    RFC 9112 §6.3), what follows belongs to the next request; otherwise Beast reads it,
  //    chunked included. A 100 Continue goes first when the client waits for it. False:
  //    the connection ends.
  template <typename Stream>
  awaitable<bool> ReadBody(Stream& stream, beast::flat_buffer& buffer, ConnectionDeadline& deadline,
                           const std::string& remote, Incoming& in, Request& req) {
    co_await Continue(stream, buffer, in);
    if (in.plain) {
      const size_t length = in.plain->content_length;
      if (buffer.size() < length) {
        deadline.Set(std::chrono::seconds(options_.read_timeout_s));
        while (buffer.size() < length) {
          auto [ec, n] = co_await stream.async_read_some(
              buffer.prepare(std::max(kReadChunk, length - buffer.size())), kTuple);
          if (ec) co_return false;  // end of stream, timeout, reset: nothing to answer
          buffer.commit(n);
        }
      }
      req.body.assign(static_cast<const char*>(buffer.data().data()), length);
      buffer.consume(length);
      co_return true;
    }
    if (!in.parser->is_done()) {
      deadline.Set(std::chrono::seconds(options_.read_timeout_s));
      auto [ec, n] = co_await bhttp::async_read(stream, buffer, *in.parser, kTuple);
      if (ec) {
        if (ec.category() == bhttp::make_error_code(bhttp::error::bad_chunk).category())
          co_await WriteParseError(stream, ec, remote);
        co_return false;
      }
    }
    auto msg = in.parser->release();
    req.body = std::move(msg.body());
    in.keep_alive = msg.keep_alive();
    co_return true;
  }

  // 6. The rest of what the handler is told: target, path and query, the host, the
  //    client, and the request's id and trace.
  void Complete(Request& req, Incoming& in, const std::string& remote, bool tls) {
    req.target = std::move(in.checked.target);
    auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    if (q != std::string::npos) req.query = req.target.substr(q + 1);
    // RFC 9112 §3.2.2: for an absolute-form target the host comes from the target; behind
    // a trusted proxy, from its X-Forwarded-Host or Forwarded host=.
    if (in.checked.absolute_form || in.host_forwarded) {
      auto it = std::find_if(req.headers.begin(), req.headers.end(),
                             [](const auto& h) { return IEquals(h.first, "Host"); });
      if (it != req.headers.end())
        it->second = in.checked.host;
      else
        req.headers.emplace_back("Host", in.checked.host);
    }
    req.remote_ip = in.client.ip;
    req.peer_ip = remote;
    req.scheme = in.client.https ? "https" : "http";
    req.request_id = NextRequestId();
    req.trace = trace::Continue(req.Header("traceparent"), req.Header("tracestate"));
    req.tls = tls;
  }

  // 7. The answer on the wire. RFC 9110 §6.2: it carries the highest version we conform
  //    to (1.1), also to an HTTP/1.0 client, whose keep-alive is then said explicitly
  //    (RFC 9112 §9.3). Written by FrameAnswer (server_text.h), not Beast's serializer (a
  //    tenth of a call). False: the write failed.
  template <typename Stream>
  awaitable<bool> WriteAnswer(Stream& stream, ConnectionDeadline& deadline, const Request& req,
                              Response& res, unsigned version, bool close) {
    const int handler_status = res.status;
    thread_local HttpDateCache dates;
    const std::string_view date = dates.At(std::chrono::system_clock::now());
    ResponseFraming framing{.reason = {},
                            .date = date,
                            .request_id = req.request_id,
                            .tls = req.tls,
                            .close = close,
                            .http10_keep_alive = version < 11,
                            .head = req.method == "HEAD"};
    auto wire = FrameAnswer(res, framing, ReasonPhrase);
    if (wire.replaced)
      spdlog::error(R"("event":"invalid_response_field","request_id":"{}","status":{})",
                    req.request_id, handler_status);
    deadline.Set(std::chrono::seconds(options_.read_timeout_s));
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(wire.bytes), kTuple);
    if (!ec && wire.content_follows)
      std::tie(ec, n) = co_await asio::async_write(stream, asio::buffer(res.body), kTuple);
    co_return !ec;
  }

  // 7b. A streamed answer (Response::stream): the head, then the pieces the handler's
  //     producer makes on the worker pool, each written as a chunk (to HTTP/1.0, as it is;
  //     the connection's close ends it). False: the write failed or the producer did, and
  //     the connection ends without the answer's end.
  template <typename Stream>
  awaitable<bool> WriteStreamed(Stream& stream, ConnectionDeadline& deadline, const Request& req,
                                Response& res, unsigned version, bool close,
                                const LogContext& log_context) {
    thread_local HttpDateCache dates;
    const std::string_view date = dates.At(std::chrono::system_clock::now());
    const bool chunked = version >= 11;
    ResponseFraming framing{.reason = {},
                            .date = date,
                            .request_id = req.request_id,
                            .tls = req.tls,
                            .close = close,
                            .http10_keep_alive = false,
                            .head = req.method == "HEAD",
                            .streamed = true,
                            .chunked = chunked};
    auto wire = FrameAnswer(res, framing, ReasonPhrase);
    deadline.Set(std::chrono::seconds(options_.read_timeout_s));
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(wire.bytes), kTuple);
    if (ec) co_return false;
    if (wire.replaced) {
      spdlog::error(R"("event":"invalid_response_field","request_id":"{}")", req.request_id);
      co_return true;  // FrameAnswer made it a whole 500
    }
    if (framing.head || NoContent(res.status)) co_return true;
    for (StreamStep step = StreamStep::kMore; step == StreamStep::kMore;) {
      std::string piece;
      step = co_await OnWorkerPiece(res.stream, piece, log_context);
      if (step == StreamStep::kFailed) {
        spdlog::warn(R"("event":"stream_failed","request_id":"{}")", req.request_id);
        co_return false;
      }
      std::string bytes = chunked ? ChunkBytes(piece, step == StreamStep::kEnd) : std::move(piece);
      if (bytes.empty()) continue;
      deadline.Set(std::chrono::seconds(options_.read_timeout_s));
      std::tie(ec, n) = co_await asio::async_write(stream, asio::buffer(bytes), kTuple);
      if (ec) co_return false;
    }
    co_return true;
  }

  // The next piece of a streamed answer, made on the worker pool; a producer that throws
  // has failed.
  auto OnWorkerPiece(const std::function<StreamStep(std::string&)>& producer, std::string& piece,
                     const LogContext& log_context) {
    return asio::async_initiate<decltype(use_awaitable), void(StreamStep)>(
        [this, &producer, &piece, &log_context](auto handler) {
          auto work = asio::make_work_guard(asio::get_associated_executor(handler));
          workers_.Post([&producer, &piece, &log_context, handler = std::move(handler),
                         work = std::move(work)]() mutable {
            StreamStep step = StreamStep::kFailed;
            {
              LogScope scope(LogContext(log_context));
              try {
                step = producer(piece);
              } catch (const std::exception& e) {
                spdlog::error(R"("event":"unhandled_exception","what":"{}")", JsonEscape(e.what()));
              } catch (...) {
                spdlog::error(R"("event":"unhandled_exception")");
              }
            }
            auto executor = work.get_executor();
            asio::post(executor, [handler = std::move(handler), step]() mutable {
              std::move(handler)(step);
            });
            work.reset();
          });
        },
        use_awaitable);
  }

  // 8. The access log line. Its fields (escaped path, peer) cost allocations on every
  //    request: built only when the line is written (benchmarks and busy nodes run at
  //    warn). Behind a trusted proxy "remote" is the forwarded client and "peer" the proxy.
  void LogRequest(const Request& req, const Response& res, const ClientView& client,
                  const std::string& remote, std::chrono::steady_clock::time_point started,
                  LogContext log_context) {
    if (!options_.access_log || !spdlog::should_log(spdlog::level::info)) return;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    std::string peer_field = client.forwarded ? R"(,"peer":")" + remote + "\"" : "";
    LogScope scope(std::move(log_context));
    spdlog::info(
        R"("event":"request","request_id":"{}","method":"{}","path":"{}","status":{},"duration_us":{},"remote":"{}"{})",
        req.request_id, JsonEscape(req.method),
        JsonEscape(LoggablePath(req.path, options_.secret_path_prefixes)), res.status, us,
        req.remote_ip, peer_field);
  }

  // Runs the handler on the worker pool (src/core/worker_pool.h) and resumes the calling
  // coroutine on its own executor with the answer. `req` and `log_context` live in the
  // suspended coroutine's frame until it resumes.
  auto OnWorker(const Request& req, LogContext& log_context) {
    return asio::async_initiate<decltype(use_awaitable), void(Response)>(
        [this, &req, &log_context](auto handler) {
          // Keeps the connection's io_context running until the answer is posted back.
          auto work = asio::make_work_guard(asio::get_associated_executor(handler));
          workers_.Post([this, &req, &log_context, handler = std::move(handler),
                         work = std::move(work)]() mutable {
            Response r;
            {
              LogScope scope(std::move(log_context));
              r = SafeHandle(req);
              log_context = std::move(scope.context());
            }
            auto executor = work.get_executor();
            asio::post(executor, [handler = std::move(handler), r = std::move(r)]() mutable {
              std::move(handler)(std::move(r));
            });
            work.reset();
          });
        },
        use_awaitable);
  }

  Response SafeHandle(const Request& req) {
    try {
      return handler_(req);
    } catch (const std::exception& e) {
      spdlog::error(R"("event":"unhandled_exception","request_id":"{}","what":"{}")",
                    req.request_id, JsonEscape(e.what()));
    } catch (...) {
      spdlog::error(R"("event":"unhandled_exception","request_id":"{}")", req.request_id);
    }
    Response r = Response::Text(500, R"({"error":"internal error"})", "application/json");
    return r;
  }

  // A Beast parse error, as an answer: the message cannot be framed, so the connection
  // closes after it.
  template <typename Stream>
  awaitable<void> WriteParseError(Stream& stream, beast::error_code ec, const std::string& remote) {
    if (ec == bhttp::error::body_limit) {
      co_await WriteError(
          stream, 413, "payload_too_large",
          "the body is larger than " + std::to_string(options_.max_body_bytes) + " bytes", remote);
    } else if (ec == bhttp::error::header_limit) {
      co_await WriteError(stream, 431, "headers_too_large", "the request headers are too large",
                          remote);
    } else if (ec == bhttp::error::bad_content_length ||
               ec == bhttp::error::multiple_content_length ||
               ec == bhttp::error::bad_transfer_encoding) {
      co_await WriteError(stream, 400, "bad_framing",
                          "Content-Length or Transfer-Encoding is invalid, repeated or conflicting",
                          remote);
    } else {
      co_await WriteError(stream, 400, "bad_request", "the request could not be parsed", remote);
    }
  }

  // Every answer the listener gives on its own (request_checks.h): RFC 9457 problem JSON,
  // the connection closed after it. The detail never echoes the request. It has a request
  // id like every other answer (X-Request-Id, in the body and in the log line), so a
  // client's report of a refusal can be found in the log.
  template <typename Stream>
  awaitable<void> WriteError(Stream& stream, int status, std::string_view code,
                             const std::string& detail, const std::string& remote) {
    const std::string request_id = NextRequestId();
    bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(status), 11};
    // ProblemBody (server_text.h), sent before any handler saw the request.
    out.set(bhttp::field::content_type, "application/problem+json");
    out.set(bhttp::field::server, "crmd");
    out.set(bhttp::field::date, HttpDate(std::chrono::system_clock::now()));
    out.set(bhttp::field::cache_control, "no-store");
    out.set("X-Request-Id", request_id);
    out.body() = ProblemBody(status, code, detail, request_id);
    out.keep_alive(false);
    out.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
    co_await bhttp::async_write(stream, out, kTuple);
    if (options_.access_log)
      spdlog::info(
          R"("event":"request_rejected","request_id":"{}","status":{},"code":"{}","remote":"{}")",
          request_id, status, code, remote);
  }

  const ServerOptions options_;
  const Handler handler_;
  // Declared before the io_contexts, so destroyed after them: a connection still open when
  // the server is destroyed ends with its context, and its coroutine's last steps
  // (Unregister, SetBusy) use these.
  TlsContexts tls_{options_.tls_cert_file, options_.tls_key_file};
  // Set by Listen(), before Run() starts the threads that read them; immutable after.
  HostAllowList allowed_hosts_;
  ProxyTrust trust_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> next_id_{0};
  std::atomic<uint64_t> next_conn_{0};
  std::string id_prefix_;

  std::mutex mu_;
  std::condition_variable cv_;          // Stop() waits here for the requests in flight
  std::condition_variable stopped_cv_;  // Wait() waits here for stopped_
  std::unordered_map<uint64_t, Conn> conns_;
  std::atomic<int> active_ = 0;
  bool stopped_ = false;

  // One per I/O thread but the first. Declared before ioc_, so destroyed after it: the
  // acceptor's pending accept holds a socket of the io_context it accepts for.
  std::vector<std::unique_ptr<asio::io_context>> more_iocs_;
  asio::io_context ioc_;  // the acceptor, the signals, and connections in turn
  size_t next_ioc_ = 0;   // the acceptor's coroutine only
  WorkerPool workers_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::signal_set hangup_;
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
Status Server::ReloadTls() { return impl_->ReloadTls(); }

}  // namespace crmd::http
