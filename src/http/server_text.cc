#include "src/http/server_text.h"

#include <array>
#include <cstdio>

#include "src/core/clock.h"
#include "src/core/log.h"
#include "src/http/request_checks.h"
#include "src/http/syntax.h"

namespace crmd::http {

// RFC 9110 §5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT". RFC 9110 §6.6.1: an
// origin server with a clock sends Date.
std::string HttpDate(std::chrono::system_clock::time_point t) {
  return FormatImfDate(std::chrono::system_clock::to_time_t(t), "GMT");
}

std::string_view HttpDateCache::At(std::chrono::system_clock::time_point t) {
  // The second HttpDate writes (IMF-fixdate has no fraction).
  const long long second = std::chrono::system_clock::to_time_t(t);
  if (!set_ || second != second_) {
    text_ = HttpDate(t);
    second_ = second;
    set_ = true;
  }
  return text_;
}

std::string LoggablePath(std::string_view path, const std::vector<std::string>& secret_prefixes) {
  for (const std::string& prefix : secret_prefixes) {
    if (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix) {
      std::string out;
      out.reserve(prefix.size() + 10);
      out.append(prefix).append("[redacted]");
      return out;
    }
  }
  constexpr std::string_view kHook = "crmd_hook_";
  constexpr size_t kVisible = 18;
  if (path.find(kHook) == std::string_view::npos) return std::string(path);
  std::string out;
  out.reserve(path.size());
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view seg = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
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

namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!syntax::IsTchar(c)) return false;
  return true;
}

// RFC 9110 §5.5: CR, LF and NUL never appear in a field value (obs-fold is not sent).
bool ValidValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// The fields the server writes itself.
bool ServerOwned(std::string_view name, bool tls) {
  static constexpr std::array<std::string_view, 6> kOwned = {
      "Server", "Date", "X-Request-Id", "Connection", "Content-Length", "Transfer-Encoding"};
  for (auto owned : kOwned)
    if (IEquals(name, owned)) return true;
  return tls && IEquals(name, "Strict-Transport-Security");
}

void AppendField(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

std::optional<std::string> ResponseHead(const Response& res, const ResponseFraming& f) {
  std::string out;
  out.reserve(256);
  char status[4] = {static_cast<char>('0' + res.status / 100 % 10),
                    static_cast<char>('0' + res.status / 10 % 10),
                    static_cast<char>('0' + res.status % 10), ' '};
  if (res.status < 100 || res.status > 999) return std::nullopt;
  out.append("HTTP/1.1 ").append(status, 4).append(f.reason).append("\r\n");
  const auto& h = res.headers;
  for (size_t i = 0; i < h.size(); ++i) {
    if (!ValidName(h[i].first) || !ValidValue(h[i].second)) return std::nullopt;
    if (ServerOwned(h[i].first, f.tls)) continue;
    // Fields of one name stay together, at the place of the first (a later one joins it;
    // its own name and value are checked when the loop reaches it).
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = IEquals(h[j].first, h[i].first);
    if (seen) continue;
    AppendField(out, h[i].first, h[i].second);
    for (size_t j = i + 1; j < h.size(); ++j)
      if (IEquals(h[j].first, h[i].first)) AppendField(out, h[j].first, h[j].second);
  }
  AppendField(out, "Server", "crmd");
  AppendField(out, "Date", f.date);
  AppendField(out, "X-Request-Id", f.request_id);
  if (f.tls) AppendField(out, "Strict-Transport-Security", "max-age=31536000");
  if (f.close)
    AppendField(out, "Connection", "close");
  else if (f.http10_keep_alive)
    AppendField(out, "Connection", "keep-alive");
  if (f.streamed) {
    if (f.chunked && !NoContent(res.status)) AppendField(out, "Transfer-Encoding", "chunked");
  } else if (!NoContent(res.status)) {
    AppendField(out, "Content-Length", std::to_string(res.body.size()));
  }
  out.append("\r\n");
  return out;
}

std::string ChunkBytes(std::string_view piece, bool last) {
  std::string out;
  if (!piece.empty()) {
    char size[20];
    int n = std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    out.reserve(piece.size() + static_cast<size_t>(n) + 7);
    out.append(size, static_cast<size_t>(n)).append(piece).append("\r\n");
  }
  if (last) out.append("0\r\n\r\n");
  return out;
}

AnswerBytes FrameAnswer(Response& res, ResponseFraming framing,
                        std::string_view (*reason)(int status)) {
  AnswerBytes out;
  framing.reason = reason(res.status);
  auto head = ResponseHead(res, framing);
  if (!head) {
    res = Response::Text(500, R"({"error":"internal error"})", "application/json");
    framing.reason = reason(res.status);
    head = ResponseHead(res, framing);
    out.replaced = true;
  }
  out.bytes = std::move(*head);
  if (!framing.head && !framing.streamed && !NoContent(res.status)) {
    constexpr size_t kCopyLimit = 64 * 1024;
    if (res.body.size() <= kCopyLimit)
      out.bytes.append(res.body);
    else
      out.content_follows = true;
  }
  return out;
}

std::string ProblemBody(int status, std::string_view code, const std::string& detail,
                        std::string_view request_id) {
  std::string c(code);
  std::string id(request_id);
  return R"({"type":"urn:crmd:problem:)" + c + R"(","title":")" + std::string(StatusTitle(status)) +
         R"(","status":)" + std::to_string(status) + R"(,"code":")" + c + R"(","error":")" + c +
         R"(","detail":")" + JsonEscape(detail) + R"(","instance":"urn:crmd:request:)" +
         JsonEscape(id) + R"(","request_id":")" + JsonEscape(id) + R"("})";
}

}  // namespace crmd::http
