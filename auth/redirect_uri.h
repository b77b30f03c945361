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
// dangerous schemes (javascript:, data:, file:, ...), and anything that is not an RFC 3986
// URI: whitespace, control and non-ASCII characters, characters RFC 3986 has no place
// for (" < > \ ^ ` { | }), a % not followed by two hex digits, brackets outside the host.
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

// True when every character of `uri` may appear in an RFC 3986 URI (§2: unreserved,
// reserved, and % followed by two hex digits), brackets only around an IP literal host.
bool IsRfc3986Text(std::string_view uri);

// Checks a web page URL a client registers to be shown to people (client_uri, logo_uri,
// tos_uri, policy_uri): http or https with a valid host, no user information, RFC 3986
// characters only. kInvalidArgument with a client-facing reason naming `field`.
Status ValidateWebUrl(std::string_view url, std::string_view field);

// True when `presented` (from an authorization request) matches the registered URI:
// identical strings, or both loopback http URIs that differ only in the port.
bool RedirectUriMatches(std::string_view registered, std::string_view presented);

// The registered URI that `presented` matches, if any.
std::optional<std::string> FindMatchingRedirectUri(const std::vector<std::string>& registered,
                                                   std::string_view presented);

}  // namespace crmd::auth
