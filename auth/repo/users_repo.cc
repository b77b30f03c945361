#include "auth/repo/users_repo.h"

namespace crmd::auth::repo {
namespace {

User FromRow(const store::Row& r) {
  return User{.id = r.Int(0), .email = r.Str(1), .is_admin = r.Int(2) != 0, .created_at = r.Int(3)};
}

constexpr const char* kSelect = "SELECT id, email, is_admin, created_at FROM users ";

Result<std::optional<User>> One(Result<std::optional<store::Row>> row) {
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<User>();
  return FromRow(**row);
}

}  // namespace

Result<int64_t> InsertUser(store::Conn& c, const std::string& email,
                           const std::string& password_hash, bool is_admin, int64_t now) {
  auto existing = c.QueryOne("SELECT id FROM users WHERE email = ?", {email});
  if (!existing) return Fail(existing.error());
  if (*existing) return Fail(Errc::kAlreadyExists, "a user with this email already exists");
  return c.InsertReturningId(
      "INSERT INTO users (email, password_hash, is_admin, created_at) VALUES (?, ?, ?, ?) "
      "RETURNING id",
      {email, password_hash, int64_t{is_admin ? 1 : 0}, now});
}

Result<std::optional<User>> FindUserByEmail(store::Conn& c, const std::string& email) {
  return One(c.QueryOne(std::string(kSelect) + "WHERE email = ?", {email}));
}

Result<std::optional<User>> FindUserById(store::Conn& c, int64_t id) {
  return One(c.QueryOne(std::string(kSelect) + "WHERE id = ?", {id}));
}

Result<std::optional<std::pair<User, std::string>>> FindUserWithPasswordHash(
    store::Conn& c, const std::string& email) {
  using Out = std::optional<std::pair<User, std::string>>;
  auto row = c.QueryOne(
      "SELECT id, email, is_admin, created_at, password_hash FROM users WHERE email = ?", {email});
  if (!row) return Fail(row.error());
  if (!*row) return Out();
  return Out(std::in_place, FromRow(**row), (*row)->Str(4));
}

Result<std::vector<User>> ListUsers(store::Conn& c) {
  auto rows = c.Query(std::string(kSelect) + "ORDER BY id");
  if (!rows) return Fail(rows.error());
  std::vector<User> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<int64_t> CountAdmins(store::Conn& c) {
  auto row = c.QueryOne("SELECT COUNT(*) FROM users WHERE is_admin = 1");
  if (!row) return Fail(row.error());
  return (*row)->Int(0);
}

Result<int64_t> SetPasswordHash(store::Conn& c, const std::string& email,
                                const std::string& password_hash) {
  return c.Exec("UPDATE users SET password_hash = ? WHERE email = ?", {password_hash, email});
}

}  // namespace crmd::auth::repo
