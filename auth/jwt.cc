#include "auth/jwt.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "src/core/crypto.h"

namespace crmd::auth {

namespace {

constexpr size_t kMaxTokenBytes = 8 * 1024;
constexpr size_t kCoordBytes = 32;  // P-256

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct SigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};

std::shared_ptr<EVP_PKEY> Wrap(EVP_PKEY* k) { return std::shared_ptr<EVP_PKEY>(k, EVP_PKEY_free); }

bool IsP256(EVP_PKEY* k) {
  if (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC) return false;
  char name[64] = {0};
  size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof name, &len) != 1)
    return false;
  return std::string_view(name, len) == "prime256v1" || std::string_view(name, len) == "P-256";
}

std::string Coordinate(EVP_PKEY* k, const char* param) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(k, param, &bn) != 1) return {};
  std::unique_ptr<BIGNUM, BnFree> guard(bn);
  std::string out(kCoordBytes, '\0');
  if (BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), kCoordBytes) != kCoordBytes)
    return {};
  return out;
}

bool IsB64UrlSegment(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<nlohmann::json> DecodeJsonSegment(std::string_view seg) {
  auto raw = crypto::Base64UrlDecode(seg);
  if (!raw) return Fail(Errc::kUnauthenticated, "malformed token");
  auto j = nlohmann::json::parse(*raw, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Fail(Errc::kUnauthenticated, "malformed token");
  return j;
}

tl::unexpected<Error> Bad(std::string msg) { return Fail(Errc::kUnauthenticated, std::move(msg)); }

}  // namespace

Result<EcKey> EcKey::Generate() {
  EVP_PKEY* k = EVP_EC_gen("P-256");
  if (!k) return Fail(Error::Internal("EVP_EC_gen failed"));
  return EcKey(Wrap(k));
}

Result<EcKey> EcKey::FromPrivatePem(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Fail(Error::Internal("BIO_new_mem_buf failed"));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (!k) return Fail(Error::Internal("signing key PEM does not parse"));
  auto key = Wrap(k);
  if (!IsP256(k)) return Fail(Error::Internal("signing key is not P-256"));
  return EcKey(std::move(key));
}

std::string EcKey::PrivatePem() const {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return {};
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

nlohmann::json EcKey::PublicJwk(std::string_view kid) const {
  return {{"kty", "EC"},
          {"crv", "P-256"},
          {"x", crypto::Base64UrlEncode(Coordinate(key_.get(), OSSL_PKEY_PARAM_EC_PUB_X))},
          {"y", crypto::Base64UrlEncode(Coordinate(key_.get(), OSSL_PKEY_PARAM_EC_PUB_Y))},
          {"kid", std::string(kid)},
          {"use", "sig"},
          {"alg", "ES256"}};
}

std::string EcKey::Thumbprint() const {
  // RFC 7638 §3.2: required members only, lexicographic order, no whitespace.
  std::string canonical =
      R"({"crv":"P-256","kty":"EC","x":")" +
      crypto::Base64UrlEncode(Coordinate(key_.get(), OSSL_PKEY_PARAM_EC_PUB_X)) + R"(","y":")" +
      crypto::Base64UrlEncode(Coordinate(key_.get(), OSSL_PKEY_PARAM_EC_PUB_Y)) + R"("})";
  return crypto::Base64UrlEncode(crypto::Sha256(canonical));
}

Result<std::string> EcKey::Sign(std::string_view data) const {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1)
    return Fail(Error::Internal("EVP_DigestSignInit failed"));
  size_t der_len = 0;
  auto in = reinterpret_cast<const unsigned char*>(data.data());
  if (EVP_DigestSign(ctx.get(), nullptr, &der_len, in, data.size()) != 1)
    return Fail(Error::Internal("EVP_DigestSign size failed"));
  std::string der(der_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &der_len, in,
                     data.size()) != 1)
    return Fail(Error::Internal("EVP_DigestSign failed"));
  // OpenSSL emits DER ECDSA-Sig-Value; JOSE wants the two integers, each 32 bytes.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, SigFree> sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)));
  if (!sig) return Fail(Error::Internal("d2i_ECDSA_SIG failed"));
  std::string raw(2 * kCoordBytes, '\0');
  auto out = reinterpret_cast<unsigned char*>(raw.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, kCoordBytes) != kCoordBytes ||
      BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + kCoordBytes, kCoordBytes) != kCoordBytes)
    return Fail(Error::Internal("BN_bn2binpad failed"));
  return raw;
}

bool EcKey::Verify(std::string_view data, std::string_view raw_signature) const {
  if (raw_signature.size() != 2 * kCoordBytes) return false;
  auto rs = reinterpret_cast<const unsigned char*>(raw_signature.data());
  BIGNUM* r = BN_bin2bn(rs, kCoordBytes, nullptr);
  BIGNUM* s = BN_bin2bn(rs + kCoordBytes, kCoordBytes, nullptr);
  std::unique_ptr<ECDSA_SIG, SigFree> sig(ECDSA_SIG_new());
  if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  if (der_len <= 0) return false;
  std::unique_ptr<unsigned char, void (*)(unsigned char*)> der_guard(
      der, [](unsigned char* d) { OPENSSL_free(d); });
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), der, static_cast<size_t>(der_len),
                          reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
}

