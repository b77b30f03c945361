#include "src/webhooks/signing.h"

#include "src/core/crypto.h"

namespace crmd::webhooks {

std::string NewSigningSecret(Random& random) {
  return std::string(kSecretPrefix) + crypto::Base64Encode(random.Bytes(32));
}

Result<std::string> SigningKey(std::string_view secret) {
  if (secret.substr(0, kSecretPrefix.size()) != kSecretPrefix)
    return Fail(Errc::kInvalidArgument, "signing secret must start with whsec_");
  auto key = crypto::Base64Decode(secret.substr(kSecretPrefix.size()));
  if (!key) return Fail(Errc::kInvalidArgument, "signing secret is not base64");
  // The spec asks for 24 to 64 bytes of key material.
  if (key->size() < 24 || key->size() > 64)
    return Fail(Errc::kInvalidArgument, "signing secret must hold 24 to 64 bytes");
  return key;
}

Result<std::string> Sign(std::string_view secret, std::string_view msg_id, int64_t timestamp,
                         std::string_view body) {
  auto key = SigningKey(secret);
  if (!key) return Fail(key.error());
  std::string content;
  content.reserve(msg_id.size() + body.size() + 24);
  content.append(msg_id).append(".").append(std::to_string(timestamp)).append(".").append(body);
  return "v1," + crypto::Base64Encode(crypto::HmacSha256(*key, content));
}

bool VerifySignature(std::string_view secret, std::string_view msg_id, int64_t timestamp,
                     std::string_view body, std::string_view signature_header) {
  auto expected = Sign(secret, msg_id, timestamp, body);
  if (!expected) return false;
  bool ok = false;
  size_t start = 0;
  while (start < signature_header.size()) {
    size_t space = signature_header.find(' ', start);
    auto entry =
        signature_header.substr(start, space == std::string_view::npos ? space : space - start);
    // Check every entry (no early exit) so the time does not tell which one matched.
    if (crypto::ConstantTimeEqual(entry, *expected)) ok = true;
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return ok;
}

bool VerifyHexSignature(std::string_view secret, std::string_view body, std::string_view header) {
  constexpr std::string_view kPrefix = "sha256=";
  if (header.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string presented(header.substr(kPrefix.size()));
  for (auto& c : presented) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return crypto::ConstantTimeEqual(presented, crypto::Hex(crypto::HmacSha256(secret, body)));
}

}  // namespace crmd::webhooks
