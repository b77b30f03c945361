#pragma once
// The public half of a DKIM private key, as a DKIM key record publishes it: the p= tag of
// "v=DKIM1; k=rsa; p=..." is base64 of the DER SubjectPublicKeyInfo (RFC 6376 §3.6.1). The
// pre-send check compares it with what DNS publishes. Pure functions; thread-safe.
#include <string>
#include <string_view>

#include "src/core/result.h"

namespace crmd::mail {

// Base64 of the DER SubjectPublicKeyInfo of the private key in the PEM file. Fails when
// the file is unreadable or holds no private key.
Result<std::string> DkimPublicKeyFromFile(const std::string& private_key_file);

// The p= tag of a DKIM key record ("v=DKIM1; k=rsa; p=MIIB..."), whitespace removed;
// empty when it has none (or an empty one: a revoked key).
std::string DkimRecordPublicKey(std::string_view record);

}  // namespace crmd::mail