Result<ParsedJws> ParseEs256Jws(std::string_view token) {
  if (token.empty() || token.size() > kMaxTokenBytes) return Bad("malformed token");
  size_t d1 = token.find('.');
  if (d1 == std::string_view::npos) return Bad("malformed token");
  size_t d2 = token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos)
    return Bad("malformed token");  // not three segments (a JWE has five)
  std::string_view h = token.substr(0, d1), p = token.substr(d1 + 1, d2 - d1 - 1),
                   s = token.substr(d2 + 1);
  if (!IsB64UrlSegment(h) || !IsB64UrlSegment(p) || !IsB64UrlSegment(s))
    return Bad("malformed token");

  ParsedJws out;
  auto header = DecodeJsonSegment(h);
  if (!header) return Fail(header.error());
  out.header = std::move(*header);
  // The algorithm is fixed by crmd, never chosen by the token.
  auto alg = out.header.find("alg");
  if (alg == out.header.end() || !alg->is_string() || *alg != "ES256")
    return Bad("unsupported token algorithm");
  if (out.header.contains("crit")) return Bad("unsupported critical header");
  auto kid = out.header.find("kid");
  if (kid == out.header.end() || !kid->is_string() || kid->get<std::string>().empty())
    return Bad("token has no key id");

  auto payload = DecodeJsonSegment(p);
  if (!payload) return Fail(payload.error());
  out.payload = std::move(*payload);

  auto sig = crypto::Base64UrlDecode(s);
  // Canonical encoding only, so one signature has one spelling.
  if (!sig || sig->size() != 2 * kCoordBytes || crypto::Base64UrlEncode(*sig) != s)
    return Bad("malformed token signature");
  out.signature = std::move(*sig);
  out.signing_input = std::string(token.substr(0, d2));
  return out;
}

Result<std::string> SignEs256Jws(const EcKey& key, std::string_view kid, std::string_view typ,
                                 const nlohmann::json& payload) {
  nlohmann::json header = {{"alg", "ES256"}, {"typ", std::string(typ)}, {"kid", std::string(kid)}};
  std::string input =
      crypto::Base64UrlEncode(header.dump()) + "." + crypto::Base64UrlEncode(payload.dump());
  auto sig = key.Sign(input);
  if (!sig) return Fail(sig.error());
  return input + "." + crypto::Base64UrlEncode(*sig);
}

nlohmann::json ToJson(const AccessTokenClaims& c) {
  nlohmann::json j = {{"iss", c.issuer},          {"aud", c.audience}, {"sub", c.subject},
                      {"client_id", c.client_id}, {"scope", c.scope},  {"iat", c.issued_at},
                      {"exp", c.expires_at},      {"jti", c.jti}};
  if (!c.grant_id.empty()) j["gid"] = c.grant_id;
  return j;
}

Result<AccessTokenClaims> CheckAccessTokenClaims(const ParsedJws& jws, const ClaimCheck& check) {
  auto typ = jws.header.find("typ");
  if (typ == jws.header.end() || !typ->is_string() ||
      (*typ != "at+jwt" && *typ != "application/at+jwt"))
    return Bad("not an access token");
  const auto& c = jws.payload;
  auto str = [&](const char* name) -> std::optional<std::string> {
    auto it = c.find(name);
    if (it == c.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto num = [&](const char* name) -> std::optional<int64_t> {
    auto it = c.find(name);
    if (it == c.end() || !it->is_number()) return std::nullopt;
    return it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
  };
  AccessTokenClaims out;
  auto iss = str("iss");
  if (!iss || *iss != check.issuer) return Bad("token issuer mismatch");
  out.issuer = *iss;

  auto aud = c.find("aud");
  bool aud_ok = false;
  if (aud != c.end() && aud->is_string()) {
    aud_ok = *aud == check.audience;
  } else if (aud != c.end() && aud->is_array()) {
    for (const auto& a : *aud) aud_ok = aud_ok || (a.is_string() && a == check.audience);
  }
  if (!aud_ok) return Bad("token is not for this resource");
  out.audience = check.audience;

  auto exp = num("exp");
  if (!exp) return Bad("token has no expiry");
  if (*exp + check.leeway_s <= check.now) return Bad("token expired");
  out.expires_at = *exp;
  auto iat = num("iat");
  if (iat && *iat > check.now + check.leeway_s) return Bad("token issued in the future");
  out.issued_at = iat.value_or(0);

  auto sub = str("sub"), client_id = str("client_id"), jti = str("jti");
  if (!sub || sub->empty() || !client_id || client_id->empty() || !jti || jti->empty())
    return Bad("token lacks required claims");
  out.subject = *sub;
  out.client_id = *client_id;
  out.jti = *jti;
  out.scope = str("scope").value_or("");
  out.grant_id = str("gid").value_or("");
  return out;
}

}  // namespace crmd::auth
