#pragma once
// The user repository (table users): people who log in to the authorization server.
// Emails arrive already normalised (auth/users.h NormalizeEmail); passwords only as
// crypto::HashPassword. The only place where users' SQL lives.
//
// Promises: an email is unique: InsertUser answers kAlreadyExists for a taken email
// (checked first, and enforced by the unique index against a concurrent insert); ids are
// never reused.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for the lookups.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "auth/users.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

// Inserts a user; answers the new id. kAlreadyExists when the email is taken.
Result<int64_t> InsertUser(store::Conn& c, const std::string& email,
                           const std::string& password_hash, bool is_admin, int64_t now);
Result<std::optional<User>> FindUserByEmail(store::Conn& c, const std::string& email);
Result<std::optional<User>> FindUserById(store::Conn& c, int64_t id);
// The user and the stored password hash (for login).
Result<std::optional<std::pair<User, std::string>>> FindUserWithPasswordHash(
    store::Conn& c, const std::string& email);
// Every user, by id.
Result<std::vector<User>> ListUsers(store::Conn& c);
Result<int64_t> CountAdmins(store::Conn& c);
// Answers rows changed (0: unknown email).
Result<int64_t> SetPasswordHash(store::Conn& c, const std::string& email,
                                const std::string& password_hash);

}  // namespace crmd::auth::repo
