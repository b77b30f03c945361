#pragma once
// PKCE (RFC 7636), S256 only: OAuth 2.1 drops "plain", and so does crmd. Pure functions;
// thread-safe.
#include <string>
#include <string_view>

#include "src/core/result.h"

namespace crmd::auth::pkce {

// The only method crmd accepts (authorize and token endpoints).
inline constexpr std::string_view kMethodS256 = "S256";

// RFC 7636 §4.1: 43..128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
bool IsValidVerifier(std::string_view verifier);
// An S256 challenge is BASE64URL(SHA256(verifier)) without padding: exactly 43 characters
// of the base64url alphabet.
bool IsValidChallenge(std::string_view challenge);
// kInvalidArgument unless `method` is exactly "S256" (RFC 7636 §4.3; "plain" is refused,
// and so is a missing method: OAuth 2.1 makes S256 mandatory).
Status CheckMethod(std::string_view method);

// BASE64URL-ENCODE(SHA256(ASCII(verifier))), RFC 7636 §4.2.
std::string S256Challenge(std::string_view verifier);

// True when `verifier` is syntactically valid and its S256 challenge equals `challenge`.
// The comparison is constant-time.
bool VerifyS256(std::string_view verifier, std::string_view challenge);

}  // namespace crmd::auth::pkce
