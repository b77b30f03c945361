#pragma once
// JWS compact serialisation with ES256 (RFC 7515, RFC 7518 §3.4: ECDSA P-256 + SHA-256,
// signature = raw r||s, 64 bytes) and the claim checks of JWT access tokens (RFC 9068).
// Only ES256 is accepted: "none", HS256 and every other alg are refused before any key
// is touched, so algorithm confusion cannot happen.
//
// EcKey wraps an OpenSSL EVP_PKEY (P-256). It is immutable after construction and
// thread-safe for concurrent Sign/Verify (OpenSSL 3 allows shared read-only EVP_PKEY use;
// each operation has its own EVP_MD_CTX). Free functions are pure and thread-safe.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "src/core/result.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace crmd::auth {

class EcKey {
 public:
  // A fresh P-256 key pair from OpenSSL's CSPRNG.
  static Result<EcKey> Generate();
  // From a PKCS#8 PEM private key (the form stored in signing_keys.private_pem).
  static Result<EcKey> FromPrivatePem(std::string_view pem);

  std::string PrivatePem() const;
  // {"kty":"EC","crv":"P-256","x":..,"y":..} plus kid, use "sig" and alg "ES256".
  nlohmann::json PublicJwk(std::string_view kid) const;
  // RFC 7638 JWK thumbprint (base64url SHA-256 of the canonical public JWK): crmd's kid.
  std::string Thumbprint() const;

  // ES256 signature of `data` as JOSE raw r||s (64 bytes).
  Result<std::string> Sign(std::string_view data) const;
  // Verifies a raw r||s signature (anything but 64 bytes is false).
  bool Verify(std::string_view data, std::string_view raw_signature) const;

 private:
  explicit EcKey(std::shared_ptr<EVP_PKEY> key) : key_(std::move(key)) {}
  std::shared_ptr<EVP_PKEY> key_;
};

// A JWS split into its parts; nothing verified yet except syntax.
struct ParsedJws {
  nlohmann::json header;      // object
  nlohmann::json payload;     // object
  std::string signing_input;  // "<b64 header>.<b64 payload>"
  std::string signature;      // raw bytes
};

// Parses a compact JWS whose header is alg ES256 with a kid and no "crit". Refuses
// anything else (including alg none/HS256, JWE, padding, over-long tokens) with
// kUnauthenticated.
Result<ParsedJws> ParseEs256Jws(std::string_view token);

// Signs `payload` with header {"alg":"ES256","typ":typ,"kid":kid}.
Result<std::string> SignEs256Jws(const EcKey& key, std::string_view kid, std::string_view typ,
                                 const nlohmann::json& payload);

// RFC 9068 access-token claims as crmd issues them.
struct AccessTokenClaims {
  std::string issuer;      // iss
  std::string audience;    // aud (the protected resource)
  std::string subject;     // sub
  std::string client_id;   // client_id
  std::string scope;       // space-separated
  int64_t issued_at = 0;   // iat
  int64_t expires_at = 0;  // exp
  std::string jti;
  // gid: the grant the token was issued under (absent from tokens of versions that did not
  // record it). Revoking the grant refuses the token without a record of its jti.
  std::string grant_id;
};

nlohmann::json ToJson(const AccessTokenClaims& claims);

struct ClaimCheck {
  std::string issuer;
  std::string audience;
  int64_t now = 0;
  int64_t leeway_s = 0;  // tolerated clock skew on exp/iat
};

// Checks typ "at+jwt" (RFC 9068 §4), iss, aud (string or array containing it), exp, iat
// and the presence of sub, client_id, jti; kUnauthenticated naming the failing check.
Result<AccessTokenClaims> CheckAccessTokenClaims(const ParsedJws& jws, const ClaimCheck& check);

}  // namespace crmd::auth
