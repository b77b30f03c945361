#pragma once
// People who log in to the authorization server (login page, consent). Emails are stored
// lower-cased; passwords as crypto::HashPassword (scrypt).
//
// Thread-safe: all state is in the database; the dummy hash used to equalise timing for
// unknown emails is computed once, lazily, under std::call_once.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct User {
  int64_t id = 0;
  std::string email;  // lower-cased
  bool is_admin = false;
  int64_t created_at = 0;
};

// Trims and lower-cases; kInvalidArgument unless it looks like local@domain.
Result<std::string> NormalizeEmail(std::string_view email);

class Users {
 public:
  static constexpr size_t kMinPasswordLength = 8;
  static constexpr size_t kMaxPasswordLength = 1024;

  Users(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  Users(const Users&) = delete;
  Users& operator=(const Users&) = delete;

  // Errors: kInvalidArgument (email or password policy), kAlreadyExists.
  Result<User> Create(std::string_view email, std::string_view password, bool is_admin);
  // The user when the password is right; kUnauthenticated otherwise (unknown email or
  // wrong password alike, and in the same time: an unknown email is checked against a
  // dummy hash).
  Result<User> Verify(std::string_view email, std::string_view password);
  Result<std::optional<User>> FindByEmail(std::string_view email);
  Result<std::optional<User>> FindById(int64_t id);
  Result<std::vector<User>> List();
  Result<int64_t> CountAdmins();
  // Replaces the password. kNotFound for an unknown email.
  Status SetPassword(std::string_view email, std::string_view password);

 private:
  const std::string& DummyHash();

  store::Database& db_;
  const Clock& clock_;
  std::once_flag dummy_once_;
  std::string dummy_hash_;
};

}  // namespace crmd::auth
