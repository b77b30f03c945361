#pragma once
// The user repository (table users): people who log in to the authorization server.
// Emails arrive already normalised (auth/users.h NormalizeEmail); passwords only as
// crypto::HashPassword. The only place where users' SQL lives.
//
// Promises: an email is unique among people not deleted: InsertUser answers kAlreadyExists
// for a taken email (checked first, and enforced by the unique index against a concurrent
// insert); a deleted person's row stays (ids are never reused) with its email replaced by
// "deleted:<id>", which no normalised email can equal, and no password.
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
                           const std::string& password_hash, Role role, int64_t now);
// A person not deleted, by email.
Result<std::optional<User>> FindUserByEmail(store::Conn& c, const std::string& email);
// Any person, deleted or not.
Result<std::optional<User>> FindUserById(store::Conn& c, int64_t id);
// The user and the stored password hash (for login); deleted people are not found.
Result<std::optional<std::pair<User, std::string>>> FindUserWithPasswordHash(
    store::Conn& c, const std::string& email);
// Every person not deleted, by id.
Result<std::vector<User>> ListUsers(store::Conn& c);
// Administrators who are neither disabled nor deleted.
Result<int64_t> CountAdmins(store::Conn& c);
// The same, locking their rows until the transaction ends (PostgreSQL; SQLite's writers
// are serialised anyway), so two concurrent changes cannot each leave the other as the
// last administrator and then both go through. REQUIRES: inside Database::Write.
Result<int64_t> LockActiveAdmins(store::Conn& c);
// Each answers rows changed (0: unknown id).
Result<int64_t> SetPasswordHash(store::Conn& c, int64_t id, const std::string& password_hash);
Result<int64_t> SetRole(store::Conn& c, int64_t id, Role role);
// nullopt enables.
Result<int64_t> SetDisabledAt(store::Conn& c, int64_t id, std::optional<int64_t> disabled_at);
// Frees the email, drops the password and marks the row deleted (and disabled).
Result<int64_t> MarkDeleted(store::Conn& c, int64_t id, int64_t now);

}  // namespace crmd::auth::repo
