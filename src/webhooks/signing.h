#pragma once
// Standard Webhooks signatures (https://www.standardwebhooks.com, spec 1.0.0): the signed
// content is "<msg_id>.<timestamp>.<body>", HMAC-SHA256 with the secret's bytes, sent as
// "v1,<base64 signature>" in the webhook-signature header (space-separated list).
// Secrets are "whsec_<base64 of 32 random bytes>". Stateless, thread-safe.
#include <cstdint>
#include <string>
#include <string_view>

#include "src/core/random.h"
#include "src/core/result.h"

namespace crmd::webhooks {

inline constexpr std::string_view kSecretPrefix = "whsec_";

std::string NewSigningSecret(Random& random);
// The key bytes of a "whsec_..." secret; kInvalidArgument when malformed.
Result<std::string> SigningKey(std::string_view secret);
// "v1,<base64 HMAC-SHA256(key, msg_id.timestamp.body)>".
Result<std::string> Sign(std::string_view secret, std::string_view msg_id, int64_t timestamp,
                         std::string_view body);
// True when any "v1,..." entry of `signature_header` matches (constant-time compare).
bool VerifySignature(std::string_view secret, std::string_view msg_id, int64_t timestamp,
                     std::string_view body, std::string_view signature_header);

// Incoming webhooks: "sha256=<hex HMAC-SHA256(secret, body)>" (X-Crmd-Signature), constant time.
bool VerifyHexSignature(std::string_view secret, std::string_view body, std::string_view header);

}  // namespace crmd::webhooks
