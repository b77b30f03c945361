#include "src/core/random.h"

#include <openssl/rand.h>

#include <cstdlib>

#include "src/core/crypto.h"

namespace crmd {

std::string Random::Token(size_t n) { return crypto::Base64UrlEncode(Bytes(n)); }

std::string SecureRandom::Bytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    std::abort();
  }
  return out;
}

}  // namespace crmd
