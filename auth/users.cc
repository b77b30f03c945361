#include "auth/users.h"

#include <algorithm>
#include <cctype>

#include "auth/repo/users_repo.h"
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

Result<User> Users::Create(std::string_view email, std::string_view password, bool is_admin) {
  auto norm = NormalizeEmail(email);
  if (!norm) return Fail(norm.error());
  if (auto st = CheckPassword(password); !st) return Fail(st.error());
  std::string hash = crypto::HashPassword(password);
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<User> {
    auto id = repo::InsertUser(c, *norm, hash, is_admin, now);
    if (!id) return Fail(id.error());
    return User{.id = *id, .email = *norm, .is_admin = is_admin, .created_at = now};
  });
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
  // are registered.
  bool ok = crypto::VerifyPassword(password.substr(0, kMaxPasswordLength),
                                   found ? found->second : DummyHash());
  if (!found || !ok) return Fail(Errc::kUnauthenticated, "invalid email or password");
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

Status Users::SetPassword(std::string_view email, std::string_view password) {
  auto norm = NormalizeEmail(email);
  if (!norm) return Fail(norm.error());
  if (auto st = CheckPassword(password); !st) return st;
  std::string hash = crypto::HashPassword(password);
  auto n = db_.Write([&](store::Conn& c) { return repo::SetPasswordHash(c, *norm, hash); });
  if (!n) return Fail(n.error());
  if (*n == 0) return Fail(Errc::kNotFound, "no such user");
  return Ok();
}

}  // namespace crmd::auth
