#pragma once
// An RSA-2048 key made once per test binary with OpenSSL, and its DKIM DNS record.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "src/core/crypto.h"

namespace crmd::mail::testing {

inline std::string PrivateKeyPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

struct TestKey {
  std::string private_pem;
  std::string dns_txt;  // "v=DKIM1; k=rsa; p=<base64 SubjectPublicKeyInfo>" (RFC 6376 §3.6.1)
};

inline const TestKey& TestRsaKey() {
  static const TestKey key = [] {
    EVP_PKEY* k = EVP_RSA_gen(2048);
    TestKey t;
    t.private_pem = PrivateKeyPem(k);
    unsigned char* der = nullptr;
    int n = i2d_PUBKEY(k, &der);
    t.dns_txt = "v=DKIM1; k=rsa; p=" + crypto::Base64Encode(std::string(
                                           reinterpret_cast<char*>(der), static_cast<size_t>(n)));
    OPENSSL_free(der);
    EVP_PKEY_free(k);
    return t;
  }();
  return key;
}

}  // namespace crmd::mail::testing
