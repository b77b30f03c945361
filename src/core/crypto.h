#pragma once
// Small, separately tested security helpers. Thread-safe; no state.
#include <string>
#include <string_view>

#include "src/core/result.h"

namespace crmd::crypto {

std::string Sha256(std::string_view data);  // raw 32 bytes
std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // raw 32 bytes
std::string Hex(std::string_view bytes);

std::string Base64Encode(std::string_view data);
Result<std::string> Base64Decode(std::string_view text);
std::string Base64UrlEncode(std::string_view data);  // no padding
Result<std::string> Base64UrlDecode(std::string_view text);

// Constant-time equality: time depends only on the lengths, never on where they differ.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// Stored form of a high-entropy secret (token, code, client secret, API key): hex SHA-256.
// High-entropy secrets need no salt or work factor; passwords do (below).
std::string HashSecret(std::string_view secret);
// Compares a presented secret with its stored hash in constant time.
bool VerifySecret(std::string_view presented, std::string_view stored_hash);

// Passwords: scrypt (N=2^15, r=8, p=1) with a 16-byte random salt. Format:
// "scrypt$15$8$1$<b64 salt>$<b64 hash>".
std::string HashPassword(std::string_view password);
bool VerifyPassword(std::string_view password, std::string_view stored);
// The work factor (log2 N, 10..20) of the hashes HashPassword makes from now on; 15 unless
// changed. Only the test binaries lower it (tests/support/test_main.cc): every test server
// hashes a first administrator's password, 0.1 to 0.3 s each at 15. A stored hash carries
// its own factor, so VerifyPassword takes any in range.
void SetPasswordWorkFactorForTests(uint64_t log_n);

}  // namespace crmd::crypto
