#include "auth/pkce.h"

#include "src/core/crypto.h"

namespace crmd::auth::pkce {

namespace {
bool IsUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}
bool IsBase64Url(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}
}  // namespace

bool IsValidVerifier(std::string_view verifier) {
  if (verifier.size() < 43 || verifier.size() > 128) return false;
  for (char c : verifier)
    if (!IsUnreserved(c)) return false;
  return true;
}

bool IsValidChallenge(std::string_view challenge) {
  if (challenge.size() != 43) return false;
  for (char c : challenge)
    if (!IsBase64Url(c)) return false;
  return true;
}

Status CheckMethod(std::string_view method) {
  if (method == kMethodS256) return Ok();
  if (method.empty()) return Fail(Errc::kInvalidArgument, "code_challenge_method S256 is required");
  return Fail(Errc::kInvalidArgument, "only code_challenge_method S256 is supported");
}

std::string S256Challenge(std::string_view verifier) {
  return crypto::Base64UrlEncode(crypto::Sha256(verifier));
}

bool VerifyS256(std::string_view verifier, std::string_view challenge) {
  if (!IsValidVerifier(verifier) || !IsValidChallenge(challenge)) return false;
  return crypto::ConstantTimeEqual(S256Challenge(verifier), challenge);
}

}  // namespace crmd::auth::pkce
