#include "src/marketing/templates_repo.h"

#include <nlohmann/json.hpp>
#include <string>

namespace crmd::marketing::templates_repo {
namespace {

using nlohmann::json;

constexpr const char* kTemplateColumns =
    "id, name, html, text, builtin, revision, created_at, updated_at";

EmailTemplate TemplateFromRow(const store::Row& r) {
  EmailTemplate t;
  t.id = r.Int(0);
  t.name = r.Str(1);
  t.html = r.Str(2);
  t.text = r.Str(3);
  t.builtin = r.Str(4);
  t.revision = r.Int(5);
  t.created_at = r.Int(6);
  t.updated_at = r.Int(7);
  return t;
}

// The positions in a JSON array column (sequences.emails, automations.steps) whose
// element names template `id`.
std::vector<int64_t> PositionsUsing(const std::string& column, int64_t id) {
  std::vector<int64_t> at;
  auto items = json::parse(column, nullptr, false);
  if (!items.is_array()) return at;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    if (item.is_object() && item.contains("template_id") &&
        item["template_id"].is_number_integer() && item["template_id"].get<int64_t>() == id)
      at.push_back(static_cast<int64_t>(i));
  }
  return at;
}

// Rows of `sql` (id, name, JSON array) whose array names template `id`, as uses of `kind`.
Status JsonUses(store::Conn& c, const std::string& sql, const char* kind, int64_t id,
                std::vector<TemplateUse>& out) {
  // The text test only narrows the scan; PositionsUsing decides.
  auto rows = c.Query(sql, {std::string("%\"template_id\":") + std::to_string(id) + "%"});
  if (!rows) return Fail(rows.error());
  for (const auto& r : *rows) {
    auto at = PositionsUsing(r.Str(2), id);
    if (!at.empty()) out.push_back({.kind = kind, .id = r.Int(0), .name = r.Str(1), .at = at});
  }
  return Ok();
}

}  // namespace

Result<std::optional<EmailTemplate>> Find(store::Conn& c, int64_t id, bool lock) {
  std::string sql =
      std::string("SELECT ") + kTemplateColumns + " FROM email_templates t WHERE id = ?";
  if (lock) sql += store::ForUpdateOf(c.dialect(), "t");
  auto row = c.QueryOne(sql, {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<EmailTemplate>{};
  return std::optional<EmailTemplate>(TemplateFromRow(**row));
}

Result<std::vector<EmailTemplate>> ListAfter(store::Conn& c, int64_t after_id, int64_t limit) {
  auto rows = c.Query(std::string("SELECT ") + kTemplateColumns +
                          " FROM email_templates WHERE id > ? ORDER BY id LIMIT ?",
                      {after_id, limit});
  if (!rows) return Fail(rows.error());
  std::vector<EmailTemplate> out;
  for (const auto& r : *rows) out.push_back(TemplateFromRow(r));
  return out;
}

Result<int64_t> Insert(store::Conn& c, const EmailTemplate& t) {
  return c.InsertReturningId(
      "INSERT INTO email_templates (id, name, html, text, revision, created_at, updated_at) "
      "VALUES (" +
          store::NextIdSql("email_templates") + ", ?, ?, ?, 1, ?, ?) RETURNING id",
      {t.name, t.html, t.text, t.created_at, t.updated_at});
}

Result<bool> Update(store::Conn& c, const EmailTemplate& t) {
  auto n = c.Exec(
      "UPDATE email_templates SET name = ?, html = ?, text = ?, revision = revision + 1, "
      "updated_at = ? WHERE id = ? AND revision = ?",
      {t.name, t.html, t.text, t.updated_at, t.id, t.revision});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status Remove(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM email_templates WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<std::vector<TemplateUse>> Uses(store::Conn& c, int64_t id) {
  std::vector<TemplateUse> out;
  auto rows = c.Query("SELECT id, name FROM campaigns WHERE template_id = ? ORDER BY id", {id});
  if (!rows) return Fail(rows.error());
  for (const auto& r : *rows) out.push_back({.kind = "campaign", .id = r.Int(0), .name = r.Str(1)});
  if (auto s = JsonUses(c, "SELECT id, name, emails FROM sequences WHERE emails LIKE ? ORDER BY id",
                        "sequence", id, out);
      !s)
    return Fail(s.error());
  if (auto s = JsonUses(c, "SELECT id, name, steps FROM automations WHERE steps LIKE ? ORDER BY id",
                        "automation", id, out);
      !s)
    return Fail(s.error());
  return out;
}

}  // namespace crmd::marketing::templates_repo
