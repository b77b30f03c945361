#include "auth/users.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "auth/repo/clients_repo.h"
#include "auth/repo/codes_repo.h"
#include "auth/repo/consents_repo.h"
#include "auth/repo/grants_repo.h"
#include "auth/repo/login_sessions_repo.h"
#include "auth/repo/users_repo.h"
#include "auth/scopes.h"
#include "src/core/crypto.h"

namespace crmd::auth {
namespace {

constexpr size_t kMaxEmailLength = 254;  // RFC 5321 §4.5.3.1.3 path limit, less brackets

Status CheckPassword(std::string_view password) {
  if (password.size() < Users::kMinPasswordLength)
    return Fail(Errc::kInvalidArgument, "password must have at least 8 characters");
  if (password.size() > Users::kMaxPasswordLength)
    return Fail(Errc::kInvalidArgument, "password is too long");
  return Ok();
}

}  // namespace

Result<std::string> NormalizeEmail(std::string_view email) {
  while (!email.empty() && std::isspace(static_cast<unsigned char>(email.front())))
    email.remove_prefix(1);
  while (!email.empty() && std::isspace(static_cast<unsigned char>(email.back())))
    email.remove_suffix(1);
  if (email.empty() || email.size() > kMaxEmailLength)
    return Fail(Errc::kInvalidArgument, "invalid email address");
  size_t at = email.find('@');
  if (at == 0 || at == std::string_view::npos || at + 1 == email.size() ||
      email.find('@', at + 1) != std::string_view::npos)
    return Fail(Errc::kInvalidArgument, "invalid email address");
  std::string out(email);
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return Fail(Errc::kInvalidArgument, "invalid email address");
    c = static_cast<char>(std::tolower(u));
  }
  return out;
}

Result<User> Users::Create(std::string_view email, std::string_view password, Role role,
                           const PersonChanger& by) {
  auto norm = NormalizeEmail(email);
  if (!norm) return Fail(norm.error());
  if (auto st = CheckPassword(password); !st) return Fail(st.error());
  std::string hash = crypto::HashPassword(password);
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<User> {
    auto id = repo::InsertUser(c, *norm, hash, role, now);
    if (!id) return Fail(id.error());
    if (audit_) {
      PersonChange change{.action = "create_user",
                          .user_id = *id,
                          .details = {{"email", *norm}, {"role", RoleName(role)}}};
      if (auto st = audit_(c, by, change); !st) return Fail(st.error());
    }
    return User{.id = *id,
                .email = *norm,
                .is_admin = role == Role::kAdministrator,
                .created_at = now,
                .role = role};
  });
}

Result<User> Users::Create(std::string_view email, std::string_view password, bool is_admin) {
  return Create(email, password, is_admin ? Role::kAdministrator : Role::kEditor, PersonChanger{});
}

const std::string& Users::DummyHash() {
  std::call_once(dummy_once_,
                 [this] { dummy_hash_ = crypto::HashPassword("crmd-dummy-password"); });
  return dummy_hash_;
}

Result<User> Users::Verify(std::string_view email, std::string_view password) {
  auto norm = NormalizeEmail(email);
  std::optional<std::pair<User, std::string>> found;
  if (norm && password.size() <= kMaxPasswordLength) {
    auto row = db_.Read([&](store::Conn& c) { return repo::FindUserWithPasswordHash(c, *norm); });
    if (!row) return Fail(row.error());
    found = std::move(*row);
  }
  // Run scrypt whether or not the account exists, so timing does not reveal which emails
  // are registered (nor which are disabled).
  bool ok = crypto::VerifyPassword(password.substr(0, kMaxPasswordLength),
                                   found ? found->second : DummyHash());
  if (!found || !ok || !found->first.active())
    return Fail(Errc::kUnauthenticated, "invalid email or password");
  return found->first;
}

Result<std::optional<User>> Users::FindByEmail(std::string_view email) {
  auto norm = NormalizeEmail(email);
  if (!norm) return std::optional<User>();
  return db_.Read([&](store::Conn& c) { return repo::FindUserByEmail(c, *norm); });
}

Result<std::optional<User>> Users::FindById(int64_t id) {
  return db_.Read([&](store::Conn& c) { return repo::FindUserById(c, id); });
}

Result<std::vector<User>> Users::List() {
  return db_.Read([&](store::Conn& c) { return repo::ListUsers(c); });
}

Result<int64_t> Users::CountAdmins() {
  return db_.Read([&](store::Conn& c) { return repo::CountAdmins(c); });
}

namespace {

// Revokes the grants of `user_id` that `revoke` picks (with their tokens) and notes their
// clients' names in `ended`.
Status RevokeGrantsOf(store::Conn& c, int64_t user_id, int64_t now,
                      const std::function<bool(const repo::GrantRow&)>& revoke,
                      AccessEnded& ended) {
  auto grants = repo::LiveGrantsOfUser(c, user_id);
  if (!grants) return Fail(grants.error());
  std::set<std::string> names(ended.clients.begin(), ended.clients.end());
  for (const auto& g : *grants) {
    if (!revoke(g)) continue;
    if (auto st = repo::RevokeGrant(c, g.grant_id, now); !st) return st;
    ++ended.grants_revoked;
    auto client = repo::FindClient(c, g.client_id);
    if (!client) return Fail(client.error());
    names.insert(*client ? (*client)->client.DisplayName() : g.client_id);
  }
  ended.clients.assign(names.begin(), names.end());
  return Ok();
}

// Everything the person's sign-in opened: sessions, grants (and tokens), pending codes.
Status EndAllAccess(store::Conn& c, int64_t user_id, int64_t now, AccessEnded& ended) {
  if (auto st = repo::DeleteSessionsOf(c, user_id); !st) return st;
  if (auto st = repo::DeleteUnredeemedCodesOfUser(c, user_id); !st) return st;
  return RevokeGrantsOf(
      c, user_id, now, [](const repo::GrantRow&) { return true; }, ended);
}

nlohmann::json EndedJson(const AccessEnded& ended) {
  return {{"grants_revoked", ended.grants_revoked}, {"clients", ended.clients}};
}

// kInvalidTransition when `user` is the last active administrator.
Status KeepAnAdministrator(store::Conn& c, const User& user, const char* what) {
  if (user.role != Role::kAdministrator || !user.active()) return Ok();
  auto admins = repo::LockActiveAdmins(c);
  if (!admins) return Fail(admins.error());
  if (*admins <= 1)
    return Fail(Errc::kInvalidTransition,
                std::string("the last active administrator cannot be ") + what);
  return Ok();
}

}  // namespace

