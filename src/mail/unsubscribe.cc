#include "src/mail/unsubscribe.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "src/core/crypto.h"

namespace crmd::mail {
namespace {

// Separates these MACs from any other HMAC made with the same secret.
constexpr std::string_view kDomainTag = "crmd-link-token-v1\n";

bool IsPurpose(std::string_view p) {
  return !p.empty() && std::all_of(p.begin(), p.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool ParseInt(std::string_view s, int64_t& out) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

LinkTokens::LinkTokens(std::string secret, const Clock& clock)
    : secret_(std::move(secret)), clock_(clock) {}

std::string LinkTokens::Mac(std::string_view payload) const {
  std::string data(kDomainTag);
  data += payload;
  return crypto::HmacSha256(secret_, data);
}

std::string LinkTokens::Issue(int64_t contact_id, std::string_view purpose,
                              int64_t ttl_seconds) const {
  return Issue(contact_id, purpose, ttl_seconds, 0);
}

std::string LinkTokens::Issue(int64_t contact_id, std::string_view purpose, int64_t ttl_seconds,
                              int64_t ref, std::string_view bound) const {
  std::string payload = std::to_string(contact_id) + ":" + std::string(purpose) + ":" +
                        std::to_string(clock_.NowUnix() + ttl_seconds);
  if (ref > 0) payload += ":" + std::to_string(ref);
  std::string signed_text = payload;
  if (!bound.empty()) {
    signed_text += '\n';
    signed_text += bound;
  }
  return crypto::Base64UrlEncode(payload) + "." + crypto::Base64UrlEncode(Mac(signed_text));
}

Result<LinkClaims> LinkTokens::Verify(std::string_view token, std::string_view purpose,
                                      std::string_view bound) const {
  auto invalid = [] { return Fail(Errc::kInvalidArgument, "invalid link"); };
  if (token.size() > 512) return invalid();
  size_t dot = token.find('.');
  if (dot == token.npos) return invalid();
  auto payload = crypto::Base64UrlDecode(token.substr(0, dot));
  auto mac = crypto::Base64UrlDecode(token.substr(dot + 1));
  if (!payload || !mac) return invalid();
  // One spelling per token: the decoder also takes padding and the standard alphabet, so
  // what does not re-encode to the text it came from (a '=', a '+', spare bits) is refused.
  if (crypto::Base64UrlEncode(*payload) != token.substr(0, dot) ||
      crypto::Base64UrlEncode(*mac) != token.substr(dot + 1))
    return invalid();
  // The MAC is checked before anything in the payload is believed.
  std::string signed_text = *payload;
  if (!bound.empty()) {
    signed_text += '\n';
    signed_text += bound;
  }
  if (!crypto::ConstantTimeEqual(*mac, Mac(signed_text))) return invalid();

  std::string_view p = *payload;
  size_t c1 = p.find(':');
  size_t c2 = c1 == p.npos ? p.npos : p.find(':', c1 + 1);
  if (c2 == p.npos) return invalid();
  size_t c3 = p.find(':', c2 + 1);
  LinkClaims claims;
  claims.purpose = std::string(p.substr(c1 + 1, c2 - c1 - 1));
  std::string_view expires = c3 == p.npos ? p.substr(c2 + 1) : p.substr(c2 + 1, c3 - c2 - 1);
  if (!ParseInt(p.substr(0, c1), claims.contact_id) || !ParseInt(expires, claims.expires_at) ||
      (c3 != p.npos && (!ParseInt(p.substr(c3 + 1), claims.ref) || claims.ref <= 0)) ||
      !IsPurpose(claims.purpose) || claims.purpose != purpose) {
    return invalid();
  }
  if (clock_.NowUnix() >= claims.expires_at) {
    return Fail(Errc::kConfirmationExpired, "link expired");
  }
  return claims;
}

}  // namespace crmd::mail
