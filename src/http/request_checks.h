#pragma once
// The server MUSTs of RFC 9112 (HTTP/1.1 message syntax) and the request-handling MUSTs
// of RFC 9110 that Boost.Beast's parser leaves to the application, as pure functions the
// listener calls on every request before any handler sees it. docs/http.md lists, per RFC
// section, which rule Beast enforces and which one is here.
//
// Two passes:
//   1. ScanHeaderBlock: the raw bytes of the header section as they came off the wire,
//      before Beast parses them (bare LF, obs-fold, request-line length, HTTP version).
//   2. CheckRequestHead: the fields Beast parsed (Host, Transfer-Encoding next to
//      Content-Length, request-target form per method, Expect).
// Either answers a Rejection, which the listener writes as problem JSON and then closes
// the connection. No Rejection text echoes the request.
//
// Stateless; thread-safe.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace crmd::http {

// An answer the listener gives on its own. `code` is the stable problem code, `detail`
// client-facing text that never contains request bytes.
struct Rejection {
  int status = 400;
  std::string_view code;
  std::string_view detail;
};

// Where the header section lies in the bytes read so far. size == 0: not complete yet.
struct HeaderBlock {
  size_t skip = 0;  // empty lines before the request-line (RFC 9112 §2.2), to be dropped
  size_t size = 0;  // request-line through the empty line ending the fields
};

// Pass 1. `data` holds every byte received so far for this request. Answers:
//   - a Rejection as soon as the bytes can no longer become a valid request (a bare LF,
//     a request-line over `max_header_bytes` (414), a header section over it (431), an
//     HTTP major version other than 1 such as the HTTP/2 preface (505), obs-fold or
//     whitespace before the first field (400));
//   - a HeaderBlock with size 0 when more bytes are needed;
//   - the complete HeaderBlock. HTTP/1.x with x > 1 is rewritten in place to HTTP/1.1
//     (RFC 9110 §6.2: served as the highest minor version we implement).
tl::expected<HeaderBlock, Rejection> ScanHeaderBlock(std::span<char> data, size_t max_header_bytes);

// What Beast parsed from the header section.
struct RequestHead {
  std::string_view method;
  std::string_view target;
  unsigned version = 11;                                              // 10 or 11
  std::vector<std::pair<std::string_view, std::string_view>> fields;  // in order
};

// A request that passed, as the router should see it.
struct CheckedHead {
  std::string target;            // origin-form ("/path?query"), or "*" for OPTIONS *
  bool absolute_form = false;    // the target was absolute-form; `host` came from it
  std::string host;              // the authority: from the absolute-form target, else Host
  bool has_host = false;         // false only for HTTP/1.0 without Host
  bool expect_continue = false;  // HTTP/1.1 `Expect: 100-continue`
};

// Pass 2.
tl::expected<CheckedHead, Rejection> CheckRequestHead(const RequestHead& head);

// The header section in the plain form nearly every client sends, parsed without Beast:
// a token method, a target of visible ASCII, HTTP/1.0 or HTTP/1.1, fields whose names are
// tokens and whose values are visible ASCII, SP and HTAB, at most one Content-Length of
// digits up to `max_body_bytes`, no Transfer-Encoding, Connection only as a list of
// tokens without "upgrade". `block` is a complete HeaderBlock (pass 1 passed). Answers
// nullopt for anything else, which Beast's parser then takes, so that this never accepts
// what Beast refuses and never reads a request differently (tests/fuzz checks both).
struct PlainHead {
  RequestHead head;  // views into `block`
  size_t content_length = 0;
  bool keep_alive = true;  // Beast's keep_alive(): 1.1 without "close", 1.0 with "keep-alive"
};
std::optional<PlainHead> ParsePlainHead(std::string_view block, size_t max_body_bytes);

// RFC 9110 §7.2 / RFC 3986 §3.2.2: uri-host [ ":" port ]. Empty is valid (RFC 9112 §3.2:
// a target URI without authority sends an empty Host).
bool IsValidHostValue(std::string_view value);

// The title (reason phrase) for a status the listener answers on its own.
std::string_view StatusTitle(int status);

}  // namespace crmd::http
