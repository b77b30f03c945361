#include "src/core/http_types.h"

#include <nlohmann/json.hpp>

#include "src/core/json_write.h"

namespace crmd::http {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a == b) return true;  // fields are nearly always sent as they are looked up
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x += 32;
    if (y >= 'A' && y <= 'Z') y += 32;
    if (x != y) return false;
  }
  return true;
}

std::optional<std::string_view> Request::Header(std::string_view name) const {
  // Most fields differ from `name` in length: no call for them (a request's fields are
  // looked up about a dozen times on the way to a tool).
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && IEquals(k, name)) return std::string_view(v);
  return std::nullopt;
}

Response& Response::Set(std::string name, std::string value) {
  for (auto& [k, v] : headers) {
    if (IEquals(k, name)) {
      v = std::move(value);
      return *this;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

std::optional<std::string_view> Response::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (IEquals(k, name)) return std::string_view(v);
  return std::nullopt;
}

Response Response::Json(int status, const nlohmann::json& body) {
  Response r;
  r.status = status;
  r.body = DumpJson(body, nlohmann::json::error_handler_t::replace);
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

Response Response::Text(int status, std::string body, std::string content_type) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Content-Type", std::move(content_type));
  return r;
}

Response Response::Html(int status, std::string body) {
  Response r = Text(status, std::move(body), "text/html; charset=utf-8");
  r.headers.emplace_back("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // Not no-referrer: under it a browser sends "Origin: null" with a page's own form posts,
  // which the OAuth and console pages refuse as cross-site.
  r.headers.emplace_back("Referrer-Policy", "same-origin");
  return r;
}

Response Response::Empty(int status) {
  Response r;
  r.status = status;
  return r;
}

namespace {
int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = HexVal(s[i + 1]), lo = HexVal(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseForm(std::string_view body) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t amp = body.find('&', start);
    std::string_view part = body.substr(start, amp == std::string_view::npos ? amp : amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      auto k = PercentDecode(part.substr(0, eq), true);
      auto v = eq == std::string_view::npos ? std::optional<std::string>("")
                                            : PercentDecode(part.substr(eq + 1), true);
      if (k && v) out.emplace_back(std::move(*k), std::move(*v));
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return out;
}

std::optional<std::string> FormValue(const std::vector<std::pair<std::string, std::string>>& form,
                                     std::string_view name) {
  for (const auto& [k, v] : form)
    if (k == name) return v;
  return std::nullopt;
}

}  // namespace crmd::http
