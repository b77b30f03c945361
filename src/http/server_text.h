#pragma once
// What the server writes besides a handler's answer: the Date header's value and the
// request path as the access log may show it. No Beast here (src/http/server.cc uses them).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"

namespace crmd::http {

// RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(std::chrono::system_clock::time_point t);

// HttpDate of the current second, formatted once a second: the server keeps one per I/O
// thread (a formatted date was about 2 % of a tool call's instructions). The view is valid
// until the next At(). Not thread-safe.
class HttpDateCache {
 public:
  std::string_view At(std::chrono::system_clock::time_point t);

 private:
  long long second_ = 0;
  bool set_ = false;
  std::string text_;
};

// The request path as the access log shows it (docs/operations.md, "Logs"): a path that
// starts with one of `secret_prefixes` (whose remainder is a credential: a link token, an
// approval id) keeps the prefix and "[redacted]" in place of the rest, and an incoming
// webhook's URL token (a segment crmd_hook_<8>_<43>) is cut to its visible 18-character
// prefix. The query is never part of `path`. A path without either costs one search and
// no more than the copy the log line needs.
std::string LoggablePath(std::string_view path, const std::vector<std::string>& secret_prefixes);

// How the server frames a handler's answer (src/http/server.cc fills it in).
struct ResponseFraming {
  std::string_view reason;         // the status line's reason phrase
  std::string_view date;           // HttpDate()
  std::string_view request_id;     // X-Request-Id
  bool tls = false;                // adds Strict-Transport-Security
  bool close = false;              // the connection closes after this answer
  bool http10_keep_alive = false;  // an HTTP/1.0 client keeps the connection: say so
  bool head = false;               // an answer to HEAD: the GET answer's head, no content
  // A streamed answer (Response::stream): no Content-Length, but Transfer-Encoding:
  // chunked, or, to an HTTP/1.0 client (`close` then set), nothing: the close ends it.
  bool streamed = false;
  bool chunked = false;
};

// One piece of a chunked answer as it goes on the wire (RFC 9112 §7.1): its size in hex,
// CRLF, the piece, CRLF; `last` adds the last chunk and the end of the (empty) trailer.
// An empty piece that is not the last writes nothing (an empty chunk would end the answer).
std::string ChunkBytes(std::string_view piece, bool last);

// The status line and header section of `res` as an HTTP/1.1 answer (RFC 9112 §4, §5),
// ending with the empty line; the content, `res.body`, is sent after it unless
// `NoContent(res.status)` or `f.head`. The handler's fields come first, in their order
// (fields of one name kept together), then Server, Date, X-Request-Id, HSTS, Connection
// and Content-Length, which are the server's own: a handler's Server, Date,
// X-Request-Id, Connection, Content-Length, Transfer-Encoding or (on TLS)
// Strict-Transport-Security is dropped. Nothing (nullopt) when a field name is not a
// token or a value holds CR, LF or NUL: such an answer must not be sent.
std::optional<std::string> ResponseHead(const Response& res, const ResponseFraming& f);

// 1xx, 204 and 304 answers have no content and no Content-Length (RFC 9110 §8.6, §15).
inline bool NoContent(int status) { return status < 200 || status == 204 || status == 304; }

// What the server writes for `res`: its head (ResponseHead, the reason phrase from
// `reason`), then its content when that is sent and at most 64 KiB (copied after the head:
// one write; a gathered write of head and content over beast::ssl_stream sent the head
// alone and reported success, Boost 1.81). `content_follows`: a larger content is to be
// written next. A handler field that cannot be sent turns `res` into a 500 (`replaced`,
// for the log): a bug to fix, answered as one, never written to the wire.
struct AnswerBytes {
  std::string bytes;
  bool content_follows = false;
  bool replaced = false;
};
AnswerBytes FrameAnswer(Response& res, ResponseFraming framing,
                        std::string_view (*reason)(int status));

// RFC 9457 problem JSON for an answer the listener gives on its own: the members of a REST
// problem (docs/rest.md "Errors": type, title, status, code, detail, instance, request_id),
// with "error" as well for clients that read OAuth-style bodies. `detail` never echoes the
// request; `request_id` is the one the listener gave the refused request (X-Request-Id).
std::string ProblemBody(int status, std::string_view code, const std::string& detail,
                        std::string_view request_id);

}  // namespace crmd::http
