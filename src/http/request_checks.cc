#include "src/http/request_checks.h"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <optional>

#include "src/core/http_types.h"
#include "src/http/syntax.h"

namespace crmd::http {
namespace {

using namespace syntax;

tl::unexpected<Rejection> Reject(int status, std::string_view code, std::string_view detail) {
  return tl::unexpected(Rejection{status, code, detail});
}

bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsUnreserved(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
bool IsSubDelim(char c) {
  return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos;
}
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!IsTchar(c)) return false;
  return true;
}

// RFC 3986 §3.2.2 reg-name (which includes IPv4address): unreserved / pct-encoded /
// sub-delims.
bool IsRegName(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || !IsHex(s[i + 1]) || !IsHex(s[i + 2])) return false;
      i += 2;
    } else if (!IsUnreserved(c) && !IsSubDelim(c)) {
      return false;
    }
  }
  return true;
}

// RFC 3986 §3.2.2 IP-literal without its brackets: IPv6address / IPvFuture.
bool IsIpLiteral(std::string_view s) {
  if (s.empty()) return false;
  if (s[0] == 'v' || s[0] == 'V') {
    size_t dot = s.find('.');
    if (dot == std::string_view::npos || dot < 2 || dot + 1 == s.size()) return false;
    for (size_t i = 1; i < dot; ++i)
      if (!IsHex(s[i])) return false;
    for (size_t i = dot + 1; i < s.size(); ++i)
      if (!IsUnreserved(s[i]) && !IsSubDelim(s[i]) && s[i] != ':') return false;
    return true;
  }
  for (char c : s)
    if (!IsHex(c) && c != ':' && c != '.') return false;  // no zone id (RFC 6874)
  in6_addr addr{};
  return inet_pton(AF_INET6, std::string(s).c_str(), &addr) == 1;
}

struct Authority {
  std::string_view host;
  std::optional<std::string_view> port;  // after ':', digits, possibly empty
};

// uri-host [ ":" port ] with a non-empty host.
std::optional<Authority> ParseAuthority(std::string_view v) {
  Authority hp;
  std::string_view rest;
  if (!v.empty() && v[0] == '[') {
    size_t close = v.find(']');
    if (close == std::string_view::npos || !IsIpLiteral(v.substr(1, close - 1)))
      return std::nullopt;
    hp.host = v.substr(0, close + 1);
    rest = v.substr(close + 1);
  } else {
    size_t colon = v.find(':');
    hp.host = v.substr(0, colon);
    if (hp.host.empty() || !IsRegName(hp.host)) return std::nullopt;
    rest = colon == std::string_view::npos ? std::string_view() : v.substr(colon);
  }
  if (!rest.empty()) {
    if (rest[0] != ':') return std::nullopt;
    rest.remove_prefix(1);
    for (char c : rest)
      if (!IsDigit(c)) return std::nullopt;
    hp.port = rest;
  }
  return hp;
}

bool IsHttpScheme(std::string_view s) { return IEquals(s, "http") || IEquals(s, "https"); }

// The scheme of an absolute-form target ("scheme://..."), if it is one.
std::optional<std::string_view> AbsoluteScheme(std::string_view target) {
  size_t sep = target.find("://");
  if (sep == std::string_view::npos || sep == 0 || !IsAlpha(target[0])) return std::nullopt;
  for (char c : target.substr(0, sep))
    if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
  return target.substr(0, sep);
}

