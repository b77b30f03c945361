#include "src/core/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <vector>

namespace crmd::crypto {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kB64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Encode(std::string_view data, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  auto u = [&](size_t k) { return static_cast<unsigned char>(data[k]); };
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (u(i) << 16) | (u(i + 1) << 8) | u(i + 2);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  size_t rest = data.size() - i;
  if (rest == 1) {
    uint32_t v = u(i) << 16;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    if (pad) out += "==";
  } else if (rest == 2) {
    uint32_t v = (u(i) << 16) | (u(i + 1) << 8);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    if (pad) out += '=';
  }
  return out;
}

Result<std::string> Decode(std::string_view text, bool url) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == (url ? '-' : '+'))
      v = 62;
    else if (c == (url ? '_' : '/'))
      v = 63;
    else
      return Fail(Errc::kInvalidArgument, "invalid base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return Fail(Errc::kInvalidArgument, "invalid base64 length");
  return out;
}

}  // namespace

// OpenSSL 3's one-shot SHA256() looks the algorithm up in the provider on every call
// (EVP_Q_digest): two thirds of a cached bearer check's instructions went there
// (docs/performance.md). The algorithm is fetched once, and each thread keeps a context.
std::string Sha256(std::string_view data) {
  static EVP_MD* const kMd = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  thread_local std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                           EVP_MD_CTX_free);
  unsigned char md[SHA256_DIGEST_LENGTH];
  unsigned int len = 0;
  if (kMd && ctx && EVP_DigestInit_ex2(ctx.get(), kMd, nullptr) == 1 &&
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) == 1 &&
      EVP_DigestFinal_ex(ctx.get(), md, &len) == 1 && len == sizeof md) {
    return std::string(reinterpret_cast<char*>(md), sizeof md);
  }
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
}

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) { return Hex(Sha256(data)); }

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string Base64Encode(std::string_view data) { return Encode(data, kB64, true); }
Result<std::string> Base64Decode(std::string_view text) { return Decode(text, false); }
std::string Base64UrlEncode(std::string_view data) { return Encode(data, kB64Url, false); }
Result<std::string> Base64UrlDecode(std::string_view text) { return Decode(text, true); }

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string HashSecret(std::string_view secret) { return Sha256Hex(secret); }

bool VerifySecret(std::string_view presented, std::string_view stored_hash) {
  return ConstantTimeEqual(HashSecret(presented), stored_hash);
}

namespace {
constexpr uint64_t kScryptR = 8, kScryptP = 1;
std::atomic<uint64_t> scrypt_log_n{15};

std::string Scrypt(std::string_view password, std::string_view salt, uint64_t log_n, uint64_t r,
                   uint64_t p) {
  std::string out(32, '\0');
  if (EVP_PBE_scrypt(password.data(), password.size(),
                     reinterpret_cast<const unsigned char*>(salt.data()), salt.size(),
                     uint64_t{1} << log_n, r, p, 64ull * 1024 * 1024,
                     reinterpret_cast<unsigned char*>(out.data()), out.size()) != 1) {
    return {};
  }
  return out;
}
}  // namespace

std::string HashPassword(std::string_view password) {
  std::string salt(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), 16);
  const uint64_t log_n = scrypt_log_n.load(std::memory_order_relaxed);
  return "scrypt$" + std::to_string(log_n) + "$" + std::to_string(kScryptR) + "$" +
         std::to_string(kScryptP) + "$" + Base64Encode(salt) + "$" +
         Base64Encode(Scrypt(password, salt, log_n, kScryptR, kScryptP));
}

void SetPasswordWorkFactorForTests(uint64_t log_n) {
  scrypt_log_n.store(std::clamp<uint64_t>(log_n, 10, 20), std::memory_order_relaxed);
}

bool VerifyPassword(std::string_view password, std::string_view stored) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = stored.find('$', start);
    parts.push_back(stored.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  if (parts.size() != 6 || parts[0] != "scrypt") return false;
  uint64_t log_n = 0, r = 0, p = 0;
  try {
    log_n = std::stoull(std::string(parts[1]));
    r = std::stoull(std::string(parts[2]));
    p = std::stoull(std::string(parts[3]));
  } catch (...) {
    return false;
  }
  if (log_n < 10 || log_n > 20 || r == 0 || r > 16 || p == 0 || p > 4) return false;
  auto salt = Base64Decode(parts[4]);
  auto hash = Base64Decode(parts[5]);
  if (!salt || !hash) return false;
  std::string computed = Scrypt(password, *salt, log_n, r, p);
  return !computed.empty() && ConstantTimeEqual(computed, *hash);
}

}  // namespace crmd::crypto
