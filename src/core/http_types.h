#pragma once
// Plain HTTP request/response types. Only src/http knows Beast; every other module sees
// these. A handler is a pure function Request -> Response that may block (it runs on the
// worker pool, never on an I/O thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/trace.h"

namespace crmd::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// A request's content handed to the handler as it arrives instead of read whole first
// (ServerOptions::stream_body): Read copies up to n bytes into buf and answers how many, 0
// once all `length` bytes (its Content-Length) have been read, kFailed when the rest cannot
// be read (the client went away or stalled past read_timeout_s, the server is stopping),
// after which what was read must not be taken for the whole. Read blocks; only the
// handler's thread calls it, and only while the handler runs.
struct BodyStream {
  static constexpr size_t kFailed = static_cast<size_t>(-1);
  uint64_t length = 0;
  std::function<size_t(char* buf, size_t n)> read;
};

// The next piece of an answer streamed after its header section (Response::stream).
enum class StreamStep {
  kMore,    // `out` holds a piece; ask again
  kEnd,     // `out` holds the last piece (maybe none)
  kFailed,  // the answer cannot be finished: the connection closes without its end, so
            // the client sees an incomplete answer, never a short one taken for whole
};

// Case-insensitive ASCII comparison, for header names.
bool IEquals(std::string_view a, std::string_view b);

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // raw request target, e.g. "/oauth/authorize?x=1"
  std::string path;    // target without the query, not percent-decoded
  std::string query;   // after '?', without it; may be empty
  Headers headers;     // as received; Host is the host the request named (docs/http.md)
  std::string body;
  // Set instead of `body` for a request the server streams (ServerOptions::stream_body).
  std::shared_ptr<BodyStream> body_stream;
  // The client's address: the TCP peer, or the client a trusted proxy forwarded
  // (config trusted_proxies). Rate limits and logs key on it.
  std::string remote_ip;
  std::string peer_ip;     // the TCP peer itself (a proxy's address behind one)
  std::string request_id;  // assigned by the server, echoed as X-Request-Id
  // W3C Trace Context: the caller's traceparent/tracestate continued, or a new trace; the
  // server makes it the handler thread's log context (src/core/log.h).
  trace::Context trace;
  bool tls = false;             // the connection to crmd is TLS
  std::string scheme = "http";  // what the client used: "https" with tls or a trusted proxy's word

  // First header with this name (case-insensitive), if any.
  std::optional<std::string_view> Header(std::string_view name) const;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // Set instead of `body` for an answer too large to hold: called on the worker pool after
  // the header section is written, each call appending the next piece to `out` (chunked
  // transfer coding; to an HTTP/1.0 client the connection's end marks the end). Not
  // called for HEAD.
  std::function<StreamStep(std::string& out)> stream;

  Response& Set(std::string name, std::string value);
  std::optional<std::string_view> Header(std::string_view name) const;

  static Response Json(int status, const nlohmann::json& body);
  static Response Text(int status, std::string body,
                       std::string content_type = "text/plain; charset=utf-8");
  // Every HTML page is built here, with the headers every page needs: a
  // Content-Security-Policy (scripts and styles from this origin only, no framing, also as
  // X-Frame-Options), Cache-Control: no-store, X-Content-Type-Options: nosniff and
  // Referrer-Policy: same-origin. A page may tighten them with Set() (the links in messages
  // send no-referrer).
  static Response Html(int status, std::string body);
  static Response Empty(int status);
};

using Handler = std::function<Response(const Request&)>;

// Percent-decoding for path segments and form/query values ('+' is a space only in forms).
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space = false);
std::string PercentEncode(std::string_view s);
// application/x-www-form-urlencoded (also query strings). Later duplicates are kept.
std::vector<std::pair<std::string, std::string>> ParseForm(std::string_view body);
// First value of a form/query field.
std::optional<std::string> FormValue(const std::vector<std::pair<std::string, std::string>>& form,
                                     std::string_view name);

}  // namespace crmd::http
