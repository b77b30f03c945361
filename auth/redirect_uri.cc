#include "auth/redirect_uri.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "src/core/text.h"

namespace crmd::auth {
namespace {

constexpr size_t kMaxRedirectUriLength = 2048;

struct Authority {
  std::string_view host;  // brackets kept for IPv6 literals
  std::string_view port;  // digits, may be empty
  std::string_view rest;  // path + query
  bool has_userinfo = false;
};

bool IsSchemeChar(char c, bool first) {
  if (std::isalpha(static_cast<unsigned char>(c))) return true;
  if (first) return false;
  return std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Splits "//authority/rest" after the scheme. nullopt when the authority is malformed.
std::optional<Authority> SplitAuthority(std::string_view after_scheme) {
  if (after_scheme.substr(0, 2) != "//") return std::nullopt;
  std::string_view s = after_scheme.substr(2);
  size_t end = s.find_first_of("/?");
  std::string_view authority = s.substr(0, end);
  Authority a;
  a.rest = end == std::string_view::npos ? std::string_view() : s.substr(end);
  if (authority.find('@') != std::string_view::npos) {
    a.has_userinfo = true;
    authority = authority.substr(authority.rfind('@') + 1);
  }
  if (authority.empty()) return std::nullopt;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = authority.substr(0, close + 1);
    std::string_view tail = authority.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return std::nullopt;
      a.port = tail.substr(1);
    }
  } else {
    size_t colon = authority.find(':');
    a.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) a.port = authority.substr(colon + 1);
  }
  if (a.host.empty()) return std::nullopt;
  for (char c : a.port)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  if (a.port.size() > 5) return std::nullopt;
  if (!a.port.empty() && std::stoi(std::string(a.port)) > 65535) return std::nullopt;
  return a;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "127.0.0.1" || host == "[::1]" || host == "localhost";
}

bool IsValidHostName(std::string_view host) {
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    for (char c : host.substr(1, host.size() - 2))
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    return true;
  }
  if (host.front() == '.' || host.back() == '-' || host.front() == '-') return false;
  for (char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') return false;
  return true;
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

tl::unexpected<Error> Refuse(std::string why) {
  return Fail(Errc::kInvalidArgument, std::move(why));
}

}  // namespace

bool IsRfc3986Text(std::string_view uri) {
  static constexpr std::string_view kAllowed =
      "-._~"          // unreserved, besides letters and digits
      ":/?#[]@"       // gen-delims
      "!$&'()*+,;=";  // sub-delims
  for (size_t i = 0; i < uri.size(); ++i) {
    char c = uri[i];
    if (c == '%') {
      if (i + 2 >= uri.size() || !IsHex(uri[i + 1]) || !IsHex(uri[i + 2])) return false;
      i += 2;
      continue;
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || kAllowed.find(c) != std::string_view::npos)
      continue;
    return false;
  }
  // Brackets belong around an IP literal host only: "scheme://[...]".
  size_t open = uri.find('[');
  size_t close = uri.find(']');
  if (open == std::string_view::npos && close == std::string_view::npos) return true;
  size_t authority = uri.find("://");
  if (authority == std::string_view::npos || open != authority + 3 || close < open) return false;
  return uri.find_first_of("[]", close + 1) == std::string_view::npos &&
         uri.find('[', open + 1) == std::string_view::npos;
}

Status ValidateWebUrl(std::string_view url, std::string_view field) {
  auto refuse = [&](std::string why) {
    return Fail(Errc::kInvalidArgument, std::string(field) + " " + why);
  };
  bool https = url.rfind("https://", 0) == 0;
  if (!https && url.rfind("http://", 0) != 0) return refuse("must be an http(s) URL");
  if (url.size() > kMaxRedirectUriLength) return refuse("is too long");
  if (!IsRfc3986Text(url))
    return refuse(
        "is not a valid URL (RFC 3986): it contains characters that must be "
        "percent-encoded");
  auto authority = SplitAuthority(url.substr(https ? 6 : 5));
  if (!authority || !IsValidHostName(authority->host)) return refuse("has no valid host");
  if (authority->has_userinfo) return refuse("must not contain user information");
  return Ok();
}

