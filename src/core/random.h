#pragma once
// Randomness is injected. SecureRandom draws from OpenSSL's RAND_bytes.
#include <cstddef>
#include <string>

namespace crmd {

class Random {
 public:
  virtual ~Random() = default;
  virtual std::string Bytes(size_t n) = 0;
  // n random bytes, base64url without padding: the form of every token crmd issues.
  std::string Token(size_t n = 32);
};

class SecureRandom final : public Random {
 public:
  std::string Bytes(size_t n) override;  // aborts if the CSPRNG fails: never degrade.
};

}  // namespace crmd
