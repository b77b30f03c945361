#include "auth/repo/users_repo.h"

namespace crmd::auth::repo {
namespace {

User FromRow(const store::Row& r) {
  Role role = ParseRole(r.Str(2)).value_or(Role::kViewer);
  return User{.id = r.Int(0),
              .email = r.Str(1),
              .is_admin = role == Role::kAdministrator,
              .created_at = r.Int(3),
              .role = role,
              .disabled_at = r.OptInt(4),
              .deleted_at = r.OptInt(5)};
}

// The users' columns and `where`, appended into one string. (GCC 12 at -O2 warns, falsely,
// of an out-of-bounds copy in the inlined `std::string(literal) + piece`.)
std::string SelectWhere(std::string_view where) {
  std::string sql = "SELECT id, email, role, created_at, disabled_at, deleted_at FROM users WHERE ";
  sql.append(where);
  return sql;
}

Result<std::optional<User>> One(Result<std::optional<store::Row>> row) {
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<User>();
  return FromRow(**row);
}

int64_t AdminFlag(Role role) { return role == Role::kAdministrator ? 1 : 0; }

}  // namespace

Result<int64_t> InsertUser(store::Conn& c, const std::string& email,
                           const std::string& password_hash, Role role, int64_t now) {
  auto existing = c.QueryOne("SELECT id FROM users WHERE email = ?", {email});
  if (!existing) return Fail(existing.error());
  if (*existing) return Fail(Errc::kAlreadyExists, "a user with this email already exists");
  // is_admin mirrors the role for readers of the older schema.
  return c.InsertReturningId(
      "INSERT INTO users (email, password_hash, is_admin, role, created_at) "
      "VALUES (?, ?, ?, ?, ?) RETURNING id",
      {email, password_hash, AdminFlag(role), std::string(RoleName(role)), now});
}

Result<std::optional<User>> FindUserByEmail(store::Conn& c, const std::string& email) {
  return One(c.QueryOne(SelectWhere("email = ? AND deleted_at IS NULL"), {email}));
}

Result<std::optional<User>> FindUserById(store::Conn& c, int64_t id) {
  return One(c.QueryOne(SelectWhere("id = ?"), {id}));
}

Result<std::optional<std::pair<User, std::string>>> FindUserWithPasswordHash(
    store::Conn& c, const std::string& email) {
  using Out = std::optional<std::pair<User, std::string>>;
  auto row = c.QueryOne(
      "SELECT id, email, role, created_at, disabled_at, deleted_at, password_hash FROM users "
      "WHERE email = ? AND deleted_at IS NULL",
      {email});
  if (!row) return Fail(row.error());
  if (!*row) return Out();
  return Out(std::in_place, FromRow(**row), (*row)->Str(6));
}

Result<std::vector<User>> ListUsers(store::Conn& c) {
  auto rows = c.Query(SelectWhere("deleted_at IS NULL ORDER BY id"));
  if (!rows) return Fail(rows.error());
  std::vector<User> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<int64_t> CountAdmins(store::Conn& c) {
  auto row = c.QueryOne(
      "SELECT COUNT(*) FROM users WHERE role = 'administrator' AND disabled_at IS NULL AND "
      "deleted_at IS NULL");
  if (!row) return Fail(row.error());
  return (*row)->Int(0);
}

Result<int64_t> LockActiveAdmins(store::Conn& c) {
  auto rows = c.Query(
      "SELECT u.id FROM users u WHERE u.role = 'administrator' AND u.disabled_at IS NULL AND "
      "u.deleted_at IS NULL" +
      store::ForUpdateOf(c.dialect(), "u"));
  if (!rows) return Fail(rows.error());
  return static_cast<int64_t>(rows->size());
}

Result<int64_t> SetPasswordHash(store::Conn& c, int64_t id, const std::string& password_hash) {
  return c.Exec("UPDATE users SET password_hash = ? WHERE id = ? AND deleted_at IS NULL",
                {password_hash, id});
}

Result<int64_t> SetRole(store::Conn& c, int64_t id, Role role) {
  return c.Exec("UPDATE users SET role = ?, is_admin = ? WHERE id = ? AND deleted_at IS NULL",
                {std::string(RoleName(role)), AdminFlag(role), id});
}

Result<int64_t> SetDisabledAt(store::Conn& c, int64_t id, std::optional<int64_t> disabled_at) {
  return c.Exec("UPDATE users SET disabled_at = ? WHERE id = ? AND deleted_at IS NULL",
                {store::Opt(disabled_at), id});
}

Result<int64_t> MarkDeleted(store::Conn& c, int64_t id, int64_t now) {
  return c.Exec(
      "UPDATE users SET email = ?, password_hash = '', deleted_at = ?, "
      "disabled_at = COALESCE(disabled_at, ?) WHERE id = ? AND deleted_at IS NULL",
      {"deleted:" + std::to_string(id), now, now, id});
}

}  // namespace crmd::auth::repo
