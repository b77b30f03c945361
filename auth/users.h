#pragma once
// People who log in to the authorization server (login page, consent) and the console.
// Emails are stored lower-cased; passwords as crypto::HashPassword (scrypt). Each person
// has a role (auth/roles.h) and may be disabled or deleted.
//
// What a change ends: a new password, disabling and deleting end everything the person's
// sign-in opened (their login sessions, their assistants' grants with every access and
// refresh token, their codes not yet exchanged), in the same transaction as the change; a
// role change revokes the grants whose scope the new role no longer covers. Each answers
// which assistants (client names) must sign in again. Deleting keeps the row (the audit
// log and approvals name it) but frees the email and forgets the password and consents.
// The last active administrator cannot be demoted, disabled or deleted.
//
// Every change is an audit row: the PersonAudit hook (wired by the composition root to
// the audit log) runs inside the change's transaction, so both commit or neither does.
//
// Thread-safe: all state is in the database; the dummy hash used to equalise timing for
// unknown emails is computed once, lazily, under std::call_once.
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/roles.h"
#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct User {
  int64_t id = 0;
  std::string email;      // lower-cased; "deleted:<id>" once deleted
  bool is_admin = false;  // role == kAdministrator
  int64_t created_at = 0;
  Role role = Role::kEditor;
  std::optional<int64_t> disabled_at;
  std::optional<int64_t> deleted_at;

  // May sign in and hold grants.
  bool active() const { return !disabled_at && !deleted_at; }
};

// Who changes a person: the operator ("cli"), an administrator in the console ("user",
// subject = their id), or crmd itself ("system", the first administrator).
struct PersonChanger {
  std::string kind = "system";
  std::string subject;
};

// One change, for the audit log: action is create_user | change_password | change_role |
// disable_user | enable_user | delete_user.
struct PersonChange {
  std::string action;
  int64_t user_id = 0;
  nlohmann::json details = nlohmann::json::object();
};

// Writes the audit row of `change` by `by` through `c` (the change's transaction).
using PersonAudit =
    std::function<Status(store::Conn& c, const PersonChanger& by, const PersonChange& change)>;

// What a change ended.
struct AccessEnded {
  int64_t grants_revoked = 0;
  std::vector<std::string> clients;  // the assistants' names, sorted, each once
};

// Trims and lower-cases; kInvalidArgument unless it looks like local@domain.
Result<std::string> NormalizeEmail(std::string_view email);

class Users {
 public:
  static constexpr size_t kMinPasswordLength = 8;
  static constexpr size_t kMaxPasswordLength = 1024;

  // `audit` may be empty (tests of this class alone): changes are then not audited.
  Users(store::Database& db, const Clock& clock, PersonAudit audit = {})
      : db_(db), clock_(clock), audit_(std::move(audit)) {}
  Users(const Users&) = delete;
  Users& operator=(const Users&) = delete;

  // Errors: kInvalidArgument (email or password policy), kAlreadyExists.
  Result<User> Create(std::string_view email, std::string_view password, Role role,
                      const PersonChanger& by);
  // An administrator or an editor, created by crmd itself.
  Result<User> Create(std::string_view email, std::string_view password, bool is_admin);
  // The user when the password is right and the person is active; kUnauthenticated
  // otherwise (unknown email, wrong password, disabled alike, and in the same time: an
  // unknown email is checked against a dummy hash).
  Result<User> Verify(std::string_view email, std::string_view password);
  // A person not deleted.
  Result<std::optional<User>> FindByEmail(std::string_view email);
  // Any person, deleted or not (check active()).
  Result<std::optional<User>> FindById(int64_t id);
  // Every person not deleted, by id.
  Result<std::vector<User>> List();
  // Active administrators.
  Result<int64_t> CountAdmins();

  // The changes below take the person's email and answer kNotFound for an unknown one.
  // Replaces the password and ends the person's sessions and grants.
  Result<AccessEnded> SetPassword(std::string_view email, std::string_view password,
                                  const PersonChanger& by = {});
  // Demoting, disabling or deleting the last active administrator: kInvalidTransition.
  Result<AccessEnded> SetRole(std::string_view email, Role role, const PersonChanger& by);
  Result<AccessEnded> Disable(std::string_view email, const PersonChanger& by);
  Status Enable(std::string_view email, const PersonChanger& by);
  Result<AccessEnded> Delete(std::string_view email, const PersonChanger& by);

 private:
  const std::string& DummyHash();
  // Runs `change` on the person `email` in one write transaction with its audit row.
  Result<AccessEnded> Change(
      std::string_view email, const PersonChanger& by,
      const std::function<Result<PersonChange>(store::Conn&, const User&, AccessEnded&)>& change);

  store::Database& db_;
  const Clock& clock_;
  const PersonAudit audit_;
  std::once_flag dummy_once_;
  std::string dummy_hash_;
};

}  // namespace crmd::auth
