#include "src/mail/dkim_key.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cctype>
#include <memory>

#include "src/core/crypto.h"

namespace crmd::mail {

Result<std::string> DkimPublicKeyFromFile(const std::string& private_key_file) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(private_key_file.c_str(), "r"),
                                                BIO_free);
  if (!bio) return Fail(Errc::kInvalidArgument, "the DKIM private key file cannot be read");
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key) return Fail(Errc::kInvalidArgument, "the DKIM private key file holds no private key");
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(key.get(), &der);
  if (n <= 0) return Fail(Errc::kInvalidArgument, "the DKIM public key cannot be encoded");
  std::string out(reinterpret_cast<const char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return crypto::Base64Encode(out);
}

std::string DkimRecordPublicKey(std::string_view record) {
  // Tags are "name=value" separated by ";" (RFC 6376 §3.2); whitespace around them is folding.
  size_t at = 0;
  while (at < record.size()) {
    size_t end = record.find(';', at);
    if (end == std::string_view::npos) end = record.size();
    std::string_view tag = record.substr(at, end - at);
    at = end + 1;
    size_t eq = tag.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name;
    for (char ch : tag.substr(0, eq))
      if (!std::isspace(static_cast<unsigned char>(ch))) name += ch;
    if (name != "p") continue;
    std::string value;
    for (char ch : tag.substr(eq + 1))
      if (!std::isspace(static_cast<unsigned char>(ch))) value += ch;
    return value;
  }
  return "";
}

}  // namespace crmd::mail
