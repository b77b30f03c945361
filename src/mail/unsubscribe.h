#pragma once
// Signed per-recipient link tokens: unsubscribe, double opt-in confirmation, and the like.
//
// A token is base64url(payload) "." base64url(HMAC-SHA256(secret, domain tag + payload)),
// where the payload is "<contact id>:<purpose>:<expires unix seconds>[:<ref>]" and, when
// a token is bound to some text, the MAC covers "\n" + that text after the payload. Nothing is
// stored: the server secret alone makes and checks tokens, so rotating the secret invalidates every
// link already sent. A token for one purpose never passes as another. The comparison of MACs is
// constant-time (crypto::ConstantTimeEqual).
//
// Immutable after construction and thread-safe.
#include <cstdint>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/core/result.h"

namespace crmd::mail {

// The purposes crmd's messages use.
inline constexpr std::string_view kUnsubscribePurpose = "unsubscribe";  // RFC 8058 link
inline constexpr std::string_view kConfirmPurpose = "confirm";          // double opt-in

struct LinkClaims {
  int64_t contact_id = 0;
  int64_t ref = 0;         // what the link is about, e.g. a campaign id; 0: nothing
  std::string purpose;     // [a-z0-9_-]+, e.g. "unsubscribe", "confirm"
  int64_t expires_at = 0;  // unix seconds
};

class LinkTokens {
 public:
  // REQUIRES: `secret` has at least 32 bytes of entropy; `clock` outlives this object.
  LinkTokens(std::string secret, const Clock& clock);

  // REQUIRES: `purpose` matches [a-z0-9_-]+ and ttl_seconds > 0.
  std::string Issue(int64_t contact_id, std::string_view purpose, int64_t ttl_seconds) const;
  // With a reference (e.g. the campaign the message belongs to, ref > 0) carried in the
  // token, and `bound` text (e.g. a click's target URL) that the MAC covers but the token
  // does not carry: Verify must be given the same `bound`.
  std::string Issue(int64_t contact_id, std::string_view purpose, int64_t ttl_seconds, int64_t ref,
                    std::string_view bound = {}) const;

  // The claims of a well-signed, unexpired token for `purpose`. Fails with
  // kInvalidArgument ("invalid link") on a malformed or forged token or another purpose,
  // and with kConfirmationExpired ("link expired") once its time has passed.
  Result<LinkClaims> Verify(std::string_view token, std::string_view purpose,
                            std::string_view bound = {}) const;

 private:
  const std::string secret_;
  const Clock& clock_;

  std::string Mac(std::string_view payload) const;
};

}  // namespace crmd::mail