tl::expected<void, Rejection> CheckTransferEncoding(const RequestHead& head,
                                                    const std::vector<std::string_view>& te,
                                                    bool has_content_length) {
  if (head.version < 11)
    return Reject(400, "bad_framing", "Transfer-Encoding is not defined for HTTP/1.0 requests");
  if (has_content_length)
    return Reject(400, "bad_framing",
                  "a request must not carry both Transfer-Encoding and Content-Length");
  std::vector<std::string_view> members;
  for (auto v : te) AppendListMembers(v, members);
  if (members.empty()) return Reject(400, "bad_framing", "the Transfer-Encoding field is empty");
  if (!IEquals(members.back(), "chunked"))
    return Reject(400, "bad_framing", "chunked must be the final transfer coding of a request");
  bool unknown = false;
  for (size_t i = 0; i + 1 < members.size(); ++i) {
    auto member = members[i];
    auto name = TrimOws(member.substr(0, member.find(';')));
    if (!IsToken(name)) return Reject(400, "bad_framing", "the Transfer-Encoding field is invalid");
    if (IEquals(name, "chunked"))
      return Reject(400, "bad_framing", "chunked must not be applied more than once");
    unknown = true;
  }
  // crmd decodes chunked only; any other coding (gzip, deflate, compress, unknown ones) is
  // not implemented.
  if (unknown)
    return Reject(501, "unsupported_transfer_coding",
                  "the only transfer coding crmd accepts in a request is chunked");
  return {};
}

}  // namespace

tl::expected<HeaderBlock, Rejection> ScanHeaderBlock(std::span<char> data,
                                                     size_t max_header_bytes) {
  std::string_view d(data.data(), data.size());
  size_t i = 0;
  while (d.substr(i, 2) == "\r\n") i += 2;  // RFC 9112 §2.2: empty lines before the request
  if (i > max_header_bytes)
    return Reject(400, "bad_request", "too many empty lines before the request-line");
  size_t end_of_fields = d.find("\r\n\r\n", i);
  size_t scan_end = end_of_fields == std::string_view::npos ? d.size() : end_of_fields + 4;
  // Each LF (found with memchr: this runs over every byte of every request head) must
  // follow a CR.
  for (size_t j = i; j < scan_end; ++j) {
    const void* lf = std::memchr(d.data() + j, '\n', scan_end - j);
    if (lf == nullptr) break;
    j = static_cast<size_t>(static_cast<const char*>(lf) - d.data());
    if (j == 0 || d[j - 1] != '\r')
      return Reject(400, "bad_request", "a line of the request ends in LF without CR");
  }

  size_t line_end = d.find("\r\n", i);
  if (line_end == std::string_view::npos) {
    if (d.size() - i > max_header_bytes)
      return Reject(414, "uri_too_long", "the request-line is longer than crmd accepts");
    return HeaderBlock{};
  }
  if (line_end - i > max_header_bytes)
    return Reject(414, "uri_too_long", "the request-line is longer than crmd accepts");

  // HTTP-version = "HTTP/" DIGIT "." DIGIT, the last word of the request-line. Anything
  // else malformed is left to Beast (400).
  auto line = d.substr(i, line_end - i);
  size_t sp = line.rfind(' ');
  if (sp != std::string_view::npos) {
    auto v = line.substr(sp + 1);
    if (v.size() == 8 && v.substr(0, 5) == "HTTP/" && IsDigit(v[5]) && v[6] == '.' &&
        IsDigit(v[7])) {
      if (v[5] != '1')
        return Reject(505, "http_version_not_supported",
                      "this port speaks HTTP/1.1 (and HTTP/1.0) only");
      if (v[7] > '1') data[i + sp + 1 + 7] = '1';
    }
  }

  if (end_of_fields == std::string_view::npos) {
    if (d.size() - i > max_header_bytes)
      return Reject(431, "headers_too_large", "the request headers are too large");
    return HeaderBlock{};
  }
  size_t size = end_of_fields + 4 - i;
  if (size > max_header_bytes)
    return Reject(431, "headers_too_large", "the request headers are too large");

  // A line that starts with SP or HTAB: right after the request-line it is whitespace
  // before the first field (§2.2), later it is obs-fold (§5.2). Both are rejected.
  for (size_t q = line_end; q < end_of_fields; q = d.find("\r\n", q + 2)) {
    char next = d[q + 2];
    if (next == ' ' || next == '\t') {
      if (q == line_end)
        return Reject(400, "bad_request",
                      "whitespace between the request-line and the first field");
      return Reject(400, "obs_fold", "obsolete line folding is not accepted in a request");
    }
  }
  return HeaderBlock{.skip = i, .size = size};
}