Result<RedirectUriKind> ValidateRedirectUri(std::string_view uri) {
  if (uri.empty()) return Refuse("redirect_uri is empty");
  if (uri.size() > kMaxRedirectUriLength) return Refuse("redirect_uri is too long");
  for (unsigned char c : uri) {
    if (c <= 0x20 || c >= 0x7f)
      return Refuse("redirect_uri contains whitespace, control or non-ASCII characters");
  }
  if (uri.find('#') != std::string_view::npos)
    return Refuse("redirect_uri must not contain a fragment (RFC 6749 §3.1.2)");
  if (uri.find('*') != std::string_view::npos)
    return Refuse("redirect_uri must not contain wildcards");
  if (uri.find('\\') != std::string_view::npos)
    return Refuse("redirect_uri must not contain backslashes");
  if (!IsRfc3986Text(uri))
    return Refuse(
        "redirect_uri is not a valid URI (RFC 3986): characters such as \" < > { } | ^ ` must "
        "be percent-encoded");

  size_t colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return Refuse("redirect_uri must be an absolute URI");
  std::string_view scheme = uri.substr(0, colon);
  for (size_t i = 0; i < scheme.size(); ++i)
    if (!IsSchemeChar(scheme[i], i == 0)) return Refuse("redirect_uri must be an absolute URI");
  std::string lower_scheme = text::AsciiLower(scheme);
  std::string_view after = uri.substr(colon + 1);

  static constexpr std::array<std::string_view, 10> kDangerous = {
      "javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "ws", "wss", "ftp"};
  if (std::find(kDangerous.begin(), kDangerous.end(), lower_scheme) != kDangerous.end())
    return Refuse("redirect_uri scheme " + lower_scheme + " is not allowed");

  if (lower_scheme == "https" || lower_scheme == "http") {
    if (scheme != lower_scheme) return Refuse("redirect_uri scheme must be lower case");
    auto authority = SplitAuthority(after);
    if (!authority) return Refuse("redirect_uri has no valid host");
    if (authority->has_userinfo) return Refuse("redirect_uri must not contain user information");
    if (!IsValidHostName(authority->host)) return Refuse("redirect_uri has no valid host");
    if (lower_scheme == "https") return RedirectUriKind::kHttps;
    if (!IsLoopbackHost(authority->host))
      return Refuse(
          "http redirect_uri is allowed only on loopback (127.0.0.1, [::1], localhost; RFC 8252 "
          "§7.3)");
    return RedirectUriKind::kLoopback;
  }

  // Private-use URI scheme (RFC 8252 §7.1): reverse domain name of something the app's
  // publisher controls, so it must contain a period.
  if (scheme.find('.') == std::string_view::npos)
    return Refuse(
        "custom redirect_uri schemes must be reverse domain names such as com.example.app (RFC "
        "8252 §7.1)");
  if (after.empty()) return Refuse("redirect_uri has no path");
  if (after.substr(0, 2) == "//") {
    auto authority = SplitAuthority(after);
    if (authority && authority->has_userinfo)
      return Refuse("redirect_uri must not contain user information");
  }
  return RedirectUriKind::kPrivateUse;
}

bool RedirectUriMatches(std::string_view registered, std::string_view presented) {
  if (registered == presented) return true;
  // RFC 8252 §7.3: the native app picks an ephemeral port at request time, so loopback
  // redirects match on everything except the port.
  constexpr std::string_view kHttp = "http:";
  if (registered.substr(0, kHttp.size()) != kHttp || presented.substr(0, kHttp.size()) != kHttp)
    return false;
  if (!ValidateRedirectUri(presented) || !ValidateRedirectUri(registered)) return false;
  auto a = SplitAuthority(registered.substr(kHttp.size()));
  auto b = SplitAuthority(presented.substr(kHttp.size()));
  if (!a || !b) return false;
  return !a->has_userinfo && !b->has_userinfo && IsLoopbackHost(a->host) && a->host == b->host &&
         a->rest == b->rest;
}

std::optional<std::string> FindMatchingRedirectUri(const std::vector<std::string>& registered,
                                                   std::string_view presented) {
  for (const auto& r : registered)
    if (RedirectUriMatches(r, presented)) return r;
  return std::nullopt;
}

}  // namespace crmd::auth
