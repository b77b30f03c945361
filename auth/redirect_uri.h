#pragma once
// Redirect URI rules for registration (RFC 7591 §2, draft OAuth 2.1 §2.3, RFC 8252 §7/§8)
// and matching at authorization time (OAuth 2.1 §4.1.1: exact string comparison, except
// that a loopback redirect may use any port, RFC 8252 §7.3).
//
// Accepted forms:
//   https://host[:port]/path[?query]              web clients
//   http://127.0.0.1|[::1]|localhost[:port]/...   native apps on loopback (port may differ)
//   com.example.app:/cb                           private-use scheme (reverse DNS, §7.1)
// Refused: fragments, userinfo, wildcards, relative URIs, plain http on other hosts,
// dangerous schemes (javascript:, data:, file:, ...), whitespace and control characters.
//
// Pure functions; thread-safe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

namespace crmd::auth {

enum class RedirectUriKind { kHttps, kLoopback, kPrivateUse };

// Checks a redirect URI offered at registration (or in a client metadata document).
// kInvalidArgument with a client-facing reason when refused.
Result<RedirectUriKind> ValidateRedirectUri(std::string_view uri);

// True when `presented` (from an authorization request) matches the registered URI:
// identical strings, or both loopback http URIs that differ only in the port.
bool RedirectUriMatches(std::string_view registered, std::string_view presented);

// The registered URI that `presented` matches, if any.
std::optional<std::string> FindMatchingRedirectUri(const std::vector<std::string>& registered,
                                                   std::string_view presented);

}  // namespace crmd::auth
