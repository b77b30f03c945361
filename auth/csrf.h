#pragma once
// CSRF defences for the login and consent forms: a per-form token compared in constant
// time, and an Origin check (a browser sends Origin on every cross-site POST).
// Pure functions; thread-safe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/http_types.h"

namespace crmd::auth {

// True when `presented` is non-empty and equals `expected` (constant time).
bool CsrfTokenMatches(const std::optional<std::string>& presented, std::string_view expected);

// The origin (scheme://host[:port]) of an absolute URL; empty when not absolute.
std::string OriginOf(std::string_view url);

// True unless the request carries an Origin header that is neither the issuer's origin nor
// one of `allowed_origins` ("null", the opaque origin, is refused).
bool OriginAllowed(const http::Request& req, std::string_view issuer,
                   const std::vector<std::string>& allowed_origins);

}  // namespace crmd::auth
