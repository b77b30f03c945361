#include "auth/bearer.h"

#include <array>
#include <string_view>

namespace crmd::auth {

namespace {

tl::unexpected<Error> Refuse(std::string_view detail, std::string message) {
  return Fail(Errc::kUnauthenticated, std::move(message), std::string(detail));
}

// RFC 6750 §2.1 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
// A table: this runs over every byte of every bearer token (about 800 for crmd's JWTs).
constexpr std::array<bool, 256> kB64TokenChar = [] {
  std::array<bool, 256> t{};
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (char c : std::string_view("-._~+/")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

bool IsB64Token(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && kB64TokenChar[static_cast<unsigned char>(t[i])]) ++i;
  if (i == 0) return false;
  while (i < t.size() && t[i] == '=') ++i;
  return i == t.size();
}

// Escapes a quoted-string value (RFC 9110 §5.6.4).
std::string Quote(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  }
  return out + "\"";
}

}  // namespace

Result<std::shared_ptr<const Principal>> BearerGuard::Authenticate(const http::Request& req) const {
  // MCP (2025-06-18, "Token Requirements") and RFC 6750 §2.3: never in the URI, where it
  // would land in logs and Referer headers.
  for (const auto& [k, v] : http::ParseForm(req.query))
    if (k == "access_token")
      return Refuse(kBearerInvalidRequest, "access token in the query string is not accepted");

  int count = 0;
  std::string_view header;
  for (const auto& [k, v] : req.headers) {
    if (http::IEquals(k, "Authorization")) {
      header = v;
      ++count;
    }
  }
  if (count == 0) return Refuse(kBearerMissing, "authorization required");
  if (count > 1) return Refuse(kBearerInvalidRequest, "several Authorization headers");
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  size_t sp = header.find(' ');
  std::string_view scheme = header.substr(0, sp);
  // Another scheme (Basic, DPoP, ...) means no bearer credentials were offered.
  if (!http::IEquals(scheme, "Bearer")) return Refuse(kBearerMissing, "bearer token required");
  if (sp == std::string_view::npos) return Refuse(kBearerInvalidRequest, "empty bearer token");
  std::string_view token = header.substr(sp);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  // The b64token check reads every byte of the token, so it is made only for a token
  // that is not in the cache of verified tokens (one found there passed it before).
  auto principal = tokens_.VerifyShared(token, IsB64Token);
  if (!principal) {
    if (principal.error().code == Errc::kUnavailable) return Fail(principal.error());
    if (principal.error().code == Errc::kInvalidArgument)  // IsB64Token said no
      return Refuse(kBearerInvalidRequest, principal.error().message);
    return Refuse(kBearerInvalidToken, principal.error().message);
  }
  return principal;
}

std::string BearerChallenge(const Error& error, std::string_view resource_metadata_url,
                            std::string_view scope) {
  std::string out = "Bearer resource_metadata=" + Quote(resource_metadata_url);
  if (error.detail == kBearerInvalidRequest || error.detail == kBearerInvalidToken) {
    out += ", error=" + Quote(error.detail);
    out += ", error_description=" + Quote(error.message);
  }
  if (!scope.empty()) out += ", scope=" + Quote(scope);
  return out;
}

int BearerStatus(const Error& error) {
  if (error.code == Errc::kUnavailable) return 503;
  if (error.detail == kBearerInvalidRequest) return 400;
  return 401;
}

}  // namespace crmd::auth
