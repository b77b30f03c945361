#include "src/crm/forms_repo.h"

namespace crmd::crm::forms_repo {
namespace {

// Spelled out as whole literals (GCC 12 reports false -Warray-bounds on concatenation).
constexpr const char* kSelectById =
    "SELECT id, name, fields, applies, display_rules, require_key, allowed_origins, "
    "COALESCE(honeypot_field, ''), generated_contacts, created_at, updated_at, "
    "COALESCE(public_id, '') FROM forms WHERE id = ?";
constexpr const char* kSelectByPublicId =
    "SELECT id, name, fields, applies, display_rules, require_key, allowed_origins, "
    "COALESCE(honeypot_field, ''), generated_contacts, created_at, updated_at, "
    "COALESCE(public_id, '') FROM forms WHERE public_id = ?";
constexpr const char* kSelectAll =
    "SELECT id, name, fields, applies, display_rules, require_key, allowed_origins, "
    "COALESCE(honeypot_field, ''), generated_contacts, created_at, updated_at, "
    "COALESCE(public_id, '') FROM forms ORDER BY id";

StoredForm FromRow(const store::Row& r) {
  return StoredForm{.id = r.Int(0),
                    .public_id = r.Str(11),
                    .columns = {.name = r.Str(1),
                                .fields = r.Str(2),
                                .applies = r.Str(3),
                                .display_rules = r.Str(4),
                                .require_key = r.Int(5) != 0,
                                .allowed_origins = r.Str(6),
                                .honeypot_field = r.Str(7)},
                    .generated_contacts = r.Int(8),
                    .created_at = r.Int(9),
                    .updated_at = r.Int(10)};
}

// The writable columns in statement order, then the two trailing parameters.
std::vector<store::Value> Values(const FormColumns& f, int64_t tail1, int64_t tail2) {
  return {f.name,
          f.fields,
          f.applies,
          f.display_rules,
          int64_t{f.require_key ? 0 : 1},
          int64_t{f.require_key ? 1 : 0},
          f.allowed_origins,
          f.honeypot_field.empty() ? store::Value(nullptr) : store::Value(f.honeypot_field),
          tail1,
          tail2};
}

}  // namespace

Result<std::optional<StoredForm>> Find(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(kSelectById, {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<StoredForm>{};
  return std::optional<StoredForm>(FromRow(**row));
}

Result<std::optional<StoredForm>> FindByPublicId(store::Conn& c, const std::string& public_id) {
  auto row = c.QueryOne(kSelectByPublicId, {public_id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<StoredForm>{};
  return std::optional<StoredForm>(FromRow(**row));
}

Result<std::vector<StoredForm>> List(store::Conn& c) {
  auto rows = c.Query(kSelectAll);
  if (!rows) return Fail(rows.error());
  std::vector<StoredForm> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<int64_t> Insert(store::Conn& c, const FormColumns& f, const std::string& public_id,
                       int64_t now) {
  std::vector<store::Value> values = Values(f, now, now);
  values.emplace_back(public_id);
  return c.InsertReturningId(
      "INSERT INTO forms (id, name, fields, applies, display_rules, public, require_key, "
      "allowed_origins, honeypot_field, created_at, updated_at, public_id) VALUES (" +
          store::NextIdSql("forms") + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      values);
}

Result<bool> Update(store::Conn& c, int64_t id, const FormColumns& f, int64_t now) {
  auto n = c.Exec(
      "UPDATE forms SET name = ?, fields = ?, applies = ?, display_rules = ?, public = ?, "
      "require_key = ?, allowed_origins = ?, honeypot_field = ?, updated_at = ? WHERE id = ?",
      Values(f, now, id));
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<bool> Delete(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM forms WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<bool> CountSubmission(store::Conn& c, int64_t id) {
  auto n =
      c.Exec("UPDATE forms SET generated_contacts = generated_contacts + 1 WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

}  // namespace crmd::crm::forms_repo
