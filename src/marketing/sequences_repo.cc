#include "src/marketing/sequences_repo.h"

#include <string>

namespace crmd::marketing::sequences_repo {
namespace {

using nlohmann::json;

constexpr const char* kSequenceColumns =
    "id, name, description, emails, status, revision, created_at, updated_at, list_id, "
    "activated_at";

Sequence SequenceFromRow(const store::Row& r) {
  Sequence s;
  s.id = r.Int(0);
  s.name = r.Str(1);
  s.description = r.Str(2);
  s.emails = json::parse(r.Str(3), nullptr, false);
  if (!s.emails.is_array()) s.emails = json::array();
  s.status = ParseSequenceStatus(r.Str(4)).value_or(SequenceStatus::kDraft);
  s.revision = r.Int(5);
  s.created_at = r.Int(6);
  s.updated_at = r.Int(7);
  s.list_id = r.OptInt(8);
  s.activated_at = r.OptInt(9);
  return s;
}

}  // namespace

Result<std::optional<Sequence>> Find(store::Conn& c, int64_t id) {
  auto row =
      c.QueryOne(std::string("SELECT ") + kSequenceColumns + " FROM sequences WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Sequence>{};
  return std::optional<Sequence>(SequenceFromRow(**row));
}

Result<std::vector<Sequence>> ListAfter(store::Conn& c, int64_t after_id,
                                        std::optional<SequenceStatus> status, int64_t limit) {
  std::string sql = std::string("SELECT ") + kSequenceColumns + " FROM sequences WHERE id > ?";
  std::vector<store::Value> params{after_id};
  if (status) {
    sql += " AND status = ?";
    params.emplace_back(std::string(ToString(*status)));
  }
  sql += " ORDER BY id LIMIT ?";
  params.emplace_back(limit);
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<Sequence> out;
  for (const auto& r : *rows) out.push_back(SequenceFromRow(r));
  return out;
}

Result<int64_t> Insert(store::Conn& c, const Sequence& s) {
  return c.InsertReturningId(
      "INSERT INTO sequences (id, name, description, emails, status, revision, created_at, "
      "updated_at, list_id) VALUES (" +
          store::NextIdSql("sequences") + ", ?, ?, ?, 'draft', 1, ?, ?, ?) RETURNING id",
      {s.name, s.description, s.emails.dump(), s.created_at, s.updated_at, store::Opt(s.list_id)});
}

Result<bool> Update(store::Conn& c, const Sequence& s) {
  auto n = c.Exec(
      "UPDATE sequences SET name = ?, description = ?, emails = ?, status = ?, list_id = ?, "
      "activated_at = ?, revision = revision + 1, updated_at = ? WHERE id = ? AND revision = ?",
      {s.name, s.description, s.emails.dump(), std::string(ToString(s.status)),
       store::Opt(s.list_id), store::Opt(s.activated_at), s.updated_at, s.id, s.revision});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<bool> NameTaken(store::Conn& c, const std::string& name) {
  auto row = c.QueryOne("SELECT 1 FROM sequences WHERE name = ?", {name});
  if (!row) return Fail(row.error());
  return row->has_value();
}

}  // namespace crmd::marketing::sequences_repo