Result<AccessEnded> Users::Change(
    std::string_view email, const PersonChanger& by,
    const std::function<Result<PersonChange>(store::Conn&, const User&, AccessEnded&)>& change) {
  auto norm = NormalizeEmail(email);
  if (!norm) return Fail(Errc::kNotFound, "no such user");
  return db_.Write([&](store::Conn& c) -> Result<AccessEnded> {
    AccessEnded ended;  // the callback may run twice (store/db.h): start afresh
    auto user = repo::FindUserByEmail(c, *norm);
    if (!user) return Fail(user.error());
    if (!*user) return Fail(Errc::kNotFound, "no such user");
    auto done = change(c, **user, ended);
    if (!done) return Fail(done.error());
    done->user_id = (*user)->id;
    done->details["email"] = (*user)->email;
    if (audit_)
      if (auto st = audit_(c, by, *done); !st) return Fail(st.error());
    return ended;
  });
}

Result<AccessEnded> Users::SetPassword(std::string_view email, std::string_view password,
                                       const PersonChanger& by) {
  if (auto st = CheckPassword(password); !st) return Fail(st.error());
  std::string hash = crypto::HashPassword(password);
  const int64_t now = clock_.NowUnix();
  return Change(email, by,
                [&](store::Conn& c, const User& u, AccessEnded& ended) -> Result<PersonChange> {
                  auto n = repo::SetPasswordHash(c, u.id, hash);
                  if (!n) return Fail(n.error());
                  if (auto st = EndAllAccess(c, u.id, now, ended); !st) return Fail(st.error());
                  return PersonChange{.action = "change_password", .details = EndedJson(ended)};
                });
}

Result<AccessEnded> Users::SetRole(std::string_view email, Role role, const PersonChanger& by) {
  const int64_t now = clock_.NowUnix();
  return Change(email, by,
                [&](store::Conn& c, const User& u, AccessEnded& ended) -> Result<PersonChange> {
                  if (role != Role::kAdministrator)
                    if (auto st = KeepAnAdministrator(c, u, "demoted"); !st)
                      return Fail(st.error());
                  auto n = repo::SetRole(c, u.id, role);
                  if (!n) return Fail(n.error());
                  // A grant beyond the new ceiling ends now; the assistant signs in again and
                  // consent offers only what the role allows.
                  const auto& ceiling = ScopeCeiling(role);
                  auto beyond = [&](const repo::GrantRow& g) {
                    auto scopes = ParseScope(g.scope);
                    return !scopes || !IsSubset(*scopes, ceiling);
                  };
                  if (auto st = RevokeGrantsOf(c, u.id, now, beyond, ended); !st)
                    return Fail(st.error());
                  nlohmann::json details = EndedJson(ended);
                  details["from"] = RoleName(u.role);
                  details["to"] = RoleName(role);
                  return PersonChange{.action = "change_role", .details = std::move(details)};
                });
}

Result<AccessEnded> Users::Disable(std::string_view email, const PersonChanger& by) {
  const int64_t now = clock_.NowUnix();
  return Change(email, by,
                [&](store::Conn& c, const User& u, AccessEnded& ended) -> Result<PersonChange> {
                  if (auto st = KeepAnAdministrator(c, u, "disabled"); !st) return Fail(st.error());
                  auto n = repo::SetDisabledAt(c, u.id, u.disabled_at.value_or(now));
                  if (!n) return Fail(n.error());
                  if (auto st = EndAllAccess(c, u.id, now, ended); !st) return Fail(st.error());
                  return PersonChange{.action = "disable_user", .details = EndedJson(ended)};
                });
}

Status Users::Enable(std::string_view email, const PersonChanger& by) {
  auto r =
      Change(email, by, [&](store::Conn& c, const User& u, AccessEnded&) -> Result<PersonChange> {
        auto n = repo::SetDisabledAt(c, u.id, std::nullopt);
        if (!n) return Fail(n.error());
        return PersonChange{.action = "enable_user"};
      });
  if (!r) return Fail(r.error());
  return Ok();
}

Result<AccessEnded> Users::Delete(std::string_view email, const PersonChanger& by) {
  const int64_t now = clock_.NowUnix();
  return Change(email, by,
                [&](store::Conn& c, const User& u, AccessEnded& ended) -> Result<PersonChange> {
                  if (auto st = KeepAnAdministrator(c, u, "deleted"); !st) return Fail(st.error());
                  if (auto st = EndAllAccess(c, u.id, now, ended); !st) return Fail(st.error());
                  if (auto st = repo::DeleteConsentsOfUser(c, u.id); !st) return Fail(st.error());
                  auto n = repo::MarkDeleted(c, u.id, now);
                  if (!n) return Fail(n.error());
                  return PersonChange{.action = "delete_user", .details = EndedJson(ended)};
                });
}

}  // namespace crmd::auth
