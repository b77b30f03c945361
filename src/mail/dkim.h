#pragma once
// DKIM signing (RFC 6376) with rsa-sha256 and relaxed/relaxed canonicalisation.
//
// A DkimSigner holds one RSA private key (loaded from a PEM file with OpenSSL) and signs
// rendered messages by prepending a DKIM-Signature header field. It is immutable after
// Load() and thread-safe: each Sign() uses its own OpenSSL digest context. Signing is
// deterministic (RSASSA-PKCS1-v1_5): the same message gives the same signature.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace crmd::mail {

struct DkimOptions {
  std::string private_key_file;  // PEM, RSA (PKCS#1 or PKCS#8), at least 1024 bits
  std::string selector;          // s=: the key is published at <selector>._domainkey.<domain>
  std::string domain;            // d=: the signing domain
};

// The header fields signed, in this order, each one that is present in the message
// (RFC 6376 §5.4: From is required; §5.4.1 recommends the rest).
const std::vector<std::string>& DkimSignedHeaders();

class DkimSigner {
 public:
  // Fails when the file is unreadable, not a PEM private key, not RSA, shorter than 1024
  // bits (RFC 8301 §3.2), or the selector or domain is empty or malformed.
  static Result<DkimSigner> Load(const DkimOptions& options);
  // The same from PEM text (tests, keys from a secret store).
  static Result<DkimSigner> FromPem(std::string_view pem, const DkimOptions& options);

  // `message` with "DKIM-Signature: ..." CRLF in front. Bare LF line endings are turned
  // into CRLF first (what goes on the wire is what is signed). Fails (kInvalidArgument)
  // when the message has no header/body separator or no From field.
  Result<std::string> Sign(std::string_view message) const;

 private:
  DkimSigner(std::shared_ptr<EVP_PKEY> key, std::string selector, std::string domain);

  std::shared_ptr<EVP_PKEY> key_;
  std::string selector_;
  std::string domain_;
};

// Canonicalisation, exposed for tests (RFC 6376 §3.4.2 and §3.4.4).
std::string DkimRelaxedHeader(std::string_view name, std::string_view value);
std::string DkimRelaxedBody(std::string_view body);

}  // namespace crmd::mail