namespace {

bool IsFieldVchar(char c) { return syntax::kPlainFieldByte[static_cast<unsigned char>(c)]; }

// Whether every byte of `v` is visible ASCII, SP or HTAB: eight bytes at a time (a bearer
// token is about 800 bytes), a word with a byte below SP, DEL or above going byte by byte.
bool AllFieldVchars(std::string_view v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, v.data() + i, 8);
    const uint64_t del = w ^ (0x7F * kOnes);
    const uint64_t odd =
        (w & kHigh) | ((w - 0x20 * kOnes) & ~w & kHigh) | ((del - kOnes) & ~del & kHigh);
    if (odd != 0) {
      for (size_t k = i; k < i + 8; ++k)
        if (!IsFieldVchar(v[k])) return false;
    }
  }
  for (; i < v.size(); ++i)
    if (!IsFieldVchar(v[i])) return false;
  return true;
}

// RFC 9110 §7.6.1: Connection = #connection-option. Adds what this head needs to know;
// false for anything but a plain token list or for "upgrade" (Beast's parser then).
bool ReadConnection(std::string_view value, bool& close, bool& keep_alive) {
  std::vector<std::string_view> members;
  syntax::AppendListMembers(value, members);
  for (auto m : members) {
    for (char c : m)
      if (!syntax::IsTchar(c)) return false;
    if (IEquals(m, "close"))
      close = true;
    else if (IEquals(m, "keep-alive"))
      keep_alive = true;
    else if (IEquals(m, "upgrade"))
      return false;
  }
  return true;
}

}  // namespace

std::optional<PlainHead> ParsePlainHead(std::string_view block, size_t max_body_bytes) {
  PlainHead out;
  // request-line = method SP request-target SP HTTP-version CRLF (RFC 9112 §3)
  size_t line_end = block.find("\r\n");
  if (line_end == std::string_view::npos) return std::nullopt;
  std::string_view line = block.substr(0, line_end);
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return std::nullopt;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1 || sp2 + 9 != line.size())
    return std::nullopt;
  std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  for (char c : method)
    if (!syntax::IsTchar(c)) return std::nullopt;
  for (char c : target)
    if (c <= 0x20 || c >= 0x7F) return std::nullopt;
  if (version == "HTTP/1.1")
    out.head.version = 11;
  else if (version == "HTTP/1.0")
    out.head.version = 10;
  else
    return std::nullopt;
  out.head.method = method;
  out.head.target = target;

  // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5), up to the empty line.
  bool close = false, keep_alive = false, has_length = false, has_connection = false;
  size_t pos = line_end + 2;
  out.head.fields.reserve(16);
  while (true) {
    size_t end = block.find("\r\n", pos);
    if (end == std::string_view::npos) return std::nullopt;
    if (end == pos) {
      if (pos + 2 != block.size()) return std::nullopt;
      break;
    }
    std::string_view field = block.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string_view name = field.substr(0, colon), value = field.substr(colon + 1);
    for (char c : name)
      if (!syntax::IsTchar(c)) return std::nullopt;
    if (!AllFieldVchars(value)) return std::nullopt;
    value = syntax::TrimOws(value);
    if (IEquals(name, "Transfer-Encoding")) return std::nullopt;
    if (IEquals(name, "Content-Length")) {
      if (has_length || value.empty() || value.size() > 15) return std::nullopt;
      size_t n = 0;
      for (char c : value) {
        if (!syntax::IsDigit(c)) return std::nullopt;
        n = n * 10 + static_cast<size_t>(c - '0');
      }
      if (n > max_body_bytes) return std::nullopt;
      has_length = true;
      out.content_length = n;
    } else if (IEquals(name, "Connection")) {
      // Beast's keep_alive() reads the first Connection field only: one, or Beast decides.
      if (has_connection || !ReadConnection(value, close, keep_alive)) return std::nullopt;
      has_connection = true;
    }
    out.head.fields.emplace_back(name, value);
  }
  if (close && keep_alive) return std::nullopt;
  out.keep_alive = out.head.version == 11 ? !close : keep_alive;
  return out;
}

bool IsValidHostValue(std::string_view value) {
  return value.empty() || ParseAuthority(value).has_value();
}

tl::expected<CheckedHead, Rejection> CheckRequestHead(const RequestHead& head) {
  std::vector<std::string_view> hosts, te, expect;
  bool has_content_length = false;
  for (const auto& [name, value] : head.fields) {
    if (IEquals(name, "Host"))
      hosts.push_back(value);
    else if (IEquals(name, "Transfer-Encoding"))
      te.push_back(value);
    else if (IEquals(name, "Content-Length"))
      has_content_length = true;
    else if (IEquals(name, "Expect"))
      expect.push_back(value);
  }

  // Framing first (RFC 9112 §6.1, §6.3).
  if (!te.empty()) {
    auto framing = CheckTransferEncoding(head, te, has_content_length);
    if (!framing) return tl::unexpected(framing.error());
  }

  // Host (RFC 9112 §3.2).
  if (hosts.size() > 1) return Reject(400, "bad_host", "more than one Host field");
  if (hosts.empty() && head.version >= 11)
    return Reject(400, "bad_host", "an HTTP/1.1 request must carry a Host field");
  if (!hosts.empty() && !IsValidHostValue(hosts[0]))
    return Reject(400, "bad_host", "the Host field is not a valid host[:port]");

  // Request-target forms (RFC 9112 §3.2.1-§3.2.4).
  CheckedHead out;
  auto target = head.target;
  if (target.find('#') != std::string_view::npos)
    return Reject(400, "bad_request_target", "a request-target has no fragment");
  if (head.method == "CONNECT") {
    auto authority = ParseAuthority(target);
    if (!authority || !authority->port || authority->port->empty())
      return Reject(400, "bad_request_target",
                    "CONNECT takes an authority-form target (host:port)");
    return Reject(501, "method_not_implemented", "crmd is not a proxy; CONNECT is not implemented");
  }
  if (target == "*") {
    if (head.method != "OPTIONS")
      return Reject(400, "bad_request_target", "the asterisk-form target is for OPTIONS only");
    out.target = "*";
  } else if (!target.empty() && target[0] == '/') {
    out.target = std::string(target);
  } else if (auto scheme = AbsoluteScheme(target)) {
    if (!IsHttpScheme(*scheme))
      return Reject(400, "bad_request_target", "an absolute-form target must be an http(s) URI");
    auto rest = target.substr(scheme->size() + 3);
    size_t auth_end = rest.find_first_of("/?");
    auto authority = rest.substr(0, auth_end);
    // RFC 9110 §4.2.4: userinfo in an http(s) URI is an error; §4.2.1: an empty host
    // identifier MUST be rejected.
    if (authority.find('@') != std::string_view::npos)
      return Reject(400, "bad_request_target", "an http(s) target must not carry userinfo");
    if (!ParseAuthority(authority))
      return Reject(400, "bad_request_target", "the target's authority is not a valid host[:port]");
    auto path = auth_end == std::string_view::npos ? std::string_view() : rest.substr(auth_end);
    out.target = (path.empty() || path[0] == '?') ? "/" + std::string(path) : std::string(path);
    out.absolute_form = true;
    out.host = std::string(authority);
  } else {
    return Reject(400, "bad_request_target",
                  "the request-target form is not valid for this method");
  }
  if (!out.absolute_form && !hosts.empty()) out.host = std::string(hosts[0]);
  out.has_host = out.absolute_form || !hosts.empty();

  // Expect (RFC 9110 §10.1.1). A server MUST ignore 100-continue in an HTTP/1.0 request.
  if (head.version >= 11) {
    std::vector<std::string_view> members;
    for (auto v : expect) AppendListMembers(v, members);
    for (auto m : members) {
      if (!IEquals(m, "100-continue"))
        return Reject(417, "expectation_failed", "the only expectation crmd meets is 100-continue");
      out.expect_continue = true;
    }
  }
  return out;
}

std::string_view StatusTitle(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 417:
      return "Expectation Failed";
    case 421:
      return "Misdirected Request";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

}  // namespace crmd::http
